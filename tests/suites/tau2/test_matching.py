"""Action matching recomputed from the trajectory (tau2 ``Action.compare_with_tool_call``)."""

from __future__ import annotations

from tooldiag.suites.tau2.matching import action_matches_call, all_actions_matched, match_actions, trajectory_calls
from tooldiag.suites.tau2.schema import Action, MessageRecord, TaskRecord, ToolCallRecord


def call(name, **arguments):
    return ToolCallRecord.model_validate({"name": name, "arguments": arguments})


def action(name, compare_args=None, **arguments):
    return Action.model_validate({"name": name, "arguments": arguments, "compare_args": compare_args})


def test_keys_present_in_the_call_are_compared():
    gold = action("cancel", order_id="#W1", reason="no longer needed")
    assert action_matches_call(gold, call("cancel", order_id="#W1", reason="no longer needed"))
    assert action_matches_call(gold, call("cancel", order_id="#W1"))  # an omitted gold key still matches
    assert not action_matches_call(gold, call("cancel", order_id="#W1", extra=1))  # an extra key fails
    assert not action_matches_call(gold, call("cancel", order_id="#W2"))
    assert not action_matches_call(gold, call("other", order_id="#W1"))


def test_compare_args_lists_and_name_only():
    assert action_matches_call(
        action("transfer_to_human_agents", [], summary="a"), call("transfer_to_human_agents", summary="b")
    )
    listed = action("book", ["user_id"], user_id="u1", cabin="economy")
    assert action_matches_call(listed, call("book", user_id="u1", cabin="business"))
    assert not action_matches_call(listed, call("book", user_id="u2", cabin="economy"))


def test_values_compare_strictly_but_json_strings_are_normalised():
    assert not action_matches_call(action("f", amount=100), call("f", amount="100"))
    assert not action_matches_call(
        action("f", items=["a", "b"]), call("f", items=["b", "a"])
    )  # list order matters (#325)
    assert action_matches_call(action("f", payload={"a": 1, "b": 2}), call("f", payload='{"b": 2, "a": 1}'))


def test_unparseable_arguments_match_only_name_only_actions():
    broken = ToolCallRecord.model_validate({"name": "f", "arguments": "{not json"})
    assert broken.arguments is None and broken.raw_arguments == "{not json"
    assert not action_matches_call(action("f", x=1), broken)
    assert action_matches_call(action("f", [], x=1), broken)


def test_any_call_anywhere_counts_including_errors_and_user_calls():
    messages = [
        MessageRecord.model_validate({"role": "assistant", "content": "hi"}),
        MessageRecord.model_validate(
            {"role": "assistant", "tool_calls": [{"id": "1", "name": "f", "arguments": {"x": 1}}]}
        ),
        MessageRecord.model_validate({"role": "tool", "id": "1", "content": "Error: boom", "error": True}),
        MessageRecord.model_validate(
            {"role": "user", "content": "ok", "tool_calls": [{"id": "2", "name": "toggle", "arguments": {}}]}
        ),
    ]
    calls = trajectory_calls(messages)
    assert [c.name for c in calls] == ["f", "toggle"]
    assert match_actions([action("f", x=1), action("toggle"), action("g")], calls) == [True, True, False]


def test_all_actions_matched_and_outcomes():
    calls = [call("get_user_details", user_id="u"), call("book_reservation", cabin="economy")]
    plain = TaskRecord.model_validate(
        {"id": "1", "evaluation_criteria": {"actions": [{"name": "get_user_details", "arguments": {"user_id": "u"}}]}}
    )
    assert all_actions_matched(plain, calls) == (True, None)
    empty = TaskRecord.model_validate({"id": "2", "evaluation_criteria": {"actions": []}})
    assert all_actions_matched(empty, calls) == (None, None)
    forked = TaskRecord.model_validate(
        {
            "id": "8",
            "evaluation_criteria": {
                "actions": None,
                "acceptable_outcomes": [
                    {
                        "outcome_id": "A",
                        "actions": [{"name": "book_reservation", "arguments": {"cabin": "basic_economy"}}],
                    },
                    {"outcome_id": "B", "actions": [{"name": "book_reservation", "arguments": {"cabin": "economy"}}]},
                ],
            },
        }
    )
    assert all_actions_matched(forked, calls) == (True, "B")
    assert all_actions_matched(forked, calls[:1]) == (False, None)
