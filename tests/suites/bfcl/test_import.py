"""``tooldiag import bfcl``: what is stored, resuming, repeatability and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tooldiag.cli.main import main as cli_main
from tooldiag.errors import StoreError, UserError
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.data import GIVE_BACK_MESSAGE, case_by_id
from tooldiag.suites.bfcl.importer import import_bfcl_results, plan_import
from tooldiag.suites.bfcl.layouts import LAYOUT_NAMES, detect_layout

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "bfcl_results"


def write_results(folder: Path, category: str, entries: list[dict], name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"BFCL_v4_multi_turn_{category}_result.json")
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def gt_entry(case_id: str, render) -> dict:
    """A passing entry: each ground-truth turn as one step, then a text reply."""
    from tests.data.bfcl_results.generate import parse_call

    case = case_by_id(case_id)
    turns = []
    for turn in case.ground_truth:
        calls = [parse_call(case, c) for c in turn]
        turns.append(([render(calls)] if calls else []) + ["All done."])
    return {"id": case_id, "result": turns}


def api_fc(calls):
    return [{name: json.dumps(args)} for name, args in calls]


def records(run_dir: Path) -> dict:
    with RunStore.open(run_dir) as store:
        return {r.case_id: r for r in store.iter_cases()}


# -- what is stored ------------------------------------------------------------------
@pytest.fixture(scope="module")
def tags_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("tags") / "run"
    summary = import_bfcl_results(FIXTURES / "tool_call_tags", "qwen-fc", run_dir)
    return run_dir, summary


def test_trajectories_keep_every_reply_and_the_calls_the_layout_reads(tags_run):
    run_dir, summary = tags_run
    stored = records(run_dir)
    assert summary.ran == len(stored) == 18 and summary.skipped == 0
    with RunStore.open(run_dir) as store:
        assert store.config.source == "import" and store.config.model == "qwen-fc"
        assert set(store.config.import_info["layouts"].values()) == {"tool_call_tags"}
    raw_lines = {
        json.loads(line)["id"]: json.loads(line)
        for path in (FIXTURES / "tool_call_tags" / "multi_turn").glob("*.json")
        for line in path.read_text().splitlines()
    }
    texts = calls = 0
    for case_id, record in stored.items():
        traj = record.trajectory
        raw = raw_lines[case_id]
        case = case_by_id(case_id)
        assert traj.notes["ground_truth_sizes"] == case.ground_truth_sizes()
        assert traj.notes["give_back_turns"] == sorted(case.missed_function)
        assert traj.notes["layout"] == "tool_call_tags"
        if not isinstance(raw["result"], list):
            assert record.error_type == "multi_turn:inference_error" and not record.passed
            assert traj.notes["bfcl_inference_error"].startswith("Error during inference")
            assert traj.turns == [] and traj.inference_error is None
            continue
        assert [[s.emission.text for s in t.steps] for t in traj.turns] == raw["result"]
        for t, turn in enumerate(traj.turns):
            if t in case.missed_function:
                assert [m.content for m in turn.user_messages] == [GIVE_BACK_MESSAGE]
            else:
                assert [m.content for m in turn.user_messages] == [m["content"] for m in case.turns[t]]
            for s, step in enumerate(turn.steps):
                assert step.emission.latency_s == raw["latency"][t][s]
                assert step.emission.usage.input_tokens == raw["input_token_count"][t][s]
                if step.decoded_calls:
                    calls += 1
                    assert [c.name for c in step.emission.tool_calls] == [d.split("(")[0] for d in step.decoded_calls]
                    assert step.tool_results == [f"result of step {s}"]
                elif step.decode_error is None and "<tool_call>" not in (step.emission.text or ""):
                    texts += 1
                    assert step.emission.tool_calls == []
        if len(raw["result"]) < len(case.ground_truth):
            assert traj.turns[-1].force_terminated and record.error_type == "multi_turn:force_terminated"
    assert texts > 20 and calls > 20


def test_reasoning_and_decode_errors_are_kept(tags_run):
    run_dir, _ = tags_run
    steps = [s for r in records(run_dir).values() for t in r.trajectory.turns for s in t.steps]
    assert any(s.emission.reasoning == "The user wants this." for s in steps)
    raised = [s for s in steps if s.decode_error]
    assert raised and all(s.decoded_calls is None for s in raised)
    assert any("block is not a JSON object" in s.decode_error for s in raised)


def test_api_fc_steps_keep_raw_argument_text(tmp_path):
    run_dir = tmp_path / "run"
    import_bfcl_results(FIXTURES / "api_fc", "gpt", run_dir)
    steps = [s for r in records(run_dir).values() for t in r.trajectory.turns for s in t.steps]
    bad = [c for s in steps for c in s.emission.tool_calls if c.parse_error]
    assert bad and all(c.raw_arguments == '{"folder": ' for c in bad)  # the junk step, kept as written
    good = [c for s in steps for c in s.emission.tool_calls if not c.parse_error]
    assert good and all(json.loads(c.raw_arguments) == c.arguments for c in good if c.raw_arguments)


# -- resuming and repeatability ---------------------------------------------------------
def test_reimport_resumes_and_a_second_import_grades_identically(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    import_bfcl_results(FIXTURES / "prompt", "llama", first)
    again = import_bfcl_results(FIXTURES / "prompt", "llama", first)
    assert again.ran == 0 and again.skipped == 18
    import_bfcl_results(FIXTURES / "prompt", "llama", second)
    grades_a = {k: r.grade for k, r in records(first).items()}
    grades_b = {k: r.grade for k, r in records(second).items()}
    assert grades_a == grades_b and len(grades_a) == 18
    assert {g.passed for g in grades_a.values()} == {True, False}


def test_other_model_name_on_the_same_run_dir_is_refused(tmp_path):
    import_bfcl_results(FIXTURES / "json_list", "xlam", tmp_path / "run")
    before = records(tmp_path / "run")
    with pytest.raises(StoreError, match="model"):
        import_bfcl_results(FIXTURES / "json_list", "other", tmp_path / "run")
    assert records(tmp_path / "run").keys() == before.keys()


def test_partial_folder_and_v3_names(tmp_path):
    folder = tmp_path / "partial"
    src = FIXTURES / "fenced_python" / "BFCL_v3_multi_turn_miss_func_result.json"
    lines = src.read_text().splitlines()[:2]
    folder.mkdir()
    (folder / src.name).write_text("\n".join(lines) + "\n")
    summary = import_bfcl_results(folder, "hammer", tmp_path / "run")
    assert summary.ran == 2 and set(summary.counts) == {"miss_func"}


# -- layout detection ------------------------------------------------------------------
def test_detection_prefers_the_syntax_most_steps_show():
    assert detect_layout(['[{"name": "cd", "arguments": {}}]', "text"]).layout == "json_list"
    assert detect_layout(["```\n[{'name': 'cd', 'arguments': {}}]\n```", "```\n[]\n```"]).layout == "fenced_python"
    assert detect_layout(["<tool_call>\n{bad}\n</tool_call>"]).layout == "tool_call_tags"
    assert detect_layout(["[cd(folder='a')]", "done"]).layout == "prompt"
    assert detect_layout([[{"cd": "{}"}], "done"]).layout == "api_fc"
    assert detect_layout(["just text", "", None]).layout is None


def test_text_only_file_takes_the_folders_layout(tmp_path):
    write_results(tmp_path, "base", [gt_entry("multi_turn_base_0", lambda calls: render_prompt(calls))])
    write_results(tmp_path, "miss_param", [{"id": "multi_turn_miss_param_0", "result": [["Which file?"]] * 6}])
    plan = plan_import(tmp_path)
    assert {f.category: f.layout for f in plan.files} == {"base": "prompt", "miss_param": "prompt"}


def render_prompt(calls):
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


# -- bad input: one clear line, nothing stored ------------------------------------------
BAD_INPUTS = {
    "missing folder": (None, "does not exist"),
    "no result files": ([("notes.txt", "x")], "no BFCL multi-turn result files"),
    "not JSON": (
        [("BFCL_v4_multi_turn_base_result.json", '{"id": "multi_turn_base_0", "result": []}\n{oops\n')],
        "line 2 is not JSON",
    ),
    "score file": (
        [("BFCL_v4_multi_turn_base_result.json", '{"accuracy": 0.5, "correct_count": 1, "total_count": 2}\n')],
        'needs "id" and "result"',
    ),
    "unknown id": (
        [("BFCL_v4_multi_turn_base_result.json", '{"id": "multi_turn_base_200", "result": []}\n')],
        "line 1: unknown BFCL case id 'multi_turn_base_200'",
    ),
    "wrong category": (
        [("BFCL_v4_multi_turn_base_result.json", '{"id": "multi_turn_miss_func_1", "result": []}\n')],
        "is not a base case",
    ),
    "duplicate id": (
        [("BFCL_v4_multi_turn_base_result.json", '{"id": "multi_turn_base_1", "result": []}\n' * 2)],
        "repeats line 1",
    ),
    "decoded strings": (
        [
            (
                "BFCL_v4_multi_turn_base_result.json",
                json.dumps({"id": "multi_turn_base_0", "result": [[["cd(folder='document')"]]]}) + "\n",
            )
        ],
        "fits no BFCL layout (tried " + ", ".join(LAYOUT_NAMES) + "): a list holding a str",
    ),
    "turns not lists": (
        [
            (
                "BFCL_v4_multi_turn_base_result.json",
                json.dumps({"id": "multi_turn_base_0", "result": ["[cd(folder='a')]"]}) + "\n",
            )
        ],
        "turn 0 fits no BFCL layout",
    ),
    "not UTF-8": (
        [("BFCL_v4_multi_turn_base_result.json", b'{"id": "multi_turn_base_0", "result": []}\n\xff\xfe{"id"\n')],
        "line 2 is not UTF-8 text",
    ),
    "two files for one category": (
        [("BFCL_v4_multi_turn_base_result.json", ""), ("BFCL_v3_multi_turn_base_result.json", "")],
        "2 result files for base",
    ),
}


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_bad_folders_raise_one_clear_error_and_store_nothing(kind, tmp_path):
    files, expected = BAD_INPUTS[kind]
    folder = tmp_path / "results"
    if files is not None:
        folder.mkdir()
        for name, text in files:
            (folder / name).write_bytes(text) if isinstance(text, bytes) else (folder / name).write_text(text)
    with pytest.raises(UserError) as info:
        import_bfcl_results(folder, "m", tmp_path / "run")
    assert expected in info.value.message
    assert "\n" not in info.value.message and info.value.hint
    assert not (tmp_path / "run").exists()


def test_folder_of_model_folders_points_at_one(tmp_path):
    shutil.copytree(FIXTURES / "api_fc", tmp_path / "gpt-4o-FC")
    with pytest.raises(UserError) as info:
        plan_import(tmp_path)
    assert "gpt-4o-FC" in info.value.hint


def test_forcing_the_wrong_layout_is_one_clear_error(tmp_path):
    with pytest.raises(UserError) as info:
        plan_import(FIXTURES / "json_list", layout="prompt")
    assert "--layout prompt finds no call in any step" in info.value.message and "json_list" in info.value.message
    with pytest.raises(UserError, match="reads text steps"):
        plan_import(FIXTURES / "api_fc", layout="json_list")
    with pytest.raises(UserError, match="unknown layout"):
        plan_import(FIXTURES / "api_fc", layout="xml")
    assert {f.layout for f in plan_import(FIXTURES / "json_list", layout="fenced_python").files} == {"fenced_python"}


# -- safety -----------------------------------------------------------------------------
def test_crafted_names_and_values_are_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    steps = {
        "api_fc": [[{payload: "{}"}], [{"cd": json.dumps({"folder": payload})}], "ok"],
        "json_list": [json.dumps([{"name": payload, "arguments": {}}]), "ok"],
        "prompt": [
            f"[{payload}]",
            f"[cd(folder={payload})]",
            f"[cd(folder={payload} + 1)]",
            f"[ls(a=__import__('os').system(command='touch {marker}'))]",
            "ok",
        ],
    }
    for layout, turn in steps.items():
        folder = tmp_path / layout
        write_results(folder, "base", [{"id": "multi_turn_base_0", "result": [turn, ["ok"], ["ok"], ["ok"]]}])
        import_bfcl_results(folder, layout, tmp_path / f"run_{layout}")
        assert not marker.exists(), layout
        record = records(tmp_path / f"run_{layout}")["multi_turn_base_0"]
        assert record.passed is False


# -- CLI --------------------------------------------------------------------------------
def test_cli_imports_and_exits_2_with_one_line_on_bad_input(tmp_path, capsys):
    cli_main(
        [
            "import",
            "bfcl",
            str(FIXTURES / "json_list"),
            "--model-name",
            "xlam",
            "--run-dir",
            str(tmp_path / "run"),
            "-q",
        ]
    )
    out = capsys.readouterr()
    assert "layout json_list" in out.err and "base" in out.out
    with pytest.raises(SystemExit) as exit_info:
        cli_main(
            ["import", "bfcl", str(tmp_path / "nowhere"), "--model-name", "xlam", "--run-dir", str(tmp_path / "run2")]
        )
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: result folder") and "Traceback" not in err
    with pytest.raises(SystemExit) as exit_info:
        cli_main(
            ["import", "bfcl", str(FIXTURES / "json_list"), "--model-name", "other", "--run-dir", str(tmp_path / "run")]
        )
    assert exit_info.value.code == 2
    assert "holds a different run" in capsys.readouterr().err


def test_prompt_arithmetic_is_computed_bounded_and_never_evaluated():
    from tooldiag.suites.bfcl.layouts import UnsafeExpression, decode_prompt

    assert decode_prompt("[f(x=1 << 3 | 1, y=2 ** -1, z=-(3))]") == ["f(x=9, y=0.5, z=-3)"]
    for text in ("[f(x=1 << 10**12)]", "[f(x=9**9**9)]", "[f(x='a' * 10**9)]", "[f(x=open('/etc/passwd') + 1)]"):
        with pytest.raises(UnsafeExpression):
            decode_prompt(text)
