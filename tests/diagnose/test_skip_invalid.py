"""``tooldiag diagnose --skip-invalid``: bad lines are reported and skipped, not fatal."""

import json

from tooldiag.cli.main import main

GOOD = {
    "id": "a",
    "gold_class": "ask",
    "passed": True,
    "messages": [{"role": "user", "content": "Move it."}, {"role": "assistant", "content": "Which folder?"}],
}


def cli(capsys, *args):
    """``(exit status, stdout, stderr)`` of the command, run in-process."""
    status = 0
    try:
        main([str(arg) for arg in args])
    except SystemExit as exc:
        status = int(exc.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_skip_invalid_reports_and_skips(tmp_path, capsys):
    lines = [
        json.dumps(GOOD),
        "{oops",
        json.dumps({**GOOD, "id": "b", "gold_class": "maybe"}),
        json.dumps(GOOD),  # duplicate id
        json.dumps({**GOOD, "id": "c"}),
        "[1]",
    ]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n")
    status, _, err = cli(capsys, "diagnose", log)
    assert status == 2 and "line 2: not valid JSON" in err  # without the flag the whole log is refused

    status, out, err = cli(capsys, "diagnose", log, "--skip-invalid", "--format", "json")
    assert status == 0, err
    assert f"warning: skipped 4 invalid line(s) of {log} (--skip-invalid): {log} line 2: not valid JSON" in err
    assert "line 3 gold_class: 'maybe' is not an action class" in err and "; ..." in err
    assert json.loads(out)["runs"][0]["categories"]["ask"]["n"] == 2

    _, md, _ = cli(capsys, "diagnose", log, "--skip-invalid")
    assert "4 invalid line(s) skipped (line 2, 3, 4, 6)" in md


def test_skip_invalid_with_nothing_valid_is_refused(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text("{oops\n[1]\n")
    status, _, err = cli(capsys, "diagnose", log, "--skip-invalid")
    assert status == 2 and "holds no valid conversation (2 invalid line(s)" in err
