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

    Not a :class:`UserError`: the runner stores the case as an explicit error row and
    retries it on resume. ``fatal`` marks failures that no other case can escape
    either (bad key, unknown model, unreachable server): the run stops with one line.
    """

    def __init__(self, message: str, *, status: int | None = None, fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.fatal = fatal
