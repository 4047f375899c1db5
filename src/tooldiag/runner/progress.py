"""The one progress protocol every runner reports to.

Why a protocol here and a renderer elsewhere: runners live below the CLI and must not know
rich or a terminal, and the bfcl run, the bfcl import and the judgebench commands used two bars
with different callback shapes. A runner calls :meth:`ProgressSink.start` once (how many units
in all, how many were already stored, and optionally the stored tallies per label), then
:meth:`ProgressSink.advance` once per finished unit, then :meth:`ProgressSink.finish`. The CLI's
renderer (``tooldiag.cli.progress``) draws it; :class:`NullProgress` draws nothing.

A unit's *label* is what it is tallied under (a BFCL category, a judgebench status). ``ok`` is
``True``/``False`` for a graded unit (shown as passes over graded per label) and ``None`` for one
only counted. The label :data:`ERROR_LABEL` marks an infrastructure error row (retried on resume).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

#: Label of a unit stored as an error row; renderers show these apart ("3 errors").
ERROR_LABEL = "error"


class ProgressSink(Protocol):
    """What a runner tells whoever shows its progress."""

    def start(self, total: int, done_already: int, tallies: Mapping[str, Mapping[str, int]] | None = None) -> None:
        """``total`` units, ``done_already`` of them stored before; ``tallies``: label -> {"passed", "done"}."""

    def advance(self, label: str, ok: bool | None = None) -> None:
        """One more unit finished, tallied under ``label`` (``ok`` as above)."""

    def finish(self) -> None:
        """No more units will come (also after a fatal error)."""


class NullProgress:
    """A sink that shows nothing: the default when a caller passes none."""

    def start(self, total: int, done_already: int, tallies: Mapping[str, Mapping[str, int]] | None = None) -> None:
        pass

    def advance(self, label: str, ok: bool | None = None) -> None:
        pass

    def finish(self) -> None:
        pass
