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
        self, message: str, *, status: int | None = None, kind: ModelCallErrorKind = ModelCallErrorKind.TRANSIENT
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind

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
        return repair_surrogates(value)
    return value


def repair_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate of its strings (keys too) replaced by U+FFFD; iterative, any depth."""

    def fixed(text: str) -> str:
        return _LONE_SURROGATE.sub("\ufffd", text)

    if isinstance(value, str):
        return fixed(value)
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = fixed(item)
        elif isinstance(item, list):
            stack.extend((item, index) for index in range(len(item)))
        elif isinstance(item, dict):
            if any(isinstance(name, str) and _has_surrogate(name) for name in item):
                replaced = {fixed(name): entry for name, entry in item.items()}
                item.clear()
                item.update(replaced)
            stack.extend((item, name) for name in item)
    return root[0]


def _has_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None
