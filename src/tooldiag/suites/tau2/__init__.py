"""tau2-bench (airline, retail) result files: the action-class diagnostic of paper 001
§4.2-4.3 (Table 2 per task class, Table 3 consent before database writes).

Entry points: :func:`diagnose` (files or run folders -> :class:`Tau2Report`),
:func:`render` (md, csv, json), :func:`open_results` (the streaming reader). See
docs/tau2.md.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Tau2Report",
    "diagnose",
    "label_tasks",
    "open_results",
    "pass_hat_k",
    "render",
    "scan_ask_candidates",
]

_EXPORTS = {
    "Tau2Report": "tooldiag.suites.tau2.report",
    "diagnose": "tooldiag.suites.tau2.analysis",
    "label_tasks": "tooldiag.suites.tau2.tasks",
    "open_results": "tooldiag.suites.tau2.reader",
    "pass_hat_k": "tooldiag.suites.tau2.stats",
    "render": "tooldiag.suites.tau2.formats",
    "scan_ask_candidates": "tooldiag.suites.tau2.tasks",
}


def __getattr__(name: str) -> Any:
    """Import on first use, so that ``tooldiag.suites.tau2.reader`` stays light."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tooldiag.suites.tau2' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
