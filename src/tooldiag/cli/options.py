"""Option groups shared by commands that call models (``run``, judges, tau2 judge).

Parsed into the same typed objects the Python API takes: :class:`ModelOptions` and
:class:`GenerationConfig`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from tooldiag.errors import UserError

if TYPE_CHECKING:  # imported where used: pydantic's models cost half a second of every `--help`
    from tooldiag.models.base import ModelOptions
    from tooldiag.trajectory import GenerationConfig

#: ``ModelOptions.max_response_bytes``'s default, spelled here so that ``--help`` needs no pydantic import
#: (``tests/test_cli_lazy.py`` checks that the two agree).
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024

BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help=(
            "Endpoint, e.g. http://127.0.0.1:8000/v1 for vLLM, SGLang, "
            "Ollama, llama.cpp (openai/* also reads OPENAI_BASE_URL)."
        ),
        rich_help_panel="Model",
    ),
]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Name of the environment variable that holds the API key (the key itself is never written anywhere).",
        rich_help_panel="Model",
    ),
]
Concurrency = Annotated[
    int,
    typer.Option("--concurrency", "-c", min=1, help="Cases (and requests) in flight at once.", rich_help_panel="Model"),
]
Temperature = Annotated[
    float,
    typer.Option(
        "--temperature",
        help="Sampling temperature (BFCL's harness uses 0.001; 0 enables the response cache).",
        rich_help_panel="Generation",
    ),
]
TopP = Annotated[float | None, typer.Option("--top-p", help="Nucleus sampling.", rich_help_panel="Generation")]
MaxTokens = Annotated[
    int | None, typer.Option("--max-tokens", help="Cap on generated tokens per request.", rich_help_panel="Generation")
]
Seed = Annotated[
    int | None,
    typer.Option("--seed", help="Sampling seed, where the server supports it.", rich_help_panel="Generation"),
]
Stop = Annotated[
    list[str] | None, typer.Option("--stop", help="Stop sequence (repeatable).", rich_help_panel="Generation")
]
ExtraBody = Annotated[
    str | None,
    typer.Option(
        "--extra-body",
        help='JSON merged into each request body, e.g. \'{"chat_template_kwargs": {"enable_thinking": false}}\'.',
        rich_help_panel="Generation",
    ),
]
Timeout = Annotated[
    float, typer.Option("--timeout", min=0.1, help="Per-request timeout in seconds.", rich_help_panel="Model")
]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache", help="Bypass the response cache (on by default at temperature 0).", rich_help_panel="Model"
    ),
]
MaxRetries = Annotated[
    int,
    typer.Option(
        "--max-retries", min=0, help="Retries for 429/5xx/timeouts/malformed replies.", rich_help_panel="Model"
    ),
]

MaxResponseBytes = Annotated[
    int,
    typer.Option(
        "--max-response-bytes",
        min=1,
        help="Largest reply body read per request (default 8 MiB); a longer one fails the request, unretried "
        "(resuming with a larger cap asks those requests again).",
        rich_help_panel="Model",
    ),
]


def parse_extra_body(text: str | None) -> dict:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"--extra-body is not valid JSON ({exc})", hint="pass a JSON object, e.g. '{\"top_k\": 20}'"
        ) from None
    if not isinstance(value, dict):
        raise UserError("--extra-body must be a JSON object", hint="e.g. '{\"top_k\": 20}'")
    return value


def build_model_options(
    base_url: str | None,
    api_key_env: str | None,
    concurrency: int,
    no_cache: bool,
    max_retries: int,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> ModelOptions:
    from tooldiag.models.base import ModelOptions

    return ModelOptions(
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        cache=not no_cache,
        max_retries=max_retries,
        max_response_bytes=max_response_bytes,
    )


def build_generation(
    temperature: float,
    top_p: float | None,
    max_tokens: int | None,
    seed: int | None,
    stop: list[str] | None,
    extra_body: str | None,
    timeout: float,
) -> GenerationConfig:
    from tooldiag.trajectory import GenerationConfig

    return GenerationConfig(
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        seed=seed,
        stop=stop or None,
        extra_body=parse_extra_body(extra_body),
        timeout_s=timeout,
    )


def split_list(text: str | None) -> list[str] | None:
    """``"a,b , c"`` -> ``["a", "b", "c"]``; ``None``/empty -> ``None``."""
    if not text:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    return items or None


#: ``--executor`` of the commands whose units may run on a Ray cluster (``judgebench predict|judge``, the llm scheme).
Executor = Annotated[
    str,
    typer.Option(
        "--executor",
        help=(
            "local: this process; ray: the units as Ray tasks on a cluster, this process alone writes the "
            "results (pip install 'tooldiag[ray]'; docs/distributed.md)."
        ),
        rich_help_panel="Model",
    ),
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="With --executor ray: auto (the cluster `ray start` made here) or HOST:PORT. Default: a local Ray.",
        rich_help_panel="Model",
    ),
]
