"""Re-export of :mod:`tooldiag.testing.replay` (recorded replies for the fake server)."""

from tooldiag.testing.replay import ReplayTable, path_namespace, request_key

__all__ = ["ReplayTable", "path_namespace", "request_key"]
