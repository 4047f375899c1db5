"""A rich progress bar for runs: ETA and live pass counts per category."""

from __future__ import annotations

from contextlib import contextmanager
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from tooldiag.trajectory import CaseTrajectory, Grade


class RunProgress:
    """Tracks passes per category and renders them beside the bar."""

    def __init__(self, progress: Progress | None, label: str) -> None:
        self.progress = progress
        self.label = label
        self.task = None
        self.counts: dict[str, list[int]] = {}
        self.errors = 0

    def _line(self) -> str:
        parts = [f"{cat} {p}/{n}" for cat, (p, n) in self.counts.items()]
        if self.errors:
            parts.append(f"[red]{self.errors} errors[/red]")
        return "  ".join(parts)

    def start(self, total: int, already: int, counts: dict[str, dict[str, int]]) -> None:
        for cat, entry in counts.items():
            self.counts[cat] = [entry["passed"], entry["done"]]
        if self.progress is not None:
            self.task = self.progress.add_task(self.label, total=total, completed=already, passes=self._line())

    def case(self, trajectory: CaseTrajectory, grade: Grade | None) -> None:
        if grade is None:
            self.errors += 1
        else:
            entry = self.counts.setdefault(trajectory.category, [0, 0])
            entry[0] += int(grade.passed)
            entry[1] += 1
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, passes=self._line())


@contextmanager
def run_progress(label: str, enabled: bool = True, console: Console | None = None) -> Iterator[RunProgress]:
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
        TextColumn("{task.fields[passes]}"),
        console=console or Console(stderr=True),
        transient=False,
    )
    with progress:
        yield RunProgress(progress, label)
