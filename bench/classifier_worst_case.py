"""How the default classifier's time grows from 10 KB to 80 KB on its known worst-case shapes.

    uv run python bench/classifier_worst_case.py [--small 10000] [--large 80000]

Each shape is a short unit repeated to the size, plus a tail that triggers a rule: the two
shapes found quadratic by a search over the rule patterns (issue 20, defect 12) -- "a.a.a...?"
(the choice-question rule restarted at every word boundary of one long token) and blank
lines followed by "x>" (the block-quote rule let ``\\s*`` run across lines from every line
start) -- and their neighbours. A linear rule grows by about large/small (inputs past 60 KB
are cut to 60 KB before the rules run, so 80 KB costs what 60 KB costs); a quadratic one by
its square. Exit status 1 when any shape grows more than twice linearly. Times are CPU time
of this process (``time.process_time``), best of three.
"""

from __future__ import annotations

import argparse
import sys
import time

from machine import host_line  # bench/machine.py: the folder is on sys.path
from tooldiag.classify import get_classifier

SHAPES: dict[str, tuple[str, str]] = {
    "a.a.a...?": ("a.", "?"),
    "I'I'I'...?": ("I'", "?"),
    "Dr.Dr....?": ("Dr.", "?"),
    "1.1.1....?": ("1.", "?"),
    "blank lines, then x>": ("\n", "x>"),
    "spaces and newlines, then x>": (" \n", "x>"),
    "emphasis lines, then x>": ("\n\n**", "x>"),
    "choices without '?'": ("tea or coffee, ", "?"),
}
ANALYSED = 60_000  # MAX_ANALYSED_CHARS: longer text is cut before the rules run


def repeat_to(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def cpu_seconds(classify, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        classify(text, False)
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=80_000)
    args = parser.parse_args()
    classify = get_classifier("default")
    classify("Warm-up. Shall I proceed?", False)
    linear = min(args.large, ANALYSED) / args.small
    print(host_line())
    print(f"{'shape':32} {'small s':>9} {'large s':>9} {'growth':>7}  (linear: {linear:.1f})")
    worst = 0.0
    for name, (unit, tail) in SHAPES.items():
        small = cpu_seconds(classify, repeat_to(unit, args.small) + tail)
        large = cpu_seconds(classify, repeat_to(unit, args.large) + tail)
        growth = large / max(small, 1e-4)
        worst = max(worst, growth / linear)
        print(f"{name:32} {small:9.4f} {large:9.4f} {growth:7.1f}")
    print(f"worst growth / linear growth: {worst:.2f}")
    return 1 if worst > 2 else 0


if __name__ == "__main__":
    sys.exit(main())
