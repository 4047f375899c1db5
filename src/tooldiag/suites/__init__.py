"""Benchmark suites: loaders, runners, grading, imports."""
