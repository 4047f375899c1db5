"""The reference rewriter and meta-judge (``ref/rewrite``, ``ref/metajudge``): offline, deterministic.

==================  ===========================================================================
model string        behaviour
==================  ===========================================================================
``ref/rewrite``     rewrites by templates (:mod:`.rewrite_text`): medium = a conversational
                    paraphrase without parameter names, hard = a vaguer request that keeps every
                    number, id and e-mail address; answers ``{"query": ...}``
``ref/metajudge``   votes ``preserved`` when every number / e-mail / URL of the source is in the
                    rewrite, ``hardened`` when the rewrite differs and spells the plan out less
                    (fewer step words, leading verbs, parameter names, quotes; on a tie, fewer
                    words); answers ``{"preserved", "hardened", "reason"}``
==================  ===========================================================================

Like the ``ref/jb-*`` models they read the request's ``TaskContext.answer_key``, which the
rewrite and meta-judge runners fill (the query and what to do with it); real providers ignore it.
"""

from __future__ import annotations

import json
from typing import Any

from tooldiag.errors import UserError
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest
from tooldiag.suites.judgebench.construct.rewrite_text import (
    hard_rewrite,
    medium_rewrite,
    missing_facts,
    normalized,
    specificity,
    word_count,
)
from tooldiag.trajectory import Emission


def _key(request: ModelRequest, name: str, role: str) -> dict[str, Any]:
    context = request.context
    key = context.answer_key if context is not None else {}
    if not key or key.get("role") != role:
        command = "rewrite" if role == "rewrite" else "metajudge"
        raise UserError(
            f"ref/{name} only answers `tooldiag judgebench {command}` requests",
            hint=f"use it with `tooldiag judgebench {command}`, which gives it the query",
        )
    return key


class _Reference(ModelBackend):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.short = name
        self.options = options

    @property
    def deterministic(self) -> bool:
        return True


class TemplateRewriter(_Reference):
    async def complete(self, request: ModelRequest) -> Emission:
        key = _key(request, self.short, "rewrite")
        names = key.get("parameter_names") or []
        rewrite = medium_rewrite if key["target"] == "medium" else hard_rewrite
        text = rewrite(key["query"], names)
        return Emission(text=json.dumps({"query": text}, ensure_ascii=False), finish_reason="stop")


def heuristic_votes(source: str, rewrite: str, parameter_names: list[str]) -> dict[str, Any]:
    """``ref/metajudge``'s votes on one transition, with the reason."""
    lost = missing_facts(source, rewrite)
    before, after = specificity(source, parameter_names), specificity(rewrite, parameter_names)
    if normalized(source) == normalized(rewrite):
        hardened, why = False, "the rewrite is the source"
    elif after != before:
        hardened, why = after < before, f"specificity {before} -> {after}"
    else:
        words = (word_count(source), word_count(rewrite))
        hardened, why = words[1] < words[0], f"specificity {before} both, words {words[0]} -> {words[1]}"
    lost_text = f"lost {', '.join(lost)}" if lost else "every number and address kept"
    return {"preserved": not lost, "hardened": hardened, "reason": f"{lost_text}; {why}"}


class HeuristicMetaJudge(_Reference):
    async def complete(self, request: ModelRequest) -> Emission:
        key = _key(request, self.short, "metajudge")
        votes = heuristic_votes(key["source"], key["rewrite"], list(key.get("parameter_names") or []))
        return Emission(text=json.dumps(votes, ensure_ascii=False), finish_reason="stop")


def rewriter(name: str, options: ModelOptions) -> ModelBackend:
    return TemplateRewriter(name, options)


def metajudge(name: str, options: ModelOptions) -> ModelBackend:
    return HeuristicMetaJudge(name, options)
