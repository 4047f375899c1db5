"""Model backends: one async interface, a registry of ``provider/model`` strings,
providers and the response cache (the ``ref/*`` reference policies live in
``tooldiag.suites.reference``, above the suites they name)."""

from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, TaskContext
from tooldiag.models.registry import provider, resolve_model

__all__ = ["ModelBackend", "ModelOptions", "ModelRequest", "TaskContext", "provider", "resolve_model"]
