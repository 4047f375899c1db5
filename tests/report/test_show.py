"""``tooldiag show``: a masked ref/overcall case prints its over-calling emission, with its class."""

import json

import pytest

import tooldiag
from tooldiag.classify import ActionClass, get_classifier
from tooldiag.cli.main import main
from tooldiag.store import RunStore


@pytest.fixture(scope="module")
def overcall_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("show") / "overcall"
    tooldiag.run_bfcl("ref/overcall", run_dir, categories=["miss_func"], limit=12)
    return run_dir


def _masked_cases(run_dir):
    """Derived from the stored trajectories alone: passed, and no refusal at a gold turn (the turn
    before each give-back turn, where the held-out function was still missing)."""
    classify = get_classifier("default")
    masked = {}
    with RunStore.open(run_dir) as store:
        for record in store.iter_cases():
            if not record.passed:
                continue
            gold_turns = sorted(t - 1 for t in record.trajectory.notes["give_back_turns"])
            classes = {
                turn: [
                    classify(step.emission.text, bool(step.emission.tool_calls))
                    for step in record.trajectory.turns[turn].steps
                    if not step.emission.injected
                ]
                for turn in gold_turns
            }
            if not any(ActionClass.REFUSE in labels for labels in classes.values()):
                masked[record.case_id] = (gold_turns, record.trajectory)
    return masked


def _section(text, header):
    """The lines of the turn section whose rule line contains ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if header in line and "─" in line)
    end = next((i for i in range(start + 1, len(lines)) if "─" * 10 in lines[i]), len(lines))
    return lines[start + 1 : end]


def test_show_prints_the_over_calling_emission_at_the_gold_turn(overcall_run, capsys):
    masked = _masked_cases(overcall_run)
    assert masked, "ref/overcall passes miss_func cases without refusing: some must be masked"
    case_id, (gold_turns, trajectory) = sorted(masked.items())[0]
    main(["show", str(overcall_run), case_id])
    out = capsys.readouterr().out
    assert case_id in out and "verdict MASKED" in out and "gold refuse" in out
    gold_turn = gold_turns[0]
    section = _section(out, f"turn {gold_turn} · GOLD TURN")
    call_names = [call.name for step in trajectory.turns[gold_turn].steps for call in step.emission.tool_calls]
    assert call_names, "the over-calling emission at the gold turn holds a tool call"
    step_lines = [line for line in section if line.lstrip().startswith("step ")]
    assert any("tool_call" in line and "[structured_call]" in line for line in step_lines)
    assert any(f"call: {call_names[0]}" in line for line in section)
    assert not any(" refuse " in line for line in step_lines)


def test_json_has_every_emission_with_class_and_explanation(overcall_run, capsys):
    case_id, (gold_turns, trajectory) = sorted(_masked_cases(overcall_run).items())[0]
    main(["show", str(overcall_run), case_id, "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert (document["case_id"], document["verdict"], document["gold_class"]) == (case_id, "masked", "refuse")
    assert document["passed"] is True and document["gold_hit"] is False
    assert [t["index"] for t in document["turns"] if t["gold_turn"]] == gold_turns
    steps = [step for turn in document["turns"] for step in turn["steps"]]
    assert len(steps) == sum(len(turn.steps) for turn in trajectory.turns)
    classify = get_classifier("default")
    stored = [step for turn in trajectory.turns for step in turn.steps]
    for shown, step in zip(steps, stored):
        expected = classify(step.emission.text, bool(step.emission.tool_calls)).value
        assert shown["action_class"] == shown["explanation"]["label"] == expected
        assert shown["explanation"]["rule"] and shown["explanation"]["scheme"] == "default"
        assert shown["tool_results"] == step.tool_results  # complete: nothing cut
        assert shown["decoded_calls"] == step.decoded_calls
        assert [c["raw_arguments"] for c in shown["tool_calls"]] == [c.raw_arguments for c in step.emission.tool_calls]
    assert all(turn["user_messages"] for turn in document["turns"])


def test_show_with_the_paper_scheme(overcall_run):
    case_id = sorted(_masked_cases(overcall_run))[0]
    transcript = tooldiag.show_case(overcall_run, case_id, "paper")
    assert transcript.scheme == "paper"
    assert {step.explanation.scheme for step in transcript.steps()} == {"paper"}


def test_unknown_case_id_names_it_and_close_ids(overcall_run, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["show", str(overcall_run), "multi_turn_miss_func_999"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    first, hint = err.strip().splitlines()
    assert "multi_turn_miss_func_999" in first and str(overcall_run) in first
    assert "close ids: multi_turn_miss_func_" in hint and f"tooldiag cases {overcall_run}" in hint
    assert len(hint.split("close ids: ")[1].split(";")[0].split(", ")) <= 5


def test_a_folder_that_is_not_a_bfcl_run(tmp_path, capsys):
    from tooldiag.suites.judgebench.store import JudgeBenchStore

    with JudgeBenchStore(tmp_path / "jb"):
        pass
    for folder, words in ((tmp_path / "jb", "AgentJudgeBench store, not a BFCL run"), (tmp_path, "not a BFCL run")):
        with pytest.raises(SystemExit) as exit_info:
            main(["show", str(folder), "x"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and "fix: tooldiag show reads BFCL run directories" in err


def test_a_missing_path_and_a_bad_format(tmp_path, capsys):
    for argv, words in (
        (["show", str(tmp_path / "nope"), "x"], "does not exist"),
        (["show", str(tmp_path), "x", "--format", "html"], "unknown format 'html'"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert words in capsys.readouterr().err


def test_injected_emissions_are_shown_and_not_counted(tmp_path):
    from tooldiag.report.transcript import build_transcript, transcript_text
    from tooldiag.trajectory import Emission, Message, Step, Turn

    turns = [
        Turn(
            index=0,
            user_messages=[Message(role="user", content="Delete the file report.txt")],
            steps=[
                Step(emission=Emission(text="I cannot do that: there is no function to delete files.", injected=True)),
                Step(emission=Emission(text="Done."), tool_results=["x" * 2000]),
            ],
        )
    ]
    transcript = build_transcript(
        turns,
        get_classifier("default"),
        run="r",
        source="s",
        case_id="c",
        category="miss_func",
        gold_class=ActionClass.REFUSE,
        gold_turns=[0],
        passed=True,
    )
    injected, answer = transcript.steps()
    assert answer.counted and answer.action_class is ActionClass.OTHER
    assert injected.action_class is ActionClass.REFUSE and not injected.counted
    assert transcript.verdict == "masked" and transcript.gold_hit is False  # the injected refusal does not count
    text = transcript_text(transcript)
    assert "INJECTED, not counted" in text
    assert "[cut: 1600 more characters" in text and "x" * 2000 not in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert transcript.to_json()["turns"][0]["steps"][1]["tool_results"] == ["x" * 2000]
