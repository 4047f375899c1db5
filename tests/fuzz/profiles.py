"""Budgets of the fuzz suites: ``ci`` (the default, seconds) and ``nightly`` (>= 100k generated cases).

Each test asks :func:`fuzz_settings` for its settings with its own CI example count (a
cheap parser gets many, a whole ``import bfcl`` few); ``nightly`` multiplies every count
by :data:`NIGHTLY_FACTOR`, so the suite's total grows with it. Choose the profile with
``TOOLDIAG_FUZZ_PROFILE=nightly`` (hypothesis's own ``--hypothesis-profile`` would change
every other hypothesis test of the suite as well, which these budgets must not).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

#: ``nightly`` runs this many times each test's CI count (the CI counts sum to 540: 108k in all).
NIGHTLY_FACTOR = 200
_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]

#: CI reports the failing example as generated: shrinking a whole ``import bfcl`` per step takes minutes.
_NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=50,
    suppress_health_check=_SUPPRESSED,
    database=None,
    phases=_NO_SHRINK,
)
settings.register_profile(
    "nightly", derandomize=False, deadline=None, max_examples=5000, suppress_health_check=_SUPPRESSED, database=None
)


def profile_name() -> str:
    """``ci`` unless ``TOOLDIAG_FUZZ_PROFILE`` names another registered profile."""
    return os.environ.get("TOOLDIAG_FUZZ_PROFILE", "ci")


def fuzz_settings(ci_examples: int) -> settings:
    """The active profile with ``ci_examples`` examples (times :data:`NIGHTLY_FACTOR` under ``nightly``)."""
    name = profile_name()
    factor = NIGHTLY_FACTOR if name == "nightly" else 1
    return settings(settings.get_profile(name), max_examples=ci_examples * factor)
