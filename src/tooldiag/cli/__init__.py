"""The ``tooldiag`` command line: one small module per command."""
