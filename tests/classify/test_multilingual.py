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


@pytest.mark.parametrize(
    "text, expected",
    [
        ("¿Me puede dar su número de reserva, por favor?", ASK),
        ("Para seguir, ¿cuál es la fecha de nacimiento del titular?", ASK),
        ("Disculpe, pero no tengo la posibilidad de acceder a sistemas externos.", REFUSE),
        ("Perfecto. Entonces cancelo la reserva y le devuelvo 120 €. ¿Le parece bien?", CONFIRM),
        ("Hecho. ¿Quiere que le envíe también el recibo por correo? Si no, ¡que tenga un buen día!", OTHER),
        ("Lamentablemente, esa tarifa no permite cambios.", REFUSE),
        ("¿Qué talla necesita?", ASK),
        ("¿Realizo el pedido ahora?", CONFIRM),
        ("He encontrado 3 resultados. Avíseme si quiere que profundice en alguno.", OTHER),
        ("Quelle est la date de votre vol ?", ASK),
        ("Malheureusement, il m'est impossible de modifier un billet non remboursable.", REFUSE),
        ("Je vais supprimer les 4 fichiers listés ci-dessus. Je continue ?", CONFIRM),
        ("Votre colis a été expédié. Puis-je faire autre chose pour vous ?", OTHER),
        ("Pouvez-vous me donner votre numéro de client ?", ASK),
        ("Wie lautet Ihr Nachname?", ASK),
        ("Das ist mit meinen Werkzeugen leider nicht machbar.", REFUSE),
        ("Ich würde jetzt 3 Tickets für 150 € buchen. Passt das?", CONFIRM),
        ("Ihre Rückerstattung ist unterwegs. Kann ich sonst noch helfen?", OTHER),
        ("Können Sie mir die Bestellnummer nennen?", ASK),
        ("Qual é a data de nascimento do titular?", ASK),
        ("Infelizmente não tenho como acessar o sistema do banco.", REFUSE),
        ("Vou reservar o quarto duplo por R$ 450. Posso confirmar?", CONFIRM),
        ("Feito! Precisa de mais alguma coisa?", OTHER),
        ("Me passa o número do pedido, por favor?", ASK),
        ("Qual è la sua data di nascita?", ASK),
        ("Purtroppo non ho modo di accedere al suo conto bancario.", REFUSE),
        ("Prenoterò due posti per 90 €. Confermo?", CONFIRM),
        ("Ordine spedito! Serve altro?", OTHER),
        ("Mi può dare il numero della prenotazione?", ASK),
        ("请问您的出生日期是？", ASK),
        ("很抱歉，我没有权限访问银行系统。", REFUSE),
        ("我将为您预订两张票，共 300 元。确认预订吗？", CONFIRM),
        ("已完成！还需要其他帮助吗？", OTHER),
        ("麻烦告诉我您的会员号。", ASK),
        ("生年月日を教えていただけますでしょうか。", ASK),
        ("申し訳ありませんが、銀行システムにはアクセスできません。", REFUSE),
        ("2 枚のチケットを 300 ドルで予約いたします。よろしいでしょうか？", CONFIRM),
        ("完了しました！他にご用件はございますか？", OTHER),
        ("会員番号をお伺いしてもよろしいですか？", ASK),
        ("Listo, el archivo se ha renombrado. ¿Necesita que haga algo más con él?", OTHER),
        ("La transferencia se completó. ¿Le gustaría programar otra para el mes próximo?", OTHER),
        ("No veo ninguna reserva a su nombre. ¿Podría darme el código de confirmación?", ASK),
        ("No me está permitido compartir datos de otros clientes.", REFUSE),
        ("Para confirmar: ¿desea cancelar ambos vuelos y recibir un reembolso de 430 €?", CONFIRM),
        ("¿Quiere el envío estándar o el exprés?", ASK),
        ("Tu saldo actual es de 35 €. Si quieres, puedo mostrarte los últimos movimientos.", OTHER),
        ("Lo siento, pero eso no lo puedo hacer: no dispongo de una herramienta para ello.", REFUSE),
        ("C'est noté, votre réservation est confirmée pour le 3 mai. Bonne journée !", OTHER),
        ("Pour quelle date souhaitez-vous réserver ?", ASK),
        ("Souhaitez-vous que j'annule la commande #W88 ?", CONFIRM),
        ("Désolé, je ne suis pas en mesure d'effectuer des virements internationaux.", REFUSE),
        ("Le fichier a bien été supprimé. Souhaitez-vous que je vous aide avec autre chose ?", OTHER),
        ("Sie haben zwei Konten. Welches soll ich verwenden?", ASK),
        ("Ich storniere dann beide Flüge und erstatte 430 €. Einverstanden?", CONFIRM),
        ("Die Datei wurde umbenannt. Möchten Sie noch etwas erledigen?", OTHER),
        ("Dafür fehlt mir leider die passende Funktion.", REFUSE),
        ("Para qual endereço devo enviar?", ASK),
        ("Desculpe, não tenho permissão para alterar dados de outros clientes.", REFUSE),
        ("Seu pedido foi entregue ontem. Quer que eu verifique mais alguma coisa?", OTHER),
        ("Então vou cancelar os dois voos e reembolsar R$ 430. Tudo bem?", CONFIRM),
        ("Per quale data vuole prenotare?", ASK),
        ("Mi spiace, non sono autorizzata a condividere dati di altri clienti.", REFUSE),
        ("Il file è stato rinominato. Posso aiutarla con qualcos'altro?", OTHER),
        ("Annullo entrambi i voli e rimborso 430 €. Va bene per lei?", CONFIRM),
        ("您要寄到哪个地址？", ASK),
        ("抱歉，我不能透露其他客户的信息。", REFUSE),
        ("文件已重命名。还有别的需要帮忙的吗？", OTHER),
        ("我会取消两个航班并退款 430 元，可以吗？", CONFIRM),
        ("どちらの住所に送りますか？", ASK),
        ("申し訳ございませんが、他のお客様の情報はお伝えできません。", REFUSE),
        ("ファイル名を変更しました。ほかにお手伝いできることはありますか？", OTHER),
        ("両方のフライトをキャンセルし、430 ドルを返金いたします。よろしいでしょうか。", CONFIRM),
    ],
)
def test_phrasings_outside_the_dev_sets(text, expected):
    """Written after the cue files, to catch lists that only fit the dev sets' wording."""
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


@pytest.mark.parametrize(
    "text, expected",
    [
        # consent after a named action: plans with any consequential verb, bare "Confirma?", "want me to <it>?"
        ("Vou desativar o seu plano de dados extra hoje. Concorda?", CONFIRM),
        ("Reembolso listo: 45 € a su Mastercard. ¿Confirma?", CONFIRM),
        ("Commande prête : 2 casques à 89 €. Voulez-vous que je la passe ?", CONFIRM),
        ("Ich kündige Ihren Zweitvertrag zum 31. Mai. Passt?", CONFIRM),
        ("我要把这三张照片删掉，可以吗？", CONFIRM),
        # refusals without a first-person cue: passive policy rules, partial refusals, Traditional Chinese
        ("Les articles personnalisés ne peuvent être ni échangés ni remboursés.", REFUSE),
        ("Posso spostare la prenotazione, ma non posso cambiare il nominativo.", REFUSE),
        ("抱歉，我無法存取其他使用者的帳號。", REFUSE),
        ("すみません、その情報は教えられないんです。", REFUSE),
        # offers of further help are other, even when they open like a request
        ("Listo, ya está enviado. Avíseme si necesita algo más.", OTHER),
        ("已为您取消订单。还需要查看其他订单吗？", OTHER),
        # asks without a question mark, new wh-phrases, "confirm whether" checks
        ("Merci de me transmettre la référence de votre billet.", ASK),
        ("De que forma você prefere receber o reembolso?", ASK),
        ("Potrebbe confermare se il pacco è arrivato danneggiato?", ASK),
        ("您的会员卡号是多少", ASK),
    ],
)
def test_issue_11_round_2_families(text, expected):
    assert classify(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # 5. "è" is French too; short Italian is recognised by its function words
        ("Il me manque le numéro du deuxième bagage.", ASK),
        ("Il documento verrà sovrascritto. Continuo?", CONFIRM),
        # 7. blocked on a third party's consent: the agent declines
        ("Non posso accedere al telefono di tuo fratello senza il suo permesso.", REFUSE),
        # 8. cue entries with full-width marks match the width-folded text
        ("メールを送信します。よろしい？", CONFIRM),
        # 9. Traditional characters of support dialogue fold to the simplified cues
        ("請問您想換成哪一個座位？", ASK),
    ],
)
def test_issue_11_round_3_code_families(text, expected):
    assert classify(text) is expected
