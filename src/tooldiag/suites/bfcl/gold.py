"""What BFCL multi-turn fixes for the diagnostic: gold classes, gold turns, case notes.

These are facts of the benchmark, not of the metrics: the generic GAR functions in
:mod:`tooldiag.metrics.gar` take the gold class and gold turns of each case as data,
and this module is where BFCL supplies them (paper 001 §3.1, App. E; notes
bfcl-multi-turn §1).

:class:`BfclCaseNotes` is the typed contract between the writers of a stored BFCL
trajectory (the live rollout, the result-folder importer) and its readers (the
diagnostic, the export). On disk the notes stay the plain JSON object they always
were, so runs written before this model existed open unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidatorFunctionWrapHandler, field_validator

from tooldiag.classify.classes import ActionClass

#: Gold action per BFCL multi-turn category (paper 001 §3.1).
BFCL_GOLD: dict[str, ActionClass] = {
    "base": ActionClass.TOOL_CALL,
    "long_context": ActionClass.TOOL_CALL,
    "miss_func": ActionClass.REFUSE,
    "miss_param": ActionClass.ASK,
}


class BfclCaseNotes(BaseModel):
    """The per-case facts stored in ``CaseTrajectory.notes`` of a BFCL run.

    Fields are declared in the order the writers always wrote them, so
    :meth:`dump` gives the same JSON as before; keys written by others (a probe's
    ``probe`` record, future additions) pass through untouched.
    """

    model_config = ConfigDict(extra="allow")

    #: Number of ground-truth calls per turn (gold turns of base / long_context).
    ground_truth_sizes: list[int] | None = None
    #: Turns at which BFCL hands the held-out function back (miss_func).
    give_back_turns: list[int] | None = None
    #: Imports only: the result-folder layout read and the file it came from.
    layout: str | None = None
    source_file: str | None = None
    #: Imports only: BFCL's ``result`` when inference failed (a string), and its traceback.
    bfcl_inference_error: str | None = None
    bfcl_traceback: str | None = None
    #: Explicit gold class of a case outside BFCL's four categories (kept as given).
    gold_class: Any = None

    @field_validator("*", mode="wrap")
    @classmethod
    def _absent_when_malformed(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A stored value of the wrong shape reads as absent: one odd note never sinks a report."""
        try:
            return handler(value)
        except ValidationError:
            return None

    @classmethod
    def of(cls, notes: dict[str, Any]) -> BfclCaseNotes:
        """The typed view of a trajectory's stored notes."""
        return cls.model_validate(notes)

    def dump(self) -> dict[str, Any]:
        """The JSON object stored in the trajectory (``None`` fields left out)."""
        return self.model_dump(mode="json", exclude_none=True)

    def gold_override(self) -> ActionClass | None:
        """The ``gold_class`` note as an action class, if it names one."""
        if isinstance(self.gold_class, str):
            try:
                return ActionClass(self.gold_class)
            except ValueError:
                return None
        return None


def gold_class(category: str, notes: BfclCaseNotes) -> ActionClass | None:
    """The gold class of a stored case: its category's, else an explicit note, else ``None``."""
    return BFCL_GOLD.get(category) or notes.gold_override()


def bfcl_gold_turns(
    category: str,
    ground_truth_sizes: Sequence[int] | None,
    give_back_turns: Sequence[int] | None = None,
) -> tuple[int, ...] | None:
    """The gold turns of a BFCL multi-turn case, for turn-level GAR (paper 001 App. E).

    * base, long_context (gold tool_call): turns whose ground truth holds >= 1 call
      (the 3 GT-empty turns of base 167/180 are not gold).
    * miss_func (gold refuse): the turn just before each give-back turn, i.e. the
      GT-empty turn whose request needs the held-out function (notes bfcl-multi-turn
      §1); without give-back data, every GT-empty turn.
    * miss_param (gold ask): the turn BFCL inserted, which omits a value: the first
      GT-empty turn followed by a turn with calls (the paper code's sidecar
      ``_miss_param_ask_turns.json`` and
      :func:`tooldiag.suites.bfcl.probes.detectors.miss_param_gold_turn` use the same
      turn). The closing GT-empty turns that miss_param 167/180 inherit from base
      167/180 ask for nothing and are not gold. Without such a turn, every GT-empty turn.
    * other categories: ``None`` (every turn is gold).
    """
    if ground_truth_sizes is None:
        return None
    sizes = list(ground_truth_sizes)
    if category in ("base", "long_context"):
        return tuple(i for i, size in enumerate(sizes) if size > 0)
    if category == "miss_func":
        if give_back_turns:
            return tuple(sorted({t - 1 for t in give_back_turns if 0 <= t - 1 < len(sizes)}))
        return tuple(i for i, size in enumerate(sizes) if size == 0)
    if category == "miss_param":
        for i in range(len(sizes) - 1):
            if sizes[i] == 0 and sizes[i + 1] > 0:
                return (i,)
        return tuple(i for i, size in enumerate(sizes) if size == 0)
    return None
