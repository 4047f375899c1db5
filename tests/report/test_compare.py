"""``tooldiag compare``: seeded stochastic doubles (no false alarms), real reference runs (a real gap), every input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

import tooldiag
from tests.suites.tau2.v101_fixtures import write_telecom
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.metrics.cases import CaseRow, Verdict
from tooldiag.report.compare import compare_rows

EXAMPLE_LOG = Path(__file__).parents[2] / "examples" / "agent_log.jsonl"


def _row(run: str, case: str, category: str, passed: bool, hit: bool, **extra: object) -> CaseRow:
    return CaseRow(run, case, category, "refuse", (), hit, passed, None, Verdict.OK, extra=dict(extra))


class CoinPolicy:
    """A test double of a stochastic policy: per case a fixed success rate, each draw a seeded coin flip."""

    def __init__(self, cases: int, categories: tuple[str, ...], seed: int) -> None:
        rng = random.Random(seed)
        self.rates = {(c, f"{c}_{i}"): (rng.random(), rng.random()) for c in categories for i in range(cases)}

    def draw(self, run: str, seed: int, shift: float = 0.0) -> list[CaseRow]:
        rng = random.Random(seed)
        return [
            _row(run, case, category, rng.random() < acc - shift, rng.random() < gar - shift)
            for (category, case), (acc, gar) in self.rates.items()
        ]


CATEGORIES = ("base", "miss_func", "miss_param", "long_context")


def test_two_draws_of_one_stochastic_policy_show_no_difference_in_95_of_100_trials():
    detected = 0
    for trial in range(100):
        policy = CoinPolicy(50, CATEGORIES, seed=trial)
        first, second = policy.draw("coin", 1000 + trial), policy.draw("coin", 2000 + trial)
        comparison = compare_rows(first, second, a="draw 1", b="draw 2", resamples=0)
        assert len(comparison.tests) == 8 and all(t.n == 50 for t in comparison.tests)
        detected += any(t.significant for t in comparison.tests)
    assert detected <= 5


def test_a_real_shift_is_detected():
    """The other side of the same test: a 30-point lower success rate is found in most trials."""
    found = 0
    for trial in range(20):
        policy = CoinPolicy(50, ("miss_func",), seed=trial)
        comparison = compare_rows(policy.draw("a", 500 + trial), policy.draw("b", 900 + trial, shift=0.3), resamples=0)
        found += all(t.significant and t.difference_pp > 0 for t in comparison.tests)
    assert found >= 15


def test_repeats_are_clusters_of_their_case():
    """Rows sharing (category, case) are samples: rates are per-case means, the sign test counts cases."""
    a = [_row("a", "c1", "x", s < 2, True, sample=s) for s in range(3)] + [_row("a", "c2", "x", True, True)]
    b = [_row("b", "c1", "x", False, True, sample=s) for s in range(2)] + [_row("b", "c2", "x", True, False)]
    acc, gar = compare_rows(a, b, resamples=200).tests
    assert (acc.n, acc.samples, acc.a_only, acc.b_only) == (2, 3, 1, 0)
    assert acc.a_rate == pytest.approx(100 * (2 / 3 + 1) / 2) and acc.b_rate == pytest.approx(50.0)
    assert (gar.a_only, gar.b_only, gar.difference_pp) == (1, 0, pytest.approx(50.0))


def test_errored_and_ungraded_rows_are_left_out_of_their_metric():
    a = [_row("a", "c1", "x", True, True), _row("a", "c2", "x", True, True)]
    b = [_row("b", "c1", "x", None, False), CaseRow("b", "c2", "x", "refuse", (), False, None, None, Verdict.UNGRADED,
                                                     errored=True)]  # fmt: skip
    acc, gar = compare_rows(a, b).tests  # type: ignore[arg-type]
    assert acc.n == 0 and acc.verdict.startswith("not compared on x Acc")
    assert gar.n == 1 and gar.a_only == 1
    assert gar.p_holm == gar.p == 1.0 and acc.p_holm == 1.0  # a test without cases is not in the Holm family


# -- real runs -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference_runs(tmp_path_factory):
    """ref/oracle (asks and refuses right) and ref/overcall (calls anyway) on BFCL's 200 miss_func cases."""
    root = tmp_path_factory.mktemp("compare")
    for name in ("oracle", "overcall"):
        tooldiag.run_bfcl(f"ref/{name}", root / name, categories=["miss_func"])
    return root / "oracle", root / "overcall"


def test_oracle_beats_overcall_on_miss_func_gar(reference_runs, capsys):
    main(["compare", *map(str, reference_runs), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["overlap"] == {"shared_cases": 200, "only_a": 0, "only_b": 0}
    gar = next(t for t in data["tests"] if t["metric"] == "gar")
    assert gar["n"] == 200 and gar["significant"] and gar["p_holm"] < 1e-6
    assert gar["difference_pp"] == pytest.approx(100.0)  # the oracle refuses every case, overcall none
    assert gar["verdict"].startswith("ref/oracle > ref/overcall on miss_func GAR: +100.0 pp, p = ")


def test_markdown_csv_and_parquet_carry_the_same_tests(reference_runs, capsys, tmp_path):
    main(["compare", *map(str, reference_runs)])
    text = capsys.readouterr().out
    assert "- ref/oracle > ref/overcall on miss_func GAR" in text and "| miss_func | GAR | 200 |" in text
    main(["compare", *map(str, reference_runs), "--format", "csv", "--metric", "gar"])
    import io

    from_csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    main(
        ["compare", *map(str, reference_runs), "--format", "parquet", "--out", str(tmp_path / "c.parquet"), "-m", "gar"]
    )
    from_parquet = pd.read_parquet(tmp_path / "c.parquet")
    assert list(from_csv["metric"]) == list(from_parquet["metric"]) == ["gar"]
    assert from_csv["p_holm"].tolist() == pytest.approx(from_parquet["p_holm"].tolist())


def test_same_seed_same_bytes(reference_runs, tmp_path):
    outs = [tmp_path / f"{i}.json" for i in range(2)]
    for out in outs:
        main(["compare", *map(str, reference_runs), "--format", "json", "--out", str(out), "--resamples", "500"])
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_partial_overlap_is_reported(reference_runs, tmp_path):
    tooldiag.run_bfcl("ref/overcall", tmp_path / "few", categories=["miss_func"], limit=20)
    comparison = tooldiag.compare_runs(reference_runs[0], tmp_path / "few")
    assert (comparison.shared_cases, comparison.only_a, comparison.only_b) == (20, 180, 0)
    assert any("180 only in ref/oracle" in w for w in comparison.warnings)


def test_runs_without_shared_cases_are_refused(reference_runs, tmp_path, capsys):
    tooldiag.run_bfcl("ref/overcall", tmp_path / "base", categories=["base"], limit=3)
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(reference_runs[0]), str(tmp_path / "base")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "share no case" in err and "multi_turn_base_0" in err


def test_different_schemes_are_warned(reference_runs, capsys):
    main(["compare", *map(str, reference_runs), "--scheme-b", "paper", "--resamples", "0"])
    assert "warning: ref/oracle is classified by the default scheme, ref/overcall by paper" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--alpha", "1.5"], "not a significance level"), (["--metric", "f1"], "unknown metric"),
     (["--format", "xml"], "unknown format"), (["--format", "parquet"], "writes a binary file")],
)  # fmt: skip
def test_bad_options_are_one_error_line(reference_runs, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["compare", *map(str, reference_runs), *args])
    assert exc.value.code == 2 and message in capsys.readouterr().err


# -- other inputs ----------------------------------------------------------------------------
def test_agent_log_against_itself_shows_no_difference():
    comparison = tooldiag.compare_runs(EXAMPLE_LOG, EXAMPLE_LOG)
    assert comparison.a != comparison.b  # the same name twice is told apart
    assert comparison.tests and not any(t.significant for t in comparison.tests)
    assert all(t.difference_pp == 0 for t in comparison.tests if t.n)


def test_tau2_results_pair_on_tasks_and_warn_on_versions(tmp_path):
    v101 = write_telecom(tmp_path)
    data = json.loads(v101.read_text())
    del data["simulation_index"]  # what tells 1.0.1 from 1.0.0 (shared/tau2/tau2-results-schema.md)
    v100 = tmp_path / "telecom_v100.json"
    v100.write_text(json.dumps(data))
    comparison = tooldiag.compare_runs(v101, v100)
    assert any("tau2 version differs: 1.0.1" in w and "1.0.0" in w for w in comparison.warnings)
    # task roam has two trials on each side: one case of two samples, not two cases
    assert comparison.tests and all(t.samples == 2 and t.n == 1 for t in comparison.tests)
    assert all("too few cases" in t.verdict for t in comparison.tests)


def test_compare_rows_refuses_no_overlap_directly():
    with pytest.raises(UserError, match="share no case"):
        compare_rows([_row("a", "c1", "x", True, True)], [_row("b", "c2", "x", True, True)])


def test_tests_without_cases_stay_out_of_the_holm_family():
    a = [_row("a", f"c{i}", "x", True, True) for i in range(10)] + [_row("a", "d", "y", True, True)]
    b = [_row("b", f"c{i}", "x", False, False) for i in range(10)]
    b.append(CaseRow("b", "d", "y", "refuse", (), False, None, None, Verdict.UNGRADED, errored=True))
    tests = compare_rows(a, b, resamples=0).tests
    assert [(t.category, t.n) for t in tests] == [("x", 10), ("x", 10), ("y", 0), ("y", 0)]
    assert tests[0].p == pytest.approx(2 / 2**10) and tests[0].p_holm == pytest.approx(2 * tests[0].p)  # m = 2, not 4
