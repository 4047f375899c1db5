"""tooldiag: action-class calibration of tool-calling agents and reliability of LLM judges.

The functions a user calls are the front door in :mod:`tooldiag.api`, one per CLI
command, exposed here lazily so that ``import tooldiag`` (and importing any shared
layer such as ``tooldiag.models``) loads no suite:

>>> import tooldiag
>>> summary = tooldiag.run_bfcl("ref/oracle", "runs/oracle", categories=["base"], limit=5)  # doctest: +SKIP
>>> print(tooldiag.report_runs(["runs/oracle"])[0].overall_acc)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: Names served from :mod:`tooldiag.api` on first use.
_FRONT_DOOR = (
    "audit_import",
    "audit_report",
    "case_rows",
    "classifier",
    "compare_runs",
    "diagnose_log",
    "diagnose_traces",
    "html_report",
    "import_bfcl",
    "import_traces",
    "judgebench_analyze",
    "judgebench_drift",
    "judgebench_gates",
    "judgebench_generate",
    "judgebench_html",
    "judgebench_import",
    "judgebench_judge",
    "judgebench_labels_import",
    "judgebench_metajudge",
    "judgebench_predict",
    "judgebench_rewrite",
    "load_cases",
    "load_judgebench",
    "load_report",
    "load_tau2",
    "probe_report",
    "report_runs",
    "run_bfcl",
    "show_case",
    "tau2_cases",
    "tau2_diagnose",
    "tau2_html",
)

__all__ = ["__version__", *_FRONT_DOOR]


def __getattr__(name: str) -> Any:
    if name in _FRONT_DOOR:
        from tooldiag import api

        return getattr(api, name)
    raise AttributeError(f"module 'tooldiag' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
