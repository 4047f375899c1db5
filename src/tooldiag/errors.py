"""User-facing errors.

Bad input must end in one clear line naming the input and the fix, never a traceback.
Library code raises :class:`UserError` (or a subclass); the CLI prints ``error: ...``
with the hint and exits with status 2.
"""

from __future__ import annotations

import enum


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
