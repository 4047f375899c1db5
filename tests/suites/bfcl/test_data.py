"""The BFCL loader reproduces BFCL's multi-turn entries (counts from the notes, §1)."""

from collections import Counter

import pytest

from tooldiag.errors import UserError
from tooldiag.suites.bfcl.data import GIVE_BACK_MESSAGE, PYTHON_HINT, load_cases
from tooldiag.suites.bfcl.tools import to_openai_tools


@pytest.fixture(scope="module")
def cases():
    return load_cases()


def test_all_800_cases_in_four_categories(cases):
    assert Counter(c.category for c in cases) == {"base": 200, "long_context": 200, "miss_func": 200, "miss_param": 200}
    assert len({c.id for c in cases}) == 800


def test_turn_and_empty_ground_truth_counts(cases):
    turns = Counter()
    empty = Counter()
    for c in cases:
        turns[c.category] += len(c.turns)
        empty[c.category] += sum(1 for t in c.ground_truth if not t)
        assert len(c.turns) == len(c.ground_truth)
    assert turns == {"base": 734, "long_context": 734, "miss_func": 934, "miss_param": 934}
    assert empty == {"base": 3, "long_context": 3, "miss_func": 203, "miss_param": 203}


def test_miss_func_holds_out_functions_until_give_back(cases):
    case = next(c for c in cases if c.id == "multi_turn_miss_func_0")
    assert list(case.missed_function) == [3]
    held = case.missed_function[3]
    assert [d["name"] for d in held] == ["sort"]
    assert "sort" not in {d["name"] for d in case.functions}
    # the hint is appended after the pop, so held-out docs lack it (BFCL utils.py)
    assert not held[0]["description"].endswith(PYTHON_HINT)
    assert all(d["description"].endswith(PYTHON_HINT) for d in case.functions)
    assert case.turns[3] == [] and case.ground_truth[2] == [] and case.ground_truth[3] == ["sort('final_report.pdf')"]
    assert GIVE_BACK_MESSAGE == "I have updated some more functions you can choose from. What about now?"
    names_per_entry = Counter(
        sum(len(v) for v in c.missed_function.values()) for c in cases if c.category == "miss_func"
    )
    assert names_per_entry == {1: 182, 2: 14, 3: 4}


def test_docs_follow_involved_class_order(cases):
    case = next(c for c in cases if len(c.involved_classes) == 2 and c.category == "base")
    import json

    from tooldiag.suites.bfcl.data import _func_docs

    expected = [json.loads(line)["name"] for cls in case.involved_classes for line in _func_docs(cls)]
    assert [d["name"] for d in case.functions] == expected


def test_long_context_flag(cases):
    assert all(c.long_context == (c.category == "long_context") for c in cases)


def test_openai_tool_conversion_matches_bfcl_rules(cases):
    case = next(c for c in cases if "MathAPI" in c.involved_classes)
    tools = to_openai_tools(case.functions)
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in tools)
    floats = [
        p for t in tools for p in t["function"]["parameters"]["properties"].values() if p.get("format") == "float"
    ]
    assert floats and all(
        p["type"] == "number" and p["description"].endswith(" This is a float type value.") for p in floats
    )
    # the non-standard response field is kept, as BFCL's OpenAI handler keeps it
    assert any("response" in t["function"] for t in tools)
    types = {p["type"] for t in tools for p in t["function"]["parameters"]["properties"].values()}
    assert "dict" not in types and "float" not in types


def test_selection_and_bad_ids():
    assert [c.id for c in load_cases(["base"], limit=2)] == ["multi_turn_base_0", "multi_turn_base_1"]
    assert [c.id for c in load_cases(ids=["multi_turn_miss_param_7"])] == ["multi_turn_miss_param_7"]
    with pytest.raises(UserError, match="unknown BFCL case id"):
        load_cases(ids=["multi_turn_base_999"])
    with pytest.raises(UserError, match="unknown BFCL case id"):
        load_cases(ids=["banana"])
    with pytest.raises(UserError, match="unknown BFCL category"):
        load_cases(["irrelevance"])


def test_loading_and_grading_never_write_into_site_packages(tmp_path):
    """``bfcl_eval.utils`` would create result/, score/, .file_locks/ in site-packages."""
    import subprocess
    import sys

    script = (
        "import bfcl_eval, pathlib\n"
        "from tooldiag.suites.bfcl.data import load_cases\n"
        "from tooldiag.suites.bfcl.grader import grade_decoded\n"
        "c = load_cases(['base'], limit=1)[0]\n"
        "assert grade_decoded(c, [[t] if t else [] for t in c.ground_truth]).passed\n"
        "import sys; print(pathlib.Path(bfcl_eval.__file__).parents[1])\n"
        "print(sorted(m for m in sys.modules if m.startswith('bfcl_eval.utils') or "
        "m.startswith('bfcl_eval.constants.eval_config')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    site = __import__("pathlib").Path(out[0])
    assert out[1] == "[]"
    for name in ("result", "score", ".file_locks"):
        assert not (site / name).exists()
