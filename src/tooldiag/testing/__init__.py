"""Development aids that ship with the package: a fake OpenAI/Anthropic HTTP server and BFCL replay.

Why in the package and not under ``tests/``: ``bench/`` scripts and users who test their own
integration need the same fake server the test suite uses, and a script must not reach into
``tests/`` through a ``sys.path`` insert. Nothing here is imported by the CLI or the library.

- :mod:`tooldiag.testing.fake_openai` — ``FakeOpenAIServer``, ``Reply``, ``FaultSpec``; stdlib only,
  runnable as ``python -m tooldiag.testing.fake_openai --port 8000``.
- :mod:`tooldiag.testing.replay` — ``ReplayTable``: recorded replies served by the fake server.
- :mod:`tooldiag.testing.bfcl_replay` — record what ``ref/oracle`` answers to BFCL cases, runnable
  as ``python -m tooldiag.testing.bfcl_replay --out replay.jsonl``. It imports the BFCL suite, so
  this package sits above the suites (like ``cli``); the other two modules import no tooldiag code.

This ``__init__`` imports nothing, so importing one module does not load the others.
"""
