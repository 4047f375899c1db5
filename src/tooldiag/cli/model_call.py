"""The model-call options every judgebench step shares (predict, judge, rewrite, metajudge), defined once.

Why a decorator: typer reads a command's options from its signature, so sharing a block of options
means sharing parameters. :func:`model_call_options` appends the shared ones (endpoint, key variable,
concurrency, cache, retries, timeout, temperature, max tokens, prompts, quiet, and for the steps that
can run on a cluster ``--executor``/``--ray-address``) to the command's own and hands the command one
:class:`ModelCall` instead (the signature work is :func:`tooldiag.cli.option_groups.option_group`'s),
which builds the :class:`ModelOptions`, the generation config and the progress displays. A new shared
option is added here once, for every step. :func:`print_step_summary` is the one ``done()`` line every
step prints per model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tooldiag.cli.option_groups import keyword_parameters, option_group
from tooldiag.cli.options import (
    DEFAULT_MAX_RESPONSE_BYTES,
    ApiKeyEnv,
    BaseUrl,
    Concurrency,
    Executor,
    MaxResponseBytes,
    MaxRetries,
    MaxTokens,
    NoCache,
    RayAddress,
    Timeout,
    build_model_options,
)
from tooldiag.errors import UserError

if TYPE_CHECKING:  # imported where used: pydantic's models cost half a second of every `--help`
    from rich.console import Console

    from tooldiag.models.base import ModelOptions
    from tooldiag.runner import ProgressSink
    from tooldiag.trajectory import GenerationConfig

Prompts = Annotated[
    Path | None,
    typer.Option("--prompts", help="Folder with your own prompt templates (same file names) to use instead."),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


@dataclass(frozen=True)
class ModelCall:
    """The shared options of one judgebench step, as the user gave them."""

    temperature: str = "0"
    max_tokens: int | None = None
    prompts: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = 8
    no_cache: bool = False
    max_retries: int = 6
    timeout: float = 120.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    quiet: bool = False
    executor: str = "local"
    ray_address: str | None = None

    def options(self) -> ModelOptions:
        return build_model_options(
            self.base_url, self.api_key_env, self.concurrency, self.no_cache, self.max_retries, self.max_response_bytes
        )

    def generation(self, thinking: bool | None = None) -> GenerationConfig:
        """The request config: ``--temperature`` (a number or ``default``), ``--max-tokens``, ``--timeout``."""
        from tooldiag.suites.judgebench.generate import generation_config
        from tooldiag.trajectory import GenerationConfig

        return generation_config(
            parse_temperature(self.temperature), thinking, self.max_tokens, GenerationConfig(timeout_s=self.timeout)
        )

    def progress(self) -> Callable[[str], AbstractContextManager[ProgressSink]]:
        """One progress display per model (none with ``--quiet``)."""
        from tooldiag.cli.progress import run_progress

        return lambda label: run_progress(label, enabled=not self.quiet)

    def executor_options(self) -> dict[str, Any]:
        """``executor`` and ``ray_address`` as the API takes them."""
        return {"executor": self.executor, "ray_address": self.ray_address}


def parse_temperature(value: str) -> float | None:
    """``--temperature``: a number, or ``default``/``none`` to send none."""
    if value.strip().lower() in ("default", "none"):
        return None
    try:
        return float(value)
    except ValueError:
        raise UserError(
            f"--temperature must be a number or 'default', got {value!r}", hint="e.g. --temperature 0.15"
        ) from None


def _shared_parameters(temperature: str, temperature_help: str, executor: bool) -> list[inspect.Parameter]:
    """The shared options as keyword-only parameters, in ``--help`` order."""
    annotated: list[tuple[str, Any, Any]] = [
        ("temperature", Annotated[str, typer.Option("--temperature", help=temperature_help)], temperature),
        ("max_tokens", MaxTokens, None),
        ("prompts", Prompts, None),
        ("base_url", BaseUrl, None),
        ("api_key_env", ApiKeyEnv, None),
        ("concurrency", Concurrency, 8),
        ("no_cache", NoCache, False),
        ("max_retries", MaxRetries, 6),
        ("timeout", Timeout, 120.0),
        ("max_response_bytes", MaxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES),
        ("quiet", Quiet, False),
    ]
    if executor:
        annotated += [("executor", Executor, "local"), ("ray_address", RayAddress, None)]
    return keyword_parameters(annotated)


def model_call_options(
    *,
    temperature: str = "0",
    temperature_help: str = "Number, or 'default' to send none.",
    executor: bool = False,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the shared model-call options; the command takes ``*, call: ModelCall`` (last) instead.

    ``temperature`` is the step's default (the paper's: 0 for generators, 0.15 for vLLM judges);
    ``executor`` adds ``--executor local|ray`` and ``--ray-address`` (steps whose units may run on Ray).
    """
    return option_group("call", _shared_parameters(temperature, temperature_help, executor), ModelCall)


def _statuses(statuses: Mapping[Any, int]) -> str:
    """``ok 5, null 1`` or ``with_gt ok 5, ...`` (keys that are tuples are joined by spaces)."""
    parts = [f"{' '.join(map(str, key)) if isinstance(key, tuple) else key} {n}" for key, n in sorted(statuses.items())]
    return ", ".join(parts) or "nothing new"


def print_step_summary(console: Console, name: str, summary: Any) -> None:
    """The line each step prints per model: what ran (by status), what was stored already, the time,
    what this step counts besides (retries, missing metrics, records without a query), and with
    ``--executor ray`` the executor's unit retries and worker losses."""
    extras = []
    if hasattr(summary, "retried"):
        extras.append(f"{summary.retried} needed a retry")
    if hasattr(summary, "missing_metric"):
        extras.append(f"{summary.missing_metric} lacked a metric")
    tail = "".join(f", {extra}" for extra in extras)
    probe = getattr(summary, "probe_no_rewrite", 0)
    console.print(
        f"{name}: ran {summary.ran} ({_statuses(summary.statuses)}), already stored {summary.skipped}{tail}, "
        f"{summary.wall_s:.1f} s" + (f"; {probe} probe units had no distinct rewrite" if probe else ""),
        highlight=False,
    )
    for difficulty, n in getattr(summary, "no_query", {}).items():
        console.print(f"  {n} records have no {difficulty} query and were skipped")
    counts = getattr(summary, "executor", None)
    line = counts.line() if counts is not None and hasattr(counts, "line") else None
    if line:
        console.print(f"  {line}", highlight=False)
