"""Which inputs ``tooldiag cases`` (and ``load_cases`` / ``load_report``) read, and how.

One :class:`CaseSource` per kind of input, tried in the order of :data:`CASE_SOURCES`:
the first whose ``matches`` says yes reads the input. Adding a kind (tau2 result files,
say) is one more entry: a name, a test on the path, a loader of case rows and, when the
kind yields a calibration report, a loader of that. An input no source matches gets one
``error:`` line naming what it is and what to give instead (:func:`unknown_input`).

This module names suites (like :mod:`tooldiag.suites.reference`), so it lives above them;
the front door (:mod:`tooldiag.api`) calls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.classify import Classifier
    from tooldiag.metrics.cases import CaseRow
    from tooldiag.report.model import RunReport


@dataclass(frozen=True)
class CaseSource:
    """One kind of input: how to recognise it and how to read its cases."""

    #: What the kind is called in messages ("BFCL run directory").
    name: str
    #: How a user makes one, for the hint of an error ("holding run.sqlite: `tooldiag run bfcl` ...").
    how: str
    #: Does this path hold this kind? (cheap: file names and suffixes, no parsing).
    matches: Callable[[Path], bool]
    #: The case rows of one input; rows' ``run`` is the input's report name.
    rows: Callable[[Path, Classifier], list[CaseRow]]
    #: The calibration report of one input, where the kind has one (``load_report``).
    report: Callable[[Path, Classifier], RunReport] | None = None
    #: Facts of one input that make two inputs' numbers incomparable when they differ
    #: (``tooldiag compare`` warns): name -> value, e.g. {"tau2 version": "1.0.1"}.
    facts: Callable[[Path], dict[str, str]] | None = None


# -- BFCL run directories -------------------------------------------------------------------
def _is_bfcl_run(path: Path) -> bool:
    from tooldiag.store.rundb import DB_NAME

    return path.is_dir() and (path / DB_NAME).is_file()


def _bfcl_report(path: Path, classifier: Classifier) -> RunReport:
    from tooldiag.store import RunStore
    from tooldiag.suites.bfcl.diagnostic import report_from_run_dir

    store = RunStore.open(path)  # the suite check first: a run of another suite is not BFCL's to report
    suite = store.config.suite
    store.close()
    if suite != "bfcl":
        raise UserError(
            f"{path} holds a tooldiag run of the {suite!r} suite, not a BFCL run",
            hint=kinds_hint(),
        )
    return report_from_run_dir(path, classifier)


# -- agent logs (the ``tooldiag diagnose`` format) ------------------------------------------
def _is_agent_log(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".jsonl"


def _agent_log_report(path: Path, classifier: Classifier) -> RunReport:
    from tooldiag.diagnose import diagnose_log

    return diagnose_log(path, classifier)


def _rows_of(report: Callable[[Path, Classifier], RunReport]) -> Callable[[Path, Classifier], list[CaseRow]]:
    return lambda path, classifier: list(report(path, classifier).cases)


# -- tau2-bench result files (``tooldiag tau2 diagnose``'s input) ---------------------------
def _is_tau2_results(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".json"


def _tau2_rows(path: Path, classifier: Classifier) -> list[CaseRow]:
    """One row per simulation and Table 2 class, as ``tooldiag tau2 cases`` gives them.

    The plain ``default`` scheme reads tau2 messages as ``tau2 diagnose`` does (every class
    a message shows evidence of); any other classifier gives its one class per message.
    """
    from tooldiag.suites.tau2.cases import tau2_case_rows

    plain_default = classifier.name == "default" and not getattr(classifier, "cue_files", ())
    return tau2_case_rows([path], None if plain_default else classifier)


def _tau2_facts(path: Path) -> dict[str, str]:
    """The tau2 version that wrote the file (tasks and grading changed between versions) and its oracle flag.

    A second pass over the file: the version is settled only once every simulation was seen.
    """
    from tooldiag.suites.tau2.analysis import collect

    collected = collect([path])
    versions = sorted({item.tau2_version or "unknown" for item in collected.inputs})
    oracle = any(group.oracle for group in collected.groups.values())
    return {"tau2 version": ", ".join(versions), "oracle agent (llm_agent_gt)": "yes" if oracle else "no"}


#: Every kind of input, tried in order (the first match reads the input).
CASE_SOURCES: list[CaseSource] = [
    CaseSource(
        "BFCL run directory",
        "holding run.sqlite, from `tooldiag run bfcl` or `tooldiag import bfcl`",
        _is_bfcl_run,
        _rows_of(_bfcl_report),
        _bfcl_report,
    ),
    CaseSource(
        "agent log",
        "a .jsonl file in the `tooldiag diagnose` format",
        _is_agent_log,
        _rows_of(_agent_log_report),
        _agent_log_report,
    ),
    CaseSource(
        "tau2-bench results file",
        "a .json file written by tau2-bench, as `tooldiag tau2 diagnose` reads",
        _is_tau2_results,
        _tau2_rows,
        facts=_tau2_facts,
    ),
]


def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"


def kinds_hint() -> str:
    """``give a BFCL run directory (holding ...) or an agent log (...)``: every kind, for an error's hint."""
    kinds = [f"{_article(source.name)} {source.name} ({source.how})" for source in CASE_SOURCES]
    return "give " + (" or ".join(kinds) if len(kinds) < 3 else ", ".join(kinds[:-1]) + " or " + kinds[-1])


def _kind_names() -> str:
    return " or ".join(f"{_article(source.name)} {source.name}" for source in CASE_SOURCES)


def unknown_input(path: Path) -> UserError:
    """The one-line error for an input no :class:`CaseSource` reads, with what it seems to be."""
    from tooldiag.store.rundb import DB_NAME

    hint = kinds_hint()
    if not path.exists():
        return UserError(f"{path}: no such file or folder", hint=hint)
    if path.is_dir():
        from tooldiag.suites.judgebench.store import STORE_FILE

        if (path / STORE_FILE).is_file():
            return UserError(
                f"{path} is a judgebench store ({STORE_FILE}), not a BFCL run or agent log",
                hint=f"analyse it with `tooldiag judgebench analyze {path}` (`tooldiag cases` reads {_kind_names()})",
            )
        if not any(path.iterdir()):
            return UserError(f"{path} is an empty folder (no {DB_NAME}, no run yet)", hint=hint)
        return UserError(f"{path} holds no tooldiag run (no {DB_NAME})", hint=hint)
    return UserError(
        f"{path}: unknown kind of input (not a run directory, a .jsonl agent log or tau2 .json results)", hint=hint
    )


def source_of(path: Path) -> CaseSource:
    """The source that reads ``path``; :func:`unknown_input` when none does."""
    for source in CASE_SOURCES:
        if source.matches(path):
            return source
    raise unknown_input(path)


def _unique_names(names: Sequence[str], paths: Sequence[Path]) -> list[str]:
    """Report names, with the input's file or folder name appended where two inputs share one."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [f"{name} ({path.name})" if counts[name] > 1 else name for name, path in zip(names, paths)]


def reports_from_inputs(inputs: Sequence[str | Path], classifier: Classifier) -> list[RunReport]:
    """One calibration report per input (kinds without a report are refused), names made unique."""
    paths = [Path(p) for p in inputs]
    sources = [source_of(path) for path in paths]  # every input checked before any is read
    reports = []
    for path, source in zip(paths, sources):
        if source.report is None:
            raise UserError(
                f"{path}: {_article(source.name)} {source.name} has case rows but no calibration report",
                hint="use load_cases",
            )
        reports.append(source.report(path, classifier))
    for report, name in zip(reports, _unique_names([r.name for r in reports], paths)):
        if name != report.name:
            report.name = name
            report.cases = [dataclasses.replace(row, run=name) for row in report.cases]
    return reports


def rows_from_inputs(inputs: Sequence[str | Path], classifier: Classifier) -> list[CaseRow]:
    """Every input's case rows, input after input (each in its suite's case order)."""
    paths = [Path(p) for p in inputs]
    sources = [source_of(path) for path in paths]
    per_input = [source.rows(path, classifier) for path, source in zip(paths, sources)]
    names = [rows[0].run if rows else path.name for rows, path in zip(per_input, paths)]
    out: list[CaseRow] = []
    for rows, name in zip(per_input, _unique_names(names, paths)):
        out.extend(row if row.run == name else dataclasses.replace(row, run=name) for row in rows)
    return out
