"""A reply over the size cap, then a resume under a larger ``--max-response-bytes`` (issue 20).

The cap is not part of a run's identity (like ``--timeout``): a BFCL case that a reply over the
cap ended is graded (``inference_error``, as BFCL grades an inference failure) and noted with the
cap; the same command resumed under the same cap asks nothing again, and resumed under a larger
cap asks those cases again, in the same run directory, and grades the model's real answers. A
judge verdict refused by the cap is an error row, retried by every resume; under a larger cap
it becomes a real verdict.
"""

from __future__ import annotations

import pytest

from tests.models.test_hostile_server import VERDICT, cli, run_bfcl, stored
from tests.support.fault_server import FaultServer
from tooldiag.cli.main import main
from tooldiag.suites.bfcl.runner import RESPONSE_CAP_NOTE
from tooldiag.suites.judgebench.store import JudgeBenchStore

BODY = 300_000  # every answer of the server is padded to this size
SMALL, LARGE = 200_000, 1_000_000


pytestmark = pytest.mark.usefixtures("fast_retry_policy")  # cache dir and env: tests/models/conftest.py


def test_a_bfcl_resume_under_a_larger_cap_asks_the_refused_cases_again(tmp_path, capsys):
    run = tmp_path / "run"
    with FaultServer("oversized", persistent=True, oversized_bytes=BODY) as server:
        assert run_bfcl(server, run, "--max-response-bytes", SMALL) == 0
        first = stored(run)
        asked_first = server.outcomes.total()
        assert run_bfcl(server, run, "--max-response-bytes", SMALL) == 0  # same cap: nothing asked
        asked_same_cap = server.outcomes.total() - asked_first
        assert run_bfcl(server, run, "--max-response-bytes", LARGE) == 0  # larger cap: asked again
        second = stored(run)
        asked_larger = server.outcomes.total() - asked_first
        assert run_bfcl(server, run, "--max-response-bytes", LARGE) == 0  # graded for real: nothing asked
        asked_after = server.outcomes.total() - asked_first - asked_larger
    err = capsys.readouterr().err
    assert "Traceback" not in err

    assert asked_first == 2  # one request per case, refused at once
    assert all(r.status == "done" and r.trajectory.notes[RESPONSE_CAP_NOTE] == SMALL for r in first)
    assert all(f"cap of {SMALL} bytes" in r.trajectory.notes["bfcl_inference_error"] for r in first)
    assert all("a resume with a larger cap asks again" in r.trajectory.notes["bfcl_inference_error"] for r in first)
    assert asked_same_cap == 0
    assert asked_larger > 2  # the rollouts ran: several steps each
    assert sorted(r.case_id for r in second) == sorted(r.case_id for r in first)
    for record in second:
        assert record.status == "done" and record.trajectory.inference_error is None
        assert "bfcl_inference_error" not in record.trajectory.notes
        assert RESPONSE_CAP_NOTE not in record.trajectory.notes
        assert record.trajectory.turns  # the model's answers were stored
    assert asked_after == 0


def test_a_judge_resume_under_a_larger_cap_gets_real_verdicts(tmp_path, capsys):
    run = tmp_path / "run"
    main(["judgebench", "predict", "-g", "ref/jb-perturb", "--run-dir", str(run), "--limit", "1", "-q"])

    def judge(server: FaultServer, cap: int) -> list[tuple[str, str | None]]:
        status = cli("judgebench", "judge", "-j", "openai/hostile-judge", "--base-url", server.base_url,
                     "--run-dir", run, "-q", "--conditions", "with_gt", "--no-cache", "--timeout", "2",
                     "--max-retries", "1", "--max-response-bytes", cap)  # fmt: skip
        assert status == 0
        with JudgeBenchStore(run, create=False) as store:
            return store.db.execute(
                "SELECT status, error FROM judgements WHERE judge = 'openai/hostile-judge'"
            ).fetchall()

    with FaultServer("oversized", persistent=True, judge_text=VERDICT, oversized_bytes=BODY) as server:
        refused = judge(server, SMALL)
        verdicts = judge(server, LARGE)
    assert "Traceback" not in capsys.readouterr().err
    assert refused and all(s == "error" and f"cap of {SMALL} bytes" in (e or "") for s, e in refused), refused
    assert len(verdicts) == len(refused)
    assert all(s == "ok" for s, _ in verdicts), verdicts
