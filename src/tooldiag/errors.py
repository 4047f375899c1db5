"""User-facing errors.

Bad input must end in one clear line naming the input and the fix, never a traceback.
Library code raises :class:`UserError` (or a subclass); the CLI prints ``error: ...``
with the hint and exits with status 2.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any


class UserError(Exception):
    """A problem with what the user asked for, with a hint on how to fix it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (hint and any subclass fields), so an error raised in a worker process or a
        Ray task reaches the driver's ``error:`` line with its fix; ``Exception`` would keep only
        ``args`` and rebuild through ``__init__``, whose signature subclasses change."""
        return (_rebuild_user_error, (type(self), self.args, dict(self.__dict__)))


def _rebuild_user_error(cls: type[UserError], args: tuple[Any, ...], state: dict[str, Any]) -> UserError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UnknownModelError(UserError):
    """A model string that no registered provider resolves."""


class MissingDependencyError(UserError):
    """An optional SDK is not installed; the hint is the exact install command."""


class StoreError(UserError):
    """A run directory that is corrupt, foreign, or holds a different run."""


class ModelCallErrorKind(enum.Enum):
    """How far a failed model request reaches; the runner's response depends on nothing else."""

    #: No other case can escape it either (bad key, unknown model, unreachable server):
    #: the run stops with one line.
    FATAL = "fatal"
    #: Retries ran out on a failure that may pass (429, 5xx, timeouts, malformed bodies):
    #: the case is stored as an explicit error row and retried on resume.
    TRANSIENT = "transient"
    #: The server rejected this very request (e.g. HTTP 400, context too long); the same
    #: request would fail again, so the case is graded as the benchmark grades a model
    #: that failed at inference (BFCL: ``inference_error``).
    REJECTED = "rejected"


class ModelCallError(Exception):
    """A model request that failed for good (after the retries it deserved).

    Not a :class:`UserError`. ``kind`` (one :class:`ModelCallErrorKind`) says what the
    runner does with it; ``status`` is the last HTTP status, when there was one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        kind: ModelCallErrorKind = ModelCallErrorKind.TRANSIENT,
        size_cap: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind
        #: The response size cap (``--max-response-bytes``) that refused the answer, when that is
        #: what ended the call: not part of a run's identity, so a resume under a larger cap asks again.
        self.size_cap = size_cap

    @property
    def fatal(self) -> bool:
        """Shorthand for ``kind is ModelCallErrorKind.FATAL`` (read-only, derived from ``kind``)."""
        return self.kind is ModelCallErrorKind.FATAL

    @property
    def transient(self) -> bool:
        """Shorthand for ``kind is ModelCallErrorKind.TRANSIENT`` (read-only, derived from ``kind``)."""
        return self.kind is ModelCallErrorKind.TRANSIENT


#: A ``\uD800``-``\uDFFF`` escape in JSON text: the only way a lone surrogate gets into a parsed value.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class JsonInputError(UserError):
    """A user's JSON that cannot be read; ``reason`` is the parser's words, for callers with their own wording."""

    def __init__(self, where: str, reason: str, hint: str = "") -> None:
        super().__init__(f"{where}: not valid JSON ({reason})", hint=hint or None)
        self.where = where
        self.reason = reason


#: A lone surrogate in decoded text (a valid pair decodes to one character, never to these).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def loads_user_json(text: str | bytes, where: str, hint: str = "", *, repair: bool = True) -> Any:
    """``json.loads`` of a file or line the user gave: every way it can fail is one :class:`UserError`.

    ``json.loads`` fails in more ways than :class:`json.JSONDecodeError`: a nesting deeper
    than the interpreter's stack (:class:`RecursionError`), an integer of more than 4300
    digits (:class:`ValueError`), bytes that are not UTF-8 (:class:`UnicodeDecodeError`).
    Each of them is the user's input, so each is one :class:`JsonInputError` naming ``where``
    (e.g. ``log.jsonl line 3``): an ``error:`` line, never a traceback. Lone surrogates (``"\\ud800"``, valid JSON but
    not encodable text) are replaced by U+FFFD, so no later ``encode`` or write of the text
    can fail on them; ``repair=False`` keeps them for a caller that repairs and records it
    (``import bfcl``: the run store notes ``text_repaired`` on the case).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonInputError(where, exc.msg, hint) from None
    except RecursionError:
        raise JsonInputError(where, "nested too deeply to read", hint) from None
    except UnicodeDecodeError as exc:
        raise JsonInputError(where, f"not UTF-8 text: {exc.reason}", hint) from None
    except ValueError as exc:  # e.g. an integer of more digits than int() converts
        raise JsonInputError(where, str(exc), hint) from None
    if repair and isinstance(text, str) and _SURROGATE_ESCAPE.search(text):
        return repair_value(value)[0]
    return value


# -- surrogate-safe text ----------------------------------------------------------
#
# The one repair of text that no UTF-8 can hold, for every way such text enters: files the
# user gives (:func:`loads_user_json`, ``import bfcl``) and model replies
# (:func:`tooldiag.trajectory.repair_emission`, the stores). It lives here, the floor that
# every layer may import; callers keep the count where they record a repair (``Emission.text_repairs``,
# a case's ``notes["text_repaired"]``) or drop it (a user's file read for a report).

#: Stands in for each lone surrogate: U+FFFD, what a UTF-8 decoder writes for bytes it cannot read.
REPLACEMENT_CHAR = "\ufffd"


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with each surrogate code point replaced by U+FFFD, and how many were replaced."""
    if text.isascii() or _LONE_SURROGATE.search(text) is None:
        return text, 0
    return _LONE_SURROGATE.subn(REPLACEMENT_CHAR, text)


class _Frame:
    """One container being rebuilt by :func:`repair_value`: its children so far, and whether any changed."""

    __slots__ = ("changed", "children", "index", "keys", "node", "out")

    def __init__(self, node: Any, keys: list[Any] | None, changed: bool) -> None:
        self.node = node
        self.children: list[Any] = list(node.values()) if isinstance(node, dict) else list(node)
        self.keys = keys
        self.index = 0
        self.out: list[Any] = []
        self.changed = changed

    def accept(self, item: Any, changed: bool) -> None:
        self.out.append(item)
        self.changed = self.changed or changed

    def rebuilt(self) -> Any:
        if not self.changed:
            return self.node
        if self.keys is not None:
            return dict(zip(self.keys, self.out, strict=True))
        return self.out if isinstance(self.node, list) else type(self.node)(self.out)


def repair_value(value: Any) -> tuple[Any, int]:
    """A JSON-like ``value`` (str; lists, tuples and dicts, keys too) with every lone surrogate of
    its strings replaced as :func:`repair_text`, and how many were replaced.

    Returned unchanged (the same object) when nothing needed repair, and never mutated (a
    repaired container is a new one). Iterative, so any nesting depth is repaired (a recursive
    walk would stop at the interpreter's stack, and such depth is what hostile input sends)."""
    if isinstance(value, str):
        return repair_text(value)
    if not isinstance(value, list | tuple | dict):
        return value, 0
    total = 0

    def frame_of(node: Any) -> _Frame:
        nonlocal total
        if not isinstance(node, dict):
            return _Frame(node, None, False)
        keys: list[Any] = []
        repaired = 0
        for key in node:
            fixed, count = repair_value(key) if isinstance(key, str | tuple) else (key, 0)
            keys.append(fixed)
            repaired += count
        total += repaired
        return _Frame(node, keys, repaired > 0)

    stack = [frame_of(value)]
    while True:
        frame = stack[-1]
        if frame.index == len(frame.children):
            stack.pop()
            result = frame.rebuilt()
            if not stack:
                return result, total
            stack[-1].accept(result, result is not frame.node)
            continue
        child = frame.children[frame.index]
        frame.index += 1
        if isinstance(child, str):
            fixed, count = repair_text(child)
            total += count
            frame.accept(fixed, count > 0)
        elif isinstance(child, list | tuple | dict):
            stack.append(frame_of(child))
        else:
            frame.accept(child, False)
