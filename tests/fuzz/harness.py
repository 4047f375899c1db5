"""Run the ``tooldiag`` CLI in-process and tell a clean outcome from a crash.

A clean outcome is success (exit 0) or a user error (exit 2 with an ``error:`` line);
anything else (an exception escaping :func:`tooldiag.cli.main.main`, a traceback on
stderr, another exit status) is what the fuzz suites hunt. Standard streams are byte
buffers decoded as strict UTF-8, like a real terminal or pipe, so text the terminal
could not take (a lone surrogate) fails here as it would for a user.
"""

from __future__ import annotations

import io
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """What one CLI call did: exit ``code``, its ``stdout``/``stderr`` text, the ``crash`` traceback if any."""

    code: int
    stdout: str
    stderr: str
    crash: str | None = None

    @property
    def clean(self) -> bool:
        """Success, or one ``error:`` line with exit 2; never a traceback."""
        if self.crash is not None or "Traceback" in self.stderr:
            return False
        if self.code == 0:
            return True
        return self.code == 2 and ("error:" in self.stderr or "Usage:" in self.stderr)

    def explain(self) -> str:
        """The failure in words, for an assertion message."""
        return f"exit {self.code}\nstderr: {self.stderr[-2000:]}\ncrash: {self.crash}"


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", errors="replace")


def run_cli(argv: Sequence[str], stdin: bytes = b"") -> Outcome:
    """``tooldiag ARGV`` in this process, standard input ``stdin``; never raises."""
    from tooldiag.cli.main import main

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = _stream(), _stream()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    code, crash = 0, None
    try:
        main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - the crash is what we report
        code, crash = 1, traceback.format_exc()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Outcome(code, _text(out), _text(err), crash)
