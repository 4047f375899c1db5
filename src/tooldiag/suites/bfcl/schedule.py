"""How long a BFCL case is expected to take, known before it runs: its schedule key.

A case is a chain of sequential requests: per turn, one per assistant message with calls plus
the one that ends the turn. A model that follows the ground truth one call per message makes
``1 + len(ground_truth[turn])`` requests per turn; models that batch calls make fewer, models
that wander more, but the order of cases by this count is what the scheduler needs
(:mod:`tooldiag.runner.schedule`: longest first, shards of equal work).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from tooldiag.runner.schedule import longest_first
from tooldiag.suites.bfcl.data import BfclCase

Unit = TypeVar("Unit", bound=tuple[BfclCase, int])


def expected_requests(case: BfclCase) -> int:
    """Requests of ``case`` for a model that makes one ground-truth call per message."""
    return sum(1 + len(calls) for calls in case.ground_truth)


def schedule_units(units: Sequence[Unit]) -> list[Unit]:
    """``(case, sample)`` units, longest expected case first (ties keep their order)."""
    return longest_first(units, lambda unit: expected_requests(unit[0]))
