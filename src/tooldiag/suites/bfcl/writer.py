"""Who writes a BFCL run store: tooldiag's, Python's and bfcl-eval's versions.

bfcl-eval's checker grades every case, so its release is part of what a stored pass means;
the runner, its resume and the importer record it with each writer
(:meth:`tooldiag.store.RunStore.create_or_resume`), and reports print it. A module of its
own so that the report path reads it without importing the runner.
"""

from __future__ import annotations

from tooldiag.versions import writer_versions

#: The distribution whose checker grades every case.
BFCL_DISTRIBUTION = "bfcl-eval"


def bfcl_writer() -> dict[str, str | None]:
    """The versions a BFCL run store records for this process (tooldiag, Python, bfcl-eval)."""
    return writer_versions(BFCL_DISTRIBUTION)
