"""BFCL's gold classes, gold turns (paper 001 App. E) and the typed case notes."""

from tooldiag.classify import ActionClass
from tooldiag.suites.bfcl.gold import BFCL_GOLD, BfclCaseNotes, bfcl_gold_turns, gold_class


def test_bfcl_gold_turns():
    assert bfcl_gold_turns("base", [1, 2, 0, 3]) == (0, 1, 3)
    assert bfcl_gold_turns("long_context", [0, 0]) == ()
    assert bfcl_gold_turns("miss_func", [1, 1, 0, 1], give_back_turns=[3]) == (2,)  # miss_func_0 shape
    assert bfcl_gold_turns("miss_func", [1, 0, 1, 0, 1], give_back_turns=None) == (1, 3)
    assert bfcl_gold_turns("miss_param", [1, 0, 2]) == (1,)
    # miss_param_167 / _180: the closing GT-empty turns inherited from base are not gold
    assert bfcl_gold_turns("miss_param", [1, 0, 2, 1, 1, 0]) == (1,)
    assert bfcl_gold_turns("miss_param", [1, 0, 2, 1, 0, 0, 2]) == (1,)
    assert bfcl_gold_turns("miss_param", [1, 0]) == (1,)
    assert bfcl_gold_turns("tau2_airline", [1]) is None
    assert bfcl_gold_turns("base", None) is None


def test_gold_classes_of_the_four_categories():
    assert BFCL_GOLD == {
        "base": ActionClass.TOOL_CALL,
        "long_context": ActionClass.TOOL_CALL,
        "miss_func": ActionClass.REFUSE,
        "miss_param": ActionClass.ASK,
    }
    assert gold_class("miss_param", BfclCaseNotes()) is ActionClass.ASK
    assert gold_class("custom", BfclCaseNotes.of({"gold_class": "confirm"})) is ActionClass.CONFIRM
    assert gold_class("custom", BfclCaseNotes.of({"gold_class": "maybe"})) is None
    assert gold_class("custom", BfclCaseNotes()) is None


def test_case_notes_round_trip_keeps_the_stored_json():
    written = {
        "ground_truth_sizes": [1, 0, 2],
        "give_back_turns": [2],
        "layout": "fc",
        "source_file": "x.json",
        "probe": {"fired": True},
    }
    notes = BfclCaseNotes.of(written)
    assert notes.ground_truth_sizes == [1, 0, 2] and notes.give_back_turns == [2]
    assert notes.dump() == written and list(notes.dump()) == list(written)


def test_case_notes_read_leniently():
    notes = BfclCaseNotes.of({"ground_truth_sizes": "not a list", "give_back_turns": [3], "other": 1})
    assert notes.ground_truth_sizes is None and notes.give_back_turns == [3]
    assert notes.dump() == {"give_back_turns": [3], "other": 1}
