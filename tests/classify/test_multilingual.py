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
A, R, C, O = ActionClass.ASK, ActionClass.REFUSE, ActionClass.CONFIRM, ActionClass.OTHER


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
    assert classify("Wat is uw ordernummer?") is A
    assert classify("Uw bestelling is geannuleerd.") is O
    assert classify("ما هو رقم طلبك؟") is A  # Arabic question mark
    assert classify("Я отправил Ивану сообщение «Ты придёшь завтра?», он его уже прочитал.") is O
    assert structural_signals("주문이 취소되었습니다.") == frozenset()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("¿Desea algo más?", O),
        ("¿En qué carpeta desea crear el archivo?", A),
        ("Voy a cancelar el pedido #W1 y reembolsar 54 € a su Visa. ¿Desea que proceda?", C),
        ("No puedo continuar sin su confirmación.", C),
        ("No puedo moverlo sin saber la carpeta de destino.", A),
        ("No encontré ningún archivo llamado x.txt.", O),
        ("Souhaitez-vous autre chose ?", O),
        ("Je ne peux pas réserver d'hôtel : aucune fonction ne le permet.", R),
        ("Soll ich fortfahren?", C),
        ("Welche Bestellung meinen Sie?", A),
        ("Dieser Schritt kann nicht rückgängig gemacht werden.", O),
        ("Posso cancelar o pedido #W1?", C),
        ("Puoi confermare?", A),
        ("Potrebbe confermare il numero dell'ordine?", A),
        ("您的订单号是多少？", A),
        ("您还能登录注册时使用的邮箱吗", A),  # a question without a question mark
        ("还有什么可以帮您的吗？", O),
        ("我将为您取消订单 W1 并退款 54 美元。是否继续？", C),
        ("他に何かお手伝いできることはありますか", O),
        ("登録時のメールアドレスにまだアクセスできますか。", A),
        ("この操作は元に戻せません。", O),
        ("ご注文をキャンセルしてもよろしいですか？", C),
    ],
)
def test_class_semantics_per_language(text, expected):
    assert classify(text) is expected


def test_question_marks_inside_quotes_do_not_ask():
    assert classify('He publicado su tuit: "¿Alguien más está viendo el partido?".') is O
    assert classify("J'ai envoyé « Tu viens demain ? » à Julie.") is O
    assert classify("我给他发了「你明天来吗？」。") is O
    assert classify("Ich habe „Kommst du morgen?“ an Lena geschickt.") is O


def test_think_blocks_are_not_addressed_to_the_user():
    assert classify("<think>¿Debo preguntar la fecha? No.</think>La temperatura es de 31 °C.") is O
    assert classify("<think>The user wants a refund.</think>¿Cuál es el número del pedido?") is A


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
    assert classify("Soll ich fortfahren?", scheme="paper") is A


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
