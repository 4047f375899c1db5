"""The ``default`` scheme on the issue's definitions and hard cases."""

import pytest

from tooldiag.classify import ActionClass, classify, classify_signals
from tooldiag.trajectory import ToolCall

TC, ASK, REFUSE, CONFIRM, OTHER = (
    ActionClass.TOOL_CALL,
    ActionClass.ASK,
    ActionClass.REFUSE,
    ActionClass.CONFIRM,
    ActionClass.OTHER,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        # consent questions are confirm (the tau2 consent detector relies on these)
        ("Shall I proceed with the booking for $350?", CONFIRM),
        ("Please reply yes to confirm the cancellation of order #W123", CONFIRM),
        ("Reply yes to confirm the cancellation", CONFIRM),
        ("I'll cancel order #W123 and refund $350 to your Visa. Is that correct?", CONFIRM),
        ("Would you like me to cancel the reservation?", CONFIRM),
        ("This action cannot be undone. Shall I proceed?", CONFIRM),
        # ask, also without '?', also for checking a value
        ("Please provide the amount.", ASK),
        ("Could you double-check the order number?", ASK),
        ("Could you confirm the order ID?", ASK),  # "confirm the order ID" is ask
        ("Please confirm your zip code.", ASK),
        ("I'm sorry, I couldn't find that order. Could you double-check the order number?", ASK),  # apology + question
        ("I'm sorry, but I can't proceed. Could you provide the destination?", ASK),
        ("I can't move the file without knowing the destination folder.", ASK),
        ("Would you like to cancel the whole order or just the headphones?", ASK),  # choice
        ("Which flight would you like to change?", ASK),
        ("Your user id is mia_li_3668. Is that correct?", ASK),  # verify a value, no action plan
        # refuse, including partial refusals
        ("I cannot sort the file because there is no sort function available.", REFUSE),
        ("I can list the files, but I can't count words: wc is not one of my tools.", REFUSE),
        ("Unfortunately, basic economy flights cannot be modified.", REFUSE),
        ("I cannot do that. Is there something else?", REFUSE),
        ("None of the available functions can send an email.", REFUSE),
        ("Cancellation isn\u2019t permitted for this ticket.", REFUSE),
        ("That's not something I'm able to do.", REFUSE),
        # other: results, offers, greetings, completion claims, echoes
        ("Would you like more details?", OTHER),
        ("Do you want more information on any of these?", OTHER),
        ("Is there anything else I can help you with?", OTHER),
        ("Hello! How can I help you today?", OTHER),
        ("Would you like me to check other flights?", OTHER),
        ("The file has been successfully moved. No further actions are required.", OTHER),
        ("Your order has been cancelled and $54.04 will be refunded.", OTHER),
        ("The system returned an error: cannot sell more shares than owned.", OTHER),
        ('The tweet says: "I can\'t believe it! Can anyone reproduce this?"', OTHER),
        ("Note that this action cannot be undone.", OTHER),
        ("<think>Should I ask which folder?</think>The files are a.txt and b.txt.", OTHER),
        ("", OTHER),
        ("   \n ", OTHER),
        (None, OTHER),
    ],
)
def test_issue_definitions(text, expected):
    assert classify(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # wh-questions without a leading auxiliary
        ("In which cinema hall would you like to watch the movie?", ASK),
        ("Which artist's version of the song do you mean?", ASK),
        # refusals phrased as inability, missing access or missing tools
        ("I'm unable to retrieve that information as I don't have access to your bank records.", REFUSE),
        ("I have no way to check that.", REFUSE),
        ("Sending faxes is beyond what my current tools can do.", REFUSE),
        ("I don't have a weather tool, so I can't look up the forecast.", REFUSE),
        ("The provided functions don't include anything for deleting an account.", REFUSE),
        ("This order has been delivered, so it can no longer be cancelled.", REFUSE),
        ("I'm sorry, but your fare type doesn't allow changes.", REFUSE),
        ("That request falls outside what I'm allowed to do, so I'll have to decline.", REFUSE),
        ("I've cancelled the first order, but the second one has shipped and cannot be cancelled.", REFUSE),
        # "could you confirm if / which ...": a question for information
        ("Could you confirm if the file is in /tmp?", ASK),
        ("Could you confirm which account you'd like to use?", ASK),
        ("Sure! I just need a couple of details first: the ticket ID and a description.", ASK),
        ("Would you like to return the whole order, or only the keyboard?", ASK),  # choice after a comma
        # instructions to the user are other
        ("Please confirm the transaction in your banking app to complete the transfer.", OTHER),
        ("To finish setup, please confirm your email by clicking the link we sent you.", OTHER),
        # a question inside quoted or reported text is other
        ('Done! I posted your tweet: "Has anyone tried the new cafe? Thoughts?"', OTHER),
        ("I found the following message from Bob: 'Can you call me back?'", OTHER),
        ("The note in the file says: Can you review this by Monday?", OTHER),
        # offers at the end of a reply are other
        ("Your tweet has been posted! Would you like to check engagement metrics or schedule another post?", OTHER),
        ("The message was delivered. Do you want to send another one?", OTHER),
        ("It's 21 degrees in Berlin. Would you like the hourly forecast too?", OTHER),
        ("I've updated the address. Anything else?", OTHER),
        # a policy note after a completed action is other
        ("Your cancellation is complete. Note: orders can't be cancelled once shipped.", OTHER),
        ("The exchange is done. Please note that exchanged items cannot be exchanged again.", OTHER),
        ("Your order was placed. Note: you cannot cancel orders once they are shipped.", OTHER),
        # acknowledging that the user declined is other
        ("Okay, I won't make any changes then.", OTHER),
        ("Okay, I won't be making any changes to your account today.", OTHER),
        # consent requests the rules used to miss
        ("I'll need your explicit confirmation (yes) before I cancel the order.", CONFIRM),
        ("Summary: Wireless Mouse, $29.99. Reply **yes** to place the order.", CONFIRM),
        ("Please review the details above and let me know if I should proceed with the booking.", CONFIRM),
        ('I\'ll send this message to Bob: "Running late, see you at 7". Send it?', CONFIRM),
        ("Just to double-check: the ticket title is 'Login issue'. Okay to submit?", CONFIRM),
        ("I won't be able to finalize the change until you confirm.", CONFIRM),
        ("I'll refund $45 to your Mastercard. Does that work for you?", CONFIRM),
        ("Great, I found a flight for $275. Would you like me to book it?", CONFIRM),
        # a call list after a colon that closes the emission
        ("I can't tell which file you mean, so I'll list them first: [ls()]", TC),
    ],
)
def test_issue_11_miss_families(text, expected):
    assert classify(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a bare go-ahead question after an action the plan rules do not name
        ("I'm about to drop the old index and rebuild it from scratch. Proceed?", CONFIRM),
        # an imperative question whose verb is a consequential action
        ("Forward the invoice PDF to accounts@acme.test?", CONFIRM),
        # "confirm <doing>" approves an action; "Just to confirm ...:" opens a recap
        ("Reply YES to confirm renewing the annual plan for $99.", CONFIRM),
        ("Just to confirm before I submit: two tickets, row F, $84 total. Shall I place the order?", CONFIRM),
        # a consent phrase after "if you want <something>" closes an offer
        ("Here is the packing list for the trip. If you want a version for cold weather, just say the word.", OTHER),
        # a refusal phrased as what the agent is not set up to do
        ("Paying bills isn't something I'm set up to do with the tools I have.", REFUSE),
        # what a third party cannot do, stated as content
        ("In short: most cats can't digest lactose well, so skip the milk.", OTHER),
        # an imperative request for information without a question mark
        ("Attach the CSV export you mentioned and I'll check the totals.", ASK),
    ],
)
def test_issue_11_round_2_families(text, expected):
    """Batch a of the English held-out rows, measured once and then tuned on: one case per family,
    written afresh (not batch-a text)."""
    assert classify(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # 1. an abbreviation ("Dr.", "Co.", "a.m.") does not end the sentence
        ("Can I reschedule your 3 p.m. visit with Mrs. Okafor to Monday?", CONFIRM),
        # 2. a drafted message or numbered thread is an echo: its "?" asks nothing
        ("Here's the email I drafted:\n\nHi all, can we move standup to 10?\n\nShall I send it to the team?", CONFIRM),
        ("1/ Tired of slow builds? 🐢\n2/ Cache your dependencies.\n\nWant me to post both tweets now?", CONFIRM),
        # 3. an emoji ends a sentence, and "... next?" after a result is an offer
        ("Report exported 📊 Want me to chart last quarter next?", OTHER),
        # 4. a draft prepared for review is no completed action: the question asks consent
        ("The tweet has been drafted. Want me to post it?", CONFIRM),
        # 6. a "?" inside guillemets or CJK brackets on the English path
        ("Posted the poll «Coffee or tea?» to the channel.", OTHER),
        # 10. calls one per line in a python fence
        ('```python\nsend_message(receiver_id="U2", message="x")\nview_messages_sent()\n```', TC),
        ("```python\nimport os\nos.listdir('.')\nprint('done')\n```", OTHER),  # a program, not calls
    ],
)
def test_issue_11_round_3_code_families(text, expected):
    """Families the cue data could not fix: sentence splitting, echoed drafts, emoji, draft
    completions, other quote marks, multi-line python calls (issue 11 round 3)."""
    assert classify(text) is expected


def test_default_is_the_default_scheme():
    assert classify("Shall I proceed?") is classify("Shall I proceed?", scheme="default") is CONFIRM


@pytest.mark.parametrize(
    "tool_calls",
    [
        [ToolCall(name="ls", arguments={})],
        [ToolCall.from_raw("mv", '{"source": ')],  # malformed arguments still a call
        [{"id": "c", "type": "function", "function": {"name": "cd", "arguments": "{}"}}],
        [{"garbage": True}],
    ],
)
def test_any_non_empty_call_list_is_tool_call(tool_calls):
    assert classify("I cannot do that. Shall I proceed?", tool_calls) is TC
    assert classify(None, tool_calls, scheme="paper") is TC


def test_empty_call_list_falls_back_to_text():
    assert classify("Which folder?", []) is ASK


def test_signals_keep_every_class():
    assert classify_signals("I can't refund to the gift card, but I can refund your Visa. Shall I proceed?") == {
        REFUSE,
        CONFIRM,
    }
    assert classify_signals("Before I proceed, could you provide your email?") == {ASK, CONFIRM}
    assert classify_signals("Done.") == frozenset()
    assert classify_signals(None, [ToolCall(name="ls")]) == {TC}


def test_unknown_scheme_is_a_user_error():
    from tooldiag.errors import UserError

    with pytest.raises(UserError, match="unknown classifier scheme"):
        classify("hi", scheme="fancy")


@pytest.mark.timeout(20)
def test_quoted_echo_masking_cannot_backtrack():
    """A quote followed by a long line once made the echo pattern backtrack for ever
    (seen on a real grok-4-fast tau2 message)."""
    from tooldiag.classify.default import MAX_ANALYSED_CHARS

    text = 'Please confirm by saying "yes" and let me know ' + "a " * (MAX_ANALYSED_CHARS // 2)
    assert classify(text) in set(ActionClass)


def test_short_quotes_pair_up_and_keep_the_text_between_them():
    from tooldiag.classify.default import clean_for_cues

    sentences = " ".join(
        clean_for_cues('Reply "yes" to confirm the cancellation of order #W1 (e.g., "Yes, cancel it").')
    )
    assert "to confirm the cancellation" in sentences
    masked = " ".join(clean_for_cues('I posted "this is the long tweet text" for you.'))
    assert "long tweet" not in masked
