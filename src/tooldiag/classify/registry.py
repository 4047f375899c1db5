"""Classifier schemes by name, resolved once at the edge, the way providers are.

A scheme is a factory ``(SchemeOptions) -> Classifier`` registered with
:func:`scheme`; its module is imported only when a command names it (the same idiom
as :mod:`tooldiag.models.registry`). The command line, or a user of the Python API,
resolves the classifier once with :func:`resolve_classifier` and hands the object
down: reports, diagnostics and probes never see a scheme string or read the process
environment.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tooldiag.classify.classes import ActionClass
from tooldiag.errors import UserError

if TYPE_CHECKING:
    from tooldiag.models.base import ModelOptions


class Classifier(Protocol):
    """``(text, has_calls) -> ActionClass``; ``name`` is the scheme it implements."""

    name: str

    def __call__(self, text: Any, has_calls: bool) -> ActionClass: ...


@dataclass(frozen=True)
class SchemeOptions:
    """Everything a scheme may need, resolved by the caller (nothing read from the environment)."""

    #: Extra cue files of the ``default`` scheme (docs/diagnostic.md, "Extending the cues").
    cue_files: tuple[Path, ...] = ()
    #: The judge model of the ``llm`` scheme (``provider/model``).
    judge: str | None = None
    #: Endpoint, key variable, concurrency, cache and retries of that judge.
    judge_options: ModelOptions | None = None
    #: Where the ``llm`` scheme's requests run: ``local`` or ``ray`` (``--executor``), and the cluster.
    executor: str = "local"
    ray_address: str | None = None


SchemeFactory = Callable[[SchemeOptions], Classifier]

#: scheme name -> module that registers it (imported lazily); the order is the one help texts show.
_SCHEME_MODULES: dict[str, str] = {
    "paper": "tooldiag.classify.paper",
    "default": "tooldiag.classify.default",
    "default+learned": "tooldiag.classify.default",
    "llm": "tooldiag.classify.llm",
}

_FACTORIES: dict[str, SchemeFactory] = {}


def scheme(name: str) -> Callable[[SchemeFactory], SchemeFactory]:
    """Register ``factory(options) -> Classifier`` as the scheme ``name``."""

    def decorator(factory: SchemeFactory) -> SchemeFactory:
        _FACTORIES[name] = factory
        return factory

    return decorator


def scheme_names() -> tuple[str, ...]:
    """Every scheme a user may name, built-in ones first."""
    return tuple(dict.fromkeys([*_SCHEME_MODULES, *_FACTORIES]))


def check_scheme(name: str) -> str:
    """``name`` if it is a scheme; a :class:`UserError` listing the schemes otherwise."""
    if name not in _SCHEME_MODULES and name not in _FACTORIES:
        raise UserError(f"unknown classifier scheme {name!r}", hint="use one of: " + ", ".join(scheme_names()))
    return name


def resolve_classifier(name: str = "default", options: SchemeOptions = SchemeOptions()) -> Classifier:
    """Build the classifier of scheme ``name`` with ``options``."""
    check_scheme(name)
    if name not in _FACTORIES:
        importlib.import_module(_SCHEME_MODULES[name])
    return _FACTORIES[name](options)
