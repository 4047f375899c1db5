"""Where commands write (``--out``) and read (JSON lines): one implementation for every command.

A bad ``--out`` (a folder where a file is meant, an unwritable place) and a bad JSONL
line are user errors, never tracebacks, and a file in a folder that does not exist yet
gets its folder. Each command keeps the exact wording its users and tests know, so the
wording is data (:class:`OutWording`, :class:`JsonlWording`) and the logic is here once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import typer

from tooldiag.errors import JsonInputError, UserError, loads_user_json


@dataclass(frozen=True)
class OutWording:
    """How a command words a bad ``--out`` file. Fields: ``{out}``, ``{reason}`` (the OS's words)."""

    cannot_write: str = "{out}: cannot write ({reason})"
    cannot_write_hint: str = "choose a writable --out path"
    #: Message when ``--out`` is an existing folder; ``None``: the OS's error (``cannot_write``).
    is_folder: str | None = None
    is_folder_hint: str = ""


#: ``report``, ``diagnose`` and ``tau2``.
REPORT_OUT = OutWording()
#: ``export --format jsonl``.
JSONL_OUT = OutWording(
    cannot_write="cannot write {out} ({reason})",
    cannot_write_hint="give a writable file path for --out",
    is_folder="--out {out} is a folder; --format jsonl writes a file",
    is_folder_hint="give a file path, e.g. --out run.jsonl",
)


def _prepare(out: Path, wording: OutWording) -> None:
    if wording.is_folder is not None and out.is_dir():
        raise UserError(wording.is_folder.format(out=out), hint=wording.is_folder_hint)
    from tooldiag.store.outputs import check_output_path  # the store (pydantic) only when writing

    check_output_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)


def _cannot_write(out: Path, exc: OSError, wording: OutWording) -> UserError:
    return UserError(wording.cannot_write.format(out=out, reason=exc.strerror or exc), hint=wording.cannot_write_hint)


def write_out(text: str, out: Path | None, wording: OutWording = REPORT_OUT) -> None:
    """``text`` to standard output, or to the file ``out`` (its folder created) with ``wrote OUT`` on stderr."""
    if out is None:
        sys.stdout.write(text)
        return
    try:
        _prepare(out, wording)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _cannot_write(out, exc, wording) from None
    typer.echo(f"wrote {out}", err=True)


@contextmanager
def open_out(out: Path | None, wording: OutWording = REPORT_OUT) -> Iterator[TextIO]:
    """A text handle to stream lines into: standard output, or the file ``out`` (its folder created)."""
    if out is None:
        yield sys.stdout
        return
    try:
        _prepare(out, wording)
        handle = out.open("w", encoding="utf-8")
    except OSError as exc:
        raise _cannot_write(out, exc, wording) from None
    with handle:
        yield handle


@dataclass(frozen=True)
class JsonlWording:
    """How a command words bad JSON-lines input.

    Fields: ``{source}`` (as given), ``{path}`` (as a path), ``{what}`` ("is a directory"
    or "does not exist"), ``{name}`` (the place as :attr:`name` words it, ``stdin`` for
    ``-``), ``{number}`` (line number), ``{msg}``, ``{reason}`` (the parser's words).
    """

    missing: str = "{source} {what}"
    missing_hint: str = "give a JSONL file, or - to read standard input"
    name: str = "{source}"
    bad_json: str = "{name} line {number}: not valid JSON ({msg})"
    not_utf8: str = "{source} is not UTF-8 text ({reason})"


#: ``classify`` (messages as ``FILE line N: ...``).
CLASSIFY_INPUT = JsonlWording()
#: ``score-plan`` (messages as ``FILE:N ...``).
SCORE_PLAN_INPUT = JsonlWording(
    missing="{source} is not a file",
    missing_hint="pass a .jsonl file, or - to read stdin",
    name="{path}",
    bad_json="{name}:{number} is not valid JSON ({msg})",
)


def jsonl_name(source: str, wording: JsonlWording) -> str:
    """The input as error messages name it."""
    return "stdin" if source == "-" else wording.name.format(source=source, path=Path(source))


def iter_jsonl(source: str, wording: JsonlWording = CLASSIFY_INPUT) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of each non-blank line of the file ``source`` or of stdin (``-``).

    A missing file fails here, at once (before the command opens its output); the lines
    then stream (a large file is never held whole). What a value must look like is the
    caller's check.
    """
    if source == "-":
        return _parse_lines(sys.stdin, source, wording)
    path = Path(source)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UserError(wording.missing.format(source=source, path=path, what=what), hint=wording.missing_hint)
    return _parse_lines(path.open(encoding="utf-8"), source, wording)


def _parse_lines(stream: TextIO, source: str, wording: JsonlWording) -> Iterator[tuple[int, Any]]:
    name = jsonl_name(source, wording)
    try:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                value = loads_user_json(line, f"{name} line {number}")
            except JsonInputError as exc:
                message = wording.bad_json.format(name=name, number=number, msg=exc.reason)
                raise UserError(message, hint="one JSON object per line") from None
            yield number, value
    except UnicodeDecodeError as exc:
        message = wording.not_utf8.format(source=source, reason=exc.reason)
        raise UserError(message, hint="save the file as UTF-8 JSONL") from None
    finally:
        if stream is not sys.stdin:
            stream.close()
