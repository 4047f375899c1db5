"""Reference generators and judges with known behaviour (``ref/jb-*`` model strings).

They make the whole pipeline runnable offline and give tests known answers:

==================  =========  =================================================================
model string        role       behaviour
==================  =========  =================================================================
``ref/jb-oracle``   generator  emits the reference plan exactly (programmatic scores all 1)
``ref/jb-perturb``  generator  perturbs the reference at rates growing with difficulty:
                               wrong tool, drop, swap, extra key, missing key; a little attrition
``ref/jb-sloppy``   generator  the same perturbations at higher rates
``ref/jb-exact``    judge      returns the programmatic scores: alignment 100 in every condition
``ref/jb-lenient``  judge      1.0 on every metric: alignment = mean programmatic score
``ref/jb-anchored`` judge      scores against the reference *shown in the prompt* and gives
                               sequence 1 only for the reference's exact order; 1.0 without one
``ref/jb-flaky``    judge      exact, but some replies unparseable (retried, some end null) and
                               some miss a metric
``ref/jb-order``    judge      exact, but sequence 0 when the calls that equal reference calls are
                               not in the reference's order, or a call's argument keys are not in
                               the order of the reference call's keys: order-sensitive, so the
                               ``--probe order`` change rate is > 0 (the bias probes' known answer)
==================  =========  =================================================================

Everything is deterministic, seeded by the record id (and difficulty/condition), and read from
``TaskContext.answer_key``, which the judgebench runners fill; real providers ignore it.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tooldiag.errors import UserError
from tooldiag.metrics.structural import METRICS, RELEASED_KEYS, score_plan
from tooldiag.models.base import ModelBackend, ModelOptions, ModelRequest, TaskContext
from tooldiag.trajectory import Emission, ToolCall, ToolSpec

#: Per-perturbation probability by difficulty (``jb-perturb``); ``jb-sloppy`` doubles them.
PERTURB_RATES = {"easy": 0.08, "medium": 0.18, "hard": 0.32}
#: Probability that the output is unusable (half empty, half unparseable text).
ATTRITION_RATES = {"easy": 0.0, "medium": 0.03, "hard": 0.06}


def _answer_key(context: TaskContext | None, name: str) -> dict[str, Any]:
    if context is None or not context.answer_key or context.suite != "judgebench":
        raise UserError(
            f"ref/{name} only answers judgebench requests",
            hint="use it with `tooldiag judgebench predict/judge`, which give it the record's reference",
        )
    return context.answer_key


class _Reference(ModelBackend):
    def __init__(self, name: str, options: ModelOptions) -> None:
        self.short = name
        self.options = options

    @property
    def deterministic(self) -> bool:
        return True


# --------------------------------------------------------------------------- generators


class OracleGenerator(_Reference):
    async def complete(self, request: ModelRequest) -> Emission:
        key = _answer_key(request.context, self.short)
        return _emit_calls(key["expected_calls"])


class PerturbGenerator(_Reference):
    """Reference plan with seeded structural mistakes; more (and more often) the harder the query."""

    def __init__(self, name: str, options: ModelOptions, scale: float = 1.0) -> None:
        super().__init__(name, options)
        self.scale = scale

    async def complete(self, request: ModelRequest) -> Emission:
        key = _answer_key(request.context, self.short)
        difficulty = key.get("difficulty", "easy")
        rng = random.Random(f"{self.short}:{key['record_id']}:{difficulty}")
        if rng.random() < ATTRITION_RATES.get(difficulty, 0.0) * self.scale:
            if rng.random() < 0.5:
                return Emission(text="[]", finish_reason="stop")
            return Emission(text="First I would look the request up, then act on it.", finish_reason="stop")
        rate = min(0.9, PERTURB_RATES.get(difficulty, 0.1) * self.scale)
        tools = request.tools or []
        tool_names = [t.name for t in tools]
        return _emit_calls(perturb_plan(key["expected_calls"], tool_names, tools, rate, rng))


def perturb_plan(
    calls: list[dict[str, Any]], tool_names: list[str], tools: list[ToolSpec], rate: float, rng: random.Random
) -> list[dict[str, Any]]:
    """Apply each perturbation with probability ``rate``: wrong tool, drop, swap, extra key, missing key."""
    plan = [{"name": c["name"], "arguments": dict(c.get("arguments") or {})} for c in calls]
    if not plan:
        return plan
    if rng.random() < rate:  # wrong tool: a tool of the inventory that the plan does not use
        spare = [n for n in tool_names if n not in {c["name"] for c in plan}]
        if spare:
            victim = rng.randrange(len(plan))
            plan[victim] = {"name": rng.choice(spare), "arguments": plan[victim]["arguments"]}
    if len(plan) > 1 and rng.random() < rate:  # drop one call
        plan.pop(rng.randrange(len(plan)))
    if len(plan) > 1 and rng.random() < rate:  # swap two neighbours
        i = rng.randrange(len(plan) - 1)
        plan[i], plan[i + 1] = plan[i + 1], plan[i]
    if rng.random() < rate:  # extra key: a declared optional parameter when there is one
        i = rng.randrange(len(plan))
        declared: dict[str, Any] = next(
            (t.parameters.get("properties", {}) for t in tools if t.name == plan[i]["name"]), {}
        )
        unused = [k for k in declared if k not in plan[i]["arguments"]]
        plan[i]["arguments"][rng.choice(unused) if unused else "note"] = "added"
    if rng.random() < rate:  # missing key
        with_keys = [i for i, c in enumerate(plan) if c["arguments"]]
        if with_keys:
            i = rng.choice(with_keys)
            plan[i]["arguments"].pop(rng.choice(sorted(plan[i]["arguments"])))
    return plan


def _emit_calls(calls: list[dict[str, Any]]) -> Emission:
    tool_calls = [
        ToolCall.from_raw(c["name"], json.dumps(c.get("arguments") or {}), id=f"call_{i}") for i, c in enumerate(calls)
    ]
    return Emission(text=None, tool_calls=tool_calls, finish_reason="tool_calls")


# --------------------------------------------------------------------------- judges


class _Judge(_Reference):
    """Shared reply formatting: JSON verdict, or a Prometheus ``[RESULT] n`` line per metric."""

    def verdict(self, key: dict[str, Any]) -> dict[str, float | None] | None:
        raise NotImplementedError

    def wrap(self, text: str, key: dict[str, Any]) -> str:
        return text

    async def complete(self, request: ModelRequest) -> Emission:
        key = _answer_key(request.context, self.short)
        values = self.verdict(key)
        if values is None:
            return Emission(text="I cannot grade this plan right now.", finish_reason="stop")
        metric = key.get("metric")
        if metric:
            value = values.get(metric)
            if value is None:
                return Emission(text="Feedback: the plan is hard to assess.", finish_reason="stop")
            grade = 1 + round(4 * value)
            return Emission(text=f"Feedback: graded on {metric}. [RESULT] {grade}", finish_reason="stop")
        body: dict[str, Any] = {
            RELEASED_KEYS[m]: {"accuracy": values[m], "justification": f"{m} as seen by ref/{self.short}."}
            for m in METRICS
            if values.get(m) is not None
        }
        body["overall_assessment"] = f"Verdict of ref/{self.short}."
        return Emission(text=self.wrap(json.dumps(body), key), finish_reason="stop")


def _programmatic(expected: list[dict[str, Any]], predicted: list[dict[str, Any]]) -> dict[str, float | None]:
    return {**score_plan(expected, predicted).as_dict()}


class ExactJudge(_Judge):
    def verdict(self, key: dict[str, Any]) -> dict[str, float | None]:
        return _programmatic(key["expected_calls"], key["predicted_calls"])


class LenientJudge(_Judge):
    def verdict(self, key: dict[str, Any]) -> dict[str, float | None]:
        return dict.fromkeys(METRICS, 1.0)

    def wrap(self, text: str, key: dict[str, Any]) -> str:
        return f"```json\n{text}\n```"


class AnchoredJudge(_Judge):
    """Trusts whatever reference the prompt shows, including its order, to a fault."""

    def verdict(self, key: dict[str, Any]) -> dict[str, float | None]:
        shown = key.get("reference_calls")
        if shown is None:
            return dict.fromkeys(METRICS, 1.0)
        predicted = key["predicted_calls"]
        values = _programmatic(shown, predicted)
        same_order = [c["name"] for c in predicted] == [c["name"] for c in shown]
        values["sequence"] = 1.0 if same_order else 0.0
        return values

    def wrap(self, text: str, key: dict[str, Any]) -> str:
        return f"<think>Compare the plan with the reference, step by step.</think>\n{text}\nThat is my verdict."


class FlakyJudge(_Judge):
    """Exact scores, but ~25 % of first replies are unparseable, ~8 % of units stay unparseable
    through every retry (nulls), and ~8 % of replies omit the sequence metric.

    The process, per draw: ``rng = random.Random("jb-flaky:" + answer_key["unit"])``; ``u = rng.random()``;
    the reply is unparseable when ``u < 0.08``, or ``u < 0.25`` on attempt 0; a parsed reply omits
    ``sequence`` when the next ``rng.random() < 0.08``. The judge runner's unit key gains ``|s`` for
    draw ``s > 0``, so repeated draws are independent: a plan's verdicts differ across draws only in
    which draws are null and which omit ``sequence`` (its stability tests replay exactly this).
    """

    def verdict(self, key: dict[str, Any]) -> dict[str, float | None] | None:
        rng = random.Random(f"jb-flaky:{key.get('unit')}")
        draw = rng.random()
        attempt = int(key.get("attempt", 0))
        if draw < 0.08 or (draw < 0.25 and attempt == 0):
            return None
        values = _programmatic(key["expected_calls"], key["predicted_calls"])
        if rng.random() < 0.08:
            values["sequence"] = None
        return values


class OrderSensitiveJudge(_Judge):
    """Exact scores, except that it reads order into the plan where none matters (see :func:`out_of_order`).

    A deliberately biased judge for the ``order`` probe: its verdict on a plan and on the
    probe's equivalent rewrite differ exactly when one of them is out of order and the other is
    not, and the programmatic sequence score is above the low bin.
    """

    def verdict(self, key: dict[str, Any]) -> dict[str, float | None]:
        values = _programmatic(key["expected_calls"], key["predicted_calls"])
        if out_of_order(key["expected_calls"], key["predicted_calls"]):
            values["sequence"] = 0.0
        return values


def out_of_order(expected: list[dict[str, Any]], predicted: list[dict[str, Any]]) -> bool:
    """True when ``predicted`` departs from the reference's *written* order (``ref/jb-order``'s rule).

    Calls: each predicted call equal to an unused reference call (name and arguments) is matched
    to the first such; the matched reference positions must increase. Keys: for each predicted
    call whose tool the reference uses, the keys both share must come in the order of the first
    reference call of that name (the records list keys in schema order).
    """
    reference = [(c["name"], json.dumps(c.get("arguments") or {}, sort_keys=True)) for c in expected]
    used: set[int] = set()
    positions = []
    for call in predicted:
        body = (call["name"], json.dumps(call.get("arguments") or {}, sort_keys=True))
        match = next((k for k, r in enumerate(reference) if k not in used and r == body), None)
        if match is not None:
            used.add(match)
            positions.append(match)
    if positions != sorted(positions):
        return True
    key_order: dict[str, list[str]] = {}
    for call in expected:
        key_order.setdefault(call["name"], list(call.get("arguments") or {}))
    for call in predicted:
        order = key_order.get(call["name"])
        args = call.get("arguments") or {}
        if order is None or not isinstance(args, dict):
            continue
        shared = [k for k in args if k in order]
        if shared != [k for k in order if k in args]:
            return True
    return False


def _factory(cls: type[_Reference], **kwargs: Any):
    def make(name: str, options: ModelOptions) -> ModelBackend:
        return cls(name, options, **kwargs)

    return make


oracle = _factory(OracleGenerator)
perturb = _factory(PerturbGenerator)
sloppy = _factory(PerturbGenerator, scale=2.0)
exact = _factory(ExactJudge)
lenient = _factory(LenientJudge)
anchored = _factory(AnchoredJudge)
flaky = _factory(FlakyJudge)
order_sensitive = _factory(OrderSensitiveJudge)
