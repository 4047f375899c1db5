"""The classifier options every command that classifies shares, defined once: ``--scheme`` and
:func:`classifier_options` (``--cues``, ``--judge`` and the llm scheme's judge settings).

Why: ``report``, ``cases``, ``compare``, ``show``, ``diagnose``, ``classify`` and ``audit report`` all
build their classifier from the same options. ``--scheme`` stays in each command's own signature (its
place and type differ: ``compare`` adds ``--scheme-b`` after it, ``classify`` takes several); the rest is
one block: a command declares ``*, options: ClassifierOptions`` right after its ``scheme`` and gets
the block's options there in ``--help`` (:func:`tooldiag.cli.option_groups.option_group`), handed to it
as one :class:`ClassifierOptions`, whose :meth:`~ClassifierOptions.resolve` builds the classifier a
scheme names. A new shared option is added here once, for every such command.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tooldiag.cli.option_groups import Command, keyword_parameters, option_group
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable

    from tooldiag.classify import Classifier

Scheme = Annotated[
    str,
    typer.Option(
        "--scheme",
        "-s",
        help="Classifier: default (tooldiag's rules), default+learned (rules + a learned text model), "
        "paper (reproduces the paper's tables) or llm.",
    ),
]
CueFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--cues",
        help="Extra cue file (JSON) for the default scheme; repeatable. Also: TOOLDIAG_CUES=FILE[:FILE].",
        dir_okay=False,
    ),
]
Judge = Annotated[
    str | None,
    typer.Option(
        "--judge", help="Judge model of the llm scheme, e.g. openai/gpt-4o-mini (or TOOLDIAG_CLASSIFY_MODEL)."
    ),
]
JudgeBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--judge-base-url",
        help="Endpoint of the llm scheme's judge, e.g. http://127.0.0.1:8000/v1.",
        rich_help_panel="llm scheme",
    ),
]
JudgeApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--judge-api-key-env", help="Environment variable holding the judge's API key.", rich_help_panel="llm scheme"
    ),
]
JudgeConcurrency = Annotated[
    int,
    typer.Option("--judge-concurrency", min=1, help="Judge requests in flight at once.", rich_help_panel="llm scheme"),
]
JudgeTimeout = Annotated[
    float | None,
    typer.Option(
        "--judge-timeout",
        min=0.1,
        metavar="SECONDS",
        help="Per-request timeout of the judge (default: 120 s). A request that times out is retried, "
        "then falls back to the default rules.",
        rich_help_panel="llm scheme",
    ),
]
JudgeCache = Annotated[
    bool,
    typer.Option(
        "--judge-cache/--no-judge-cache",
        help="Reuse the judge's cached answers (the response cache every model has; the judge runs at temperature 0).",
        rich_help_panel="llm scheme",
    ),
]
JudgeMaxRetries = Annotated[
    int,
    typer.Option(
        "--judge-max-retries",
        min=0,
        help="Retries per judge request (429/5xx/timeouts). Kept small so that a judge that is down "
        "falls back to the rules within seconds; an unreachable judge is not asked again.",
        rich_help_panel="llm scheme",
    ),
]
JudgeExecutor = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where the judge's requests run: local (this process) or ray (Ray tasks on a cluster; "
        "pip install 'tooldiag[ray]'; docs/distributed.md). The labels are the same either way.",
        rich_help_panel="llm scheme",
    ),
]
JudgeRayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="With --executor ray: auto (the cluster `ray start` made here) or HOST:PORT. Default: a local Ray.",
        rich_help_panel="llm scheme",
    ),
]


def resolve_classifier_options(
    scheme: str,
    cues: list[Path] | None,
    judge: str | None,
    judge_base_url: str | None = None,
    judge_api_key_env: str | None = None,
    judge_concurrency: int = 8,
    *,
    judge_timeout: float | None = None,
    judge_cache: bool = True,
    judge_max_retries: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> Classifier:
    """The classifier the options name, resolved once here and passed down as an object.

    ``executor``/``ray_address`` (``--executor ray``) apply to the ``llm`` scheme only."""
    from tooldiag.classify import SCHEMES, get_classifier

    if scheme not in SCHEMES:
        raise UserError(f"unknown scheme {scheme!r}", hint="use one of: " + ", ".join(SCHEMES))
    judge_options = None
    if scheme == "llm":
        from tooldiag.classify.llm import JUDGE_MAX_RETRIES
        from tooldiag.models.base import ModelOptions

        judge_options = ModelOptions(
            base_url=judge_base_url,
            api_key_env=judge_api_key_env,
            concurrency=judge_concurrency,
            cache=judge_cache,
            max_retries=JUDGE_MAX_RETRIES if judge_max_retries is None else judge_max_retries,
            timeout=judge_timeout,
        )
    return get_classifier(
        scheme, cue_files=cues or (), judge=judge, judge_options=judge_options, executor=executor,
        ray_address=ray_address,
    )  # fmt: skip


@dataclass(frozen=True)
class ClassifierOptions:
    """How to build the classifier of a scheme, as the user gave it: cue files and the llm scheme's judge.

    The defaults are the options' defaults in ``--help``; ``executor``/``ray_address`` stay ``local``/
    ``None`` for the commands without ``--executor``."""

    cues: list[Path] | None = None
    judge: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str | None = None
    judge_concurrency: int = 8
    judge_timeout: float | None = None
    judge_cache: bool = True
    judge_max_retries: int = 2
    executor: str = "local"
    ray_address: str | None = None

    def resolve(self, scheme: str) -> Classifier:
        """The classifier of ``scheme`` built with these options (an unknown scheme is a user error)."""
        return resolve_classifier_options(
            scheme, self.cues, self.judge, self.judge_base_url, self.judge_api_key_env, self.judge_concurrency,
            judge_timeout=self.judge_timeout, judge_cache=self.judge_cache, judge_max_retries=self.judge_max_retries,
            executor=self.executor, ray_address=self.ray_address,
        )  # fmt: skip


#: The block's options in ``--help`` order, each with its typer option (the defaults: :class:`ClassifierOptions`).
_OPTIONS: list[tuple[str, Any]] = [
    ("cues", CueFiles),
    ("judge", Judge),
    ("judge_base_url", JudgeBaseUrl),
    ("judge_api_key_env", JudgeApiKeyEnv),
    ("judge_concurrency", JudgeConcurrency),
    ("judge_timeout", JudgeTimeout),
    ("judge_cache", JudgeCache),
    ("judge_max_retries", JudgeMaxRetries),
]
#: ``--executor``/``--ray-address``, after the block, for the commands whose judge may run on a Ray cluster.
_EXECUTOR_OPTIONS: list[tuple[str, Any]] = [("executor", JudgeExecutor), ("ray_address", JudgeRayAddress)]


def classifier_options(*, executor: bool = False) -> Callable[[Command], Command]:
    """Give a command the shared classifier options where it declares ``*, options: ClassifierOptions``.

    ``executor`` adds ``--executor local|ray`` and ``--ray-address`` after them (the llm scheme's judge
    requests as Ray tasks). The command still declares its own ``--scheme`` and calls
    ``options.resolve(scheme)``."""
    defaults = {field.name: field.default for field in fields(ClassifierOptions)}
    chosen = _OPTIONS + (_EXECUTOR_OPTIONS if executor else [])
    group = keyword_parameters([(name, annotation, defaults[name]) for name, annotation in chosen])
    return option_group("options", group, ClassifierOptions)
