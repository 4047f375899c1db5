"""BFCL multi-turn (base, long_context, miss_func, miss_param): loader, runner,
safe executor, grading through BFCL's own checker, result-folder import and the
``ref/*`` reference policies."""

CATEGORIES = ("base", "long_context", "miss_func", "miss_param")
