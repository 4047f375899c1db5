"""Re-export of :mod:`tooldiag.testing.fake_openai`, where the fake server lives (bench/ uses it too).

Kept so tests can keep importing ``tests.support.fake_openai`` and running it with ``python -m``.
"""

from tooldiag.testing.fake_openai import (
    FakeOpenAIServer,
    FaultSpec,
    RecordedRequest,
    Reply,
    Responder,
    ToolCallSpec,
    auto_responder,
    main,
)

__all__ = [
    "FakeOpenAIServer",
    "FaultSpec",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ToolCallSpec",
    "auto_responder",
    "main",
]

if __name__ == "__main__":
    main()
