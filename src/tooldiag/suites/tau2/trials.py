"""Trial-to-trial noise of tau2 results with several trials per task (``num_trials`` > 1).

tau2-bench runs every task ``num_trials`` times; one pooled rate over all simulations hides how
much of it is the draw. Per group (agent, user simulator, domain) and task class this module gives
what ``tooldiag run bfcl --repeats K`` gives per category (:mod:`tooldiag.metrics.repeats`; the
same functions):

* the spread over trials: per trial number r, Acc_r (share of the class's simulations of trial r
  that pass, reward 1) and GAR_r (share that hit the class's gold action, Table 2's signal), and
  Delta_r = GAR_r - Acc_r; their mean, sample sd (n - 1) and min-max;
* pass^k as tau2 defines it (``metrics/agent_metrics.py``): per task C(c, k) / C(n, k), averaged
  over tasks, k = 1..the fewest trials of any task (:func:`.stats.pass_hat_ks`), for the reward
  verdict and for the gold-action hit;
* the flip rate: the share of tasks with at least two scored trials whose verdict (or gold-action
  hit) is not the same in every trial.

Infrastructure errors are left out of every number, as tau2 leaves them out of pass^k. A group
gets rows only when some task has two or more scored trials, so one-trial reports are unchanged.
Simulations without a trial number count as trial 0; files pooled into one group share trial
numbers (trial 0 of two files is one trial of the spread, two simulations of the task).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tooldiag.metrics.repeats import flip_count, spread
from tooldiag.suites.tau2.report import TrialRow, TrialSpread
from tooldiag.suites.tau2.stats import pass_hat_ks
from tooldiag.suites.tau2.tables import Group, SimOutcome, class_specs

#: The row over every task: Acc only (no gold action is common to all tasks).
ALL_TASKS = "all"


def _spread(per_trial: dict[int, float | None]) -> TrialSpread:
    known = {trial: value for trial, value in sorted(per_trial.items()) if value is not None}
    summary = spread(list(known.values()))
    return TrialSpread(values=known, mean=summary.mean, sd=summary.sd, low=summary.low, high=summary.high)


def _share(outcomes: Sequence[SimOutcome], test: Callable[[SimOutcome], bool]) -> float | None:
    return sum(1 for o in outcomes if test(o)) / len(outcomes) if outcomes else None


def _row(group: Group, name: str, sims: list[SimOutcome], hit: Callable[[SimOutcome], bool] | None) -> TrialRow:
    by_trial: dict[int, list[SimOutcome]] = {}
    by_task: dict[str, list[SimOutcome]] = {}
    for outcome in sims:
        by_trial.setdefault(outcome.trial if outcome.trial is not None else 0, []).append(outcome)
        by_task.setdefault(outcome.task_id, []).append(outcome)
    acc_by_task = {task: [o.passed for o in runs] for task, runs in by_task.items()}
    flips_acc, flip_n_acc = flip_count(list(acc_by_task.values()))
    row = TrialRow(
        agent_model=group.agent_model,
        domain=group.domain,
        oracle=group.oracle,
        task_class=name,
        trials=max((len(runs) for runs in by_task.values()), default=0),
        n_tasks=len(by_task),
        acc=_spread({trial: _share(runs, lambda o: o.passed) for trial, runs in by_trial.items()}),
        pass_hat_k_acc=pass_hat_ks(acc_by_task),
        flips_acc=flips_acc,
        flip_n_acc=flip_n_acc,
        flip_rate_acc=flips_acc / flip_n_acc if flip_n_acc else None,
    )
    if hit is None:
        return row
    gar_by_task = {task: [hit(o) for o in runs] for task, runs in by_task.items()}
    flips_gar, flip_n_gar = flip_count(list(gar_by_task.values()))
    gar = {trial: _share(runs, hit) for trial, runs in by_trial.items()}
    acc = row.acc.values
    delta = {trial: None if value is None else value - acc[trial] for trial, value in gar.items()}
    return row.model_copy(
        update={
            "gar": _spread(gar),
            "delta": _spread(delta),
            "pass_hat_k_gar": pass_hat_ks(gar_by_task),
            "flips_gar": flips_gar,
            "flip_n_gar": flip_n_gar,
            "flip_rate_gar": flips_gar / flip_n_gar if flip_n_gar else None,
        }
    )


def trial_rows(group: Group) -> list[TrialRow]:
    """The trial rows of one group: ``all`` tasks, then each Table 2 / 2b class that has tasks.

    Empty when no task of the group has two scored trials (nothing varies across trials to measure).
    """
    scored = [o for o in group.outcomes if not o.infrastructure_error]
    per_task: dict[str, int] = {}
    for outcome in scored:
        per_task[outcome.task_id] = per_task.get(outcome.task_id, 0) + 1
    if max(per_task.values(), default=0) < 2:
        return []
    rows = [_row(group, ALL_TASKS, scored, None)]
    for _view, name, _signal, member, hit in class_specs(group):
        members = [o for o in scored if member(o)]
        if members:
            rows.append(_row(group, name, members, hit))
    return rows
