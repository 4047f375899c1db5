"""Shared paths of the tau2 tests: our fixtures and the real result files in ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = REPO_ROOT / "tests" / "data" / "tau2"
RETAIL_V0 = FIXTURES / "retail_v0.json"
AIRLINE_V1 = FIXTURES / "airline_v1"
#: Real tau2 results (blakeelias/tau2-bench fork, airline-relaxed, task 8, 4 trials each);
#: in CI the shared folder sits beside the clone, as here.
SHARED_RESULTS = REPO_ROOT.parent / "shared" / "tau2-results" / "blakeelias-tau2-bench"


def shared_result_files() -> list[Path]:
    return sorted(SHARED_RESULTS.glob("*.json")) if SHARED_RESULTS.is_dir() else []


@pytest.fixture
def real_files() -> list[Path]:
    files = shared_result_files()
    if not files:
        pytest.skip(
            f"real tau2 result files not found at {SHARED_RESULTS} (the shared folder must sit beside the repository)"
        )
    return files
