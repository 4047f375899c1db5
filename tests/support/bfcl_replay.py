"""Re-export of :mod:`tooldiag.testing.bfcl_replay` (record ``ref/<policy>`` answers to BFCL cases)."""

from tooldiag.testing.bfcl_replay import RecordingBackend, main, record_policy

__all__ = ["RecordingBackend", "main", "record_policy"]

if __name__ == "__main__":
    main()
