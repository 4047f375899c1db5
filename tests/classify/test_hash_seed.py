"""Labels and explanations do not depend on the string hash (``PYTHONHASHSEED``).

Cue alternations are built from sets of entries; ordering such a set by length alone left ties in
hash order, so which of two equally long cues an explanation quoted (and, through the
``refuse_exceptions`` substitution, possibly a label) changed from one process to the next.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "data" / "classifier"

_SCRIPT = """
import json, sys
from pathlib import Path
from tooldiag.classify import get_classifier, has_tool_calls
from tooldiag.classify.explain import explain
classifier = get_classifier("default")
out = []
for path in sys.argv[1:]:
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(explain(classifier, row["content"], has_tool_calls(row.get("tool_calls"))).to_json())
print(json.dumps(out, ensure_ascii=False))
"""


def _explanations(seed: str, files: list[str]) -> list[dict]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *files], env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


def test_explanations_are_the_same_under_any_hash_seed():
    # one batch per language, plus the English dev file (every rule family of the English rules)
    files = [*sorted(str(p) for p in FOLDER.glob("*-holdout-b.jsonl")), str(FOLDER / "en-dev.jsonl")]
    first = _explanations("1", files)
    assert len(first) > 1000
    assert _explanations("2", files) == first
