"""The one async interface through which every runner reaches a model.

Callers ask :meth:`ModelBackend.generate` (messages, tools, tool choice, config and
context, as arguments). A backend implements a single method,
:meth:`ModelBackend.complete`, which receives the same request as one typed
:class:`ModelRequest`: the long signature is written once, here, and cannot drift
between providers, the cache wrapper, reference policies and test fakes. Retries,
timing and concurrency live once in :class:`tooldiag.models.network.NetworkBackend`,
caching in :mod:`tooldiag.models.cache`, so that a provider stays a thin translation
of one request.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Literal, final

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
    #: Per-request timeout in seconds for every request to this model; ``None``: each
    #: request's ``GenerationConfig.timeout_s`` (the ``llm`` classifier's ``--judge-timeout``).
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Largest reply body read from a network provider, in bytes (``--max-response-bytes``); a
    #: longer one is refused unread past the cap (:data:`DEFAULT_MAX_RESPONSE_BYTES`).
    max_response_bytes: int = 8 * 1024 * 1024


#: The default cap on one reply body: 8 MiB, about 100 times a long BFCL answer.
DEFAULT_MAX_RESPONSE_BYTES = ModelOptions.max_response_bytes


@dataclass(frozen=True)
class ModelRequest:
    """One chat request, as every backend receives it.

    ``config`` is never ``None`` here: :meth:`ModelBackend.generate` fills in the
    defaults, so no backend repeats ``config or GenerationConfig()``.
    """

    messages: list[Message]
    tools: list[ToolSpec] | None = None
    tool_choice: ToolChoice = None
    config: GenerationConfig = field(default_factory=GenerationConfig)
    context: TaskContext | None = None


class ModelBackend(abc.ABC):
    """A model reachable by a ``provider/model`` string."""

    #: The full model string, e.g. ``openai/gpt-4o`` or ``ref/oracle``.
    name: str = ""

    @final
    async def generate(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        config: GenerationConfig | None = None,
        *,
        context: TaskContext | None = None,
    ) -> Emission:
        """Answer one chat request with one emission (the call every runner makes).

        Not overridden: it only packs its arguments into a :class:`ModelRequest` for
        :meth:`complete`, so that callers keep plain keyword arguments while backends
        share one signature.
        """
        config = config if config is not None else GenerationConfig()
        return await self.complete(ModelRequest(messages, tools, tool_choice, config, context))

    @abc.abstractmethod
    async def complete(self, request: ModelRequest) -> Emission:
        """Answer ``request`` with one emission; raise ``ModelCallError`` when it failed for good."""

    async def aclose(self) -> None:  # noqa: B027 - an optional hook, not an abstract method
        """Release connections; the default has nothing to release."""

    @property
    def deterministic(self) -> bool:
        """True for offline policies whose answers need no cache."""
        return False
