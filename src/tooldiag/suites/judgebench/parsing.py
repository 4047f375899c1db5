"""Reading what generators and judges reply, without trusting its shape.

Judges wrap JSON in markdown fences, put reasoning in ``<think>`` tags before it, or add a
sentence after it; the released parser (``safe_parse_json``) handled the first two only.
Here the shared LLM-judge toolkit (:mod:`tooldiag.judges`) drops reasoning and offers every
JSON value that decodes (fences first); the first object that validates as a
:class:`JudgeReply` (it names at least one metric) wins. A reply that yields none is
*unparseable*: the runner retries it as a new draw and finally stores a null, which never
counts as agreement or disagreement. Nothing a model wrote is ever evaluated as code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, model_validator

from tooldiag.judges.extract import json_values, strip_reasoning
from tooldiag.judges.reply import parse_reply
from tooldiag.metrics.structural import METRICS, RELEASED_KEYS

__all__ = [
    "JudgeReply",
    "JudgeVerdict",
    "calls_from_text",
    "json_values",
    "parse_judge_reply",
    "parse_prometheus_reply",
    "prometheus_to_unit",
    "strip_reasoning",
    "verdict_from_object",
]

_RESULT = re.compile(r"\[RESULT\]\s*\(?\s*([1-5])(?:\.0+)?\s*\)?", re.I)
_SCORE_LINE = re.compile(r"\bscore\s*[:=]\s*([1-5])\b", re.I)

#: Accepted spellings of a metric in a judge reply, released key first.
_ALIASES: dict[str, tuple[str, ...]] = {
    m: (RELEASED_KEYS[m], m, RELEASED_KEYS[m].replace("_accuracy", "")) for m in METRICS
}
#: Every accepted spelling, to tell at once whether an object names a metric at all.
_ANY_ALIAS = frozenset(alias for aliases in _ALIASES.values() for alias in aliases)


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
    if isinstance(entry, int):  # compared as an int: a huge one has no float (OverflowError)
        return (float(entry), justification) if 0 <= entry <= 1 else (None, justification)
    if isinstance(entry, float) and math.isfinite(entry) and 0.0 <= entry <= 1.0:
        return entry, justification
    return None, justification


class JudgeReply(BaseModel):
    """The reply schema of the judgebench judges: a JSON object that names at least one metric.

    Each metric may be spelled as released (``tool_selection_accuracy``), by its short name, or
    without ``_accuracy``; its entry is a score in [0, 1] or an object with ``accuracy`` (or
    ``score``/``value``) and ``justification``. A metric that is absent or not such a score is
    ``None`` (missing), with whatever justification came with it.
    """

    values: dict[str, float | None]
    justifications: dict[str, str]
    overall: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_released(cls, obj: Any) -> dict[str, Any]:
        if not isinstance(obj, dict) or _ANY_ALIAS.isdisjoint(obj):
            raise ValueError("the object names no metric")
        values: dict[str, float | None] = {}
        notes: dict[str, str] = {}
        for metric, aliases in _ALIASES.items():
            key = next((a for a in aliases if a in obj), None)
            values[metric], notes[metric] = _score(obj[key]) if key is not None else (None, "")
        overall = obj.get("overall_assessment")
        return {"values": values, "justifications": notes, "overall": overall if isinstance(overall, str) else None}

    def verdict(self) -> JudgeVerdict:
        return JudgeVerdict(dict(self.values), dict(self.justifications), self.overall)


def verdict_from_object(obj: Any) -> JudgeVerdict | None:
    """A verdict from a decoded JSON object, or ``None`` when it names no metric."""
    if not isinstance(obj, dict):
        return None
    try:
        return JudgeReply.model_validate(obj).verdict()
    except ValueError:
        return None


def parse_judge_reply(text: str | None) -> JudgeVerdict | None:
    """The first JSON object in ``text`` that scores at least one metric, else ``None``."""
    reply = parse_reply(text, JudgeReply)
    return reply.verdict() if reply is not None else None


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
