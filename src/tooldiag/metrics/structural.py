"""The programmatic structural scorer of AgentJudgeBench (paper 000, Eqs. 1a, 1b, 2, 3).

A predicted tool-call plan G (ordered) is compared with the expected plan E (ordered,
flattened over the reference's assistant turns) on four independent scores in [0, 1]:

* **tool selection** (Eq. 1a): ``max(0, 1 - (|𝒢∖ℰ| + |ℰ∖𝒢|) / max(|ℰ|, 1))`` over the
  *sets* of tool names; 1 when both sets are empty.
* **parameter structure** (Eq. 2): per predicted call, 1.0 when its argument-key set equals
  the expected call's of the same name, 0.5 when it only adds keys, 0.0 when an expected key
  is missing or the tool is not expected; averaged over *all* predicted calls (duplicates and
  unknown tools stay in the denominator); 1 when G is empty. The name -> key-set map is built
  from E, so the **last** expected occurrence of a repeated tool wins. Values are never compared.
* **sequence** (Eq. 1b): positional name matches over ``min(|G|, |E|)`` divided by ``|E|``;
  1 when E is empty. Extra trailing calls are free; one inserted call can zero it.
* **coverage** (Eq. 3): ``|𝒢 ∩ ℰ| / |ℰ|`` over name sets; 1 when ℰ is empty; extras ignored.

Each score is rounded to 4 decimals as released (``ProgrammaticJudge`` in SyGra's
``tasks/examples/agentic_bfcl_judge_eval/task_executor.py``, notes §1). The released code
requires ``arguments`` to be a dict; we also accept a JSON-object string, treat an absent or
empty argument payload as no keys, and give a call whose arguments are not a JSON object the
parameter score 0 (its keys cannot be read).

``schema_aware=True`` is the paper's open future work (App. G, "Bounding the Eq. 2 rescoring
fix"): extra keys that the tool's JSON schema declares are not penalised (1.0 instead of 0.5).

Two paths compute the same numbers: pure per-plan functions (the reference, easy to read) and
:func:`score_plans`, which flattens a batch into integer arrays and scores it with numpy set
operations (no per-call Python loop after flattening). Tests pin them to each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tooldiag.errors import UserError

#: Metric names in the order used by every array and table of this package.
METRICS: tuple[str, ...] = ("tool_selection", "parameter_structure", "sequence", "coverage")

#: The released keys of ``programmatic_judge_response`` (notes §1) and of the judge JSON.
RELEASED_KEYS: dict[str, str] = {
    "tool_selection": "tool_selection_accuracy",
    "parameter_structure": "parameter_structure_accuracy",
    "sequence": "sequence_accuracy",
    "coverage": "query_coverage_accuracy",
}

DECIMALS = 4


@dataclass(frozen=True)
class PlanCall:
    """One call of a plan as the scorer sees it: a tool name and its argument-key set.

    ``keys`` is ``None`` when the arguments could not be read as a JSON object.
    """

    name: str
    keys: frozenset[str] | None


@dataclass(frozen=True)
class StructuralScores:
    """The four scores of one plan, in [0, 1]."""

    tool_selection: float
    parameter_structure: float
    sequence: float
    coverage: float

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.tool_selection, self.parameter_structure, self.sequence, self.coverage)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(METRICS, self.as_tuple(), strict=True))

    def as_released(self) -> dict[str, dict[str, float]]:
        """``{"tool_selection_accuracy": {"accuracy": x}, ...}`` as in the released rows."""
        return {RELEASED_KEYS[m]: {"accuracy": v} for m, v in self.as_dict().items()}

    @property
    def mean(self) -> float:
        """Generator accuracy of the record: the unweighted mean of the four (paper §3.2)."""
        return sum(self.as_tuple()) / 4.0


# --------------------------------------------------------------------------- input forms


def _argument_keys(arguments: Any) -> frozenset[str] | None:
    if arguments is None:
        return frozenset()
    if isinstance(arguments, str):
        if not arguments.strip():
            return frozenset()
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):  # not JSON, an over-long integer, a nesting too deep
            return None
    if isinstance(arguments, Mapping):
        return frozenset(str(k) for k in arguments)
    return None


def as_call(item: Any) -> PlanCall:
    """Read one call: ``{"name", "arguments"}``, OpenAI ``{"function": {...}}``, or a ``ToolCall``.

    ``arguments`` may be a dict or a JSON string; absent/empty means no keys.
    """
    if isinstance(item, PlanCall):
        return item
    if hasattr(item, "name") and hasattr(item, "arguments") and not isinstance(item, Mapping):
        # tooldiag.trajectory.ToolCall: arguments None with a parse error = unreadable
        if getattr(item, "parse_error", None) and item.arguments is None:
            raw = getattr(item, "raw_arguments", None)
            return PlanCall(str(item.name), frozenset() if raw is None or not str(raw).strip() else None)
        return PlanCall(str(item.name), _argument_keys(item.arguments))
    if not isinstance(item, Mapping):
        raise UserError(
            f"a tool call must be a JSON object, got {type(item).__name__}: {str(item)[:80]!r}",
            hint='write calls as {"name": ..., "arguments": {...}} or {"function": {"name": ..., "arguments": ...}}',
        )
    function = item.get("function")
    body = function if isinstance(function, Mapping) else item
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise UserError(
            f"tool call without a name: {json.dumps(item)[:120]}",
            hint='every call needs "name" (or "function": {"name": ...})',
        )
    return PlanCall(name, _argument_keys(body.get("arguments")))


def as_plan(items: Iterable[Any] | None) -> list[PlanCall]:
    """Read a whole plan (``None`` is the empty plan)."""
    if items is None:
        return []
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise UserError(
            f"a plan must be a JSON list of calls, got {type(items).__name__}",
            hint='write "expected": [{"name": ..., "arguments": {...}}, ...]',
        )
    return [as_call(item) for item in items]


def schema_keys(tools: Iterable[Any]) -> dict[str, frozenset[str]]:
    """Tool name -> parameter names its JSON schema declares (for ``schema_aware``).

    Accepts OpenAI ``{"type": "function", "function": {...}}`` dicts, bare function dicts
    and :class:`~tooldiag.trajectory.ToolSpec` objects.
    """
    out: dict[str, frozenset[str]] = {}
    for tool in tools:
        if hasattr(tool, "parameters") and hasattr(tool, "name"):
            name, params = tool.name, tool.parameters
        else:
            body = tool.get("function", tool) if isinstance(tool, Mapping) else {}
            body = body if isinstance(body, Mapping) else {}
            name, params = body.get("name"), body.get("parameters") or {}
        if not name:
            continue
        props = params.get("properties") if isinstance(params, Mapping) else None
        out[str(name)] = frozenset(str(k) for k in props) if isinstance(props, (Mapping, list)) else frozenset()
    return out


# --------------------------------------------------------------------------- pure functions


def tool_selection(expected: Sequence[PlanCall], predicted: Sequence[PlanCall]) -> float:
    """Eq. 1a: set-level penalty for extra and missing tools, floored at 0 (unrounded)."""
    exp_set = {c.name for c in expected}
    gen_set = {c.name for c in predicted}
    if not exp_set and not gen_set:
        return 1.0
    wrong = len(gen_set - exp_set) + len(exp_set - gen_set)
    return max(0.0, 1.0 - wrong / max(len(exp_set), 1))


def sequence(expected: Sequence[PlanCall], predicted: Sequence[PlanCall]) -> float:
    """Eq. 1b: positional name matches divided by |E|; 1 when E is empty (unrounded)."""
    if not expected:
        return 1.0
    matches = sum(1 for g, e in zip(predicted, expected, strict=False) if g.name == e.name)
    return matches / len(expected)


def parameter_structure(
    expected: Sequence[PlanCall],
    predicted: Sequence[PlanCall],
    *,
    declared: Mapping[str, Iterable[str]] | None = None,
) -> float:
    """Eq. 2: mean per-call key-set score over all predicted calls; 1 when G is empty.

    With ``declared`` (tool name -> schema parameter names) the schema-aware variant gives
    1.0 instead of 0.5 when every extra key is declared by the tool's schema.
    """
    if not predicted:
        return 1.0
    expected_keys: dict[str, frozenset[str] | None] = {}
    for call in expected:  # the last occurrence of a repeated tool wins (released behaviour)
        expected_keys[call.name] = call.keys
    total = 0.0
    for call in predicted:
        want = expected_keys.get(call.name)
        if call.name not in expected_keys or call.keys is None or want is None:
            continue  # unknown tool or unreadable arguments: 0
        if not want <= call.keys:
            continue  # an expected key is missing: 0
        extra = call.keys - want
        if not extra or (declared is not None and extra <= frozenset(declared.get(call.name, ()))):
            total += 1.0
        else:
            total += 0.5
    return total / len(predicted)


def coverage(expected: Sequence[PlanCall], predicted: Sequence[PlanCall]) -> float:
    """Eq. 3: share of expected tool names the plan uses; 1 when none are expected."""
    exp_set = {c.name for c in expected}
    if not exp_set:
        return 1.0
    return len(exp_set & {c.name for c in predicted}) / len(exp_set)


def score_plan(
    expected: Iterable[Any] | None,
    predicted: Iterable[Any] | None,
    *,
    schema_aware: bool = False,
    tools: Iterable[Any] | Mapping[str, Iterable[str]] | None = None,
    decimals: int | None = DECIMALS,
) -> StructuralScores:
    """Score one plan on the four metrics (rounded to ``decimals`` as released; ``None``: exact).

    ``schema_aware`` needs ``tools`` (tool schemas, or a name -> declared-keys mapping).
    """
    exp, gen = as_plan(expected), as_plan(predicted)
    declared = _declared(schema_aware, tools)
    values: tuple[float, ...] = (
        tool_selection(exp, gen),
        parameter_structure(exp, gen, declared=declared),
        sequence(exp, gen),
        coverage(exp, gen),
    )
    if decimals is not None:
        values = tuple(round(v, decimals) for v in values)
    return StructuralScores(*values)


def _declared(schema_aware: bool, tools: Any) -> Mapping[str, Iterable[str]] | None:
    if not schema_aware:
        return None
    if tools is None:
        raise UserError(
            "schema_aware scoring needs the tool schemas",
            hint="pass tools=[...] (OpenAI function schemas) or a name -> parameter-names mapping",
        )
    if isinstance(tools, Mapping):
        return {str(k): frozenset(v) for k, v in tools.items()}
    return schema_keys(tools)


# --------------------------------------------------------------------------- batch path


def round_half_even_like_python(values: np.ndarray, decimals: int = DECIMALS) -> np.ndarray:
    """``np.round`` that returns exactly what Python's ``round(x, decimals)`` returns.

    ``np.round`` scales by 10**decimals first, which can land a value just off a tie on
    the tie (or the reverse); the few elements near a tie are redone with ``round``.
    """
    out = np.round(values, decimals)
    scaled = values * 10.0**decimals
    near_tie = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6
    for i in np.flatnonzero(near_tie):
        out.flat[i] = round(float(values.flat[i]), decimals)
    return out


@dataclass
class _Flat:
    pair: np.ndarray  # plan index of each call
    name: np.ndarray  # interned name of each call
    readable: np.ndarray  # keys readable
    nkeys: np.ndarray  # number of keys per call
    key_call: np.ndarray  # call index of each (call, key) row
    key: np.ndarray  # interned key
    length: np.ndarray  # calls per plan
    start: np.ndarray  # index of each plan's first call


def _flatten(plans: Sequence[Sequence[PlanCall]], names: dict[str, int], keys: dict[str, int]) -> _Flat:
    pair: list[int] = []
    name: list[int] = []
    readable: list[bool] = []
    nkeys: list[int] = []
    key_call: list[int] = []
    key: list[int] = []
    for p, plan in enumerate(plans):
        for call in plan:
            idx = len(name)
            pair.append(p)
            name.append(names.setdefault(call.name, len(names)))
            readable.append(call.keys is not None)
            ks = call.keys or ()
            nkeys.append(len(ks))
            for k in ks:
                key_call.append(idx)
                key.append(keys.setdefault(k, len(keys)))
    length = np.bincount(np.asarray(pair, dtype=np.int64), minlength=len(plans))
    start = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64) if len(plans) else np.zeros(0, np.int64)
    return _Flat(
        pair=np.asarray(pair, dtype=np.int64),
        name=np.asarray(name, dtype=np.int64),
        readable=np.asarray(readable, dtype=bool),
        nkeys=np.asarray(nkeys, dtype=np.int64),
        key_call=np.asarray(key_call, dtype=np.int64),
        key=np.asarray(key, dtype=np.int64),
        length=length.astype(np.int64),
        start=start,
    )


def score_plans(
    expected: Sequence[Iterable[Any] | None],
    predicted: Sequence[Iterable[Any] | None],
    *,
    schema_aware: bool = False,
    tools: Sequence[Any] | None = None,
    decimals: int | None = DECIMALS,
) -> np.ndarray:
    """Score many plans at once; returns an ``(n, 4)`` array in :data:`METRICS` order.

    Same numbers as :func:`score_plan` row by row. ``tools`` (with ``schema_aware``) holds
    one tool list (or name -> declared-keys mapping) per plan.
    """
    if len(expected) != len(predicted):
        raise UserError(
            f"score_plans got {len(expected)} expected plans but {len(predicted)} predicted plans",
            hint="pass one expected and one predicted plan per record",
        )
    n = len(expected)
    names: dict[str, int] = {}
    keys: dict[str, int] = {}
    E = _flatten([as_plan(p) for p in expected], names, keys)
    G = _flatten([as_plan(p) for p in predicted], names, keys)
    NN = max(len(names), 1)
    NK = max(len(keys), 1)

    # Name sets per plan (Eqs. 1a, 3).
    e_codes = np.unique(E.pair * NN + E.name)
    g_codes = np.unique(G.pair * NN + G.name)
    e_set = np.bincount(e_codes // NN, minlength=n)
    g_set = np.bincount(g_codes // NN, minlength=n)
    g_in_e = np.isin(g_codes, e_codes, assume_unique=True)
    extra = np.bincount(g_codes[~g_in_e] // NN, minlength=n)
    inter = np.bincount(g_codes[g_in_e] // NN, minlength=n)
    missing = e_set - inter
    tool = np.where((e_set == 0) & (g_set == 0), 1.0, np.maximum(0.0, 1.0 - (extra + missing) / np.maximum(e_set, 1)))
    cov = np.where(e_set == 0, 1.0, inter / np.maximum(e_set, 1))

    # Sequence (Eq. 1b): the predicted call at position i against the expected one at i.
    g_pos = np.arange(len(G.pair)) - G.start[G.pair] if len(G.pair) else np.zeros(0, np.int64)
    comparable = g_pos < E.length[G.pair] if len(G.pair) else np.zeros(0, bool)
    e_index = E.start[G.pair[comparable]] + g_pos[comparable]
    hit = E.name[e_index] == G.name[comparable]
    matches = np.bincount(G.pair[comparable][hit], minlength=n)
    seq = np.where(E.length == 0, 1.0, matches / np.maximum(E.length, 1))

    # Parameter structure (Eq. 2): last expected occurrence of each (plan, name).
    e_full = E.pair * NN + E.name
    rev = e_full[::-1]
    uniq, first_in_rev = np.unique(rev, return_index=True)
    last_index = len(e_full) - 1 - first_in_rev
    g_full = G.pair * NN + G.name
    pos = np.searchsorted(uniq, g_full)
    pos_clip = np.minimum(pos, max(len(uniq) - 1, 0))
    known = (uniq[pos_clip] == g_full) if len(uniq) else np.zeros(len(g_full), bool)
    matched = np.full(len(g_full), -1, dtype=np.int64)
    matched[known] = last_index[pos_clip[known]]
    has_match = matched >= 0
    e_readable = np.zeros(len(g_full), dtype=bool)
    e_readable[has_match] = E.readable[matched[has_match]]
    want = np.zeros(len(g_full), dtype=np.int64)
    want[has_match] = E.nkeys[matched[has_match]]
    valid = has_match & G.readable & e_readable

    e_key_codes = E.key_call * NK + E.key
    g_match_of_key = matched[G.key_call] if len(G.key_call) else np.zeros(0, np.int64)
    g_key_codes = np.where(g_match_of_key >= 0, g_match_of_key, 0) * NK + G.key
    found = (g_match_of_key >= 0) & np.isin(g_key_codes, e_key_codes)
    shared = np.bincount(G.key_call[found], minlength=len(G.pair))
    n_missing = want - shared
    n_extra = G.nkeys - shared
    if schema_aware:
        extra_ok = _declared_extra(G, found, tools, n, names, keys, NN, NK)
        n_extra = n_extra - extra_ok
    per_call = np.where(valid & (n_missing == 0), np.where(n_extra == 0, 1.0, 0.5), 0.0)
    param_sum = np.bincount(G.pair, weights=per_call, minlength=n)
    param = np.where(G.length == 0, 1.0, param_sum / np.maximum(G.length, 1))

    out = np.column_stack([tool, param, seq, cov]).astype(float) if n else np.zeros((0, 4))
    if decimals is not None:
        out = round_half_even_like_python(out, decimals)
    return out


def _declared_extra(
    G: _Flat,
    found: np.ndarray,
    tools: Sequence[Any] | None,
    n: int,
    names: dict[str, int],
    keys: dict[str, int],
    NN: int,
    NK: int,
) -> np.ndarray:
    """Per predicted call: how many of its extra keys its tool's schema declares."""
    if tools is None or len(tools) != n:
        raise UserError(
            "schema_aware batch scoring needs one tool list per plan",
            hint="pass tools=[tools_of_plan_0, tools_of_plan_1, ...]",
        )
    codes = []
    for p, plan_tools in enumerate(tools):
        declared = _declared(True, plan_tools or []) or {}  # never None: schema_aware is True
        for tool_name, tool_keys in declared.items():
            name_id = names.get(tool_name)
            if name_id is None:
                continue
            for k in tool_keys:
                key_id = keys.get(k)
                if key_id is not None:
                    codes.append((p * NN + name_id) * NK + key_id)
    declared_codes = np.asarray(sorted(set(codes)), dtype=np.int64)
    owner = G.key_call
    key_codes = (G.pair[owner] * NN + G.name[owner]) * NK + G.key if len(owner) else np.zeros(0, np.int64)
    is_extra_declared = (~found) & np.isin(key_codes, declared_codes)
    return np.bincount(owner[is_extra_declared], minlength=len(G.pair))
