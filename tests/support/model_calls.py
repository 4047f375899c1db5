"""One model call from synchronous test code: ``backend.generate(...)`` in a fresh event loop,
the backend closed afterwards whatever happened (so no client or socket outlives the test)."""

from __future__ import annotations

import asyncio
from typing import Any


def generate_once(backend: Any, *args: Any, **kwargs: Any) -> Any:
    """``backend.generate(*args, **kwargs)``, run to completion, then ``backend.aclose()``."""

    async def go() -> Any:
        try:
            return await backend.generate(*args, **kwargs)
        finally:
            await backend.aclose()

    return asyncio.run(go())
