# ruff: noqa: RUF001  (full-width punctuation and Cyrillic are the point of these tests)
"""The default scheme outside English: per-language cue rules, the structural fallback, the dev sets."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tooldiag.classify import ActionClass, classify, get_classifier
from tooldiag.classify.cues import builtin_languages, load_builtin_language
from tooldiag.classify.default import DefaultClassifier
from tooldiag.classify.multilingual import LANGUAGE_LISTS, REQUIRED_LISTS, LanguageRules, structural_signals
from tooldiag.classify.paper import PaperClassifier

DATA = Path(__file__).resolve().parents[1] / "data" / "classifier"
LANGUAGES = ("es", "fr", "de", "pt", "it", "zh", "ja")
ASK, REFUSE, CONFIRM, OTHER = ActionClass.ASK, ActionClass.REFUSE, ActionClass.CONFIRM, ActionClass.OTHER


def rows(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("language", LANGUAGES)
def test_dev_set_accuracy_and_recall(language):
    data = rows(f"{language}-dev.jsonl")
    assert len(data) >= 80 and {r["language"] for r in data} == {language}
    assert {r["label"] for r in data} == {a.value for a in ActionClass}
    hits, totals = Counter(), Counter()
    for row in data:
        totals[row["label"]] += 1
        hits[row["label"]] += classify(row["content"], row["tool_calls"]).value == row["label"]
    assert sum(hits.values()) / len(data) >= 0.99
    for label, total in totals.items():
        assert hits[label] / total >= 0.97, label


def test_dev_files_share_the_labelled_set_format():
    ids = []
    for name in [f"{code}-dev.jsonl" for code in LANGUAGES] + ["xx-dev.jsonl"]:
        for row in rows(name):
            assert row["split"] == "dev" and row["role"] == "assistant" and row["note"]
            assert row["style"] in {"bfcl", "tau2", "general"}
            assert row["register"] in {"terse_fc", "chatty", "reasoning", "tool_specialised", "support"}
            ids.append(row["id"])
    assert len(ids) == len(set(ids))


def test_unsupported_languages_get_the_structural_rules():
    data = rows("xx-dev.jsonl")
    assert {r["language"] for r in data} >= {"nl", "ru", "ko", "ar", "tr"}
    classifier = get_classifier("default")
    for row in data:
        if row["content"] and not row["tool_calls"]:
            assert classifier.language_of(row["content"]) not in classifier.languages
    assert classify("Wat is uw ordernummer?") is ASK
    assert classify("Uw bestelling is geannuleerd.") is OTHER
    assert classify("ما هو رقم طلبك؟") is ASK  # Arabic question mark
    assert classify("Я отправил Ивану сообщение «Ты придёшь завтра?», он его уже прочитал.") is OTHER
    assert structural_signals("주문이 취소되었습니다.") == frozenset()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("¿Desea algo más?", OTHER),
        ("¿En qué carpeta desea crear el archivo?", ASK),
        ("Voy a cancelar el pedido #W1 y reembolsar 54 € a su Visa. ¿Desea que proceda?", CONFIRM),
        ("No puedo continuar sin su confirmación.", CONFIRM),
        ("No puedo moverlo sin saber la carpeta de destino.", ASK),
        ("No encontré ningún archivo llamado x.txt.", OTHER),
        ("Souhaitez-vous autre chose ?", OTHER),
        ("Je ne peux pas réserver d'hôtel : aucune fonction ne le permet.", REFUSE),
        ("Soll ich fortfahren?", CONFIRM),
        ("Welche Bestellung meinen Sie?", ASK),
        ("Dieser Schritt kann nicht rückgängig gemacht werden.", OTHER),
        ("Posso cancelar o pedido #W1?", CONFIRM),
        ("Puoi confermare?", ASK),
        ("Potrebbe confermare il numero dell'ordine?", ASK),
        ("您的订单号是多少？", ASK),
        ("您还能登录注册时使用的邮箱吗", ASK),  # a question without a question mark
        ("还有什么可以帮您的吗？", OTHER),
        ("我将为您取消订单 W1 并退款 54 美元。是否继续？", CONFIRM),
        ("他に何かお手伝いできることはありますか", OTHER),
        ("登録時のメールアドレスにまだアクセスできますか。", ASK),
        ("この操作は元に戻せません。", OTHER),
        ("ご注文をキャンセルしてもよろしいですか？", CONFIRM),
    ],
)
def test_class_semantics_per_language(text, expected):
    assert classify(text) is expected


def test_question_marks_inside_quotes_do_not_ask():
    assert classify('He publicado su tuit: "¿Alguien más está viendo el partido?".') is OTHER
    assert classify("J'ai envoyé « Tu viens demain ? » à Julie.") is OTHER
    assert classify("我给他发了「你明天来吗？」。") is OTHER
    assert classify("Ich habe „Kommst du morgen?“ an Lena geschickt.") is OTHER


def test_think_blocks_are_not_addressed_to_the_user():
    assert classify("<think>¿Debo preguntar la fecha? No.</think>La temperatura es de 31 °C.") is OTHER
    assert classify("<think>The user wants a refund.</think>¿Cuál es el número del pedido?") is ASK


def test_text_form_calls_are_decided_before_the_language():
    assert classify("Perfecto, lo consulto.\n[get_order_details(order_id='W1')]") is ActionClass.TOOL_CALL
    assert classify('好的。<tool_call>{"name": "ls", "arguments": {}}</tool_call>') is ActionClass.TOOL_CALL


def test_classifier_languages_attributes():
    default = get_classifier("default")
    assert isinstance(default, DefaultClassifier)
    assert default.languages == frozenset({"en", *LANGUAGES})
    assert default.language_of("Soll ich fortfahren?") == "de"
    assert PaperClassifier.languages == frozenset({"en"})
    # the paper scheme keeps reading every language with its English rules
    assert classify("Soll ich fortfahren?", scheme="paper") is ASK


def test_shipped_cue_files_are_complete_data():
    assert set(builtin_languages()) == set(LANGUAGES)
    for code in LANGUAGES:
        data = load_builtin_language(code)
        assert "_about" in data
        lists = {key for key in data if not key.startswith("_")}
        assert lists <= set(LANGUAGE_LISTS), code
        assert set(REQUIRED_LISTS) | {"refuse_exceptions", "greeting"} <= lists, code
        LanguageRules(code, data)  # every entry compiles


def test_rules_are_linear_on_hostile_input():
    import time

    text = "¿" + "«¿no puedo?» " * 40_000 + "吗" * 100_000
    start = time.perf_counter()
    classify(text)
    assert time.perf_counter() - start < 1.0
