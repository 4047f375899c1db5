"""Suite-independent run machinery: one worker pool and one progress protocol.

Every place that sends model calls concurrently (the BFCL runner, the judgebench predict and
judge runners, the tau2 consent judge, the ``llm`` classifier) runs its units through
:func:`run_pool` and reports to a :class:`ProgressSink`, so bounding, cancelling, stopping on
a fatal error and showing progress behave the same everywhere. This package knows no suite.
"""

from tooldiag.runner.pool import run_pool
from tooldiag.runner.progress import ERROR_LABEL, NullProgress, ProgressSink

__all__ = ["ERROR_LABEL", "NullProgress", "ProgressSink", "run_pool"]
