"""Runs on disk: one SQLite database per run directory, one atomic row per case."""

from tooldiag.store.rundb import CaseRecord, RunStore

__all__ = ["CaseRecord", "RunStore"]
