"""Registers the fuzz profiles (``ci``: derandomized, no deadline; ``nightly``: x200 examples).

CI: ``pytest tests/fuzz`` (about a thousand generated cases, well under a minute).
Nightly: ``TOOLDIAG_FUZZ_PROFILE=nightly pytest tests/fuzz`` (over 100k generated cases), or
``uv run python bench/fuzz_nightly.py`` (the same, one process per file on every core).
"""

from __future__ import annotations

import pytest

from tests.fuzz import profiles


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``nightly`` the suite's 600 s per-test timeout would stop a 10,000-example test part
    way (and hypothesis then reports a flaky strategy, not a finding): the budget is the examples."""
    if profiles.profile_name() != "nightly":
        return
    for item in items:
        if item.path.parent.name == "fuzz":
            item.add_marker(pytest.mark.timeout(0))
