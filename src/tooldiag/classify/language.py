"""Which language an emission is written in: cheap enough to run on every emission.

Cue lists are per language, so an emission in a language without cue data must be
noticed (and counted) rather than silently read as ``other``. Library detectors
(langdetect, lingua, fastText) cost milliseconds and ship models; the classifier's
budget is a few microseconds per emission, and only the languages tooldiag has cue
data for need telling apart well. So the decision is:

1. **Script** (only when the text is not pure ASCII): when non-Latin letters make up at
   least a fifth of the letters, kana means Japanese, Han means Chinese, Hangul Korean,
   Cyrillic Russian, and so on. Tool names and ids are Latin in every language, hence
   the fifth rather than a majority.
2. **Function words** (Latin script): the *distinct* words of the first
   :data:`SAMPLE_CHARS` characters are intersected with a set of very common function
   words per language (C-level set intersections: no Python loop over the words);
   letters only some languages use (``ñ ¿``, ``ã õ``, ``ß``, ``ł``, ``ğ``) add to
   their language's score. A single distinctive word is enough for a very short text
   ("Puoi confermare?"), shared words alone ("a", "de") are not.

3. **Word endings** (short replies only, when the first two steps found little and English
   does not lead): "Configuración guardada", "Indirizzo di consegna?" have one function word
   or none, so each distinct word ending as only one language's words do (``-ción``,
   ``-zzo``, ``-ção``, ``-ung``, ``-ée``; English ``-ing``, ``-ed``) adds to that language.
   Leaders that tie are ordered by their function words of two letters or more, and a
   kana-less Han text with a Japanese-only character form (変, 済, 払) is Japanese.

Too little evidence gives :data:`UNDETERMINED`, which callers treat as supported
(English cues and the structural rules apply: "OK.", "$54.20", ``[ls(a=1)]``).
Reasoning blocks and code are skipped (a Chinese reply may think in English and call
English-named tools).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from tooldiag.classify.syntax import REASONING_BLOCK

#: Languages with cue data in the ``default`` scheme (ISO 639-1).
SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "es", "fr", "de", "pt", "it", "zh", "ja")

#: Too little evidence to tell (short, numeric or code-only text).
UNDETERMINED = "und"

#: Only the start of an emission is read: the language rarely changes mid-reply.
SAMPLE_CHARS = 600

_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`|<tool_call>.*?(?:</tool_call>|\Z)", re.DOTALL)

_KANA = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Non-Latin scripts: (language code, character class), checked in this order.
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ja", re.compile(f"[{_KANA}]")),
    ("zh", re.compile(f"[{_HAN}]")),
    ("ko", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
)
_NON_LATIN_RUN = re.compile(
    r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0750-\u077f\u0900-\u097f\u0e00-\u0e7f"
    rf"\u1100-\u11ff\u3130-\u318f{_KANA}{_HAN}\uac00-\ud7af]+"
)
#: Bytes -> bytes table for the word split: ASCII letters and UTF-8 sequences (accented
#: letters) are kept, everything else (digits, punctuation, ``_``) becomes a space.
_WORD_BYTES = bytes(c if (97 <= c <= 122 or c >= 128) else 32 for c in range(256))
_NOT_ASCII_LETTER = bytes(c for c in range(256) if not (97 <= c <= 122))
#: Marks that open Spanish clauses or quote in several languages; they must not stick to a word.
_OPENERS = ("¿", "¡", "«", "»")

#: Frequent function words per Latin-script language. Words shared by several languages
#: ("de", "la", "no", "que") count for each; the distinctive ones decide. Fragments of
#: English contractions ("don", "ll", "ve") are English words here: the word pattern
#: splits at apostrophes.
_FUNCTION_WORDS: dict[str, str] = {
    "en": "the you your i is are to of and for this that with can have please would will it be not "
    "what which could do there my me we an on in should shall let know any or if has was been like "
    "help need want am ll ve don isn didn doesn couldn won here sure sorry thanks anything else from "
    "about these those they them our us then also just been by all "
    "at yes now how who why when where did does were their than into over only some more "
    "very each after before because while get got go ok okay good new one two found matching open started",
    "es": "el la los las de que y en un una por para con no es su sus lo le les se del al usted ustedes "
    "puedo puede puedes podemos desea desean quiere quieres gustaría pero como qué cuál cuáles está están "
    "hay tengo tiene necesito necesita podría gracias favor mi ya esta este estos estas eso muy también "
    "sí más cuando dónde quién cuánto cómo siento lamentablemente ningún ninguna algo otra otro ha he "
    "hemos sido será desea usted le "
    "prefieres prefiere necesitas tienes deseas quiero dígame indícame hola ahora aquí hasta luego "
    "entonces estoy hago hacer haga "
    "borro borrar envío alguna alguno ninguno todavía sólo nombre fecha correo listo hecho correcto "
    "oye cual donde nosotros",
    "fr": "le la les de des du un une et est vous je ne pas que qui pour avec sur votre vos il elle ce "
    "cette ces mais peux pouvez peut souhaitez voulez merci au aux être avez suis sont nous ou où qu "
    "j n c très déjà aussi bien voici quel quelle quels quelles été sera désolé malheureusement aucun "
    "aucune autre dans plus veuillez plaît ça voilà à notre nos leur leurs cela ceci ici également toujours "
    "indiquez précisez "
    "ta tes toi moi mon oui chez donc alors combien quand fichier stp svp bonjour salut parfait rien "
    "tous faut veux fais faire dis envoie supprimer supprime annuler annule préfères préférez "
    "souhaites idée valide",
    "de": "der die das und ist sie ich nicht ein eine einen einem einer zu mit für auf den dem des es "
    "bitte ihre ihr ihren ihrem ihres können kann möchten möchte soll sollen wir haben habe sind leider "
    "noch auch wurde wurden werden wird sich oder bei von aus nach wie was welche welchen welcher "
    "welches wann gerne danke kein keine keinen dass ob hier jetzt schon gibt mir mich uns"
    " diese dieser dieses"
    " ja nein doch mal dann wenn aber weil sehr nur alles etwas nichts mein meine dein deine dich ihnen euch"
    " bist hast kannst möchtest willst bereits steht zum zur im vom beim über löschen abschicken überschreiben"
    " schick buche",
    "pt": "o os as de que e em um uma por para com não é seu sua seus suas do da dos das você vocês "
    "posso pode podemos gostaria obrigado obrigada está estão são tem têm mas como ao aos na nas nos "
    "pelo pela isso este esta essa também já sim muito mais lhe deseja quer preciso foi será qual "
    "quais onde quando quem infelizmente nenhum nenhuma algo outra outro informe cidade agora ainda depois então "
    "aqui pra pro essa esse esses essas num numa até após alguma algum coisa precisa feito pronto "
    "eu vou tudo bem olá quero queria prefere preferes fazer faço tenho temos estou meu minha nós "
    "só sem dizer diga apago excluir excluo envio senha fatura encomenda morada né tá vc fechado favor",
    "it": "il lo la i gli le di che e è un una uno per con non sono sei suo sua del della dei delle "
    "al alla alle nel nella può posso puoi vuole vuoi desidera grazie mi ho ha hai anche come ma "
    "questo questa quello ci già più ecco prego quale quali dove quando chi purtroppo nessun nessuna "
    "qualcosa altro altra stato stata sarà vorrei posso tuo tua dal dalla dai sul sulla nei ed conferma "
    "confermi prenotazione notti "
    "possono essere pronto bonifico biglietti biglietto ordine "
    "degli dello negli nello sugli agli allo nessuno ancora verrà verranno senza però ogni tutti tutte "
    "stasera oggi domani perché quindi invece oppure adesso subito cioè "
    "bene faccio servono procedo sposto elimino cancello accendo spengo invio sovrascrivo allora poi "
    "tutto niente nulla quanti quante quanto accordo stesso fatto aiuto proprio mio lei voi loro "
    "svuoto attualmente da",
    # Unsupported Latin-script languages, so that they are counted rather than misread.
    "nl": "de het een en is van ik je u niet dat die voor met op zijn wij we kunt kan wilt graag er "
    "maar ook als bij naar om te uw hebben heb heeft wordt deze dit geen nog wat welke",
    "sv": "och att det är jag du inte en ett för med på som kan vill har av den till om hur vad vi ni "
    "min din ditt vilken tyvärr",
    "pl": "i w na nie się że jest to z do jak czy pan pani mogę proszę dla ale są już tak jestem może który która",
    "tr": "ve bir bu için ile değil mi ne ama siz ben lütfen var yok olarak daha çok gibi sizin misiniz "
    "mısınız musunuz müsünüz hangi nasıl neden nerede kaç",  # noqa: RUF001 (Turkish dotless i)
    "id": "dan yang di ini itu untuk dengan tidak saya anda bisa akan apakah ada dari ke kami "
    "maaf karena sudah belum jika kalau atau juga hanya harus mohon silakan terima kasih bagaimana kapan "
    "siapa berapa sedang telah oleh",
}

#: Order of the languages in the packed score (and of preference among leaders with the same score).
_TIE_ORDER: tuple[str, ...] = ("en", "es", "fr", "de", "pt", "it", "nl", "sv", "pl", "tr", "id")
_FIELD_BITS = 8  # a byte per language in one int: each vocabulary has fewer than 256 words


def _packed_vocabulary() -> dict[bytes, int]:
    """Word (UTF-8) -> an int with 1 in the field of every language that uses it.

    Summing these ints over the distinct words of a text scores every language at once
    (``sum(map(...))`` runs in C), instead of one Python-level loop per word.
    """
    packed: dict[bytes, int] = {}
    for index, code in enumerate(_TIE_ORDER):
        for word in set(_FUNCTION_WORDS[code].split()):
            key = word.encode()
            packed[key] = packed.get(key, 0) + (1 << (_FIELD_BITS * index))
    assert max(len(set(words.split())) for words in _FUNCTION_WORDS.values()) < 1 << _FIELD_BITS
    return packed


_PACKED = _packed_vocabulary()
_VOCABULARY = frozenset(_PACKED)

#: Letters only some languages use; each distinct one adds 2 to that language's score.
_MARKS: dict[str, frozenset[str]] = {
    "es": frozenset("ñ¿¡"),
    "fr": frozenset("œëïîûùêç"),
    "de": frozenset("ßäöü"),
    "pt": frozenset("ãõçâêô"),
    "it": frozenset("ìò"),  # not "è": French writes it too ("deuxième", "très")
    "pl": frozenset("ąćęłńśźż"),
    "tr": frozenset("ğışçöü"),
    "sv": frozenset("åäö"),
}

_ALL_MARKS: frozenset[str] = frozenset().union(*_MARKS.values())
#: One C-level scan for the marks (a set intersection walks every character of the sample in Python objects).
_ANY_MARK = re.compile("[" + re.escape("".join(sorted(_ALL_MARKS))) + "]")


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text``'s language, or :data:`UNDETERMINED`.

    Costs a few microseconds on a typical emission: one ``isascii`` test, one bytes
    ``translate`` + ``split``, one set intersection and a C-level sum; non-ASCII text adds
    one scan for non-Latin script runs and one for language-specific letters.
    """
    sample = text[:SAMPLE_CHARS] if len(text) > SAMPLE_CHARS else text
    if "<" in sample or "`" in sample:
        sample = _CODE.sub(" ", REASONING_BLOCK.sub(" ", sample))
    sample = sample.lower()
    marks: dict[str, int] = {}
    if not sample.isascii():
        # one C-level scan (a max() first to skip it for Latin text cost more than the scan)
        runs = _NON_LATIN_RUN.findall(sample)
        if runs:
            script = "".join(runs)
            latin = len(sample.encode("ascii", "ignore").translate(None, _NOT_ASCII_LETTER))
            if len(script) * 4 >= latin:  # a fifth of all letters or more
                return _script_language(script)
        letters = set(_ANY_MARK.findall(sample))
        if letters:
            for code, alphabet in _MARKS.items():
                count = len(letters & alphabet)
                if count:
                    marks[code] = 2 * count
        for opener in _OPENERS:
            if opener in sample:
                sample = sample.replace(opener, " ")
    hits: frozenset[bytes] = _VOCABULARY.intersection(
        sample.encode("utf-8", "surrogatepass").translate(_WORD_BYTES).split()
    )
    # one byte per language: the packed sum's fields, read without a Python loop
    packed = sum(map(_PACKED.__getitem__, hits)).to_bytes(len(_TIE_ORDER), "little")
    if marks:
        boosted = bytearray(packed)
        for code, bonus in marks.items():
            position = _TIE_ORDER.index(code)
            boosted[position] = min(255, boosted[position] + bonus)
        packed = bytes(boosted)
    scores = packed
    best = max(scores)
    if best <= _WEAK_EVIDENCE and len(sample) <= _SHORT_CHARS and not (best and scores[0] == best):
        scores = _with_endings(sample, scores)  # a short reply: its word endings add to the count
        best = max(scores)
    if best == 0:
        return UNDETERMINED
    if scores[0] == best:
        return "en"  # ties go to English, the language of tool names and most prompts
    leaders = [code for code, score in zip(_TIE_ORDER, scores) if score == best]
    if len(leaders) > 1 and best > 1:
        leaders = _most_words(leaders, hits)
    if best == 1:
        if len(leaders) > 1:
            return UNDETERMINED  # one shared word ("de", "la") says nothing
        field = 1 << (_FIELD_BITS * _TIE_ORDER.index(leaders[0]))
        if not any(len(word) > 1 and _PACKED[word] & field for word in hits) and scores is packed:
            return UNDETERMINED  # one letter ("w" in "W2378156", "o", "y") is no evidence either
    return leaders[0]


def _most_words(leaders: list[str], hits: frozenset[bytes]) -> list[str]:
    """Tied leaders, the one with the most function words of two letters or more first ("y" and
    "le" tie Spanish with "voici" and "le" in French: the single letter counts less)."""

    def words(code: str) -> int:
        field = 1 << (_FIELD_BITS * _TIE_ORDER.index(code))
        return sum(1 for word in hits if len(word) > 1 and _PACKED[word] & field)

    return sorted(leaders, key=words, reverse=True)  # (stable: equal counts keep the tie order)


#: A reply this short (after code and reasoning are removed) may lack function words: its endings count.
_SHORT_CHARS = 240
#: At most this much function-word and letter evidence (and no English lead) is "weak": word endings count too.
_WEAK_EVIDENCE = 3
#: Word endings only one of the supported Latin-script languages uses often (a short reply such as
#: "Configuración guardada", "Data de nascimento do passageiro", "Prenotazione confermata" has few or
#: no function words). Each distinct word with such an ending adds 1 to its language; English
#: endings ("-ing", "-ed") keep short English replies English.
_ENDINGS: dict[str, tuple[str, ...]] = {
    code: tuple(endings.split())
    for code, endings in {
        "en": "ing ed ly ness ship ful less ght",
        "es": "ción ciones dad dades iendo ía ían ué aré eré iré",
        "fr": "eux euse aux eau eaux ée ées és ez ais ait aient oir ique ère è aison sé lé ré mé né vé",
        "de": "ung ungen keit heit lich isch chen tz ß sch cht gt",
        "pt": "ção ções ão ões dade eiro eira eiros ência agem ível ável ém ê nho nha lho lha ço ços",
        "it": "zione zioni ità gli cchi cche ggio ggi tti ato ati ita iti uto uti zzo zza zzi zze iamo ò ì",
    }.items()
}
_ENDING_ORDER = tuple((_TIE_ORDER.index(code), endings) for code, endings in _ENDINGS.items())
_SAMPLE_WORD = re.compile(r"[^\W\d_]{3,}")


def _with_endings(sample: str, scores: bytes) -> bytes:
    """``scores`` plus one per distinct word with an ending of :data:`_ENDINGS`."""
    words = set(_SAMPLE_WORD.findall(sample))
    if not words:
        return scores
    boosted = bytearray(scores)
    for position, endings in _ENDING_ORDER:
        count = sum(1 for word in words if word.endswith(endings))
        if count:
            boosted[position] = min(255, boosted[position] + count)
    return bytes(boosted)


#: Han characters in their Japanese (shinjitai) or Japan-only form, written neither in simplified nor in
#: traditional Chinese (which write 变/變, 单/單, 检/檢, 样/樣 ...): a kana-less reply that holds one is Japanese.
_JAPANESE_ONLY_HAN = re.compile("[込枠働払済様変単検訳駅転売読続図対戻円険営覧関楽歳辺沢録鉄権価経]")


def _script_language(script: str) -> str:
    """The language of the most frequent non-Latin script; any kana means Japanese."""
    if _SCRIPTS[0][1].search(script):
        return "ja"  # Han characters are shared with Chinese; kana are not
    if _JAPANESE_ONLY_HAN.search(script):
        return "ja"  # "予約変更済", "払込": shinjitai forms neither simplified nor traditional Chinese writes
    best_code, best_count = UNDETERMINED, 0
    for code, pattern in _SCRIPTS[1:]:
        count = len(pattern.findall(script))
        if count > best_count:
            best_code, best_count = code, count
            if count * 2 > len(script):
                break
    return best_code


def is_supported(code: str, languages: Collection[str] | None = SUPPORTED_LANGUAGES) -> bool:
    """True when ``code`` has cue data in ``languages`` (``None``: any language, as a judge reads).

    :data:`UNDETERMINED` counts as supported: such text has too few words for cues to matter.
    """
    return languages is None or code == UNDETERMINED or code in languages
