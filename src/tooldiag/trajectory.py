"""The data model every suite, runner, store and report shares.

Everything a run produces is one of these pydantic models, persisted as JSON with a
``schema_version`` so that stores written by an older tooldiag are recognised (and
refused with a clear message if they cannot be read). The shapes follow what the
best harnesses of the field keep (Inspect AI's ``ToolCall.parse_error``, pydantic-ai's
raw argument string): a malformed emission is never dropped, because the action-class
diagnostic has to classify it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from tooldiag.errors import REPLACEMENT_CHAR as REPLACEMENT_CHAR
from tooldiag.errors import repair_text as repair_text
from tooldiag.errors import repair_value as repair_value

#: Bumped whenever a persisted shape changes incompatibly.
SCHEMA_VERSION = 1

Role = Literal["system", "user", "assistant", "tool"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolSpec(_Model):
    """One tool offered to the model, as an OpenAI function-calling schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    #: Non-standard fields some suites keep (BFCL keeps the ``response`` schema).
    extra: dict[str, Any] = Field(default_factory=dict)

    def to_openai(self) -> dict[str, Any]:
        """The ``{"type": "function", "function": {...}}`` form sent to OpenAI-style servers."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        function.update(self.extra)
        return {"type": "function", "function": function}


#: Parsed arguments nested deeper than this are kept as raw text only: the store's JSON
#: serializer refuses nesting past 255 levels, and the raw text is what suites decode.
MAX_STORED_DEPTH = 200


def nesting_depth(value: Any) -> int:
    """How deeply lists and dicts nest in ``value`` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


class ToolCall(_Model):
    """One tool call as the model emitted it.

    ``raw_arguments`` is the exact argument text the model produced; ``arguments`` is
    its parse (``None`` when it does not parse to a JSON object, with the reason in
    ``parse_error``).
    """

    id: str = ""
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None
    parse_error: str | None = None

    @classmethod
    def from_raw(cls, name: str, raw_arguments: str | dict[str, Any] | None, id: str = "") -> ToolCall:
        """Parse ``raw_arguments`` (JSON text or an already-decoded dict) without raising."""
        if isinstance(raw_arguments, dict):
            try:
                raw = json.dumps(raw_arguments)
            except (ValueError, RecursionError) as exc:  # an int past the 4300-digit limit, or nesting past the stack
                return cls(
                    id=id, name=name, raw_arguments=None, parse_error=f"arguments cannot be written as JSON: {exc}"
                )
            if nesting_depth(raw_arguments) > MAX_STORED_DEPTH:  # decoded already (an imported result file)
                return cls(
                    id=id,
                    name=name,
                    raw_arguments=raw,
                    parse_error=f"arguments nest deeper than {MAX_STORED_DEPTH} levels: kept as raw text only",
                )
            return cls(id=id, name=name, arguments=raw_arguments, raw_arguments=raw)
        if raw_arguments is None:
            return cls(id=id, name=name, arguments=None, raw_arguments=None, parse_error="no arguments")
        try:
            parsed = json.loads(raw_arguments)
        except (ValueError, RecursionError) as exc:  # ValueError: also an int past the 4300-digit limit
            return cls(id=id, name=name, raw_arguments=raw_arguments, parse_error=f"invalid JSON: {exc}")
        if nesting_depth(parsed) > MAX_STORED_DEPTH:
            return cls(
                id=id,
                name=name,
                raw_arguments=raw_arguments,
                parse_error=f"arguments nest deeper than {MAX_STORED_DEPTH} levels: kept as raw text only",
            )
        if not isinstance(parsed, dict):
            return cls(
                id=id,
                name=name,
                raw_arguments=raw_arguments,
                parse_error=f"arguments are a JSON {type(parsed).__name__}, not an object",
            )
        return cls(id=id, name=name, arguments=parsed, raw_arguments=raw_arguments)


class Usage(_Model):
    input_tokens: int | None = None
    output_tokens: int | None = None


class Emission(_Model):
    """One model output: what one ``generate`` call returned."""

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: float | None = None
    #: The provider's raw response body, kept for audits (may be ``None``).
    raw: Any = None
    #: True when the response came from the response cache.
    cached: bool = False
    #: Failed attempts before this answer, by kind (``{"rate_limit": 2}``: two HTTP 429s, then
    #: this answer); empty for a first-try answer, a cache hit, and stores written before it existed.
    retries: dict[str, int] = Field(default_factory=dict)
    #: Text the harness (not the model) put in the model's place, e.g. a probe's
    #: abstention placeholder. Never counted as a model emission.
    injected: bool = False
    #: Lone surrogates (text no UTF-8 can hold) replaced by U+FFFD in this emission when it
    #: arrived (:func:`repair_emission`); 0 for a clean reply.
    text_repairs: int = 0

    def to_message(self) -> Message:
        return Message(role="assistant", content=self.text, tool_calls=list(self.tool_calls))


class Message(_Model):
    """A chat message in OpenAI shape."""

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments
                        if call.raw_arguments is not None
                        else json.dumps(call.arguments or {}),
                    },
                }
                for call in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


class Step(_Model):
    """One model query inside a turn, with what the harness did with its answer."""

    emission: Emission
    #: Calls as the benchmark decoded them (BFCL: ``name(k=repr(v))`` strings);
    #: ``None`` when decoding failed or the emission held no call.
    decoded_calls: list[str] | None = None
    decode_error: str | None = None
    #: One result string per decoded call, in order.
    tool_results: list[str] = Field(default_factory=list)
    #: Free-form annotations of probes (e.g. ``{"sri": "retry"}``).
    notes: dict[str, Any] = Field(default_factory=dict)


class Turn(_Model):
    """One user turn and the model's steps answering it."""

    index: int
    user_messages: list[Message] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    #: True when the harness stopped this turn at the step cap.
    force_terminated: bool = False
    notes: dict[str, Any] = Field(default_factory=dict)


class CaseTrajectory(_Model):
    """Everything the model did on one case."""

    schema_version: int = SCHEMA_VERSION
    case_id: str
    category: str
    turns: list[Turn] = Field(default_factory=list)
    #: Set when inference failed for infrastructure reasons (after retries); such a
    #: case is stored as an explicit error row and retried on resume.
    inference_error: str | None = None
    notes: dict[str, Any] = Field(default_factory=dict)


class Grade(_Model):
    """The benchmark's verdict on one case."""

    passed: bool
    #: The benchmark's own error type (BFCL: ``multi_turn:instance_state_mismatch``...).
    error_type: str | None = None
    error_message: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class GenerationConfig(_Model):
    """Sampling and request settings sent with every model call of a run."""

    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None
    #: Merged into the request body (e.g. vLLM ``chat_template_kwargs``).
    extra_body: dict[str, Any] = Field(default_factory=dict)
    #: Per-request timeout in seconds.
    timeout_s: float = 120.0

    def for_sample(self, sample: int) -> GenerationConfig:
        """The config of draw ``sample`` of a case (``--repeats``): itself for draw 0 or without a
        seed; else the same settings with :func:`sample_seed` (a provider that honours ``seed``
        would otherwise give every draw the same answer)."""
        if sample == 0 or self.seed is None:
            return self
        return self.model_copy(update={"seed": sample_seed(self.seed, sample)})


def sample_seed(seed: int, sample: int) -> int:
    """The seed of draw ``sample`` (>= 1) of a run seeded ``seed``: the first 31 bits of
    ``sha256("seed:sample")``, so runs with neighbouring seeds share no draw (``seed + sample`` would:
    seed 1 draw 1 = seed 2 draw 0). Draw 0 keeps ``seed`` itself (a one-draw run is unchanged)."""
    if sample == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{sample}".encode()).digest()[:4], "big") >> 1


class RunConfig(_Model):
    """What fully determines a run; a store refuses to resume under a different one."""

    schema_version: int = SCHEMA_VERSION
    suite: str
    model: str
    categories: list[str] = Field(default_factory=list)
    #: Explicit case ids (``None``: every case of the categories, cut by ``limit``).
    case_ids: list[str] | None = None
    limit: int | None = None
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    #: Provider endpoint (never a key), e.g. an OpenAI-compatible base URL.
    base_url: str | None = None
    probe: str | None = None
    #: Where the run came from: ``run`` (we ran the model) or ``import`` (read from files).
    source: Literal["run", "import"] = "run"
    #: For imports: the folder and layout read.
    import_info: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    #: Draws per case (``--repeats K``): samples 0..K-1 of every case. Like ``limit`` it may grow
    #: on resume (the store adds the missing samples); left out of the JSON when 1, so a one-draw
    #: run's stored config is what it was before repeats existed.
    repeats: int = Field(default=1, ge=1)

    @model_serializer(mode="wrap")
    def _drop_default_repeats(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.repeats == 1:
            data.pop("repeats", None)
        return data

    def identity(self) -> dict[str, Any]:
        """The fields that must match for a resume.

        ``limit``/``case_ids`` may grow a run; ``base_url`` may change (a server restarted
        on another port serves the same model); the request timeout changes whether an
        answer arrives, not what it says.
        """
        data = self.model_dump(mode="json")
        for key in ("limit", "case_ids", "base_url", "repeats"):
            data.pop(key, None)
        data["generation"].pop("timeout_s", None)
        return data


# -- surrogate-safe text ----------------------------------------------------------
#
# JSON allows a lone surrogate escape (``"\ud800"``) that no UTF-8 text can hold: Python's
# ``json.loads`` turns it into a str that every later encoder (SQLite, pydantic's JSON,
# stdout) refuses. Model replies and imported files are where such text enters; the
# providers repair it once on the way in (``repair_emission``) and the stores once on the
# way out (``dump_json_repaired``), so no write and no print ever meets one (issue 20, defect 2).
# The repair itself is :func:`tooldiag.errors.repair_value`, the same one that user files get.


def repair_emission(emission: Emission) -> Emission:
    """``emission`` with every surrogate in its text, reasoning, tool calls and raw body
    replaced (:func:`repair_text`), the count added to ``text_repairs``; the same object
    when there was nothing to repair (the common case costs one pass of pydantic's serialiser,
    which refuses exactly the text that needs repair)."""
    try:
        emission.model_dump_json()
        return emission
    except ValueError:  # PydanticSerializationError: a surrogate somewhere
        pass
    repaired, count = repair_value(emission.model_dump(mode="python"))
    if not count:
        return emission
    repaired["text_repairs"] = emission.text_repairs + count
    return Emission.model_validate(repaired)


def dump_json_repaired(model: BaseModel) -> tuple[str, int]:
    """``model`` as JSON text that UTF-8 can hold, and how many surrogates were replaced.

    The fast path is pydantic's own serialiser; only a model holding a surrogate (which
    that serialiser refuses) takes the slow path through :func:`repair_value`. A surrogate in a
    dict *key* (a raw body's) defeats even pydantic's JSON-mode dump; then the model's Python
    dump is repaired and validated again, and that model serialised."""
    try:
        return model.model_dump_json(), 0
    except ValueError:  # PydanticSerializationError: a surrogate somewhere
        pass
    try:
        repaired, count = repair_value(model.model_dump(mode="json"))
    except ValueError:  # UnicodeEncodeError: a surrogate in a key
        repaired, count = repair_value(model.model_dump(mode="python"))
        return type(model).model_validate(repaired).model_dump_json(), count
    return json.dumps(repaired, ensure_ascii=False, separators=(",", ":")), count


def storable_raw(value: Any) -> Any:
    """``value`` as an emission's ``raw`` field: itself, or its JSON text when it nests deeper than
    :data:`MAX_STORED_DEPTH` (the store's serializer refuses such nesting; the text keeps it all)."""
    if nesting_depth(value) <= MAX_STORED_DEPTH:
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__} nested more than {MAX_STORED_DEPTH} levels, not stored>"
