"""Pure metric functions: no I/O, no CLI, no providers.

``tooldiag.metrics.gar`` holds paper 001's calibration profile (GAR, Acc, Delta,
flags, capability counts); ``tooldiag.metrics.intervals`` the Wilson intervals.
"""

from tooldiag.metrics.gar import (
    CapabilityCounts,
    CaseObservation,
    CategorySummary,
    Thresholds,
    accuracy,
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
    "CapabilityCounts",
    "CaseObservation",
    "CategorySummary",
    "Thresholds",
    "accuracy",
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
