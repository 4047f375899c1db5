"""Hypothesis fuzz suites over every CLI input path: clean ``error:`` or success, never a traceback."""
