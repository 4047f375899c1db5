# ruff: noqa: RUF001  (full-width punctuation is the point of these tests)
"""The non-English rules that read a sentence in its emission, and the detection of short replies.

Each rule gets emissions that the rule turns (every one of them was classed otherwise before
the rule existed) and near neighbours it must leave alone. All rows are written for these
tests, none comes from the labelled files.
"""

import pytest

from tooldiag.classify import ActionClass, classify
from tooldiag.classify.cues import builtin_languages, load_builtin_language
from tooldiag.classify.default import DefaultClassifier
from tooldiag.classify.language import UNDETERMINED, detect_language
from tooldiag.classify.multilingual import LANGUAGE_LISTS, LanguageRules

ASK, CONFIRM, OTHER = ActionClass.ASK, ActionClass.CONFIRM, ActionClass.OTHER
NEW_LISTS = ("salutations", "help_words", "consent_emphasis")


def test_new_lists_are_known_and_every_language_fills_them():
    assert set(NEW_LISTS) <= set(LANGUAGE_LISTS)
    for code in builtin_languages():
        cues = load_builtin_language(code)
        assert all(cues.get(name) for name in NEW_LISTS), code
    assert "本当に" not in load_builtin_language("ja")["consent"]  # an intensifier, not consent on its own


@pytest.mark.parametrize(
    "label, text",
    [
        (OTHER, "Salut ! Ça va ? Je suis là pour t'aider avec ta commande."),
        (OTHER, "Olá! Em que posso te ajudar hoje?"),
        (OTHER, "¡Buenas! ¿En qué te echo una mano?"),
        (OTHER, "Hallo! Womit darf ich Ihnen heute behilflich sein?"),
        (OTHER, "Ciao! 😊 Come posso esserti utile oggi?"),
        # a salutation does not turn a real question into a greeting
        (ASK, "¡Hola! ¿Cuál es su número de pedido?"),
        (ASK, "Bonjour ! Quelle est votre adresse de livraison ?"),
        (ASK, "Olá! Qual é a data do voo?"),
        (ASK, "Ciao! Preferisci il treno o l'aereo?"),
        # no salutation: a wh-question about help is still read by the other rules
        (ASK, "¿En qué ciudad quieres que busque el hotel?"),
    ],
)
def test_greeting_question_after_a_salutation_is_other(label, text):
    assert classify(text) is label


@pytest.mark.parametrize(
    "label, text",
    [
        (CONFIRM, "Tengo listo el reembolso de 45 €, ¿lo tramito?"),
        (CONFIRM, "Das lässt sich nicht rückgängig machen – wirklich fortfahren?"),
        (CONFIRM, "J'ai préparé le virement de 250 € pour Paul, je l'envoie ?"),
        # an offer after a finished task stays an offer whatever its last clause says
        (OTHER, "C'est fait, la commande est annulée. Si vous voulez, je vous envoie le reçu ?"),
        (OTHER, "Pronto, pedido cancelado. Se quiser, te envio o comprovante?"),
        # the last clause asks for information: no consent
        (ASK, "Ya tengo los datos, ¿cuándo quieres que lo envíe?"),
        (ASK, "Tengo el paquete listo, ¿a qué dirección quieres que lo envíe?"),
    ],
)
def test_consent_question_in_the_last_clause(label, text):
    assert classify(text) is label


@pytest.mark.parametrize(
    "label, text",
    [
        (CONFIRM, "本当にこのプロジェクトを削除しますか？"),
        (CONFIRM, "您真的要删除这个文件夹吗？"),
        (CONFIRM, "Vuoi davvero cancellare l'abbonamento annuale?"),
        # sympathy, not consent; an intensified wh-question still asks
        (OTHER, "本当にお疲れさまでした。ご予約は完了しています。"),
        (ASK, "Wirklich? Welche Datei soll ich löschen?"),
    ],
)
def test_emphatic_consent_needs_a_question_naming_an_action(label, text):
    assert classify(text) is label


@pytest.mark.parametrize(
    "label, text",
    [
        (CONFIRM, "Dites-moi « oui » et je lance le virement."),
        (CONFIRM, "ご了承いただける場合は「はい」とお伝えください。"),
        # the same request names a value or offers a choice: it asks
        (ASK, "Dime el número de pedido y lo cancelo."),
        (ASK, "麻烦您提供一下手机号码，好吗？"),
    ],
)
def test_consent_request_outranks_the_ask_cue_that_carries_it(label, text):
    assert classify(text) is label


@pytest.mark.parametrize(
    "label, text",
    [
        (
            CONFIRM,
            "Voici le plan :\n1. supprimer les anciens journaux\n2. redémarrer le service\n\n"
            "Est-ce que ça vous convient comme ça ?",
        ),
        (
            CONFIRM,
            "Este es el plan:\n1. borrar la carpeta temporal\n2. reiniciar el servidor\n\n"
            "¿Te parece bien si lo hago de esta forma?",
        ),
        # a header over a list of things that are not actions is no plan
        (ASK, "Voici le plan du site :\n- Accueil\n- Produits\n\nEst-ce que ça vous convient comme ça ?"),
        # a header with no list under it is no plan either
        (ASK, "Voici le plan : on en parle demain. Est-ce que ça vous convient comme ça ?"),
    ],
)
def test_plan_header_over_a_list_is_a_plan(label, text):
    assert classify(text) is label


def test_traced_reasons_name_the_new_rules():
    rules = LanguageRules("pt", load_builtin_language("pt"))
    assert [found[1] for found in rules.trace("Olá! Precisa de ajuda com algo hoje?") or []] == [
        "other:greeting_question"
    ]
    de = LanguageRules("de", load_builtin_language("de"))
    reasons = {found[1] for found in de.trace("Das lässt sich nicht rückgängig machen – wirklich fortfahren?") or []}
    assert reasons & {"confirm:consent_emphasis", "confirm:consent_clause"}
    explanation = DefaultClassifier().explain("Dites-moi « oui » et je lance le virement.")
    assert explanation.label is CONFIRM and explanation.rule.startswith("confirm:")


@pytest.mark.parametrize(
    "code, text",
    [
        ("es", "Configuración guardada."),
        ("es", "¿Confirmas la transferencia?"),
        ("fr", "Réservation annulée."),
        ("fr", "Fichier supprimé."),
        ("de", "Zahlung fehlgeschlagen."),
        ("de", "Buchung bestätigt."),
        ("pt", "Endereço de entrega?"),
        ("pt", "Cartão bloqueado."),
        ("it", "Indirizzo di consegna?"),
        ("it", "Prenotazione confermata."),
        ("ja", "予約変更済"),  # no kana, but Japanese-only character forms
        ("zh", "预约已确认"),
        ("zh", "預約已確認"),  # traditional Chinese stays Chinese
    ],
)
def test_short_replies_are_detected(code, text):
    assert detect_language(text) == code


@pytest.mark.parametrize("text", ["Booking cancelled.", "Processing your request.", "Travel date?", "OK."])
def test_short_english_stays_english(text):
    assert detect_language(text) in {"en", UNDETERMINED}


def test_a_single_letter_does_not_win_a_tie():
    # "la" and "le" are Spanish and French; "y" is Spanish only but one letter, "voici" is French
    assert detect_language("Voici le plan : 1. sauvegarder la base ; 2. appliquer la migration. On y va ?") == "fr"
