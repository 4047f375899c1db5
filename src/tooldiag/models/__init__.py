"""Model backends: one async interface, a registry of ``provider/model`` strings,
providers, the ``ref/*`` reference policies and the response cache."""

from tooldiag.models.base import ModelBackend, ModelOptions, TaskContext
from tooldiag.models.registry import provider, resolve_model

__all__ = ["ModelBackend", "ModelOptions", "TaskContext", "provider", "resolve_model"]
