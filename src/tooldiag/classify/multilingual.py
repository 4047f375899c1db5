"""The ``default`` scheme's rules for languages other than English, driven by one cue file each.

English has hand-grown rules (:mod:`tooldiag.classify.default`); other languages get one
engine whose vocabulary is data (``cues/lang/<code>.json``). The class semantics are the
English ones, sentence by sentence, priority refuse > ask > confirm > other:

* **refuse**: a ``refuse`` cue once ``refuse_exceptions`` (failed look-ups, "cannot be
  undone" warnings) are deleted. Blocked only on information (a ``blocked_markers``
  word such as "sin" / "ohne" / "没有" plus an ``info_nouns`` word, no
  ``capability_nouns`` / ``policy_words``) it is ask; blocked on consent
  (``consent_nouns``) it is confirm; a ``generic_block`` ("no puedo continuar") is ask
  when the emission also asks, else refuse.
* **confirm**: a ``consent`` cue; a ``consent_prefixes`` question ("¿Desea que …",
  "Soll ich …") naming a consequential ``action_verbs`` verb; a ``confirm_requests``
  request naming an action (``action_nouns`` / verbs) rather than a value; a
  ``consent_if_plan`` question ("¿Es correcto?") after a ``plan_markers`` plan.
* **ask**: an ``ask`` cue; a question (``?`` of any width, ``¿``, or a sentence ending in
  a ``question_endings`` particle such as 吗 / か) that opens with a ``question_words``
  word, offers a choice (``choice_words``), or is any other question that is not an
  ``offer`` / ``greeting`` / consent request; a ``confirm_requests`` request naming a value.
* **other**: everything else; ``offer`` and ``greeting`` sentences and ``instructions``
  to the user ("confirme la operación en su app") never ask or confirm.

Four rules then read each sentence in its emission (:meth:`LanguageRules._in_context`): a
greeting question among the first sentences after a ``salutations`` word ("¡Hola! ¿En qué te
echo una mano?", "Olá! Tudo bem?": a ``help_words`` word or a short question without a
wh-word, value, action or choice) is other; a ``consent_emphasis`` question naming an action
("本当に削除しますか", "Vuoi davvero cancellarlo?") confirms, while the word alone
("本当にお疲れさまでした") is nothing; the last clause of a question (after a comma, colon,
spaced dash or "¿") is read as a sentence of its own, so sentence-initial consent cues see
"..., ¿lo tramito?" / "... – wirklich fortfahren?"; and an ask cue that carries a consent
request in the same sentence ("Dites-moi « oui » et je lance le virement") yields to it
unless the sentence names a value, an identifier, a choice or a wh-word. A ``plan_markers``
sentence ending in ":" over a list item ("Voici le plan :" / "1. ...") is a plan when the
emission names an action, so a closing "On y va ?" confirms.

A ``?`` only inside quotes never counts: quoted spans holding one (and long ones, which
are echoes of tweets or messages) are masked before the sentences are read.
Entries are phrases or ``re:`` regular expressions as in ``default.json``; a phrase that
starts or ends with a CJK character gets no word boundary on that side (CJK text has
no spaces); the lists of :data:`PREFIX_LISTS` match prefixes of words (so "cancel"
matches "cancelar", "cancelación"); a wh-question (``question_words``) wins over a
consent cue ("¿Qué vuelo desea cancelar?" asks), and offers win over everything but
explicit ask and consent cues.

Languages without a cue file get :func:`structural_signals` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from tooldiag.classify.classes import ActionClass
from tooldiag.classify.cue_index import CueIndex, indexed_keys
from tooldiag.classify.cues import fold

#: Cue lists a language file may hold (docs/diagnostic.md, "Languages").
PHRASE_LISTS: tuple[str, ...] = (
    "ask",
    "refuse",
    "refuse_exceptions",
    "consent",
    "consent_if_plan",
    "consent_prefixes",
    "confirm_requests",
    "instructions",
    "generic_block",
    "blocked_markers",
    "plan_markers",
    "choice_words",
    "question_words",
    "pronoun_objects",
    "third_party_consent",
    "salutations",
    "consent_emphasis",
)
PREFIX_LISTS: tuple[str, ...] = (
    "offer",
    "greeting",
    "action_verbs",
    "action_nouns",
    "value_nouns",
    "info_nouns",
    "consent_nouns",
    "capability_nouns",
    "policy_words",
    "help_words",
)
#: Literal sentence-final question particles (吗, 呢, か): a question without a question mark.
LITERAL_LISTS: tuple[str, ...] = ("question_endings",)
LANGUAGE_LISTS: tuple[str, ...] = PHRASE_LISTS + PREFIX_LISTS + LITERAL_LISTS

#: The lists a new language must define to be supported (the rest default to empty).
REQUIRED_LISTS: tuple[str, ...] = ("ask", "refuse", "consent", "offer")

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_LATIN_EDGE = re.compile(rf"[^\W{_CJK}]")
# Full-width punctuation read as its ASCII form (the rules test "?" and ",").
_WIDTH_FOLD = str.maketrans(
    {
        "\uff1f": "?",
        "\uff01": "!",
        "\uff0c": ", ",
        "\uff1a": ": ",
        "\uff1b": "; ",
        "\u3001": ", ",
        "\uff08": "(",
        "\uff09": ")",
    }
)
# The same folding for cue entries written with full-width marks ("いい?" or "(是/否)" typed
# with full-width marks would otherwise never match the folded text); in ``re:`` entries a
# mark becomes its escaped form.
_REGEX_WIDTH_FOLD = str.maketrans(
    {
        "\uff1f": "\\?",
        "\uff01": "!",
        "\uff0c": ",",
        "\uff1a": ":",
        "\uff1b": ";",
        "\u3001": ",",
        "\uff08": "\\(",
        "\uff09": "\\)",
    }
)
# Traditional Chinese characters of the cue vocabulary and of frequent support dialogue, read
# as their simplified forms (zh.json is written in simplified characters; "無法" is "无法").
_HANT = (
    "無確認將為訂嗎請問號碼這項資訊們個幫對還麼煩須預約變刪發繼續執權沒辦處購買賣帳戶單筆轉錢時間說應該會"
    "給讓開關機廳飯貨寶錄醫療紀與詢詳細選擇僅視頻標點數額費價郵寄聯絡線網頁憑證務據類車場備註換樣蓋啟從來"
    "後過見幾現實讀寫謝題種願復閉電話報錯誤歡傳遞載檔夾裡裏內圖書員經歷劃計畫記動態區級際隊當稱雙專業學習"
    "導覽擊輸億萬規則條況審護顯頭樓層門飛艙準檢齊盡氣離鐘週歲屬於並決難雖爲緊繫係壞舊賬銀優廣總結儲設歸貼"
    "滿議論評閱許負責適餘產運輛駕駛鑰燈溫調節鎖隨識撥補償壓勢夠張彈戲拋揀損搖擁擔擬擴敗殘災熱獲環瑪監礎禮"
    "積穩窮紅紹終組絕統絲綁維練緒編縮績織罰聲職脫腦舉華藥術裝複覺觀託訪診詞試誌語課諮謂譯賓賠質贈軟較連進"
    "遊達違遲邊鄰針鍵長閃閒陽隱雜雲領顧風館驗體髮鬧黨"
)
_HANS = (
    "无确认将为订吗请问号码这项资讯们个帮对还么烦须预约变删发继续执权没办处购买卖账户单笔转钱时间说应该会"
    "给让开关机厅饭货宝录医疗纪与询详细选择仅视频标点数额费价邮寄联络线网页凭证务据类车场备注换样盖启从来"
    "后过见几现实读写谢题种愿复闭电话报错误欢传递载档夹里里内图书员经历划计画记动态区级际队当称双专业学习"
    "导览击输亿万规则条况审护显头楼层门飞舱准检齐尽气离钟周岁属于并决难虽为紧系系坏旧账银优广总结储设归贴"
    "满议论评阅许负责适余产运辆驾驶钥灯温调节锁随识拨补偿压势够张弹戏抛拣损摇拥担拟扩败残灾热获环玛监础礼"
    "积稳穷红绍终组绝统丝绑维练绪编缩绩织罚声职脱脑举华药术装复觉观托访诊词试志语课咨谓译宾赔质赠软较连进"
    "游达违迟边邻针键长闪闲阳隐杂云领顾风馆验体发闹党"
)
_HANT_FOLD = str.maketrans(_HANT, _HANS)
_HANT_CHARS = re.compile(f"[{_HANT}]")
_WIDE_MARKS = re.compile("[\uff1f\uff01\uff0c\uff1a\uff1b\u3001\uff08\uff09]")
_QUOTE_OPENERS = re.compile('[«„「『"“]')
# Quoted spans (at most 1,000 characters: an unclosed « on a 1 MB line must not scan to its end
# from every opener): French guillemets, German low-high quotes, CJK brackets, ASCII doubles.
_QUOTE_SPAN = re.compile(
    r'«[^»\n]{0,1000}+»|„[^“”"\n]{0,1000}+[“”"]|「[^」\n]{0,1000}+」|『[^』\n]{0,1000}+』'
    r'|"[^"\n]{0,1000}+"|“[^”\n]{0,1000}+”'
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。])|(?<=[?!])(?=[" + _CJK + "])")


def _split_sentence(sentence: str) -> list[str]:
    """:data:`_SENTENCE_BREAK` parts; every break follows one of ". ! ? 。", so most sentences skip the scan."""
    if "." in sentence or "?" in sentence or "!" in sentence or "。" in sentence:
        return _SENTENCE_BREAK.split(sentence)
    return [sentence]


def _mask_quote(match: re.Match[str]) -> str:
    """An echoed quote (holding a question mark, or long) becomes a neutral placeholder."""
    inner = match.group(0)[1:-1]
    if "?" in inner or "¿" in inner or "\u061f" in inner or len(inner.split()) >= 4 or len(inner) >= 16:
        return ' "…" '
    return match.group(0)


def _phrase_pattern(entry: str, prefix: bool, lookbehind: bool = True) -> str:
    """One phrase as a regex that starts with a literal character.

    The left word boundary is checked by a look-behind *after* the first character
    (``p(?<!\\w.)odría``) rather than by a leading ``\\b``: an alternation whose every
    branch starts with a literal lets the regex engine skip positions by their first
    character, which makes a 60-phrase list about eight times faster. The first
    character is a word character, so both forms match the same; ``lookbehind=False``
    gives the ``\\b`` form, which the word index (:mod:`~tooldiag.classify.cue_index`)
    can key by the phrase's first words.
    """
    folded = fold(entry).strip()
    body = r"\s+".join(re.escape(word) for word in folded.split(" ") if word)
    if prefix:
        right = r"\w*" if _LATIN_EDGE.match(folded[-1:]) else ""
    else:
        right = r"\b" if _LATIN_EDGE.match(folded[-1:]) else ""
    if _LATIN_EDGE.match(folded):
        if not lookbehind:
            return rf"\b{body}{right}"
        first = re.escape(folded[0])
        return f"{first}(?<!\\w.){body[len(first) :]}{right}"
    return f"{body}{right}"


class _Cues:
    """One cue list: its plain phrases and its ``re:`` entries, compiled apart (see above).

    ``search`` goes through a :class:`~tooldiag.classify.cue_index.CueIndex`: a sentence
    is searched only with the entries whose first words (or, for ``re:`` entries that may
    start inside a word, literal starts) it contains; most lists miss most sentences, so
    most searches are a set intersection and a few ``in`` tests. What the index leaves
    out (CJK phrases, entries without a literal start) is scanned as two alternations
    (``rest_plain``, ``rest_regex``). ``sub`` uses the two whole alternations. A list
    with a back-reference (``\\1``, ``(?P=name)``) is searched as the whole
    alternations, where group numbers are those of the combined pattern.
    """

    __slots__ = ("index", "plain", "regex", "rest_plain", "rest_regex")

    def __init__(
        self,
        plain: re.Pattern[str] | None,
        regex: re.Pattern[str] | None,
        index: CueIndex | None,
        rest_plain: re.Pattern[str] | None,
        rest_regex: re.Pattern[str] | None,
    ) -> None:
        self.plain = plain
        self.regex = regex
        self.index = index
        self.rest_plain = rest_plain
        self.rest_regex = rest_regex

    def search(self, text: str) -> bool:
        if self.rest_plain is not None and self.rest_plain.search(text):
            return True
        if self.rest_regex is not None and self.rest_regex.search(text):
            return True
        return self.index is not None and self.index.search(text, _keys(text))

    def sub(self, replacement: str, text: str) -> str:
        if self.plain:
            text = self.plain.sub(replacement, text)
        return self.regex.sub(replacement, text) if self.regex else text


#: The index keys of a sentence (cached: computed once however many lists look at it).
_keys = indexed_keys
_BACK_REFERENCE = re.compile(r"\\[1-9]|\(\?P=")


def _compile(entries: Iterable[str], prefix: bool = False) -> _Cues | None:
    # Longest first (an alternation takes its first match); ties by text, never by set order, which
    # follows the string hash and so PYTHONHASHSEED (explanations and labels must not depend on it).
    ordered = sorted({e for e in entries if e.strip()}, key=lambda e: (-len(e), e))
    if not ordered:
        return None
    phrases = [e for e in ordered if not e.startswith("re:")]
    plain = [_phrase_pattern(e, prefix) for e in phrases]
    regex = [f"(?:{e[3:]})" for e in ordered if e.startswith("re:")]
    whole_plain = re.compile("|".join(plain)) if plain else None
    whole_regex = re.compile("|".join(regex)) if regex else None
    if any(_BACK_REFERENCE.search(source) for source in regex):
        return _Cues(whole_plain, whole_regex, None, whole_plain, whole_regex)
    index = CueIndex([_phrase_pattern(e, prefix, lookbehind=False) for e in phrases] + regex, leave_unkeyed=True)
    left = set(index.left_out)
    # what the index leaves out (CJK phrases, unkeyable entries) is scanned as before: one
    # alternation of phrases, one of regular expressions
    rest_plain = [source for position, source in enumerate(plain) if position in left]
    rest_regex = [source for position, source in enumerate(regex, len(plain)) if position in left]
    return _Cues(
        whole_plain,
        whole_regex,
        None if index.empty else index,  # (CJK lists: nothing keyed, no sentence keys to build)
        re.compile("|".join(rest_plain)) if rest_plain else None,
        re.compile("|".join(rest_regex)) if rest_regex else None,
    )


def _fold_entry(entry: str, code: str) -> str:
    """A cue entry as the folded text spells it (see :data:`_WIDTH_FOLD`, :data:`_HANT_FOLD`)."""
    if entry.isascii():
        return entry
    regex = entry.startswith("re:")
    entry = "re:" + entry[3:].translate(_REGEX_WIDTH_FOLD) if regex else entry.translate(_WIDTH_FOLD)
    return entry.translate(_HANT_FOLD) if code == "zh" else entry


def _has(cues: _Cues | re.Pattern[str] | None, text: str) -> bool:
    return bool(cues and cues.search(text))


class _LazyAny:
    """Whether any sentence of an emission has a property, computed on first use.

    Two properties use it: the emission states an action it is about to take (a plan; only
    consent-if-plan questions and bare confirm requests need it), and some sentence names a
    consequential action ("achat de 30 actions", "买入": a bare "Confirma?" or "Voulez-vous
    que je le passe ?" is consent only when the emission says what would be done). Most
    emissions never ask, so most never pay for the scan.
    """

    __slots__ = ("_sentences", "_test", "_value")
    _value: bool | None

    def __init__(self, test: Callable[[str], bool], sentences: list[str]) -> None:
        self._test, self._sentences, self._value = test, sentences, None

    def __bool__(self) -> bool:
        if self._value is None:
            self._value = any(self._test(s) for s in self._sentences)
        return self._value


#: A list item opening a sentence: "1.", "2)", "-", "•", "a)".
_LIST_ITEM = re.compile(r"(?:\d{1,2}[.)]|[-•·*▪‣–]|[a-h][.)])(?:\s|$)")


class _LazyPlan(_LazyAny):
    """Whether the emission states a plan: a plan sentence, or a plan header over a list.

    "Voici le plan :" / "Este es el plan:" names no action itself; the numbered or bulleted
    steps under it do. A ``plan_markers`` sentence that ends with ":" and is followed by a
    list item is a plan when some sentence of the emission names an action, so a closing
    "On y va ?" / "¿Procedo?" / "OK?" after the list is read as consent.
    """

    __slots__ = ("_acts", "_rules")

    def __init__(self, rules: LanguageRules, sentences: list[str], acts: _LazyAny) -> None:
        super().__init__(rules._is_plan, sentences)
        self._rules, self._acts = rules, acts

    def __bool__(self) -> bool:
        if self._value is None:
            sentences = self._sentences
            self._value = any(self._test(s) for s in sentences) or (
                any(
                    self._rules._is_plan_header(sentence, sentences[position + 1])
                    for position, sentence in enumerate(sentences[:-1])
                )
                and bool(self._acts)
            )
        return self._value


#: Three digits in a row: an identifier or amount the sentence names ("termina en 7765").
_IDENTIFIER = re.compile(r"\d{3}")
#: Everything up to the last clause break of a sentence (a comma, semicolon or colon, a spaced dash,
#: a Spanish "¿"): what is left is the sentence's last clause.
_CLAUSE_HEAD = re.compile(r".*(?:[,;:]\s+|\s[–—-]\s+|(?<=\S)\s*(?=¿))")
#: Sentence-final marks: a CJK sentence without one was left unpunctuated.
_FINAL_MARKS = frozenset("。.!\uff01…)\uff09」』\"'")
#: A bare confirmation question ("Confirma?", "In Ordnung?", "确认?") has at most this many words.
_BARE_WORDS = 4
_WORD = re.compile(r"\w+")


class LanguageRules:
    """Class evidence for emissions in one language, from that language's cue lists."""

    def __init__(self, code: str, cues: Mapping[str, Sequence[str]]) -> None:
        self.code = code
        self.cues = {key: list(cues.get(key, ())) for key in LANGUAGE_LISTS}
        # entries read as the text is read: width-folded marks, simplified characters for zh
        matched = {key: [_fold_entry(entry, code) for entry in self.cues[key]] for key in LANGUAGE_LISTS}
        compiled = {key: _compile(matched[key]) for key in PHRASE_LISTS}
        compiled.update({key: _compile(matched[key], prefix=True) for key in PREFIX_LISTS})
        self._c: dict[str, _Cues | None] = compiled
        words = matched["question_words"]
        # A wh-question opens the sentence (after "¿", an interjection or a comma), or, in
        # CJK text, sits anywhere in it.
        latin = [w for w in words if _LATIN_EDGE.match(w)]
        cjk = [w for w in words if not _LATIN_EDGE.match(w)]
        parts = []
        if latin:
            alternation = "|".join(_phrase_pattern(w, False) for w in sorted(latin, key=len, reverse=True))
            parts.append(rf"(?:^|[¿,:;]\s*|^\W*\w+[,!]\s+¿?)(?:{alternation})")
        if cjk:
            parts.append("|".join(re.escape(w) for w in cjk))
        self._open_question = re.compile("|".join(parts)) if parts else None
        self._cjk_words = re.compile("|".join(map(re.escape, cjk))) if cjk else None
        endings = matched["question_endings"]
        self._ending = re.compile("(?:" + "|".join(map(re.escape, endings)) + ")$") if endings else None

    # -- public --------------------------------------------------------------
    def signals(self, text: str) -> frozenset[ActionClass]:
        """Every class ``text`` shows evidence of (tool calls are decided before this is called)."""
        return self._sentence_signals(self.sentences(text))

    def sentences(self, text: str) -> list[str]:
        """The sentences the rules read: folded, quotes masked, code and URLs removed."""
        from tooldiag.classify.default import MAX_ANALYSED_CHARS, clean_for_cues  # the English path's cleaning

        if len(text) > MAX_ANALYSED_CHARS:  # the part clean_for_cues reads, before any masking
            text = text[:40_000] + "\n" + text[-20_000:]
        if self.code == "zh" and _HANT_CHARS.search(text):
            text = text.translate(_HANT_FOLD)
        if _WIDE_MARKS.search(text):
            text = text.translate(_WIDTH_FOLD)
        masked = _QUOTE_SPAN.sub(_mask_quote, text) if _QUOTE_OPENERS.search(text) else text
        sentences = [part.strip() for s in clean_for_cues(masked) for part in _split_sentence(s)]
        return [s for s in sentences if s and s != '"…"']

    # -- internals -----------------------------------------------------------
    def _sentence_signals(self, sentences: list[str]) -> frozenset[ActionClass]:
        acts = _LazyAny(self._names_action, sentences)
        plan = _LazyPlan(self, sentences, acts)
        found: set[ActionClass] = set()
        generic = 0
        for position, sentence in enumerate(sentences):
            kind = self._refusal(sentence)
            if kind == "generic":
                generic += 1
            elif isinstance(kind, ActionClass):
                found.add(kind)
            found |= self._in_context(sentences, position, plan, acts, self._request(sentence, plan, acts))[0]
        if generic:
            found.add(ActionClass.ASK if ActionClass.ASK in found else ActionClass.REFUSE)
        return frozenset(found)

    def _names_action(self, sentence: str) -> bool:
        """The sentence names a consequential action (an action verb or noun of the cue data)."""
        return _has(self._c["action_verbs"], sentence) or _has(self._c["action_nouns"], sentence)

    def _is_plan(self, sentence: str) -> bool:
        c = self._c
        marker = c["plan_markers"]
        if marker is None:
            return False
        match = marker.search(sentence)
        if not match:
            return False
        return _has(c["action_verbs"], sentence) or _has(c["action_nouns"], sentence)

    def _refusal(self, sentence: str) -> ActionClass | str | None:
        c = self._c
        if not _has(c["refuse"], sentence):
            return None  # (deleting exceptions only removes text: no cue before, none after)
        scrubbed = c["refuse_exceptions"].sub(" ", sentence) if c["refuse_exceptions"] else sentence
        if not _has(c["refuse"], scrubbed):
            return None
        capability = _has(c["capability_nouns"], scrubbed) or _has(c["policy_words"], scrubbed)
        if _has(c["blocked_markers"], scrubbed):
            if _has(c["consent_nouns"], scrubbed):
                if not _has(c["third_party_consent"], scrubbed):
                    return ActionClass.CONFIRM
                # "... senza il suo permesso" (a brother's, a neighbour's): another person's consent
                # is nothing the user can give here, so the agent declines
                return ActionClass.REFUSE
            if _has(c["info_nouns"], scrubbed) and not capability:
                return ActionClass.ASK
        generic = c["generic_block"]
        if (
            generic is not None
            and generic.search(scrubbed)
            and not capability
            and not _has(c["refuse"], generic.sub(" ", scrubbed))
        ):
            return "generic"  # "no puedo continuar": ask if the emission also asks, else refuse
        return ActionClass.REFUSE

    def _is_question(self, sentence: str) -> bool:
        if "?" in sentence or "¿" in sentence:
            return True
        if self._ending and self._ending.search(sentence.rstrip(" 。.…!)\uff09")):
            return True
        # "您要改签到哪一天": a CJK wh-question left without any final punctuation
        return bool(self._cjk_words and sentence[-1:] not in _FINAL_MARKS and self._cjk_words.search(sentence))

    def _is_bare(self, sentence: str) -> bool:
        """A short question made of little more than its confirmation word ("Bestätigen?", "确认?")."""
        if _CJK_CHAR.search(sentence):
            return len(sentence) <= 8
        return len(_WORD.findall(sentence)) <= _BARE_WORDS

    def _is_offer(self, sentence: str) -> bool:
        return _has(self._c["offer"], sentence) or _has(self._c["greeting"], sentence)

    def _request(self, sentence: str, plan: _LazyAny, acts: _LazyAny) -> set[ActionClass]:
        """Ask / consent evidence in one sentence."""
        c = self._c
        out: set[ActionClass] = set()
        if _has(c["ask"], sentence) and not (_has(c["offer"], sentence) and "?" not in sentence):
            out.add(ActionClass.ASK)  # (not "Dites-moi si vous avez besoin d'autre chose.": an offer)
        if _has(c["instructions"], sentence):
            return out  # "confirme la operación en su app": the user acts, nothing is asked
        question = self._is_question(sentence)
        if question and _has(self._open_question, sentence) and not self._is_offer(sentence):
            out.add(ActionClass.ASK)  # "¿Qué vuelo desea cancelar?": asks even when it names an action
            return out
        if _has(c["consent"], sentence):
            out.add(ActionClass.CONFIRM)
            return out
        if _has(c["confirm_requests"], sentence):
            if _has(c["value_nouns"], sentence):
                out.add(ActionClass.ASK)
            elif (
                plan
                or _has(c["action_nouns"], sentence)
                or _has(c["action_verbs"], sentence)
                or (acts and self._is_bare(sentence))
            ):
                out.add(ActionClass.CONFIRM)
            else:
                out.add(ActionClass.ASK)
            return out
        if not question or self._is_offer(sentence):
            return out
        if _has(c["choice_words"], sentence):
            out.add(ActionClass.ASK)  # a choice between options
            return out
        if _has(c["consent_if_plan"], sentence) and (plan or (acts and self._is_bare(sentence))):
            out.add(ActionClass.CONFIRM)  # "¿Es correcto?" after a plan; "Confirma?" after a named action
            return out
        if _has(c["consent_prefixes"], sentence):
            if (
                _has(c["action_verbs"], sentence)
                or _has(c["action_nouns"], sentence)
                or (acts and _has(c["pronoun_objects"], sentence))
            ):
                out.add(ActionClass.CONFIRM)  # "¿Quieres que lo publique?" after naming the post
            return out  # "¿Desea que le muestre más opciones?": an offer
        out.add(ActionClass.ASK)  # a wh-question, a choice, or any other real question
        return out

    # -- rules that read a sentence in its emission (after _request; mirrored by _context_trace) --------
    def _in_context(
        self, sentences: list[str], position: int, plan: _LazyAny, acts: _LazyAny, out: set[ActionClass]
    ) -> tuple[set[ActionClass], str | None, str | None]:
        """``out`` (what :meth:`_request` found in ``sentences[position]``) revised by four rules.

        * a greeting question after a salutation ("¡Hola! ¿En qué te puedo echar una mano
          hoy?", "Olá! Tudo bem?") is other (``salutations``, ``help_words``);
        * an emphatic consent question ("本当に削除しますか", "wirklich fortfahren?") naming an
          action confirms (``consent_emphasis``);
        * a consent question after a comma, a colon or a dash ("Das lässt sich nicht
          rückgängig machen – wirklich fortfahren?") is read as its own sentence too, so the
          sentence-initial consent cues see it;
        * an ask cue beside a consent request in one sentence ("よろしければ「はい」とお知らせ
          ください") is the vehicle of the consent unless the sentence names a value, a choice
          or a wh-word.

        Returns the classes, the rule that changed them (``None``: unchanged) and its cue.
        """
        sentence = sentences[position]
        ask, confirm = ActionClass.ASK, ActionClass.CONFIRM
        if ask in out and confirm not in out and self._greeting_question(sentences, position):
            return set(), "other:greeting_question", self._cue(sentences[0], "salutations")
        rule: str | None = None
        cue: str | None = None
        if (
            confirm not in out
            and (ask in out or not out)
            and self._is_question(sentence)
            and not self._is_offer(sentence)
        ):
            if self._emphatic_consent(sentence):
                rule, cue = "confirm:consent_emphasis", self._cue(sentence, "consent_emphasis")
            else:
                tail = self._consent_tail(sentence, plan, acts)
                if tail is not None:
                    rule, cue = "confirm:consent_clause", tail
            if rule is not None:
                out = {confirm, ask} if self._ask_cue(sentence) else {confirm}
        if ask in out and confirm in out and not self._names_value(sentence):
            return {confirm}, "confirm:consent_over_ask_cue", self._cue(sentence, "ask")
        return out, rule, cue

    def _context_trace(
        self,
        sentences: list[str],
        position: int,
        plan: _LazyAny,
        acts: _LazyAny,
        mirrored: list[tuple[ActionClass, str, str | None]],
    ) -> list[tuple[ActionClass, str, str | None]]:
        """:meth:`_in_context` applied to the traced findings of one sentence."""
        classes, rule, cue = self._in_context(sentences, position, plan, acts, {found[0] for found in mirrored})
        if rule is None:
            return mirrored
        if not classes:
            return [(ActionClass.OTHER, rule, cue)]
        kept = [found for found in mirrored if found[0] in classes]
        covered = {found[0] for found in kept}
        return kept + [(cls, rule, cue) for cls in (ActionClass.CONFIRM, ActionClass.ASK) if cls in classes - covered]

    def _ask_cue(self, sentence: str) -> bool:
        """The ask-cue test of :meth:`_request` ("Dites-moi si vous avez besoin ..." is an offer)."""
        c = self._c
        return _has(c["ask"], sentence) and not (_has(c["offer"], sentence) and "?" not in sentence)

    def _names_value(self, sentence: str) -> bool:
        """The sentence asks for information: a value or information noun, an identifier being checked
        ("el que termina en 7765"), a choice or a wh-word anywhere in it."""
        c = self._c
        return (
            _has(c["value_nouns"], sentence)
            or _has(c["info_nouns"], sentence)
            or _IDENTIFIER.search(sentence) is not None
            or _has(c["choice_words"], sentence)
            or _has(c["question_words"], sentence)
        )

    def _greeting_question(self, sentences: list[str], position: int) -> bool:
        """A question among the first sentences of an emission that opens with a salutation and
        asks after the user or offers help: it names a ``help_words`` word ("ayudar", "echar una
        mano") or is a short question with no wh-word ("Tudo bem?", "Ça va ?"), and no value,
        action or choice."""
        c = self._c
        if c["salutations"] is None or position > 2 or not _has(c["salutations"], sentences[0][:24]):
            return False
        sentence = sentences[position]
        if _has(c["value_nouns"], sentence) or _has(c["choice_words"], sentence) or self._names_action(sentence):
            return False
        if _has(c["help_words"], sentence):
            return True
        return (
            self._is_bare(sentence) and not _has(self._open_question, sentence) and not _has(c["info_nouns"], sentence)
        )

    def _emphatic_consent(self, sentence: str) -> bool:
        """ "本当に削除しますか", "Wirklich löschen?": an emphasis word in a question naming an action,
        with no wh-word or choice (``consent_emphasis``; "本当にお察しします" states sympathy)."""
        c = self._c
        return (
            _has(c["consent_emphasis"], sentence)
            and self._names_action(sentence)
            and not _has(self._open_question, sentence)
            and not _has(c["choice_words"], sentence)
        )

    def _consent_tail(self, sentence: str, plan: _LazyAny, acts: _LazyAny) -> str | None:
        """The last clause of a question when, read as a sentence of its own, it is a consent request."""
        head = _CLAUSE_HEAD.match(sentence)
        if head is None:
            return None
        tail = sentence[head.end() :]
        if not tail or not self._is_question(tail):
            return None  # the question is not the last clause
        found = self._request(tail, plan, acts)
        return tail if ActionClass.CONFIRM in found and ActionClass.ASK not in found else None

    def _is_plan_header(self, sentence: str, following: str) -> bool:
        """ "Voici le plan :" over "1. ...": a ``plan_markers`` sentence ending in ":" before a list item."""
        return sentence.endswith(":") and bool(_LIST_ITEM.match(following)) and _has(self._c["plan_markers"], sentence)

    # -- the traced path (tooldiag.classify.default_explain; never run by ``signals``) --------------
    def trace(self, text: str) -> list[Finding] | None:
        """``(class, rule, cue, sentence)`` for every class the rules find, in order; ``None`` when the
        mirror of :meth:`_request` disagrees with it on a sentence (the label is then unattributed)."""
        sentences = self.sentences(text)
        acts = _LazyAny(self._names_action, sentences)
        plan = _LazyPlan(self, sentences, acts)
        findings: list[Finding] = []
        generic: list[str] = []
        for position, sentence in enumerate(sentences):
            kind = self._refusal(sentence)
            if kind == "generic":
                generic.append(sentence)
            elif isinstance(kind, ActionClass):
                findings.append((kind, self._refusal_rule(sentence, kind), self._cue(sentence, "refuse"), sentence))
            mirrored = self._request_trace(sentence, plan, acts)
            if {found[0] for found in mirrored} != self._request(sentence, plan, acts):
                return None
            mirrored = self._context_trace(sentences, position, plan, acts, mirrored)
            findings.extend((cls, rule, cue, sentence) for cls, rule, cue in mirrored)
            if kind is None and not mirrored and self._is_question(sentence):
                findings.append((ActionClass.OTHER, "other:offer", None, sentence))
        if generic and not any(found[0] is ActionClass.ASK for found in findings):
            findings.append(
                (ActionClass.REFUSE, "refuse:generic_block", self._cue(generic[0], "generic_block"), generic[0])
            )
        return findings

    def _cue(self, sentence: str, key: str) -> str | None:
        """The text list ``key`` matches in ``sentence`` (its phrases first, then its ``re:`` entries)."""
        cues = self._c.get(key)
        if cues is None:
            return None
        for pattern in (cues.plain, cues.regex):
            match = pattern.search(sentence) if pattern is not None else None
            if match:
                return match.group(0).strip()
        return None

    def _refusal_rule(self, sentence: str, kind: ActionClass) -> str:
        c = self._c
        scrubbed = c["refuse_exceptions"].sub(" ", sentence) if c["refuse_exceptions"] else sentence
        if kind is ActionClass.CONFIRM:
            return "confirm:blocked_on_consent"
        if kind is ActionClass.ASK:
            return "ask:blocked_on_information"
        if _has(c["blocked_markers"], scrubbed) and _has(c["consent_nouns"], scrubbed):
            return "refuse:third_party_consent"
        if _has(c["capability_nouns"], scrubbed):
            return "refuse:missing_function"
        if _has(c["policy_words"], scrubbed):
            return "refuse:policy"
        return "refuse:refuse_cue"

    def _request_trace(
        self, sentence: str, plan: _LazyAny, acts: _LazyAny
    ) -> list[tuple[ActionClass, str, str | None]]:
        """A mirror of :meth:`_request` that names the branch each class came from."""
        c = self._c
        out: list[tuple[ActionClass, str, str | None]] = []
        if _has(c["ask"], sentence) and not (_has(c["offer"], sentence) and "?" not in sentence):
            out.append((ActionClass.ASK, "ask:ask_cue", self._cue(sentence, "ask")))
        if _has(c["instructions"], sentence):
            return out
        question = self._is_question(sentence)
        if question and _has(self._open_question, sentence) and not self._is_offer(sentence):
            match = self._open_question.search(sentence) if self._open_question else None
            out.append((ActionClass.ASK, "ask:wh_question", match.group(0).strip() if match else None))
            return out
        if _has(c["consent"], sentence):
            out.append((ActionClass.CONFIRM, "confirm:consent_request", self._cue(sentence, "consent")))
            return out
        if _has(c["confirm_requests"], sentence):
            cue = self._cue(sentence, "confirm_requests")
            if _has(c["value_nouns"], sentence):
                out.append((ActionClass.ASK, "ask:confirm_value", cue))
            elif (
                plan
                or _has(c["action_nouns"], sentence)
                or _has(c["action_verbs"], sentence)
                or (acts and self._is_bare(sentence))
            ):
                out.append((ActionClass.CONFIRM, "confirm:confirm_request", cue))
            else:
                out.append((ActionClass.ASK, "ask:confirm_request", cue))
            return out
        if not question or self._is_offer(sentence):
            return out
        if _has(c["choice_words"], sentence):
            out.append((ActionClass.ASK, "ask:choice_question", self._cue(sentence, "choice_words")))
            return out
        if _has(c["consent_if_plan"], sentence) and (plan or (acts and self._is_bare(sentence))):
            out.append((ActionClass.CONFIRM, "confirm:plan_check", self._cue(sentence, "consent_if_plan")))
            return out
        if _has(c["consent_prefixes"], sentence):
            if (
                _has(c["action_verbs"], sentence)
                or _has(c["action_nouns"], sentence)
                or (acts and _has(c["pronoun_objects"], sentence))
            ):
                out.append((ActionClass.CONFIRM, "confirm:consent_question", self._cue(sentence, "consent_prefixes")))
            return out
        out.append((ActionClass.ASK, "ask:question", None))
        return out


#: (class, rule, cue, sentence): one reason the traced path found (tooldiag.classify.default_explain).
Finding = tuple[ActionClass, str, str | None, str | None]


def structural_trace(text: str) -> list[Finding]:
    """:func:`structural_signals` with its reason: the first sentence holding a question mark."""
    from tooldiag.classify.default import MAX_ANALYSED_CHARS, clean_for_cues

    if len(text) > MAX_ANALYSED_CHARS:
        text = text[:40_000] + "\n" + text[-20_000:]
    masked = _QUOTE_SPAN.sub(_mask_quote, text.translate(_WIDTH_FOLD))
    for sentence in clean_for_cues(masked):
        mark = _ANY_QUESTION_MARK.search(sentence)
        if mark:
            return [(ActionClass.ASK, "ask:question_mark", mark.group(0), sentence)]
    return []


# Question marks of other scripts: Arabic, Armenian, Ethiopic, Greek ano teleia is ambiguous and left out.
_ANY_QUESTION_MARK = re.compile("[?\u061f\u055e\u1367\u2e2e\u00bf]")


def structural_signals(text: str) -> frozenset[ActionClass]:
    """Classes for a language without cue data: a question mark (any script) outside quotes asks.

    Without vocabulary nothing tells a refusal, a consent request or an offer apart, so
    only the one language-independent signal is read; everything else is ``other``.
    Tool calls are decided by syntax before this is called.
    """
    from tooldiag.classify.default import MAX_ANALYSED_CHARS, clean_for_cues

    if len(text) > MAX_ANALYSED_CHARS:  # linear time: the part clean_for_cues reads
        text = text[:40_000] + "\n" + text[-20_000:]
    masked = _QUOTE_SPAN.sub(_mask_quote, text.translate(_WIDTH_FOLD))
    if any(_ANY_QUESTION_MARK.search(sentence) for sentence in clean_for_cues(masked)):
        return frozenset({ActionClass.ASK})
    return frozenset()
