"""Reading what generators and judges reply, without trusting its shape.

Judges wrap JSON in markdown fences, put reasoning in ``<think>`` tags before it, or add a
sentence after it; the released parser (``safe_parse_json``) handled the first two only.
Here: drop reasoning, then take the first JSON value (from fences first) that decodes. A
reply that yields no object with any metric key is *unparseable*: the runner retries it and
finally stores a null, which never counts as agreement or disagreement. Nothing a model
wrote is ever evaluated as code.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from tooldiag.metrics.structural import METRICS, RELEASED_KEYS

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_RESULT = re.compile(r"\[RESULT\]\s*\(?\s*([1-5])(?:\.0+)?\s*\)?", re.I)
_SCORE_LINE = re.compile(r"\bscore\s*[:=]\s*([1-5])\b", re.I)

#: Accepted spellings of a metric in a judge reply, released key first.
_ALIASES: dict[str, tuple[str, ...]] = {
    m: (RELEASED_KEYS[m], m, RELEASED_KEYS[m].replace("_accuracy", "")) for m in METRICS
}


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks; with a dangling ``</think>``, keep what follows it."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return text.strip()


def json_values(text: str) -> list[Any]:
    """Every JSON object or array that decodes from ``text``: fenced blocks first, then inline."""
    text = strip_reasoning(text or "")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for chunk in candidates:
        chunk = chunk.strip()
        try:
            found.append(json.loads(chunk))
            continue
        except (json.JSONDecodeError, RecursionError):
            pass
        i = 0
        while i < len(chunk):
            starts = [j for j in (chunk.find("{", i), chunk.find("[", i)) if j >= 0]
            if not starts:
                break
            start = min(starts)
            try:
                value, end = decoder.raw_decode(chunk, start)
            except (json.JSONDecodeError, RecursionError):
                i = start + 1
                continue
            found.append(value)
            i = end
    return found


# --------------------------------------------------------------------------- judges


@dataclass
class JudgeVerdict:
    """A parsed judge reply: one value per metric (``None`` = missing or not a score in [0, 1])."""

    values: dict[str, float | None]
    justifications: dict[str, str] = field(default_factory=dict)
    overall: str | None = None

    @property
    def missing(self) -> list[str]:
        return [m for m in METRICS if self.values.get(m) is None]

    def as_released(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            RELEASED_KEYS[m]: {"accuracy": self.values.get(m), "justification": self.justifications.get(m, "")}
            for m in METRICS
        }
        out["overall_assessment"] = self.overall
        return out


def _score(entry: Any) -> tuple[float | None, str]:
    justification = ""
    if isinstance(entry, dict):
        justification = str(entry.get("justification", "") or "")
        for key in ("accuracy", "score", "value"):
            if key in entry:
                entry = entry[key]
                break
        else:
            return None, justification
    if isinstance(entry, bool):
        return None, justification
    if isinstance(entry, str):
        try:
            entry = float(entry.strip())
        except ValueError:
            return None, justification
    if isinstance(entry, (int, float)) and math.isfinite(entry) and 0.0 <= entry <= 1.0:
        return float(entry), justification
    return None, justification


def verdict_from_object(obj: Any) -> JudgeVerdict | None:
    """A verdict from a decoded JSON object, or ``None`` when it names no metric."""
    if not isinstance(obj, dict):
        return None
    if not any(alias in obj for aliases in _ALIASES.values() for alias in aliases):
        return None
    values: dict[str, float | None] = {}
    notes: dict[str, str] = {}
    for metric, aliases in _ALIASES.items():
        key = next((a for a in aliases if a in obj), None)
        values[metric], notes[metric] = _score(obj[key]) if key is not None else (None, "")
    overall = obj.get("overall_assessment")
    return JudgeVerdict(values, notes, overall if isinstance(overall, str) else None)


def parse_judge_reply(text: str | None) -> JudgeVerdict | None:
    """The first JSON object in ``text`` that scores at least one metric, else ``None``."""
    for value in json_values(text or ""):
        verdict = verdict_from_object(value)
        if verdict is not None:
            return verdict
    return None


def parse_prometheus_reply(text: str | None) -> int | None:
    """The 1-5 score of an absolute-grading reply (``... [RESULT] 4``), else ``None``."""
    body = strip_reasoning(text or "")
    hits = _RESULT.findall(body) or _SCORE_LINE.findall(body)
    return int(hits[-1]) if hits else None


def prometheus_to_unit(score: int) -> float:
    """Map a 1-5 grade to [0, 1] linearly: 1 -> 0.0, 3 -> 0.5, 5 -> 1.0."""
    return (score - 1) / 4.0


# --------------------------------------------------------------------------- generators


def calls_from_text(text: str | None) -> list[dict[str, Any]] | None:
    """A plan written as text: a JSON array of calls (or ``{"tool_calls": [...]}``).

    Returns ``None`` when no such array decodes; ``[]`` for an explicit empty plan.
    """
    for value in json_values(text or ""):
        if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
            value = value["tool_calls"]
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            calls = []
            for item in value:
                body = item.get("function") if isinstance(item.get("function"), dict) else item
                name = body.get("name")
                if not isinstance(name, str) or not name:
                    break
                calls.append({"name": name, "arguments": body.get("arguments", {})})
            else:
                return calls
    return None
