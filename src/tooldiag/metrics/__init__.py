"""Pure metric functions: no I/O, no CLI, no providers.

``tooldiag.metrics.gar`` holds paper 001's calibration profile (GAR, Acc, Delta,
flags, capability counts); ``tooldiag.metrics.intervals`` the Wilson intervals.
"""

from tooldiag.metrics.gar import (
    BFCL_GOLD,
    CapabilityCounts,
    CaseObservation,
    CategorySummary,
    Thresholds,
    accuracy,
    bfcl_gold_turns,
    calibration_flags,
    capability_counts,
    case_gar,
    delta_pp,
    overall_accuracy,
    summarize_category,
    turn_gar,
)
from tooldiag.metrics.intervals import wilson_interval, wilson_interval_pct

__all__ = [
    "BFCL_GOLD",
    "CapabilityCounts",
    "CaseObservation",
    "CategorySummary",
    "Thresholds",
    "accuracy",
    "bfcl_gold_turns",
    "calibration_flags",
    "capability_counts",
    "case_gar",
    "delta_pp",
    "overall_accuracy",
    "summarize_category",
    "turn_gar",
    "wilson_interval",
    "wilson_interval_pct",
]
