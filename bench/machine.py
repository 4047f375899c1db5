"""What machine a bench figure was measured on: shared by the bench scripts.

A wall-clock figure means little without the CPU and what else ran on it, so every script
that prints one prints this line too. Run the scripts as ``python bench/NAME.py``: this
folder is then on ``sys.path`` and ``import machine`` finds this module.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def host_line() -> str:
    """``host: MODEL, N logical CPUs, load average (1, 5, 15 min) a, b, c``."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    except (AttributeError, OSError):
        load = "unknown"
    return f"host: {model}, {os.cpu_count()} logical CPUs, load average (1, 5, 15 min) {load}"
