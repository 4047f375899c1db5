"""The ``paper`` scheme reproduces the paper's released classifier (notes action-classes.md §1-2)."""

import pytest

from tooldiag.classify import ActionClass, classify
from tooldiag.classify.cues import load_builtin
from tooldiag.classify.paper import PaperClassifier
from tooldiag.classify.syntax import paper_normalize, paper_text_is_tool_call

TC, ASK, REFUSE, CONFIRM, OTHER = (
    ActionClass.TOOL_CALL,
    ActionClass.ASK,
    ActionClass.REFUSE,
    ActionClass.CONFIRM,
    ActionClass.OTHER,
)


def paper(text, tool_calls=None):
    return classify(text, tool_calls, scheme="paper")


@pytest.mark.parametrize(
    "text, expected",
    [
        # rule 1: [ identifier ( at the start (prompt mode)
        ('[mv(source="a", destination="b")]', True),
        ('  [cd(folder="document")]', True),
        ('[mkdir(dir_name="temp"), mv(source="x", destination="temp")]', True),
        # rule 2: <tool_call anywhere, any case
        ('<tool_call>\n{"name": "mv", "arguments": {"source": "a"}}\n</tool_call>', True),
        ('Let me move it.\n<TOOL_CALL>{"name": "x", "arguments": {}}</TOOL_CALL>', True),
        # rule 3: [{"name": in either quote style
        ('[{"name": "mv", "arguments": {"source": "a"}}]', True),
        ("[{'name': 'mv', 'arguments': {}}]", True),
        # rule 4: a single {"name": "<identifier>", ... "arguments"/"parameters"} object
        ('{"name": "ls", "arguments": {"a": true}}', True),
        ('{"name": "ls", "parameters": {}}', True),
        ('{"name": "ls", "description": "lists files"}', False),
        # not tool calls
        ("[Note: this is just a comment]", False),
        ("I will issue a tool_call to mv shortly.", False),
        ("The file has been moved.", False),
        ("", False),
    ],
)
def test_syntax_rules(text, expected):
    assert paper_text_is_tool_call(text) is expected
    assert (paper(text) is TC) is expected


def test_rule_4_needs_an_identifier_but_normalisation_does_not():
    text = '{"name": "not an identifier", "arguments": {}}'
    assert not paper_text_is_tool_call(text)
    assert paper(text) is TC  # the original's normaliser accepts any string name


@pytest.mark.parametrize(
    "emission",
    [
        '{"mv": {"source": "a", "destination": "b"}}',  # {tool: args}
        '[{"cd": {"folder": "x"}}, {"ls": {}}]',  # list of {tool: args}
        '{"tool_call": "ls", "arguments": {}}',
        '{"action": "ls", "arguments": {"a": true}}',
        "```\n{'mv': {'source': 'a'}}\n```",  # whole-emission fence, ast.literal_eval
        '```json\n[{"name": "ls", "arguments": {}}]\n```',
        '{"tools": ["cd"], "arguments": {"cd": {"folder": "x"}}}',
    ],
)
def test_normalisation_makes_whole_emission_calls_tool_calls(emission):
    normalized = paper_normalize(emission)
    assert normalized.startswith('[{"name":')
    assert paper(emission) is TC


@pytest.mark.parametrize(
    "emission",
    [
        'Here you go:\n```\n[{"name": "ls", "arguments": {}}]\n```',  # prose outside the fence
        '{"answer": 42, "note": "x"}',  # two keys, not a call shape
        '[{"cd": "folder"}]',  # arguments not an object
        "[]",
        "plain prose",
    ],
)
def test_normalisation_leaves_non_calls_alone(emission):
    assert paper_normalize(emission) == emission
    assert paper(emission) is not TC


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Could you tell me which folder?", ASK),
        ("I need the folder name to proceed.", ASK),  # ask cue without '?'
        ("I cannot complete this task as the function is not available.", REFUSE),
        ("I cannot perform that action. Is there something else?", REFUSE),  # refuse before ask
        ("Are you sure? I cannot do that.", REFUSE),
        ("I can\u2019t do that.", REFUSE),  # typographic apostrophe folded
        ("I don\u02bct have access to that.", REFUSE),
        ("The file has been successfully moved. No further actions are required.", CONFIRM),  # completion claim
        ("All done!", CONFIRM),
        ("Shall I proceed with the booking for $350?", ASK),  # consent is ask in the paper's rules
        ("Would you like more details?", ASK),  # so are offers
        ("Hello world.", OTHER),
        ("", OTHER),
        (None, OTHER),
    ],
)
def test_text_classes_and_priority(text, expected):
    assert paper(text) is expected


def test_structured_calls_are_tool_calls():
    call = {"id": "1", "type": "function", "function": {"name": "ls", "arguments": "{"}}
    assert paper("I cannot do that.", [call]) is TC


def test_raw_bfcl_emissions_like_gar_py():
    classifier = PaperClassifier()
    assert classifier.classify_raw([{"mv": '{"source": "a"}'}]) is TC  # API handler shape
    assert classifier.classify_raw([]) is None  # a dropped text reply holds nothing
    assert classifier.classify_raw("   ") is None
    assert classifier.classify_raw("Which file?") is ASK
    assert classifier.classify_raw(None) is None
    assert paper([{"mv": '{"source": "a"}'}]) is TC
    assert paper([]) is OTHER


def test_cue_lists_are_the_papers():
    cues = load_builtin("paper")
    assert (len(cues["ask"]), len(cues["refuse"]), len(cues["confirm"])) == (18, 21, 23)
    assert (
        "please confirm" in cues["ask"]
        and "no tool available" in cues["refuse"]
        and "all the requested" in cues["confirm"]
    )


def test_paper_labels_on_the_original_labelled_set_never_move():
    """The paper scheme's figures must not move: its label for every emission of the
    original 418-row set is pinned (snapshot taken before issue 11's classifier work)."""
    import json
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data" / "classifier"
    pinned = json.loads((folder / "en-original.paper-labels.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (folder / "en-original.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(pinned) == 418
    got = {r["id"]: classify(r.get("content"), r.get("tool_calls"), scheme="paper").value for r in rows}
    assert got == pinned
