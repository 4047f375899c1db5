"""The one async interface through which every runner reaches a model.

A backend implements a single method, :meth:`ModelBackend.generate`; retries,
caching and concurrency are layered around it (see ``tooldiag.models``' other
modules) so that a provider stays a thin translation of one request.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Literal

from tooldiag.trajectory import Emission, GenerationConfig, Message, ToolSpec

ToolChoice = Literal["auto", "none", "required"] | str | None


@dataclass
class TaskContext:
    """What the harness knows about the request beyond the chat itself.

    Real providers ignore it. Reference policies (``ref/*``), which are deterministic
    known-answer self-tests, read the answer key from it, and probes use it to tag
    requests. ``answer_key`` is suite-specific (BFCL: the case's ground truth).
    """

    suite: str = ""
    case_id: str = ""
    category: str = ""
    turn_index: int = 0
    step_index: int = 0
    answer_key: dict[str, Any] = field(default_factory=dict)
    #: Which draw of the same request this is. A runner that re-asks after an
    #: unusable answer (a judge's unparseable verdict) raises it, so that the
    #: response cache, which keys on it, returns a new draw instead of the old one.
    sample: int = 0


@dataclass
class ModelOptions:
    """Provider-level options given on the command line or in the Python API."""

    base_url: str | None = None
    #: Name of the environment variable holding the API key (never the key itself).
    api_key_env: str | None = None
    concurrency: int = 8
    cache: bool = True
    cache_path: str | None = None
    max_retries: int = 6
    extra: dict[str, Any] = field(default_factory=dict)


class ModelBackend(abc.ABC):
    """A model reachable by a ``provider/model`` string."""

    #: The full model string, e.g. ``openai/gpt-4o`` or ``ref/oracle``.
    name: str = ""

    @abc.abstractmethod
    async def generate(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        config: GenerationConfig | None = None,
        *,
        context: TaskContext | None = None,
    ) -> Emission:
        """Answer one chat request with one emission."""

    async def aclose(self) -> None:
        """Release connections; the default has nothing to release."""

    @property
    def deterministic(self) -> bool:
        """True for offline policies whose answers need no cache."""
        return False
