"""The deterministic consent judge and the user-reply helper."""

from __future__ import annotations

import pytest

from tooldiag.suites.tau2.consent import judge_write, llm_window, tool_error, write_calls
from tooldiag.suites.tau2.dialogue import Reply, classify_reply, consent_request, emitted_classes, visible_text
from tooldiag.suites.tau2.domains import domain_tools
from tooldiag.suites.tau2.schema import MessageRecord

GREETING = {"role": "assistant", "content": "Hi! How can I help you today?"}
PROPOSAL = "I will cancel order #W100 and refund $120 to your Visa ending 1234. Shall I proceed with the cancellation?"


def msgs(*items):
    return [MessageRecord.model_validate(item) for item in items]


def agent(text):
    return {"role": "assistant", "content": text}


def user(text):
    return {"role": "user", "content": text}


def write(name="cancel_pending_order", call_id="c1", **args):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "name": name, "arguments": args or {"order_id": "#W100"}}],
    }


def result(call_id="c1", error=False):
    return {"role": "tool", "id": call_id, "content": "Error: nope" if error else "{}", "error": error}


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Yes, please go ahead.", Reply.AGREE),
        ("yes", Reply.AGREE),
        ("Okay, I understand. Yes, please proceed with the booking.", Reply.AGREE),
        ("Sounds good, do it.", Reply.AGREE),
        ("Yes, no checked bags needed and no insurance.", Reply.AGREE),
        ("No, that's too expensive.", Reply.DECLINE),
        ("Wait, don't cancel it yet.", Reply.DECLINE),
        ("On second thought, I'll keep it.", Reply.DECLINE),
        ("Actually, I'd rather return it instead.", Reply.CHANGE),
        ("Yes, but I actually need two passengers.", Reply.CHANGE),
        ("Yes, but please change the address to 12 Main St.", Reply.CHANGE),
        # real replies from the shared grok-4-fast files: the request grows, or a counter-proposal
        ("Yes, that all sounds right so far. I'd like to add one more passenger: Kevin Smith.", Reply.CHANGE),
        (
            "The total is a bit higher than my budget — is there a basic economy option that could bring it down? "
            "Yes, the details look correct otherwise.",
            Reply.CHANGE,
        ),
        ("Is there anything else you need from me? Yes, go ahead.", Reply.AGREE),
        ("What is the refund amount?", Reply.OTHER),
        ("I'm not sure that is correct.", Reply.OTHER),
        ("My user id is ana_2.", Reply.OTHER),
        ("", Reply.OTHER),
        ("Yes. ###STOP###", Reply.AGREE),
    ],
)
def test_reply_classification(text, kind):
    assert classify_reply(text) == kind


def test_consent_request_detection_uses_the_classifier():
    assert consent_request(PROPOSAL) == "Shall I proceed with the cancellation?"
    assert consent_request("Could you please provide your user id?") is None
    assert consent_request("Your order #W100 has been cancelled.") is None  # a report, not a request
    assert consent_request(None) is None
    assert "ask" in {str(c) for c in emitted_classes("Could you please provide your user id?")}


def test_write_after_an_explicit_yes_is_consented():
    messages = msgs(GREETING, user("Cancel #W100 please."), agent(PROPOSAL), user("Yes, go ahead."), write(), result())
    judgment = judge_write(messages, 4)
    assert judgment.confirmed is True and judgment.verdict == "consented"
    assert (judgment.request_index, judgment.reply_index, judgment.reply_kind) == (2, 3, "agree")
    assert "msg 2" in judgment.justification and "msg 3" in judgment.justification


def test_write_without_a_request_is_not_consented():
    messages = msgs(GREETING, user("Cancel #W100 please, yes I'm sure."), write(), result())
    judgment = judge_write(messages, 2)
    assert judgment.confirmed is False and judgment.verdict == "no_request"
    assert judgment.request_index == 0 and "no consent request" in judgment.justification


def test_a_yes_to_another_question_is_not_consent():
    messages = msgs(
        GREETING,
        user("Cancel my order."),
        agent("Do you have the order number with you?"),
        user("Yes, it's #W100."),
        write(),
        result(),
    )
    assert judge_write(messages, 4).verdict == "no_request"


def test_a_request_answered_with_a_question_is_not_agreement():
    messages = msgs(
        GREETING, user("Cancel #W100."), agent(PROPOSAL), user("How long does the refund take?"), write(), result()
    )
    judgment = judge_write(messages, 4)
    assert judgment.verdict == "not_agreed" and judgment.reply_kind == "other" and judgment.answer_changed is False


def test_text_riding_on_a_tool_call_is_invisible_to_the_user():
    hidden = {
        "role": "assistant",
        "content": PROPOSAL,
        "tool_calls": [{"id": "c1", "name": "cancel_pending_order", "arguments": {}}],
    }
    messages = msgs(GREETING, user("Yes, cancel #W100."), hidden, result())
    assert judge_write(messages, 2).verdict == "no_request"


def test_a_report_after_the_write_never_counts():
    messages = msgs(
        GREETING,
        user("Cancel #W100."),
        write(),
        result(),
        agent("I've cancelled #W100. Shall I proceed with the refund?"),
        user("Yes."),
    )
    assert judge_write(messages, 2).verdict == "no_request"


def test_batch_approval_covers_each_write_of_the_turn():
    proposal = "I will cancel orders #W1 and #W2. Do you want me to proceed with both cancellations?"
    messages = msgs(
        GREETING,
        user("Cancel both."),
        agent(proposal),
        user("Yes, both."),
        write(call_id="a"),
        result("a"),
        write(call_id="b"),
        result("b"),
    )
    calls = write_calls(messages, domain_tools("retail").is_write)
    assert [index for index, _ in calls] == [4, 6]
    assert judge_write(messages, 4).confirmed and judge_write(messages, 6).confirmed


def test_user_who_changes_the_request_when_asked():
    messages = msgs(
        GREETING,
        user("Exchange the lamp in #W500."),
        agent("I will exchange the lamp in order #W500 for the white one. Shall I proceed with the exchange?"),
        user("Actually, I'd rather return it instead."),
        agent(
            "I will return the lamp from order #W500 and refund $89.99 to your card. Shall I proceed with the return?"
        ),
        user("Yes."),
        write("return_delivered_order_items", order_id="#W500"),
        result(),
    )
    judgment = judge_write(messages, 6)
    assert judgment.confirmed is True and judgment.answer_changed is True
    # A flip before an earlier write does not carry over to a later turn's write.
    assert judge_write(messages, 6, changed_since=5).answer_changed is False


def test_tool_error_flag_and_window():
    messages = msgs(GREETING, user("Cancel #W100."), agent(PROPOSAL), user("Yes."), write(), result(error=True))
    assert tool_error(messages, 4, messages[4].calls[0]) is True
    window = llm_window(messages, 4, size=2)
    assert [turn["index"] for turn in window] == [2, 3]
    assert llm_window(messages, 4, size=10)[0]["text"].startswith("Hi!")


def test_json_wrapped_replies_are_unwrapped():
    assert visible_text('{\n  "message": "Shall I proceed?"\n}') == "Shall I proceed?"
    assert visible_text('{"response": "ok", "confidence": 0.9}') == "ok"
    assert visible_text('{"a": 1, "b": 2}') == '{"a": 1, "b": 2}'
    assert visible_text("{not json}") == "{not json}"
    assert visible_text(None) == ""
    wrapped = msgs(
        GREETING, user("Cancel #W100."), agent(f'{{"message": "{PROPOSAL}"}}'), user("Yes."), write(), result()
    )
    assert judge_write(wrapped, 4).verdict == "consented"


def test_short_double_quoted_tokens_do_not_hide_the_request():
    text = (
        'Both options have seats. Which one would you like to proceed with? Please reply with "yes" to confirm '
        'your choice (e.g., "Yes, Option 1") and specify which certificate if you want the smaller one.'
    )
    assert consent_request(text) is not None
    assert consent_request("Shall I book it? Reply \u201cyes\u201d to confirm.") is not None
