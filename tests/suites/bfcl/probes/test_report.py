"""Probe report arithmetic and layouts on hand-built runs (no model, no store)."""

import csv
import io
import json

import pytest

from tooldiag.classify import ActionClass
from tooldiag.errors import UserError
from tooldiag.suites.bfcl.probes.analysis import CaseView, RunView, compare, component_effects
from tooldiag.suites.bfcl.probes.report import build_probe_report, fmt_shift, render

T, REF = ActionClass.TOOL_CALL, ActionClass.REFUSE


def view(case_id, passed, classes=(T,), *, fired=False, injected=(), errored=False, digest="d"):
    category = case_id.rsplit("_", 1)[0].removeprefix("multi_turn_")
    own = (frozenset(classes),)
    return CaseView(case_id, category, None if errored else passed, errored, own, (own[0] | frozenset(injected),),
                    fired=fired, detector_fired=fired, emissions_digest=digest)  # fmt: skip


def make_run(model, probe, rows):
    return RunView(
        run_dir=f"runs/{model}-{probe or 'base'}", model=model, probe=probe, cases={r.case_id: r for r in rows}
    )


def ids(cat, n):
    return [f"multi_turn_{cat}_{i}" for i in range(n)]


def test_shifts_are_paired_and_errored_cases_left_out():
    base = make_run(
        "m", None, [view(i, k < 2) for k, i in enumerate(ids("base", 4))] + [view("multi_turn_base_9", True)]
    )
    rows = [view(i, k < 3, fired=k == 2, digest="x" if k == 2 else "d") for k, i in enumerate(ids("base", 4))]
    rows[0] = view("multi_turn_base_0", True, errored=True)  # errored in the probe run: unpaired
    probe = make_run("m", "sri", rows)
    comp = compare(probe, base)
    (cat,) = comp.categories
    assert cat.n == 3 and comp.unpaired == 2  # base_0 (errored) and base_9 (baseline only)
    assert (cat.baseline.passed, cat.probe.passed) == (1, 2)
    assert cat.acc_shift == pytest.approx(100 / 3) and (cat.pass_to_fail, cat.fail_to_pass) == (0, 1)
    assert cat.probe.fired_rate == pytest.approx(100 / 3) and cat.changed == 1


def test_component_decomposition_is_v1_minus_ablation_on_common_cases():
    cases = ids("base", 4) + ids("miss_param", 4)

    def run(probe, passes):
        return make_run("m", probe, [view(c, c in passes) for c in cases])

    runs = {
        "baseline": run(None, set(cases[:2])),  # 2/8
        "sri": run("sri", set(cases[:5])),  # 5/8
        "sri:hd_only": run("sri:hd_only", set(cases[:3])),  # 3/8
        "sri:no_history": run("sri:no_history", set(cases[:1])),  # 1/8
        "sri:no_state": run("sri:no_state", set(cases[:6])),  # 6/8
    }
    effects = component_effects(runs)
    assert effects == {
        "Halt detection (HD)": 12.5,
        "History-edit (vs. no_history)": 50.0,
        "Reconciliation prompt (vs. no_recon)": None,  # no run
        "State injection (vs. no_state)": -12.5,
    }
    report = build_probe_report([r for k, r in runs.items() if k != "baseline"], [runs["baseline"]])
    table7 = next(t for t in report.tables if t.key == "table7")
    assert table7.texts() == [
        ["Halt detection (HD)", "+12.50"],
        ["History-edit (vs. no_history)", "+50.00"],
        ["Reconciliation prompt (vs. no_recon)", "-"],
        ["State injection (vs. no_state)", "-12.50"],
    ]
    table6 = next(t for t in report.tables if t.key == "table6")
    assert [row[1] for row in table6.texts()] == ["SRI v1 (full)", "HD-only", "SRI - History", "SRI - State"]
    assert table6.texts()[0][-1] == "+37.50"


def test_table4_table8_table9_layouts():
    base_ids, mf_ids = ids("base", 4), ids("miss_func", 4)
    baseline = make_run("fam", None, [view(i, k == 0) for k, i in enumerate(base_ids)]
                        + [view(i, k < 2, (T,)) for k, i in enumerate(mf_ids)])  # fmt: skip
    sri = make_run(
        "fam", "sri", [view(i, k < 3) for k, i in enumerate(base_ids)] + [view(i, k == 0) for k, i in enumerate(mf_ids)]
    )
    retry = make_run(
        "fam", "cri-retry", [view(i, k == 0, (REF,) if k < 3 else (T,), fired=k < 3) for k, i in enumerate(mf_ids)]
    )
    bypass = make_run(
        "fam",
        "cri-bypass",
        [view(i, k < 3, (T,), fired=k < 2, injected=(REF,) if k < 2 else ()) for k, i in enumerate(mf_ids)],
    )
    state_only = make_run("fam", "sri:state_only", [view(i, k < 4) for k, i in enumerate(base_ids + mf_ids)])
    report = build_probe_report([sri, retry, bypass, state_only], [baseline])
    md = render(report, "md")
    assert "| fam | 100.0 (0.0) | 75.0 (+50.0) | - | - | 75.0 (+75.0) | 75.0 (+25.0) | - | - |" in md, md
    tables = {t.key: t for t in report.tables}
    assert tables["table8"].texts() == [["fam", "3/8 (37.50%)", "4/8 (+12.5)"]]
    assert tables["table8"].rows[0][1] == (3, 8, 37.5)  # cells hold numbers; columns format them
    assert tables["table9"].texts() == [
        ["base", "1 -> 3 (+2; P->F 0, F->P 2)"],
        ["miss_func", "2 -> 1 (-1; P->F 1, F->P 0)"],
    ]
    assert tables["table10"].texts() == [["fam", "-25.0", "-"]]
    assert tables["table11"].texts() == [["fam", "50.0%", "-"]]
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert set(rows[0]) == {"model", "probe", "category", "metric", "value"}
    b = {(r["probe"], r["metric"]): r["value"] for r in rows if r["category"] == "miss_func"}
    assert b[("cri-bypass", "gar_reading_a")] == "0.0" and b[("cri-bypass", "gar_reading_b")] == "50.0"
    data = json.loads(render(report, "json"))
    assert data["gar_reading"] == "A" and {t["key"] for t in data["tables"]} == set(tables)


def test_pairing_errors_are_user_errors():
    base = make_run("a", None, [view("multi_turn_base_0", True)])
    sri = make_run("a", "sri", [view("multi_turn_base_0", True)])
    with pytest.raises(UserError, match="no baseline of the same model"):
        build_probe_report([make_run("b", "sri", [])], [base])
    with pytest.raises(UserError, match="is a probe run"):
        build_probe_report([sri], [sri])
    with pytest.raises(UserError, match="not a probe run"):
        build_probe_report([base], [base])
    with pytest.raises(UserError, match="two baselines"):
        build_probe_report([sri], [base, make_run("a", None, [])])
    with pytest.raises(UserError, match="two sri runs"):
        build_probe_report([sri, make_run("a", "sri", [])], [base])
    with pytest.raises(UserError, match="no probe runs"):
        build_probe_report([], [base])
    with pytest.raises(UserError, match="unknown report format"):
        render(build_probe_report([sri], [base]), "xlsx")


def test_shift_formatting():
    assert [fmt_shift(v) for v in (0.04, -0.04, 0.5, -21.0, None)] == ["0.0", "0.0", "+0.5", "-21.0", "-"]
