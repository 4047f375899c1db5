"""Read one large JSON object a top-level key at a time, without loading it whole.

tau2-bench writes every simulation of a run into one JSON document (``Results``:
``timestamp``, ``info``, ``tasks``, ``simulations``); official runs reach hundreds of MB.
:func:`scan_top_level` walks the document with ijson's event parser and materialises one
top-level value, or one element of a chosen array, at a time, so memory holds one
simulation plus the header.

The walk uses ijson's basic (prefix-free) events: prefixed events make ijson build a path
string per event, which for deeply nested input costs memory quadratic in the depth (a 40 KB
file of ``[`` peaked at 3.9 GB). Nesting deeper than :data:`MAX_DEPTH` is refused with one
line, so memory stays bounded by the largest value whatever the input.

ijson's errors carry no position, so on a parse error the file is re-read once with the
standard library, whose ``JSONDecodeError`` has line and column; that costs a full read
only on the error path (files above :data:`EXACT_POSITION_LIMIT` get the byte window the
streaming parser had reached instead).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson

from tooldiag.errors import UserError, repair_text, repair_value

#: Largest file re-read with the standard library to pinpoint a syntax error.
EXACT_POSITION_LIMIT = 1 << 30

#: Deepest nesting of arrays and objects accepted (tau2 files nest about 10 deep).
MAX_DEPTH = 200

_STARTS = frozenset({"start_map", "start_array"})
_ENDS = frozenset({"end_map", "end_array"})

#: Yielded as the value of the stream key when its items are not streamed.
STREAM_PRESENT = object()

TRUNCATION_HINT = "the file is cut short or corrupted; copy it again from the run, or re-run tau2"


class _CountingReader:
    """Wraps a binary file and counts the bytes handed to the parser."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._raw.read(size)
        self.consumed += len(chunk)
        return chunk


def json_error(path: Path, exc: Exception, *, consumed: int | None = None) -> UserError:
    """A :class:`UserError` naming ``path`` and the line/column of its syntax error."""
    try:
        size = path.stat().st_size
    except OSError:
        size = None
    if size is not None and size <= EXACT_POSITION_LIMIT:
        try:
            json.loads(path.read_bytes())
        except json.JSONDecodeError as err:
            return UserError(
                f"{path}: invalid JSON at line {err.lineno}, column {err.colno} "
                f"(character {err.pos} of {size} bytes): {err.msg}",
                hint=TRUNCATION_HINT,
            )
        except UnicodeDecodeError as err:
            return UserError(
                f"{path}: not UTF-8 text at byte {err.start}: {err.reason}",
                hint="tau2 writes UTF-8 JSON; check that this is a tau2 results file",
            )
        except (RecursionError, ValueError):  # too deep or an over-long integer: no position to add
            pass
        else:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return UserError(
                f"{path}: the streaming JSON parser rejected the file ({detail}) although Python's "
                "json module accepts it",
                hint="NaN, Infinity and other non-standard literals are not valid JSON; rewrite them as null",
            )
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    where = f" near byte {consumed}" if consumed is not None else ""
    return UserError(f"{path}: invalid JSON{where}: {detail}", hint=TRUNCATION_HINT)


class _TooDeep(Exception):
    """Nesting beyond :data:`MAX_DEPTH`; turned into a :class:`UserError` naming the file."""


def _repaired(event: str, value: Any) -> Any:
    """A string or key with its lone surrogates (a ``\\ud800`` escape decodes to one) replaced by
    U+FFFD, so nothing downstream (the classifier, stdout) meets text Python cannot encode."""
    if event in ("string", "map_key") and not value.isascii():
        return repair_text(value)[0]
    return value


def _build(event: str, value: Any, events: Iterator[tuple[str, Any]], depth: int) -> Any:
    """The value that starts with ``event`` (``depth`` containers already open around it)."""
    builder = ijson.ObjectBuilder()
    builder.event(event, _repaired(event, value))
    start = depth
    depth += 1 if event in _STARTS else 0
    while depth > start:
        event, value = next(events)
        builder.event(event, _repaired(event, value))
        if event in _STARTS:
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif event in _ENDS:
            depth -= 1
    return builder.value


def _skip(event: str, events: Iterator[tuple[str, Any]], depth: int) -> None:
    start = depth
    depth += 1 if event in _STARTS else 0
    while depth > start:
        event, _ = next(events)
        if event in _STARTS:
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif event in _ENDS:
            depth -= 1


def scan_top_level(
    path: Path,
    *,
    stream_key: str,
    want_keys: frozenset[str] | None = None,
    stream_items: bool = True,
    stop_at_stream_if_have: frozenset[str] = frozenset(),
) -> Iterator[tuple[str, Any, int | None]]:
    """Yield ``(key, value, None)`` for top-level keys and ``(stream_key, item, index)``
    for each element of the array under ``stream_key``.

    When the array is skipped (``stream_items=False``, or the early stop below), one
    ``(stream_key, STREAM_PRESENT, None)`` marks that it exists; a ``null`` array yields
    ``(stream_key, None, None)``.

    ``want_keys`` limits which other keys are materialised (``None``: all). With
    ``stream_items=False`` the array is skipped. When the stream key is reached and every
    key of ``stop_at_stream_if_have`` has already been seen, the scan stops there (the
    header of a tau2 file precedes its simulations, so reading the header is cheap).
    A non-object document, a non-array stream value and syntax errors raise
    :class:`UserError` naming the file.
    """
    with open(path, "rb") as raw:
        reader = _CountingReader(raw)
        events = ijson.basic_parse(reader, use_float=True)
        seen: set[str] = set()
        try:
            try:
                event, _ = next(events)
            except StopIteration:  # pragma: no cover - ijson raises on empty input
                raise UserError(f"{path}: empty file", hint=TRUNCATION_HINT) from None
            if event != "start_map":
                raise UserError(
                    f"{path}: the top level is a JSON {event.replace('start_', '') if event in _STARTS else 'value'}, "
                    "not an object",
                    hint="pass a tau2 results file (an object with info, tasks, simulations) "
                    "or a tau2 run folder holding results.json",
                )
            key: str | None = None
            # Every value is consumed whole by _build/_skip, so this loop only sees depth-1 events.
            for event, value in events:
                if event == "map_key":
                    key = value
                    continue
                if event == "end_map":
                    break
                assert key is not None
                if key == stream_key:
                    if event == "null":
                        seen.add(key)
                        yield stream_key, None, None
                        continue
                    if event != "start_array":
                        raise UserError(
                            f"{path}: '{stream_key}' is not a JSON array",
                            hint="this does not look like a tau2 results file",
                        )
                    seen.add(key)
                    if stop_at_stream_if_have and stop_at_stream_if_have <= seen:
                        yield stream_key, STREAM_PRESENT, None
                        return
                    if not stream_items:
                        _skip(event, events, 1)
                        yield stream_key, STREAM_PRESENT, None
                        continue
                    index = 0
                    for item_event, item_value in events:
                        if item_event == "end_array":
                            break
                        yield stream_key, _build(item_event, item_value, events, 2), index
                        index += 1  # noqa: SIM113 - counts items, while the loop walks parser events
                    continue
                seen.add(key)
                if want_keys is None or key in want_keys:
                    yield key, _build(event, value, events, 1), None
                else:
                    _skip(event, events, 1)
            # Drain: trailing garbage after the object is a syntax error too.
            for _ in events:
                pass
        except _TooDeep:
            raise UserError(
                f"{path}: JSON nested more than {MAX_DEPTH} levels deep (near byte {reader.consumed})",
                hint="tau2 results nest about 10 levels; this is not a tau2 results file, or it is corrupted",
            ) from None
        except ijson.JSONError as exc:
            raise json_error(path, exc, consumed=reader.consumed) from None
        except UnicodeDecodeError as exc:  # ijson decodes as it goes and lets this one through
            raise UserError(
                f"{path}: not UTF-8 text near byte {reader.consumed}: {exc.reason}",
                hint="tau2 writes UTF-8 JSON; check that this is a tau2 results file",
            ) from None
        except StopIteration:  # pragma: no cover - ijson raises IncompleteJSONError first
            raise json_error(path, ValueError("premature end of file"), consumed=reader.consumed) from None


def load_json_file(path: Path) -> Any:
    """Parse a whole (small) JSON file; syntax errors name the file, line and column."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})", hint="check the path") from None
    try:
        value = json.loads(data)
    except json.JSONDecodeError as err:
        raise UserError(
            f"{path}: invalid JSON at line {err.lineno}, column {err.colno} "
            f"(character {err.pos} of {len(data)} bytes): {err.msg}",
            hint=TRUNCATION_HINT,
        ) from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"{path}: not UTF-8 text at byte {err.start}: {err.reason}",
            hint="tau2 writes UTF-8 JSON; check that this is a tau2 results file",
        ) from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply to read", hint=TRUNCATION_HINT) from None
    except ValueError as err:  # e.g. an integer of more digits than int() converts
        raise UserError(f"{path}: unreadable JSON value ({err})", hint=TRUNCATION_HINT) from None
    return repair_value(value)[0]  # lone surrogates (``\\ud800`` escapes) become U+FFFD, as in the stream
