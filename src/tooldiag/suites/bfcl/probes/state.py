"""The runtime-observed tool-execution state the probes show the model.

SRI's StateInject step and CRI-retry's instruction append "runtime-observed state from
executed tool calls and tool results" (paper 001 App. B.1), bounded to 2,400 characters.
The paper code keeps a hand-written per-domain table for four tools; tooldiag dumps
what actually ran, which covers every BFCL class the same way:

* one line per successful execution, in execution order, over all turns so far:
  ``[t<turn>] <call> -> <result>``, with the result's whitespace collapsed and cut to
  :data:`RESULT_CHARS` characters;
* executions whose result is an execution error (see
  :func:`~tooldiag.suites.bfcl.probes.detectors.is_execution_error`) are left out, as in the paper
  code ("errors leave state untouched");
* when the lines exceed the budget the oldest are dropped first and a first line says
  how many; the whole dump never exceeds ``max_chars``;
* nothing executed yet: ``(no successful tool results observed yet)`` (the paper
  code's text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tooldiag.suites.bfcl.probes.detectors import is_execution_error

#: Paper 001 App. B.1: "up to 2400 chars of state dump".
MAX_STATE_CHARS = 2400
#: Per-result cut, so that one long file listing cannot crowd out every other line.
RESULT_CHARS = 300
EMPTY_STATE = "(no successful tool results observed yet)"

_SPACES = re.compile(r"\s+")


def truncate(text: str, max_chars: int) -> str:
    """Cut ``text`` to ``max_chars`` characters, ending in ``...`` when cut (paper code's rule)."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    if max_chars <= 3:
        return text[:max_chars]
    return text[: max_chars - 3] + "..."


def state_lines(executed: Sequence[Sequence[tuple[str, str]]]) -> list[str]:
    """One line per successful execution; ``executed`` is per turn the (call, result) pairs."""
    lines = []
    for turn_index, pairs in enumerate(executed):
        for call, result in pairs:
            if is_execution_error(result):
                continue
            shown = truncate(_SPACES.sub(" ", result).strip(), RESULT_CHARS)
            lines.append(f"[t{turn_index}] {call} -> {shown}")
    return lines


def state_dump(executed: Sequence[Sequence[tuple[str, str]]], max_chars: int = MAX_STATE_CHARS) -> str:
    """The bounded state block (see the module doc); at most ``max_chars`` characters."""
    lines = state_lines(executed)
    if not lines:
        return EMPTY_STATE
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = len(line) + (1 if kept else 0)
        if used + cost > max_chars:
            break
        kept.append(line)
        used += cost
    kept.reverse()
    dropped = len(lines) - len(kept)
    if dropped:
        header = f"(... {dropped} earlier results omitted)"
        while kept and used + len(header) + 1 > max_chars:
            used -= len(kept.pop(0)) + 1
        kept.insert(0, header)
        if not kept[1:]:
            # Even the newest line alone is over budget: show its head.
            kept = [truncate(lines[-1], max_chars)]
    return truncate("\n".join(kept), max_chars)
