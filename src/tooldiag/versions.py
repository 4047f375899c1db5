"""Who wrote a file: the versions of tooldiag, of the benchmark's own package and of Python.

A run directory written by tooldiag 0.1 and resumed by 0.2 (or graded by two releases of a
benchmark's checker) can hold numbers no single release would give; the store records every
writer so that a report can say so. This module only reads versions: the store keeps them
(:meth:`tooldiag.store.RunStore.create_or_resume`'s ``writer``), a suite adds its own package
(the BFCL runner adds ``bfcl-eval``), and reports print them.

>>> sorted(writer_versions())
['python', 'tooldiag']
"""

from __future__ import annotations

import importlib.metadata
import platform

import tooldiag

#: The keys every writer entry carries; a suite adds the distributions it depends on.
TOOLDIAG = "tooldiag"
PYTHON = "python"


def tooldiag_version() -> str:
    """The running tooldiag's ``__version__``."""
    return tooldiag.__version__


def distribution_version(name: str) -> str | None:
    """The installed version of the distribution ``name`` (``"bfcl-eval"``), ``None`` if it is absent."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def writer_versions(*distributions: str) -> dict[str, str | None]:
    """``{"tooldiag": ..., "python": ..., <each distribution>: version or None}`` of this process."""
    versions: dict[str, str | None] = {TOOLDIAG: tooldiag_version(), PYTHON: platform.python_version()}
    for name in distributions:
        versions[name] = distribution_version(name)
    return versions
