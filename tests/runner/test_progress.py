"""One progress protocol, one renderer: tallies per label, counts, error rows."""

from __future__ import annotations

import io

from rich.console import Console

from tooldiag.cli.progress import RunProgress, run_progress
from tooldiag.runner import ERROR_LABEL, NullProgress, ProgressSink


def test_renderer_tallies_graded_counted_and_error_units() -> None:
    progress = RunProgress(None, "x")
    progress.start(5, 2, {"base": {"passed": 1, "done": 2, "error": 0}})
    progress.advance("base", True)
    progress.advance("miss_func", False)
    progress.advance(ERROR_LABEL)
    progress.advance("ok")
    progress.advance("null")
    progress.advance("ok")
    progress.finish()
    assert progress._line() == "base 2/3  miss_func 0/1  null 1  ok 2  [red]1 errors[/red]"


def test_renderer_draws_a_bar_and_satisfies_the_protocol() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=120)
    with run_progress("judge j", console=console) as progress:
        sink: ProgressSink = progress
        sink.start(2, 1)
        sink.advance("ok")
        sink.finish()
    assert "judge j" in buffer.getvalue() and "2/2" in buffer.getvalue() and "ok 1" in buffer.getvalue()


def test_null_progress_accepts_the_protocol() -> None:
    sink: ProgressSink = NullProgress()
    sink.start(1, 0, None)
    sink.advance("base", True)
    sink.finish()
