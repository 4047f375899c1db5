"""The quality gates (paper 000 §3.1): a valid record passes all six, each gate has a record built to fail it,
the gate report counts failures and regenerations per topology, the built-in records pass (except the documented
dangling outputs), and ``tooldiag judgebench gates`` gates a file and refuses bad input with one line."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from tooldiag.cli.main import main
from tooldiag.suites.judgebench.construct.gate_report import GateReport, report_paths
from tooldiag.suites.judgebench.construct.gates import (
    GATE_NAMES,
    failed_gates,
    grounding,
    run_gates,
    trace_consistency,
    write_gate_report,
)
from tooldiag.suites.judgebench.loaders import load_records, records_from_rows

# ---------------------------------------------------------------------------- a small valid record


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "dict", "properties": properties, "required": required},
        },
    }


TOOLS = [
    _tool("lookup_customer", "Find a customer by email.", {"email": {"type": "string"}}, ["email"]),
    _tool(
        "list_orders",
        "List a customer's orders.",
        {
            "customer_id": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "shipped", "cancelled"]},
            "limit": {"type": "integer", "description": "How many orders"},
            "include_archived": {"type": "boolean", "default": False},
        },
        ["customer_id", "status"],
    ),
    _tool(
        "cancel_order",
        "Cancel an order.",
        {
            "order_id": {"type": "string"},
            "reason": {"type": "string"},
            "notify_customer": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        ["order_id", "reason"],
    ),
    _tool("lookup_client", "Find a client account by email (near-miss distractor).", {"email": {"type": "string"}}, []),
    _tool("get_store_hours", "Opening hours of the stores (no arguments).", {}, []),
]


def stand_in_execute(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """A deterministic executor: the output is a function of the tool's name and the arguments only."""
    name = tool["function"]["name"]
    digest = hashlib.sha256(json.dumps([name, arguments], sort_keys=True).encode()).hexdigest()
    number = int(digest[:8], 16)
    if name == "lookup_customer":
        return {"customer_id": f"C-{number % 9000 + 1000}", "tier": "gold"}
    if name == "list_orders":
        return {
            "orders": [f"ORD-{(number >> s) % 90000 + 10000}" for s in (0, 7, 14)][: int(arguments.get("limit", 3))]
        }
    if name == "cancel_order":
        return {"cancelled": True, "refund_id": f"RF-{number % 900 + 100}"}
    return {"ok": True}


def build_record(
    query: str,
    calls: list[tuple[str, dict[str, Any] | Any]],
    *,
    dag_type: str = "linear",
    executor=stand_in_execute,
) -> dict[str, Any]:
    """A record in the generator's released layout (JSON-string columns); an argument given as a
    callable is computed from the outputs so far (how a plan threads an earlier output)."""
    responses, flat, outputs = [], [], []
    for step, (name, arguments) in enumerate(calls, start=1):
        args = arguments(outputs) if callable(arguments) else arguments
        tool = next(t for t in TOOLS if t["function"]["name"] == name) if name in _names() else None
        output = executor(tool, args) if tool is not None else {"error": "unknown tool"}
        outputs.append(output)
        call = {"function": {"name": name, "arguments": json.dumps(args)}, "type": "function", "id": f"step{step}"}
        responses.append(
            {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": json.dumps([call])}
        )
        responses.append({"role": "tool", "content": json.dumps(output), "tool_call_id": f"step{step}", "name": name})
        flat.append({"name": name, "arguments": args})
    metadata = {
        "source_id": "test",
        "user_utterance": query,
        "bfcl_type": "multiple",
        "generation_type": "synthetic",
        "tool_call_eval_result": "pass",
        "args_format_type": "json",
        "dag_formation_strategy": dag_type,
        "all_tool_calls_success": True,
        "domain": "retail",
        "seed": 7,
        "generator": "test-1",
    }
    return {
        "id": hashlib.sha256(query.encode()).hexdigest()[:32],
        "dag_type": dag_type,
        "user_message": query,
        "system_prompt": "You are a retail support assistant.",
        "available_tools": json.dumps(TOOLS),
        "expected_responses": json.dumps(responses),
        "expected_tool_calls": json.dumps(flat),
        "tools": json.dumps(TOOLS),
        "thoughts": "",
        "expected_response": "",
        "metadata": json.dumps(metadata),
    }


def _names() -> set[str]:
    return {t["function"]["name"] for t in TOOLS}


VALID_QUERY = (
    "Find the customer with email ana.silva@example.com, list her 2 most recent open orders, "
    "and cancel the first one because it was 'ordered by mistake', and notify the customer."
)
VALID_CALLS: list[tuple[str, Any]] = [
    ("lookup_customer", {"email": "ana.silva@example.com"}),
    ("list_orders", lambda out: {"customer_id": out[0]["customer_id"], "status": "open", "limit": 2}),
    (
        "cancel_order",
        lambda out: {"order_id": out[1]["orders"][0], "reason": "ordered by mistake", "notify_customer": True},
    ),
]


def valid_record() -> dict[str, Any]:
    return build_record(VALID_QUERY, VALID_CALLS)


def _decoded(record: dict[str, Any]) -> dict[str, Any]:
    """The same record with every JSON-string column decoded (as hand-written files hold them)."""
    out = dict(record)
    for column in ("available_tools", "expected_responses", "expected_tool_calls", "tools", "metadata"):
        out[column] = json.loads(record[column])
    for message in out["expected_responses"]:
        if message["role"] == "assistant":
            message["tool_calls"] = json.loads(message["tool_calls"])
            for call in message["tool_calls"]:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return out


def _edit(record: dict[str, Any], column: str, change) -> dict[str, Any]:
    out = copy.deepcopy(record)
    value = json.loads(out[column])
    change(value)
    out[column] = json.dumps(value)
    return out


# ---------------------------------------------------------------------------- the valid record


def test_the_valid_record_passes_every_gate_in_both_encodings():
    record = valid_record()
    results = run_gates(record, stand_in_execute)
    assert [r.name for r in results] == list(GATE_NAMES)
    assert all(r.status == "pass" for r in results), [(r.name, r.detail) for r in results if r.passed is not True]
    assert failed_gates(_decoded(record), stand_in_execute) == []
    # and it is a record every judgebench command loads
    (loaded,) = records_from_rows([record], "test")
    assert [c["name"] for c in loaded.expected_calls()] == ["lookup_customer", "list_orders", "cancel_order"]


def test_without_an_executor_trace_consistency_is_skipped_not_failed():
    results = {r.name: r for r in run_gates(valid_record())}
    assert results["trace_consistency"].status == "skipped"
    assert results["trace_consistency"].passed is None
    assert failed_gates(valid_record()) == []


# ---------------------------------------------------------------------------- one broken record per gate


def _schema_required_unknown(r):
    return _edit(r, "available_tools", lambda t: t[3]["function"]["parameters"]["required"].append("warehouse"))


def _schema_unknown_type(r):
    return _edit(
        r, "available_tools", lambda t: t[3]["function"]["parameters"]["properties"]["email"].update(type="text")
    )


def _schema_duplicate_tool(r):
    return _edit(r, "available_tools", lambda t: t.append(copy.deepcopy(t[4])))


def _schema_bad_enum(r):
    def change(tools):
        tools[4]["function"]["parameters"]["properties"]["day"] = {"type": "string", "enum": ["mon", 2]}

    return _edit(r, "available_tools", change)


def _schema_missing_field(r):
    return {k: v for k, v in r.items() if k != "system_prompt"}


def _schema_half_layout(r):
    return {k: v for k, v in r.items() if k != "thoughts"}


def _schema_bad_dag(r):
    return {**r, "dag_type": "tree"}


def _schema_metadata(r):
    return _edit(r, "metadata", lambda m: m.pop("seed"))


def _types_as_string(r):
    return _retyped(r, 1, "limit", "2")


def _types_enum(r):
    return _retyped(r, 1, "status", "pending")


def _types_unknown_argument(r):
    return _retyped(r, 0, "region", "EU")


def _types_missing_required(r):
    return _retyped(r, 1, "status", None)


def _types_array_items(r):
    return _retyped(r, 2, "tags", [1, 2])


def _retyped(record: dict[str, Any], index: int, key: str, value: Any) -> dict[str, Any]:
    """The record rebuilt (trace re-executed) with one argument changed or removed (``None``)."""
    calls = list(VALID_CALLS)
    name, arguments = calls[index]

    def changed(out, arguments=arguments):
        args = dict(arguments(out) if callable(arguments) else arguments)
        if value is None:
            args.pop(key)
        else:
            args[key] = value
        return args

    calls[index] = (name, changed)
    query = VALID_QUERY + (f" Note: {value}." if isinstance(value, str) else " Tag it 1 and 2." if value else "")
    return build_record(query, calls)


def _trace_tampered_output(r):
    def change(turns):
        turns[5]["content"] = json.dumps({"cancelled": True, "refund_id": "RF-11111"})

    return _edit(r, "expected_responses", change)


def _trace_wrong_id(r):
    return _edit(r, "expected_responses", lambda turns: turns[5].update(tool_call_id="step9"))


def _trace_duplicate_id(r):
    def change(turns):
        call = json.loads(turns[4]["tool_calls"])
        call[0]["id"] = "step1"
        turns[4]["tool_calls"] = json.dumps(call)
        turns[5]["tool_call_id"] = "step1"

    return _edit(r, "expected_responses", change)


def _trace_wrong_name(r):
    return _edit(r, "expected_responses", lambda turns: turns[5].update(name="lookup_client"))


def _sufficiency_unstated_email(r):
    return build_record(VALID_QUERY.replace("ana.silva@example.com", "Ana Silva"), VALID_CALLS)


def _sufficiency_unstated_number(r):
    return build_record(VALID_QUERY.replace(" 2 most recent", " most recent"), VALID_CALLS)


def _sufficiency_invented_reason(r):
    calls = list(VALID_CALLS)
    calls[2] = ("cancel_order", lambda out: {"order_id": out[1]["orders"][0], "reason": "duplicate payment detected"})
    return build_record(VALID_QUERY.replace(" because it was 'ordered by mistake'", ""), calls)


def _grounding_unused_value(r):
    return build_record(VALID_QUERY + " Her loyalty number is LN-40417.", VALID_CALLS)


def _grounding_dangling_output(r):
    calls = list(VALID_CALLS)
    calls[2] = ("cancel_order", {"order_id": "ORD-55120", "reason": "ordered by mistake", "notify_customer": True})
    return build_record(VALID_QUERY.replace("the first one", "order ORD-55120"), calls)


def _naturalness_parameter_name(r):
    return build_record(VALID_QUERY.replace("and notify the customer", "and set notify_customer"), VALID_CALLS)


def _naturalness_json(r):
    return build_record(VALID_QUERY.replace("list her 2", "list {her} 2"), VALID_CALLS)


def _naturalness_key_value(r):
    return build_record(VALID_QUERY.replace("her 2 most recent", "limit=2 of her most recent"), VALID_CALLS)


BROKEN = {
    "schema_validity": [
        _schema_required_unknown,
        _schema_unknown_type,
        _schema_duplicate_tool,
        _schema_bad_enum,
        _schema_missing_field,
        _schema_half_layout,
        _schema_bad_dag,
        _schema_metadata,
    ],
    "argument_types": [
        _types_as_string,
        _types_enum,
        _types_unknown_argument,
        _types_missing_required,
        _types_array_items,
    ],
    "trace_consistency": [_trace_tampered_output, _trace_wrong_id, _trace_duplicate_id, _trace_wrong_name],
    "argument_sufficiency": [_sufficiency_unstated_email, _sufficiency_unstated_number, _sufficiency_invented_reason],
    "grounding": [_grounding_unused_value, _grounding_dangling_output],
    "query_naturalness": [_naturalness_parameter_name, _naturalness_json, _naturalness_key_value],
}
CASES = [(gate, breaker) for gate, breakers in BROKEN.items() for breaker in breakers]


@pytest.mark.parametrize(("gate", "breaker"), CASES, ids=[b.__name__.lstrip("_") for _, b in CASES])
def test_a_record_built_to_fail_a_gate_fails_that_gate_only(gate, breaker):
    broken = breaker(valid_record())
    failed = failed_gates(broken, stand_in_execute)
    assert failed == [gate], {r.name: r.detail for r in run_gates(broken, stand_in_execute) if r.passed is False}
    detail = next(r.detail for r in run_gates(broken, stand_in_execute) if r.name == gate)
    assert detail  # the reason is named
    # the decoded form of the same record gets the same verdict
    if all(isinstance(broken.get(c), str) for c in ("available_tools", "expected_responses", "metadata")):
        try:
            decoded = _decoded(broken)
        except (KeyError, TypeError, json.JSONDecodeError):
            return
        assert failed_gates(decoded, stand_in_execute) == [gate]


def test_the_details_say_what_is_wrong():
    record = valid_record()
    assert "warehouse" in run_gates(_schema_required_unknown(record))[0].detail
    types_detail = run_gates(_types_as_string(record))[1].detail
    assert "list_orders).limit is str" in types_detail and "declared integer" in types_detail
    tampered = trace_consistency(_trace_tampered_output(record), executor=stand_in_execute)
    assert "call 3 (cancel_order)" in tampered.detail and "RF-11111" in tampered.detail
    assert "LN-40417" in grounding(_grounding_unused_value(record)).detail
    assert "call 2 (list_orders): no later call uses its output" in grounding(_grounding_dangling_output(record)).detail


def test_structure_failures_fail_even_without_an_executor():
    assert trace_consistency(_trace_wrong_id(valid_record())).status == "fail"
    assert trace_consistency(_trace_tampered_output(valid_record())).status == "skipped"


def test_an_executor_that_raises_fails_the_gate_with_its_message():
    def broken_executor(tool, arguments):
        raise RuntimeError("no implementation")

    result = trace_consistency(valid_record(), executor=broken_executor)
    assert result.status == "fail" and "no implementation" in result.detail


def test_value_spellings_count_as_stated():
    """Number words, separators and written dates are statements of the value (sufficiency and grounding)."""
    words = build_record(VALID_QUERY.replace(" 2 most", " two most"), VALID_CALLS)
    assert failed_gates(words, stand_in_execute) == []


def test_the_value_rules_read_the_usual_spellings():
    from tooldiag.suites.judgebench.construct.gate_values import candidate_values, dates_in, numbers_in

    assert {12500.0, 642.3, 15.0, 0.15, 25.0, 12.0, 1500.0} <= set(
        numbers_in("$12,500 and 642.30, 15%, twenty-five, a dozen, 1.5k")
    )
    assert dates_in("on November 18, 2025, 3rd of May 2024 and 2025-10-08T06:00") == {
        "2025-11-18",
        "2024-05-03",
        "2025-10-08T06:00",
    }
    kinds = {
        (c.kind, c.text) for c in candidate_values("Email li@example.com about E-204 and 'gift wrap' for 3 items.")
    }
    assert kinds == {("email", "li@example.com"), ("id", "E-204"), ("quoted", "gift wrap"), ("number", "3")}
    assert candidate_values("the 3rd slot") == []


def test_topology_sinks_are_allowed_where_the_topology_ends():
    """In fan_out the parallel branches may all be sinks; in linear the same shape dangles."""
    query = "Find the customer with email ana.silva@example.com, then list her open orders and her cancelled orders."
    calls: list[tuple[str, Any]] = [
        ("lookup_customer", {"email": "ana.silva@example.com"}),
        ("list_orders", lambda out: {"customer_id": out[0]["customer_id"], "status": "open"}),
        ("list_orders", lambda out: {"customer_id": out[0]["customer_id"], "status": "cancelled"}),
    ]
    assert failed_gates(build_record(query, calls, dag_type="fan_out"), stand_in_execute) == []
    assert failed_gates(build_record(query, calls, dag_type="loop_like"), stand_in_execute) == []
    assert failed_gates(build_record(query, calls, dag_type="linear"), stand_in_execute) == ["grounding"]
    assert failed_gates(build_record(query, calls, dag_type="optional_enrichment"), stand_in_execute) == []


# ---------------------------------------------------------------------------- the gate report


def test_the_report_counts_fails_regenerations_and_topologies_from_simulated_attempts():
    attempts = [
        ("linear", 0, ["grounding"]),
        ("linear", 1, []),
        ("fan_out", 0, []),
        ("fan_in", 0, ["argument_types", "grounding"]),
        ("fan_in", 1, ["grounding"]),
        ("fan_in", 2, ["grounding"]),
        ("linear", 0, []),
    ]
    report = GateReport.from_attempts(attempts)
    o = report.overall
    assert (o.records, o.attempts) == (4, 7)
    assert (o.accepted_first_try, o.accepted_after_regeneration, o.rejected) == (2, 1, 1)
    assert o.gates["grounding"].as_dict() == {"passed": 3, "failed": 4, "regenerated": 3, "skipped": 0}
    assert o.gates["argument_types"].as_dict() == {"passed": 6, "failed": 1, "regenerated": 1, "skipped": 0}
    assert o.gates["schema_validity"].passed == 7
    fan_in = report.by_topology["fan_in"]
    assert (fan_in.records, fan_in.attempts, fan_in.rejected) == (1, 3, 1)
    assert fan_in.gates["grounding"].as_dict() == {"passed": 0, "failed": 3, "regenerated": 2, "skipped": 0}
    linear = report.by_topology["linear"]
    assert (linear.records, linear.accepted_first_try, linear.accepted_after_regeneration) == (2, 1, 1)
    assert linear.gates["grounding"].regenerated == 1
    assert list(report.by_topology) == ["fan_in", "fan_out", "linear"]
    skipped = GateReport.from_attempts(attempts, skipped=["trace_consistency"]).overall.gates["trace_consistency"]
    assert (skipped.passed, skipped.skipped) == (0, 7)
    with pytest.raises(ValueError, match="expected 0 or 1"):
        GateReport.from_attempts([("linear", 0, []), ("linear", 2, [])])


def test_the_report_counts_each_broken_record_then_its_regeneration(tmp_path):
    """Generator-shaped: each broken record is attempt 0, a valid regeneration attempt 1."""
    attempts = []
    for _gate, breaker in CASES:
        broken = breaker(valid_record())
        dag = "linear" if broken.get("dag_type") == "tree" else broken.get("dag_type", "linear")
        attempts.append((dag, 0, failed_gates(broken, stand_in_execute)))
        attempts.append((dag, 1, failed_gates(valid_record(), stand_in_execute)))
    report = GateReport.from_attempts(attempts)
    for gate, breakers in BROKEN.items():
        counts = report.overall.gates[gate]
        assert counts.failed == len(breakers) and counts.regenerated == len(breakers), gate
    assert report.overall.accepted_after_regeneration == len(CASES) and report.overall.rejected == 0
    assert report.by_topology["linear"].gates["grounding"].failed == 2
    json_path, md_path = write_gate_report(report, tmp_path / "records.jsonl")
    assert (json_path.name, md_path.name) == ("records.gates.json", "records.gates.md")
    data = json.loads(json_path.read_text())
    assert data["overall"]["gates"]["trace_consistency"]["failed"] == len(BROKEN["trace_consistency"])
    assert data["by_topology"]["linear"]["records"] == len(CASES)
    assert "| grounding | " in md_path.read_text()
    assert json_path.read_text() == report.to_json()  # byte-identical on rewrite
    assert report_paths("out/set.v2.jsonl")[0].name == "set.v2.gates.json"


# ---------------------------------------------------------------------------- the built-in records

#: Built-in records whose reference plans have a call whose output no later argument uses (the check informs a
#: decision, e.g. a credit score before an approval, instead of feeding a value): grounding's dangling-output rule.
BUILTIN_DANGLING = {
    "diamond_logistics_reroute_and_tell",
    "fan_in_hr_leave_request",
    "linear_finance_fx_invoice",
    "fan_in_finance_credit_check_payment",
    "diamond_clinic_mri_booking",
    "linear_cloud_latency_rollback",
    "fan_in_cloud_scale_within_budget",
    "loop_like_cloud_stepwise_scale",
    "diamond_retail_checkout",
    "linear_energy_heatwave_dispatch",
    "diamond_energy_transformer_check",
    "optional_enrichment_energy_emissions_alert",
    "fan_in_travel_policy_booking",
    "linear_factory_batch_hold",
    "diamond_factory_bearing_replacement",
    "diamond_support_refund_and_close",
    "linear_facilities_hot_floor",
    "fan_in_facilities_offsite_room",
    "optional_enrichment_facilities_energy_setback",
}


def test_the_builtin_records_pass_every_gate_but_the_documented_dangling_outputs():
    from tooldiag.suites.judgebench.loaders import _builtin_rows

    rows = _builtin_rows()
    assert len(rows) == len(load_records("builtin")) == 36
    dangling = set()
    for row in rows:
        results = {r.name: r for r in run_gates(row)}
        assert results["trace_consistency"].status == "skipped", row["id"]
        for name in ("schema_validity", "argument_types", "argument_sufficiency", "query_naturalness"):
            assert results[name].status == "pass", (row["id"], name, results[name].detail)
        if results["grounding"].passed is False:
            dangling.add(row["id"])
            parts = results["grounding"].detail.split("; ")
            assert all("no later call uses its output" in p for p in parts), results["grounding"].detail
    assert dangling == BUILTIN_DANGLING


# ---------------------------------------------------------------------------- the gates command


def _write(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_gates_command_passes_a_good_file_and_writes_the_report(tmp_path, capsys):
    records = _write(tmp_path / "good.jsonl", [valid_record(), _decoded(valid_record())])
    main(["judgebench", "gates", records, "--out", str(tmp_path / "report.json")])
    out = capsys.readouterr().out
    assert "2 records, 2 attempts: 2 accepted at the first try" in out
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["overall"]["rejected"] == 0 and data["failures"] == []
    assert (tmp_path / "report.md").read_text().startswith("# Quality gates")


def test_gates_command_exits_1_and_names_the_failing_record(tmp_path, capsys):
    bad = _naturalness_key_value(valid_record())
    records = _write(tmp_path / "mixed.jsonl", [valid_record(), bad])
    with pytest.raises(SystemExit) as exit_info:
        main(["judgebench", "gates", records])
    assert exit_info.value.code == 1
    out = capsys.readouterr().out
    assert f"`{bad['id']}` (linear) query_naturalness: has code syntax (key=value)" in out


def test_gates_command_reexecutes_generated_records_with_their_domain(tmp_path, capsys):
    """A generated record is re-run with its domain's tools (metadata.domain): every output reproduced,
    and a tampered output caught."""
    import json

    from tooldiag.suites.judgebench.construct.generate import generate_records

    records = generate_records(6, seed=11).records
    main(["judgebench", "gates", _write(tmp_path / "fine.jsonl", records)])
    assert "| trace_consistency | 6 | 0 | 0 | 0 |" in capsys.readouterr().out
    tampered = dict(records[0])
    turns = json.loads(tampered["expected_responses"])
    tool_turn = next(t for t in turns if t["role"] == "tool")
    output = json.loads(tool_turn["content"])
    key = next(iter(output))
    output[key] = "TAMPERED-1"
    tool_turn["content"] = json.dumps(output)
    tampered["expected_responses"] = json.dumps(turns)
    with pytest.raises(SystemExit) as exit_info:
        main(["judgebench", "gates", _write(tmp_path / "tampered.jsonl", [tampered])])
    assert exit_info.value.code == 1
    assert "trace_consistency: call 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ('{"id": "ex1", "expected": [], "predicted": []}\n', "is not an AgentJudgeBench records file: row 1 has no"),
        ("not json\n", "is not valid JSON"),
        ("", "holds no records"),
    ],
    ids=["missing", "other-schema", "not-json", "empty"],
)
def test_gates_command_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "in.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["judgebench", "gates", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1


def test_front_door_gates_function(tmp_path):
    import tooldiag

    records = _write(tmp_path / "one.jsonl", [valid_record()])
    report = tooldiag.judgebench_gates(records, executor=stand_in_execute)
    assert report.failed_records == 0 and report.overall.gates["trace_consistency"].passed == 1
