"""Resolve ``provider/model`` strings to backends.

Providers register themselves with :func:`provider`; their modules (and the SDKs
they need) are imported only when a model string names them, so a missing optional
SDK costs nothing until it is used, and then yields the exact install command.

The providers of this package are listed in ``_PROVIDER_MODULES``. Providers that live
above this layer (the ``ref/*`` reference policies of the suites, a user's plug-in) are
declared as entry points of the group ``tooldiag.providers`` (``name = "module"``), so
this floor names no module above it and no import graph hides a dependency.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points

from tooldiag.errors import UnknownModelError
from tooldiag.models.base import ModelBackend, ModelOptions

Factory = Callable[[str, ModelOptions], ModelBackend]

#: provider name -> module of this package that registers it (imported lazily).
_PROVIDER_MODULES: dict[str, str] = {
    "openai": "tooldiag.models.openai_compat",
    "anthropic": "tooldiag.models.anthropic",
    "litellm": "tooldiag.models.litellm",
}

_FACTORIES: dict[str, Factory] = {}


def provider(name: str) -> Callable[[Factory], Factory]:
    """Register ``factory(model_name, options)`` for ``name/...`` model strings."""

    def decorator(factory: Factory) -> Factory:
        _FACTORIES[name] = factory
        return factory

    return decorator


#: Entry-point group through which packages above this layer declare providers.
ENTRY_POINT_GROUP = "tooldiag.providers"


def _plugin_modules() -> dict[str, str]:
    """provider name -> module, from the ``tooldiag.providers`` entry points."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _provider_module(name: str) -> str | None:
    return _PROVIDER_MODULES.get(name) or _plugin_modules().get(name)


def known_providers() -> list[str]:
    return sorted(set(_PROVIDER_MODULES) | set(_plugin_modules()) | set(_FACTORIES))


def split_model_string(model: str) -> tuple[str, str]:
    """``"openai/gpt-4o"`` -> ``("openai", "gpt-4o")``; raises a clear error otherwise."""
    if not isinstance(model, str) or "/" not in model:
        raise UnknownModelError(
            f"model string {model!r} has no provider",
            hint=(
                f"write it as PROVIDER/MODEL, e.g. openai/gpt-4o or "
                f"ref/oracle; providers: {', '.join(known_providers())}"
            ),
        )
    provider_name, _, name = model.partition("/")
    if not provider_name or not name:
        raise UnknownModelError(
            f"model string {model!r} is incomplete",
            hint="write it as PROVIDER/MODEL, e.g. openai/gpt-4o or ref/oracle",
        )
    return provider_name, name


def resolve_model(model: str, options: ModelOptions | None = None) -> ModelBackend:
    """Build the backend for ``model`` (``provider/name``)."""
    provider_name, name = split_model_string(model)
    if provider_name not in _FACTORIES:
        module = _provider_module(provider_name)
        if module is not None:
            importlib.import_module(module)
    factory = _FACTORIES.get(provider_name)
    if factory is None:
        raise UnknownModelError(
            f"unknown model provider {provider_name!r} in {model!r}",
            hint=f"use one of: {', '.join(known_providers())}",
        )
    backend = factory(name, options or ModelOptions())
    backend.name = model
    return backend
