"""Registers the fuzz profiles (``ci``: derandomized, no deadline; ``nightly``: x200 examples).

CI: ``pytest tests/fuzz`` (about a thousand generated cases, well under a minute).
Nightly: ``TOOLDIAG_FUZZ_PROFILE=nightly pytest tests/fuzz`` (over 100k generated cases).
"""

from tests.fuzz import profiles  # noqa: F401 - registering the profiles is the import's effect
