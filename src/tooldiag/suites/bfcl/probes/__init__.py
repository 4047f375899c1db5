"""Inference-time probes of calibration: SRI (halt seam) and CRI (call seam), paper 001 §3.3.

A probe run is a normal run in the store, tagged with its probe spec
(``RunConfig.probe``), comparable case by case with a baseline run of the same model:

>>> from tooldiag.suites.bfcl.runner import run_bfcl
>>> run_bfcl("ref/halt-recoverable", "runs/halt-sri", categories=["base"], limit=5, probe="sri")  # doctest: +SKIP

``tooldiag run bfcl --probe SPEC`` does the same from the command line, and
``tooldiag report PROBE_RUN... --baseline BASELINE_RUN`` gives the shifts (Tables 4,
6-11 of paper 001). docs/probes.md describes every spec.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.suites.bfcl.rollout import Probe

#: Every valid ``--probe`` spec and what it does (docs/probes.md has the details).
PROBE_SPECS: dict[str, str] = {
    "sri": "SRI v1: drop the halt message, inject runtime state, append the reconciliation rule; one retry per turn",
    "sri:no_history": "SRI without HistoryEdit: the halt message stays in the context",
    "sri:no_state": "SRI without the runtime-state block",
    "sri:no_recon": "SRI without the reconciliation prompt: the retry message is the state block only",
    "sri:hd_only": "Halt Detector and retry alone: halt message kept, generic retry instruction, no state",
    "sri:gate_global": "SRI-Gate (global): no retry when the halt asks the user",
    "sri:gate_miss_param": "SRI-Gate (miss_param): no retry when a miss_param halt asks the user",
    "sri:state_only": "state injection alone: halt message kept, retry message is the state block",
    "cri-retry": "CRI-retry: retract a suspect call at the ask/refuse turn, re-query once with 'do not call a tool'",
    "cri-bypass": (
        "CRI-bypass: retract a suspect call at the ask/refuse turn, inject the abstention placeholder, end the turn"
    ),
}


def probe_kind(spec: str) -> str:
    """``sri`` or ``cri`` for a valid spec."""
    check_spec(spec)
    return "cri" if spec.startswith("cri") else "sri"


def check_spec(spec: str) -> str:
    if spec not in PROBE_SPECS:
        raise UserError(f"unknown probe {spec!r}", hint="use one of: " + ", ".join(PROBE_SPECS))
    return spec


def probe_factory(spec: str) -> Callable[[], Probe]:
    """A zero-argument callable that creates a fresh probe for each case.

    Raises :class:`~tooldiag.errors.UserError` listing the valid specs for an unknown one.
    """
    check_spec(spec)
    if spec.startswith("cri"):
        from tooldiag.suites.bfcl.probes.cri import CRI_SPECS, CriProbe

        variant = CRI_SPECS[spec]
        return lambda: CriProbe(variant)
    from tooldiag.suites.bfcl.probes.sri import SRI_VARIANTS, SriProbe

    sri_variant = SRI_VARIANTS[spec]
    return lambda: SriProbe(sri_variant)


__all__ = ["PROBE_SPECS", "check_spec", "probe_factory", "probe_kind"]
