"""User-facing errors.

Bad input must end in one clear line naming the input and the fix, never a traceback.
Library code raises :class:`UserError` (or a subclass); the CLI prints ``error: ...``
with the hint and exits with status 2.
"""

from __future__ import annotations


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


class ModelCallError(Exception):
    """A model request that failed for good (after the retries it deserved).

    Not a :class:`UserError`. Three kinds, told apart by the flags:

    * ``fatal``: no other case can escape it either (bad key, unknown model,
      unreachable server): the run stops with one line;
    * ``transient`` (the default): retries ran out on a failure that may pass (429,
      5xx, timeouts, malformed bodies): the case is stored as an explicit error row
      and retried on resume;
    * neither: the server rejected this very request (e.g. HTTP 400, context too
      long); the same request would fail again, so the case is graded as the
      benchmark grades a model that failed at inference (BFCL: ``inference_error``).
    """

    def __init__(self, message: str, *, status: int | None = None, fatal: bool = False, transient: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.fatal = fatal
        self.transient = transient
