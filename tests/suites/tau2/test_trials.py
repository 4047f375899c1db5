"""tau2 results with several trials per task: spread over trials, tau2's pass^k, flip rates per class.

The fixture is written from :data:`PLAN` (a 1.0.1 monolithic airline file, the shapes of
shared/tau2/tau2-results-schema.md, built with :mod:`tests.suites.tau2.v101_fixtures`): per task
and trial, whether tau2 rewarded it and what the agent did. Expected numbers are counted here,
from the plan and by hand, never taken from the code under test.
"""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from tests.suites.tau2.v101_fixtures import Sim, action, info, task, write_banking
from tooldiag.cli.main import main
from tooldiag.suites.tau2.analysis import diagnose
from tooldiag.suites.tau2.formats import render

#: task -> one entry per trial: (reward 1?, the agent's move). Moves: "ref" makes the task's reference
#: call, "none" answers in text only, "cancel" cancels a reservation (a WRITE tool in airline),
#: "infra" is an infrastructure_error simulation (left out of every number).
PLAN: dict[str, list[tuple[bool, str]]] = {
    "w": [(True, "ref"), (False, "ref"), (True, "ref")],  # write task: verdict flips, gold hit (matched) does not
    "r": [(True, "ref"), (True, "ref"), (True, "none")],  # read-only task: verdict steady, matched flips
    "e": [(True, "none"), (False, "cancel"), (False, "infra")],  # empty (refuse) task: both flip; trial 2 left out
}
REFERENCE = {"w": ("cancel_reservation", {"reservation_id": "R1"}), "r": ("get_reservation_details",
                                                                         {"reservation_id": "R2"})}  # fmt: skip


def _simulation(task_id: str, trial: int, passed: bool, move: str) -> dict:
    sim = Sim(f"{task_id}-{trial}", task_id, trial).user(f"Please help with task {task_id}.")
    if move == "infra":
        return sim.done(0.0, "infrastructure_error")
    if move == "ref":
        name, arguments = REFERENCE[task_id]
        sim.agent_call(name, arguments)
    elif move == "cancel":
        sim.agent_call("cancel_reservation", {"reservation_id": "R3"})
    sim.agent("Done." if move != "none" else "I cannot do that under our policy.")
    return sim.user("Thanks. ###STOP###").done(1.0 if passed else 0.0)


def write_trials_file(folder) -> Path:
    """The airline results file of :data:`PLAN` (3 trials of tasks w, r, e) in ``folder``."""
    tasks = [task(t, [action(f"{t}_0", *REFERENCE[t])] if t in REFERENCE else [], ["DB"]) for t in PLAN]
    sims = [_simulation(t, trial, *entry) for t, entries in PLAN.items() for trial, entry in enumerate(entries)]
    block = info("airline")
    block["num_trials"] = 3
    data = {"timestamp": "2026-07-20T10:00:00", "info": block, "tasks": tasks, "simulations": sims,
            "simulation_index": None}  # fmt: skip
    path = folder / "airline_3_trials.json"
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.fixture
def trials_file(tmp_path):
    return write_trials_file(tmp_path)


def _scored(tasks: list[str]) -> dict[str, list[tuple[bool, str]]]:
    return {t: [entry for entry in PLAN[t] if entry[1] != "infra"] for t in tasks}


def _flips(outcomes: dict[str, list[bool]]) -> tuple[int, int]:
    """Tasks with >= 2 scored trials, and those among them whose outcome is not the same in every trial."""
    eligible = [values for values in outcomes.values() if len(values) >= 2]
    return sum(1 for values in eligible if any(v != values[0] for v in values)), len(eligible)


def _rows(report):
    return {row.task_class: row for row in report.trials}


def test_flip_rates_are_the_ones_the_plan_gives(trials_file):
    rows = _rows(diagnose([trials_file]))
    # classes with tasks: all; tool_call (w, r) and refuse (e); write (w), read_only (r), empty (e)
    assert list(rows) == ["all", "tool_call", "refuse", "write", "read_only", "empty"]
    signals = {  # Table 2's gold-action hit per class, read off the plan
        "tool_call": (["w", "r"], lambda t, move: move == "ref"),  # every reference action matched
        "refuse": (["e"], lambda t, move: move != "cancel"),  # no write-tool call
        "write": (["w"], lambda t, move: move == "ref"),
        "read_only": (["r"], lambda t, move: move != "cancel"),
        "empty": (["e"], lambda t, move: move != "cancel"),
    }
    assert _flips({t: [p for p, _ in v] for t, v in _scored(list(PLAN)).items()}) == (2, 3)  # w and e flip
    assert (rows["all"].flips_acc, rows["all"].flip_n_acc, rows["all"].flip_rate_acc) == (2, 3, pytest.approx(2 / 3))
    assert rows["all"].gar is None and rows["all"].flip_n_gar == 0  # no gold action common to every task
    for name, (tasks, hit) in signals.items():
        scored = _scored(tasks)
        acc = _flips({t: [passed for passed, _ in v] for t, v in scored.items()})
        gar = _flips({t: [hit(t, move) for _, move in v] for t, v in scored.items()})
        row = rows[name]
        assert (row.flips_acc, row.flip_n_acc) == acc, name
        assert (row.flips_gar, row.flip_n_gar) == gar, name
    # by hand: tool_call: w's verdict flips (1/2), r's match flips (1/2); refuse: e flips on both (1/1)
    assert (rows["tool_call"].flip_rate_acc, rows["tool_call"].flip_rate_gar) == (0.5, 0.5)
    assert (rows["refuse"].flip_rate_acc, rows["refuse"].flip_rate_gar) == (1.0, 1.0)
    assert (rows["write"].flip_rate_gar, rows["read_only"].flip_rate_acc, rows["read_only"].flip_rate_gar) == (0, 0, 0)


def test_spread_over_trials_and_pass_hat_k(trials_file):
    report = diagnose([trials_file])
    rows = _rows(report)
    every = rows["all"]
    # Acc per trial: trial 0 w, r, e pass (3/3); trial 1 only r (1/3); trial 2 w and r (2/2, e's infra error out)
    assert every.acc.values == {0: 1.0, 1: pytest.approx(1 / 3), 2: 1.0}
    mean = (1 + Fraction(1, 3) + 1) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in (1, Fraction(1, 3), 1)) / 2)
    assert (every.acc.mean, every.acc.sd) == (pytest.approx(float(mean)), pytest.approx(sd))
    assert (every.acc.low, every.acc.high, every.trials, every.n_tasks) == (pytest.approx(1 / 3), 1.0, 3, 3)
    # tau2's pass^k: k up to the fewest scored trials (e: 2); w 2 of 3, r 3 of 3, e 1 of 2
    counts = [(3, 2), (3, 3), (2, 1)]
    expected = {k: sum(comb(c, k) / comb(n, k) for n, c in counts) / 3 for k in (1, 2)}
    assert every.pass_hat_k_acc == pytest.approx(expected)
    assert every.pass_hat_k_acc == pytest.approx(report.table2[0].pass_hat_k)  # the same tau2 pass^k as Table 2
    tool_call = rows["tool_call"]  # GAR per trial (matched): 2/2, 2/2, 1/2 (r's trial 2 made no call)
    assert tool_call.gar is not None and tool_call.gar.values == {0: 1.0, 1: 1.0, 2: 0.5}
    assert tool_call.delta is not None and tool_call.delta.values == {0: 0.0, 1: 0.5, 2: -0.5}
    assert tool_call.pass_hat_k_gar == pytest.approx({1: (1 + 2 / 3) / 2, 2: (1 + 1 / 3) / 2, 3: 0.5})


def test_renderings_carry_the_trials(trials_file, capsys):
    report = diagnose([trials_file])
    markdown = render(report, "md")
    assert "## Trials: spread, pass^k and flip rates" in markdown
    assert "| fake/agent-t | airline | all | 3 | 3 | 77.8 ± 38.5 [33.3, 100.0] | – | – | 72.2 / 44.4 | – |" in markdown
    assert "| 66.7 (2/3) | – |" in markdown
    main(["tau2", "diagnose", str(trials_file), "--format", "json"])
    payload = json.loads(capsys.readouterr().out)
    refuse = next(row for row in payload["trials"] if row["task_class"] == "refuse")
    assert (refuse["flips_gar"], refuse["flip_n_gar"], refuse["trials"]) == (1, 1, 2)
    rows = [r for r in csv.DictReader(io.StringIO(render(report, "csv"))) if r["section"] == "trials"]
    assert [r["task_class"] for r in rows] == list(_rows(report))
    assert float(rows[0]["flip_rate_acc"]) == pytest.approx(2 / 3) and rows[0]["pass_hat_2_acc"]


def test_one_trial_results_have_no_trials_section(tmp_path):
    report = diagnose([write_banking(tmp_path)])  # one simulation of one task
    assert report.trials == []
    assert "## Trials" not in render(report, "md")
