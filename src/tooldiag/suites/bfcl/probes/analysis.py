"""Probe runs against their baselines: GAR and Acc shifts, transitions, fired rates.

Paper 001 §4.4 and App. C. Every number here is a pure function of stored runs
(:func:`load_run` is the only function that reads a store); the renderers live in
:mod:`tooldiag.suites.bfcl.probes.report`.

Definitions (percentages on 0..100, shifts in percentage points):

* **GAR** (paper 001 Eq. 1): share of cases whose emissions include the category's
  gold class at any turn, from :func:`tooldiag.metrics.gar.case_gar`.
* **Acc**: share of graded cases BFCL's checker passes.
* **Shift** = value under the probe - value under the baseline, computed on the cases
  graded in both runs (paired), so a partly finished run is still compared fairly.
* **Aggregate Acc shift** (Tables 6-8): passes over all paired cases of all categories;
  with equal category sizes (BFCL's 200 each, or any ``--limit``) this is BFCL's
  unweighted mean of category accuracies.
* **fired_rate** (Table 11): share of cases in which the probe acted at least once
  (``notes["probe"]["fired"]``); ``detector_rate`` counts detector hits that a gate
  suppressed too.
* **PASS->FAIL / FAIL->PASS** (Table 9): paired transitions per category.

Reading A and reading B (App. C.2). CRI-bypass writes a placeholder in the model's
place. Reading A (``reading="A"``, used by every report) leaves injected text out of the
emission sets, so GAR measures only what the model emitted; reading B
(``reading="B"``) classifies the placeholder like a model emission (it is a refuse),
which makes the miss_func GAR shift track the fired rate. Both are computed; only A is
reported as GAR.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tooldiag.classify import ActionClass, Classifier
from tooldiag.errors import UserError
from tooldiag.metrics.gar import CaseObservation, accuracy, case_gar
from tooldiag.suites.bfcl import CATEGORIES
from tooldiag.suites.bfcl.gold import BFCL_GOLD
from tooldiag.trajectory import CaseTrajectory

Reading = Literal["A", "B"]


@dataclass(frozen=True)
class CaseView:
    """What the probe analysis needs from one stored case."""

    case_id: str
    category: str
    passed: bool | None
    errored: bool
    #: Per turn, classes of the model's own emissions (reading A).
    classes_a: tuple[frozenset[ActionClass], ...]
    #: Per turn, classes with injected text included (reading B).
    classes_b: tuple[frozenset[ActionClass], ...]
    fired: bool = False
    detector_fired: bool = False
    #: Digest of everything the model emitted (text and calls, per turn and step).
    emissions_digest: str = ""

    def observation(self, reading: Reading = "A") -> CaseObservation:
        return CaseObservation(
            case_id=self.case_id,
            category=self.category,
            gold=BFCL_GOLD.get(self.category, ActionClass.OTHER),
            passed=None if self.errored else self.passed,
            turns=self.classes_a if reading == "A" else self.classes_b,
            errored=self.errored,
        )


@dataclass(frozen=True)
class RunView:
    """A stored run reduced to :class:`CaseView` rows."""

    run_dir: str
    model: str
    probe: str | None
    cases: dict[str, CaseView] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.probe or "baseline"


def case_view(
    trajectory: CaseTrajectory, passed: bool | None, errored: bool, classifier: Classifier | None = None
) -> CaseView:
    """Classify every emission of one trajectory for both readings (default classifier unless given)."""
    from tooldiag.classify import get_classifier, has_tool_calls

    classifier = classifier or get_classifier("default")
    turns_a: list[frozenset[ActionClass]] = []
    turns_b: list[frozenset[ActionClass]] = []
    digest = hashlib.sha256()
    for turn in trajectory.turns:
        own: set[ActionClass] = set()
        every: set[ActionClass] = set()
        for step in turn.steps:
            emission = step.emission
            label = classifier(emission.text, has_tool_calls(emission.tool_calls))
            every.add(label)
            if not emission.injected:
                own.add(label)
            calls = [(c.name, c.raw_arguments) for c in emission.tool_calls]
            digest.update(json.dumps([turn.index, emission.injected, emission.text, calls]).encode())
        turns_a.append(frozenset(own))
        turns_b.append(frozenset(every))
    probe_notes = trajectory.notes.get("probe") or {}
    return CaseView(
        case_id=trajectory.case_id,
        category=trajectory.category,
        passed=passed,
        errored=errored,
        classes_a=tuple(turns_a),
        classes_b=tuple(turns_b),
        fired=bool(probe_notes.get("fired")),
        detector_fired=bool(probe_notes.get("detector_fired")),
        emissions_digest=digest.hexdigest(),
    )


def load_run(run_dir: str | Path, classifier: Classifier | None = None) -> RunView:
    """Read a run store into a :class:`RunView` (the only I/O of this module).

    ``classifier`` is resolved by the caller, as for ``tooldiag report`` (default scheme
    unless given).
    """
    from tooldiag.classify import get_classifier
    from tooldiag.store import RunStore
    from tooldiag.suites.bfcl.ids import case_id_order

    classifier = classifier or get_classifier("default")
    with RunStore.open(run_dir, sort_key=case_id_order) as store:
        config = store.config
        if config.suite != "bfcl":
            raise UserError(
                f"{run_dir} is a {config.suite} run; probes and their reports are BFCL multi-turn only",
                hint="give runs made with `tooldiag run bfcl`",
            )
        cases = {
            record.case_id: case_view(record.trajectory, record.passed, record.status != "done", classifier)
            for record in store.iter_cases()
        }
    return RunView(run_dir=str(run_dir), model=config.model, probe=config.probe, cases=cases)


# -- per-run numbers ----------------------------------------------------------------------
@dataclass(frozen=True)
class CellStats:
    """One category of one run over a given set of cases."""

    category: str
    n: int
    passed: int
    gar_hits: int
    fired: int
    detector_fired: int

    @property
    def acc(self) -> float | None:
        return 100.0 * self.passed / self.n if self.n else None

    @property
    def gar(self) -> float | None:
        return 100.0 * self.gar_hits / self.n if self.n else None

    @property
    def fired_rate(self) -> float | None:
        return 100.0 * self.fired / self.n if self.n else None

    @property
    def detector_rate(self) -> float | None:
        return 100.0 * self.detector_fired / self.n if self.n else None


def graded_ids(run: RunView) -> set[str]:
    return {cid for cid, case in run.cases.items() if not case.errored and case.passed is not None}


def cell_stats(run: RunView, category: str, case_ids: Iterable[str] | None = None, reading: Reading = "A") -> CellStats:
    """GAR, Acc and fired counts of ``category`` over ``case_ids`` (default: every graded case)."""
    wanted = graded_ids(run) if case_ids is None else set(case_ids)
    views = [run.cases[cid] for cid in sorted(wanted) if cid in run.cases and run.cases[cid].category == category]
    observations = [view.observation(reading) for view in views]
    hits, n = case_gar(observations)
    passed, graded = accuracy(observations)
    assert graded == n, "errored cases must be filtered before cell_stats"
    return CellStats(
        category=category,
        n=n,
        passed=passed,
        gar_hits=hits,
        fired=sum(1 for v in views if v.fired),
        detector_fired=sum(1 for v in views if v.detector_fired),
    )


def run_categories(*runs: RunView) -> list[str]:
    """Categories present in every run, in BFCL's order."""
    present = [set(c.category for c in run.cases.values()) for run in runs]
    common = set.intersection(*present) if present else set()
    return [c for c in CATEGORIES if c in common] + sorted(common - set(CATEGORIES))


# -- paired comparison ---------------------------------------------------------------------
@dataclass(frozen=True)
class CategoryShift:
    """One category of a probe run against its baseline, on the paired cases."""

    category: str
    probe: CellStats
    baseline: CellStats
    pass_to_fail: int
    fail_to_pass: int
    #: Paired cases whose model emissions differ between the runs.
    changed: int

    @property
    def n(self) -> int:
        return self.probe.n

    @property
    def gar_shift(self) -> float | None:
        return _diff(self.probe.gar, self.baseline.gar)

    @property
    def acc_shift(self) -> float | None:
        return _diff(self.probe.acc, self.baseline.acc)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


@dataclass(frozen=True)
class Comparison:
    """A probe run against its baseline (one model)."""

    model: str
    probe: str
    probe_dir: str
    baseline_dir: str
    reading: Reading
    categories: tuple[CategoryShift, ...]
    #: Graded in one run only (left out of every number).
    unpaired: int = 0

    def category(self, name: str) -> CategoryShift | None:
        return next((c for c in self.categories if c.category == name), None)

    @property
    def n(self) -> int:
        return sum(c.n for c in self.categories)

    @property
    def passed(self) -> int:
        return sum(c.probe.passed for c in self.categories)

    @property
    def baseline_passed(self) -> int:
        return sum(c.baseline.passed for c in self.categories)

    @property
    def acc(self) -> float | None:
        return 100.0 * self.passed / self.n if self.n else None

    @property
    def baseline_acc(self) -> float | None:
        return 100.0 * self.baseline_passed / self.n if self.n else None

    @property
    def acc_shift(self) -> float | None:
        """Aggregate Acc shift over all paired cases (Tables 6-8)."""
        return _diff(self.acc, self.baseline_acc)

    @property
    def changed(self) -> int:
        return sum(c.changed for c in self.categories)


def compare(probe: RunView, baseline: RunView, reading: Reading = "A") -> Comparison:
    """Paired shifts of ``probe`` against ``baseline`` per category."""
    paired = graded_ids(probe) & graded_ids(baseline)
    unpaired = len(graded_ids(probe) ^ graded_ids(baseline))
    shifts = []
    for category in run_categories(probe, baseline):
        ids = sorted(cid for cid in paired if probe.cases[cid].category == category)
        if not ids:
            continue
        p2f = sum(1 for cid in ids if baseline.cases[cid].passed and not probe.cases[cid].passed)
        f2p = sum(1 for cid in ids if not baseline.cases[cid].passed and probe.cases[cid].passed)
        changed = sum(1 for cid in ids if probe.cases[cid].emissions_digest != baseline.cases[cid].emissions_digest)
        shifts.append(
            CategoryShift(
                category=category,
                probe=cell_stats(probe, category, ids, reading),
                baseline=cell_stats(baseline, category, ids, reading),
                pass_to_fail=p2f,
                fail_to_pass=f2p,
                changed=changed,
            )
        )
    return Comparison(
        model=probe.model,
        probe=probe.probe or "baseline",
        probe_dir=probe.run_dir,
        baseline_dir=baseline.run_dir,
        reading=reading,
        categories=tuple(shifts),
        unpaired=unpaired,
    )


def differing_cases(a: RunView, b: RunView) -> list[str]:
    """Case ids graded in both runs whose verdict or model emissions differ."""
    out = []
    for cid in sorted(graded_ids(a) & graded_ids(b)):
        x, y = a.cases[cid], b.cases[cid]
        if x.passed != y.passed or x.emissions_digest != y.emissions_digest:
            out.append(cid)
    return out


# -- Table 7: component decomposition -----------------------------------------------------
#: Component -> (run whose Acc is the minuend, run whose Acc is subtracted), paper 001 Tab. 7.
COMPONENTS: tuple[tuple[str, str, str], ...] = (
    ("Halt detection (HD)", "sri:hd_only", "baseline"),
    ("History-edit (vs. no_history)", "sri", "sri:no_history"),
    ("Reconciliation prompt (vs. no_recon)", "sri", "sri:no_recon"),
    ("State injection (vs. no_state)", "sri", "sri:no_state"),
)


def pooled_acc(run: RunView, case_ids: Iterable[str]) -> float | None:
    """Passes over ``case_ids`` (all categories pooled), in percent."""
    ids = list(case_ids)
    if not ids:
        return None
    return 100.0 * sum(1 for cid in ids if run.cases[cid].passed) / len(ids)


def component_effects(runs: dict[str, RunView]) -> dict[str, float | None]:
    """Table 7 for one model: SRI-v1 aggregate Acc minus each ablation's, in pp.

    ``runs`` maps a probe spec (and ``"baseline"``) to that model's run. The halt
    detection row is HD-only minus baseline (paper 001 Tab. 7, whose xLAM HD cell equals
    Tab. 6's HD-only Acc shift). Each difference is taken on the cases graded in both
    runs involved; a component whose runs are missing is ``None``.
    """
    out: dict[str, float | None] = {}
    for name, minuend, subtrahend in COMPONENTS:
        left, right = runs.get(minuend), runs.get(subtrahend)
        if left is None or right is None:
            out[name] = None
            continue
        common = sorted(graded_ids(left) & graded_ids(right))
        out[name] = _diff(pooled_acc(left, common), pooled_acc(right, common))
    return out
