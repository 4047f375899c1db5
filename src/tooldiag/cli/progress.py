"""The one rich progress bar for runners: ETA and live tallies per label.

It renders the :class:`tooldiag.runner.progress.ProgressSink` protocol, so the bfcl run and
import and the judgebench predict and judge commands all show the same kind of bar on stderr:
graded labels as passes over graded ("base 3/5"), counted labels as a count ("ok 12"), error
rows in red. ``--quiet`` (``enabled=False``) draws nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tooldiag.runner.progress import ERROR_LABEL


class RunProgress:
    """Tallies finished units per label and renders them beside the bar (or nowhere)."""

    def __init__(self, progress: Progress | None, label: str) -> None:
        self.progress = progress
        self.label = label
        self.task: TaskID | None = None
        #: label -> [passed, graded] for graded labels, in the order they first appeared.
        self.graded: dict[str, list[int]] = {}
        #: label -> count for labels that are only counted.
        self.counted: dict[str, int] = {}
        self.errors = 0

    def _line(self) -> str:
        parts = [f"{label} {p}/{n}" for label, (p, n) in self.graded.items()]
        parts += [f"{label} {n}" for label, n in sorted(self.counted.items())]
        if self.errors:
            parts.append(f"[red]{self.errors} errors[/red]")
        return "  ".join(parts)

    def start(self, total: int, done_already: int, tallies: Mapping[str, Mapping[str, int]] | None = None) -> None:
        for label, entry in (tallies or {}).items():
            self.graded[label] = [entry["passed"], entry["done"]]
        if self.progress is not None:
            self.progress.start()
            self.task = self.progress.add_task(self.label, total=total, completed=done_already, tallies=self._line())

    def advance(self, label: str, ok: bool | None = None) -> None:
        if label == ERROR_LABEL:
            self.errors += 1
        elif ok is None:
            self.counted[label] = self.counted.get(label, 0) + 1
        else:
            entry = self.graded.setdefault(label, [0, 0])
            entry[0] += int(ok)
            entry[1] += 1
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, tallies=self._line())

    def finish(self) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.refresh()


@contextmanager
def run_progress(label: str, enabled: bool = True, console: Console | None = None) -> Iterator[RunProgress]:
    """A :class:`RunProgress` drawing on stderr while the block runs (nothing when not ``enabled``)."""
    if not enabled:
        yield RunProgress(None, label)
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[tallies]}"),
        console=console or Console(stderr=True),
        transient=False,
    )
    # The display starts with the first ``start`` call, so input refused before any work
    # (a bad model string, a run directory holding another run) prints its one error line
    # with no empty progress display before it.
    sink = RunProgress(progress, label)
    try:
        yield sink
    finally:
        if sink.task is not None:
            progress.stop()
