"""Which language an emission is written in: cheap enough to run on every emission.

Cue lists are per language, so an emission in a language without cue data must be
noticed (and counted) rather than silently read as ``other``. Library detectors
(langdetect, lingua, fastText) cost milliseconds and ship models; the classifier's
budget is tens of microseconds per emission, and only the languages tooldiag has cue
data for need telling apart. So the decision is by script first (kana -> Japanese,
Han -> Chinese, Hangul, Cyrillic, ... -> their language), then, for Latin script, by
counting very common function words of each candidate language in the first
:data:`SAMPLE_CHARS` characters. Too little evidence gives :data:`UNDETERMINED`,
which callers treat as supported (the structural rules and the English cues apply:
"OK.", "$54.20", a bare file name).
"""

from __future__ import annotations

import re
from collections.abc import Collection

#: Languages with cue data in the ``default`` scheme (ISO 639-1).
SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "es", "fr", "de", "pt", "it", "zh", "ja")

#: Too little evidence to tell (short, numeric or code-only text).
UNDETERMINED = "und"

#: Only the start of an emission is read: the language rarely changes mid-reply.
SAMPLE_CHARS = 2000

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`|<tool_call>.*?(?:</tool_call>|\Z)", re.DOTALL)

#: Non-Latin scripts: (language code, character class). Kana decides Japanese before Han.
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ja", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")),
    ("zh", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    ("ko", re.compile(r"[\u1100-\u11ff\uac00-\ud7af]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
)
_NON_LATIN = re.compile(
    r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0750-\u077f\u0900-\u097f\u0e00-\u0e7f"
    r"\u1100-\u11ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]"
)
_LATIN_WORD = re.compile(r"[a-zà-öø-ÿœß]+(?:'[a-z]+)?")

#: Frequent function words per Latin-script language. Words shared by several languages
#: ("a", "de", "la", "no", "me") count for each; the distinctive ones decide.
_FUNCTION_WORDS: dict[str, str] = {
    "en": "the you your i is are to of and for this that with can have please would will it be not "
    "what which could do i'm i'll i've don't can't it's there my me we an on in",
    "es": "el la los las de que y en un una por para con no es su sus lo le se del al usted puedo "
    "desea quiere pero como qué cuál está están hay tengo podría gracias favor mi",
    "fr": "le la les de des du un une et est vous je ne pas que qui pour avec sur votre vos il ce "
    "cette mais peux pouvez souhaitez merci au aux être avez suis",
    "de": "der die das und ist sie ich nicht ein eine zu mit für auf den dem des es bitte ihre ihr "
    "können kann möchten soll wir haben habe sind leider noch auch",
    "pt": "o a os as de que e em um uma por para com não é seu sua do da dos das você posso pode "
    "gostaria obrigado está são tem mas como ao",
    "it": "il lo la i gli le di che e è un una per con non sono suo sua del della dei lei può posso "
    "vuole grazie mi ho ha anche come ma al alla",
    # Unsupported Latin-script languages, so that they are counted rather than misread.
    "nl": "de het een en is van ik je u niet dat die voor met op zijn wij kunt kan wilt graag",
    "sv": "och att det är jag du inte en ett för med på som kan vill har av",
    "pl": "i w na nie się że jest to z do jak czy pan pani mogę proszę",
    "tr": "ve bir bu için ile değil mi ne ama siz ben lütfen",
    "id": "dan yang di ini itu untuk dengan tidak saya anda bisa akan apakah",
}
_WORD_LANGS: dict[str, tuple[str, ...]] = {}
for _code, _words in _FUNCTION_WORDS.items():
    for _word in _words.split():
        _WORD_LANGS[_word] = (*_WORD_LANGS.get(_word, ()), _code)

#: Letters only some languages use; each adds to that language's score.
_MARKS: dict[str, re.Pattern[str]] = {
    "es": re.compile(r"[ñ¿¡]"),
    "de": re.compile(r"[ßäöü]"),
    "pt": re.compile(r"[ãõ]"),
    "fr": re.compile(r"[œêëîôûù]"),
}


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text``'s language, or :data:`UNDETERMINED`.

    Reasoning blocks and code are skipped (a Chinese reply may think in English and call
    English-named tools). Non-Latin letters outweigh Latin words when they make up at
    least a fifth of the letters, since tool names and ids are Latin in every language.
    """
    sample = text[:SAMPLE_CHARS] if len(text) > SAMPLE_CHARS else text
    if "<" in sample or "`" in sample:
        sample = _CODE.sub(" ", _THINK.sub(" ", sample))
    sample = sample.lower()
    words = _LATIN_WORD.findall(sample)
    non_latin = len(_NON_LATIN.findall(sample))
    if non_latin and non_latin * 5 >= non_latin + sum(map(len, words)):
        counts = [(len(pattern.findall(sample)), code) for code, pattern in _SCRIPTS]
        if counts[0][0]:  # any kana: Japanese (Han characters are shared with Chinese)
            return "ja"
        return max(counts)[1]
    scores: dict[str, int] = {}
    for word in words:
        for code in _WORD_LANGS.get(word, ()):
            scores[code] = scores.get(code, 0) + 1
    for code, pattern in _MARKS.items():
        hits = len(pattern.findall(sample))
        if hits:
            scores[code] = scores.get(code, 0) + 2 * hits
    if not scores:
        return UNDETERMINED
    best = max(scores.values())
    if best < 2 and len(words) > 3:
        return UNDETERMINED
    leaders = [code for code, score in scores.items() if score == best]
    # Ties go to English (the language of tool names and most prompts), then supported ones.
    for code in ("en", *SUPPORTED_LANGUAGES):
        if code in leaders:
            return code
    return leaders[0]


def is_supported(code: str, languages: Collection[str] | None = SUPPORTED_LANGUAGES) -> bool:
    """True when ``code`` has cue data in ``languages`` (``None``: any language, as a judge reads).

    :data:`UNDETERMINED` counts as supported: such text has too few words for cues to matter.
    """
    return languages is None or code == UNDETERMINED or code in languages
