"""Check the ``paper`` scheme against the paper's released classifier, label for label.

    git clone https://github.com/fbj2333/tool-calling-calibration /tmp/tcc   # commit 5c9ec3df
    uv run python bench/paper_parity.py --reference /tmp/tcc [--examples 4000]

Imports ``bfcl_calibration.analysis`` from the given checkout (its code is not part of
tooldiag) and compares ``gar.emission_action`` with ``PaperClassifier.classify_raw`` on
the labelled set and on hypothesis-generated strings and structures (JSON, Python
literals, fences, tags, arbitrary unicode). Inputs on which the original raises are
counted, not compared (tooldiag returns a class for them). Exit status 1 on any
mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="checkout of fbj2333/tool-calling-calibration")
    parser.add_argument("--examples", type=int, default=4000)
    args = parser.parse_args()
    sys.path.insert(0, str(args.reference))
    from bfcl_calibration.analysis.gar import emission_action
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tooldiag.classify.paper import PaperClassifier

    ours = PaperClassifier()
    counts = {"compared": 0, "original_raised": 0}
    mismatches: list[tuple[object, object, object]] = []

    def compare(value: object) -> None:
        try:
            expected = emission_action(value)
        except Exception:  # noqa: BLE001 - the original's own failures
            counts["original_raised"] += 1
            return
        got = ours.classify_raw(value)
        counts["compared"] += 1
        if (expected and expected.value) != (got and got.value):
            mismatches.append((value, expected, got))

    data = ROOT / "tests" / "data" / "classifier" / "en-original.jsonl"
    for line in data.read_text(encoding="utf-8").splitlines():
        compare(json.loads(line)["content"])

    values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
        max_leaves=8,
    )
    prefixes = st.sampled_from(["", "```\n", "```json\n", " ", "[", "{", "<tool_call>", "Sure "])
    texts = st.one_of(
        st.text(),
        values.map(json.dumps),
        values.map(repr),
        st.tuples(prefixes, values.map(json.dumps)).map("".join),
    )

    @settings(max_examples=args.examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(value=st.one_of(texts, values))
    def fuzz(value: object) -> None:
        compare(value)

    fuzz()
    print(
        f"compared {counts['compared']} emissions, original raised on {counts['original_raised']}, mismatches "
        f"{len(mismatches)}"
    )
    for value, expected, got in mismatches[:20]:
        print(f"  {value!r:.120}: original {expected}, tooldiag {got}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
