"""The record generator: determinism, topology by re-derivation, shares, execution, queries, errors."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

import tooldiag
from tests.support.fake_openai import FakeOpenAIServer, RecordedRequest, Reply
from tooldiag.cli.main import main
from tooldiag.errors import UserError
from tooldiag.models import ModelOptions
from tooldiag.suites.judgebench.construct.domains import load_domains
from tooldiag.suites.judgebench.construct.execute import execute
from tooldiag.suites.judgebench.construct.generate import (
    PAPER_FREQUENCIES,
    _assign,
    allocate,
    generate_records,
    record_line,
)
from tooldiag.suites.judgebench.construct.topology import (
    SHAPES,
    TOPOLOGIES,
    calls_with_outputs,
    classify,
    dependency_edges,
    derive_topology,
    shape_edges,
    strings_in,
)
from tooldiag.suites.judgebench.loaders import load_records
from tooldiag.suites.judgebench.records import JudgeBenchRecord


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return generate_records(400, 11).records


def _trace(*calls: tuple[str, dict, dict]) -> list[dict]:
    messages = []
    for k, (name, args, output) in enumerate(calls, start=1):
        call = {"function": {"name": name, "arguments": json.dumps(args)}, "type": "function", "id": f"step{k}"}
        messages.append({"role": "assistant", "content": "", "tool_calls": json.dumps([call])})
        messages.append({"role": "tool", "content": json.dumps(output), "tool_call_id": f"step{k}", "name": name})
    return messages


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    paths = [tmp_path / f"{i}.jsonl" for i in range(3)]
    for path, seed in zip(paths, (7, 7, 8), strict=True):
        tooldiag.judgebench_generate(path, 60, seed)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
    assert len(paths[0].read_text("utf-8").splitlines()) == 60


def test_topology_rederived_from_the_trace_alone_equals_dag_type(records):
    assert len(records) == 400
    assert {r["dag_type"] for r in records} == set(TOPOLOGIES)
    for record in records:
        assert derive_topology(record["expected_responses"]) == record["dag_type"], record["id"]
        calls = calls_with_outputs(record["expected_responses"])
        edges = {(i + 1, j + 1) for i, j in dependency_edges(calls)}
        assert edges == {tuple(e) for e in json.loads(record["metadata"])["edges"]}


def test_shares_within_two_points_for_n_1000():
    result = generate_records(1000, 3)
    shares = Counter(r["dag_type"] for r in result.records)
    for topology, wanted in PAPER_FREQUENCIES.items():
        assert abs(shares[topology] / 1000 - wanted) <= 0.02, topology
    for n in range(100, 1001, 37):  # the allocation itself, for many n
        counts = allocate(n, PAPER_FREQUENCIES)
        assert sum(counts.values()) == n
        assert all(abs(counts[t] / n - f) <= 0.02 for t, f in PAPER_FREQUENCIES.items())


def test_records_load_unchanged_and_have_the_released_fields(records, tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text("".join(record_line(r) + "\n" for r in records[:50]), encoding="utf-8")
    loaded = load_records(path)
    assert [r.id for r in loaded] == [r["id"] for r in records[:50]]
    for row in records:
        record = JudgeBenchRecord.model_validate(row)
        assert len(record.id) == 32 and int(record.id, 16) >= 0
        assert 2 <= len(record.expected_calls()) <= 5
        assert 8 <= len(record.available_tools) <= 19
        assert {c["name"] for c in record.expected_calls()} <= set(record.tool_names())
        metadata = json.loads(row["metadata"])
        for key in ("source_id", "user_utterance", "bfcl_type", "generation_type", "tool_call_eval_result"):
            assert key in metadata
        assert metadata["all_tool_calls_success"] is True and metadata["domain"] in load_domains()
        for tool in record.available_tools:
            params = tool["function"]["parameters"]
            assert params["type"] == "dict" and len(params["properties"]) <= 19
            assert not any("say" in spec or "kind" in spec for spec in params["properties"].values())
    calls = [len(JudgeBenchRecord.model_validate(r).expected_calls()) for r in records]
    assert 3.0 <= sum(calls) / len(calls) <= 3.6
    used = [
        len({c["name"] for c in json.loads(r["expected_tool_calls"])}) / len(json.loads(r["tools"])) for r in records
    ]
    assert 0.2 <= sum(used) / len(used) <= 0.3


def test_re_executing_every_call_reproduces_its_recorded_output(records):
    domains = load_domains()
    for record in records:
        domain = domains[json.loads(record["metadata"])["domain"]]
        for call in calls_with_outputs(record["expected_responses"]):
            assert execute(domain.tool(call.name).schema(), call.arguments, domain.pools) == call.output


def test_every_argument_value_is_in_the_query_or_an_earlier_output(records):
    def leaves(value):
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]
        if isinstance(value, list):
            return [x for v in value for x in leaves(v)]
        return [value]

    for record in records:
        query = record["user_message"]
        assert "{" not in query and "_id" not in query and "null" not in query
        produced: set[str] = set()
        for call in calls_with_outputs(record["expected_responses"]):
            for value in leaves(call.arguments):
                if isinstance(value, bool):
                    continue
                text = value if isinstance(value, str) else json.dumps(value)
                assert text in produced or text in query, (record["id"], call.name, value, query)
            produced |= set(strings_in(call.output))


def test_optional_enrichment_condition_holds_in_the_trace(records):
    for record in (r for r in records if r["dag_type"] == "optional_enrichment"):
        condition = json.loads(record["metadata"])["condition"]
        calls = calls_with_outputs(record["expected_responses"])
        assert calls[0].output[condition["field"]] is condition["equals"]
        assert condition["text"] in record["user_message"]
        consumer = calls[int(condition["consumer_step"][4:]) - 1]
        assert consumer.arguments[condition["argument"]] == calls[1].output[condition["argument"]]


def test_every_shape_classifies_back_and_fits_every_domain():
    for topology, sizes in SHAPES.items():
        for n, shapes in sizes.items():
            for parents in shapes:
                assert classify(n, shape_edges(parents)) == topology, (topology, parents)
                for domain in load_domains().values():
                    assert _assign(domain, parents, random.Random(0), topology) is not None, (domain.key, parents)


def test_classification_of_hand_built_traces():
    linear = _trace(("a", {"q": "x"}, {"id": "A-1", "n": 2}), ("b", {"id": "A-1", "n": 2}, {"k": "B-1"}))
    assert derive_topology(linear) == "linear"
    assert derive_topology(json.dumps(linear)) == "linear"
    # equal numbers are chance, not data flow: no edge, so no topology
    numbers = _trace(("a", {"q": "x"}, {"n": 3}), ("b", {"n": 3}, {}))
    assert derive_topology(numbers) == "unclassified"
    fan_in = _trace(("a", {}, {"x": "X-1"}), ("b", {}, {"y": "Y-1"}), ("c", {"x": "X-1", "y": "Y-1"}, {}))
    assert derive_topology(fan_in) == "fan_in"
    diamond = _trace(
        ("s", {}, {"x": "X-1"}), ("a", {"x": "X-1"}, {"a": "A-1"}), ("b", {"x": "X-1"}, {"b": "B-1"}),
        ("k", {"a": "A-1", "b": "B-1"}, {}),
    )  # fmt: skip
    assert derive_topology(diamond) == "diamond"
    loop = _trace(("l", {}, {"ids": ["I-1", "I-2"]}), ("t", {"id": "I-1"}, {}), ("t", {"id": "I-2"}, {}))
    assert derive_topology(loop) == "loop_like"
    triangle = _trace(("s", {}, {"x": "X-1"}), ("e", {"x": "X-1"}, {"c": "C-1"}), ("f", {"x": "X-1", "c": "C-1"}, {}))
    assert derive_topology(triangle) == "optional_enrichment"


def test_execute_validates_arguments_and_is_deterministic():
    tool = load_domains()["ecommerce_orders"].core["primary"].schema()
    good = {"customer_id": "CUS-12345", "amount": 12.5}
    first = execute(tool, good)
    assert first == execute(tool, dict(reversed(list(good.items()))))
    assert first["credit_id"].startswith("CRD-") and isinstance(first["confirmed"], bool)
    assert execute(tool, {**good, "amount": 99.99}) != first
    assert execute(tool, {**good, "colour": "red"})["error_type"] == "unknown_argument"
    assert execute(tool, {"amount": 3.0})["error_type"] == "missing_argument"
    assert execute(tool, {**good, "amount": "12"})["error_type"] == "wrong_type"
    assert execute(tool, {**good, "amount": True})["error_type"] == "wrong_type"
    assert execute(tool, "not an object")["error_type"] == "invalid_arguments"
    config = load_domains()["ecommerce_orders"].core["config"].schema()
    bad_object = {"customer_id": "CUS-1", "shipping_address": {"street": "1 Road"}}
    assert "city" in execute(config, bad_object)["error"]
    assert execute(config, {"customer_id": "CUS-1", "default_shipping": "drone"})["error_type"] == "wrong_type"


def test_domains_have_the_schema_variety_the_issue_asks_for():
    domains = load_domains()
    assert len(domains) == 15
    for domain in domains.values():
        tools = domain.all_tools()
        assert len(tools) >= 19
        counts = [len(t.params) for t in tools]
        assert min(counts) == 0 and max(counts) >= 10
        types = {spec["type"] for t in tools for spec in t.params.values()} | {
            "enum" for t in tools for spec in t.params.values() if "enum" in spec
        }
        assert types >= {"string", "integer", "number", "boolean", "enum", "array", "object"}, domain.key
        assert any(d.distractor_of for d in domain.distractors)


def test_gates_regenerate_and_every_attempt_is_logged():
    seen: Counter = Counter()

    def gates(record: dict) -> list[str]:
        index = json.loads(record["metadata"])["index"]
        seen[index] += 1
        if index == 1:
            return ["naturalness"]
        return ["grounding"] if index == 0 and seen[index] == 1 else []

    result = generate_records(4, 5, gates=gates, max_attempts=3)
    assert result.dropped == [1] and len(result.records) == 3
    assert [(a.index, a.attempt, a.failures) for a in result.attempts][:5] == [
        (0, 0, ("grounding",)),
        (0, 1, ()),
        (1, 0, ("naturalness",)),
        (1, 1, ("naturalness",)),
        (1, 2, ("naturalness",)),
    ]
    assert json.loads(result.records[0]["metadata"])["attempt"] == 1
    # the other records do not move when one is regenerated
    plain = generate_records(4, 5).records
    assert result.records[1:] == [plain[2], plain[3]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domains", "it_service_desk,moon_base"], "unknown domain: moon_base"),
        (["--topologies", "star"], "unknown topology: star"),
        (["--tools-per-record", "1", "--calls", "3"], "--tools-per-record 1-1 is below --calls 3-3"),
        (["--calls", "5-2"], "minimum is above the maximum"),
        (["--calls", "1-3"], "outside 2-5"),
        (["--calls", "2-6"], "outside 2-5"),
        (["--tools-per-record", "19-8"], "minimum is above the maximum"),
        (["--tools-per-record", "8-90"], "have only"),
        (["--calls", "2", "--topologies", "diamond,linear"], "diamond needs 4-5"),
        (["--calls", "two"], "--calls must be N or MIN-MAX"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["judgebench", "generate", "--n", "5", "--out", str(tmp_path / "r.jsonl"), "-q", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "fix:" in err
    assert not (tmp_path / "r.jsonl").exists()


def test_cli_generate_then_predict_judge_analyze(tmp_path, capsys):
    out = tmp_path / "gen.jsonl"
    main(["judgebench", "generate", "--n", "12", "--seed", "4", "--domains", "banking,facilities", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "12 records" in printed and "fan_in" in printed
    domains = {json.loads(json.loads(line)["metadata"])["domain"] for line in out.read_text().splitlines()}
    assert domains == {"banking", "facilities"}
    run = str(tmp_path / "run")
    main(["judgebench", "predict", "-g", "ref/jb-perturb", "--run-dir", run, "--records", str(out), "-q",
          "--difficulties", "easy"])  # fmt: skip
    main(["judgebench", "judge", "-j", "ref/jb-exact", "--run-dir", run, "-q", "--conditions", "with_gt",
          "--difficulties", "easy"])  # fmt: skip
    main(["judgebench", "analyze", "--run-dir", run, "--resamples", "20", "--formats", "json"])
    assert "ref/jb-exact" in capsys.readouterr().out


@pytest.fixture
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.usefixtures("_private_cache")
def test_llm_queries_against_the_fake_server(tmp_path):
    asked: list[str] = []

    def responder(request: RecordedRequest) -> Reply:
        draft = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
        asked.append(draft)
        if len(asked) % 3 == 0:  # drops every value: must be refused, the template kept
            return Reply.say("Could you sort out my request please?")
        return Reply.say("Hi there! " + draft + " Thanks a lot.")

    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0, concurrency=1)
        result = tooldiag.judgebench_generate(
            tmp_path / "q.jsonl", 9, 2, llm_queries="openai/fake-writer", options=options
        )
        system = server.requests[0].body["messages"][0]["content"]
    assert len(asked) == 9 and "no parameter names" in system
    sources = Counter(json.loads(r["metadata"])["query_source"] for r in result.records)
    assert sources == {"llm:openai/fake-writer": 6, "template": 3}
    template = generate_records(9, 2).records
    for record, plain in zip(result.records, template, strict=True):
        metadata = json.loads(record["metadata"])
        if metadata["query_source"] == "template":
            assert record["user_message"] == plain["user_message"]
        else:
            assert record["user_message"] == "Hi there! " + plain["user_message"] + " Thanks a lot."
            assert (
                metadata["template_query"] == plain["user_message"] == json.loads(plain["metadata"])["user_utterance"]
            )
        assert derive_topology(record["expected_responses"]) == record["dag_type"]
    assert [r.id for r in load_records(tmp_path / "q.jsonl")] == [r["id"] for r in template]


@pytest.mark.usefixtures("_private_cache")
def test_llm_queries_keep_templates_when_the_model_fails(tmp_path):
    with FakeOpenAIServer(responder=lambda request: Reply.say("")) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        result = tooldiag.judgebench_generate(tmp_path / "q.jsonl", 4, 2, llm_queries="openai/x", options=options)
    plain = tooldiag.judgebench_generate(tmp_path / "plain.jsonl", 4, 2)  # the same gated records, template queries
    assert [r["user_message"] for r in result.records] == [r["user_message"] for r in plain.records]
    with pytest.raises(UserError, match="unknown domain"):
        tooldiag.judgebench_generate(tmp_path / "never.jsonl", 4, 2, domains=["nowhere"], llm_queries="openai/x")


def test_generate_gates_every_record_by_default_and_writes_the_report(tmp_path):
    """The command's default: the six gates on every record, failures regenerated, the report beside the file."""
    import json as _json

    from tooldiag.cli.main import main as cli
    from tooldiag.suites.judgebench.construct.gate_check import generated_record_gates

    out = tmp_path / "records.jsonl"
    cli(["judgebench", "generate", "--n", "150", "--seed", "4", "--out", str(out), "--quiet"])
    rows = [_json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 150 and all(generated_record_gates(row) == [] for row in rows)
    report = _json.loads((tmp_path / "records.gates.json").read_text(encoding="utf-8"))
    assert report["overall"]["records"] == 150
    assert (tmp_path / "records.gates.md").read_text(encoding="utf-8").startswith("# Quality gates")


@pytest.mark.usefixtures("_private_cache")
def test_generated_records_through_predict_judge_analyze_over_the_openai_provider(tmp_path):
    """Generated, rewritten records through the real OpenAI-compatible provider against a local fake server."""
    from tooldiag.suites.judgebench.loaders import load_records

    out = tmp_path / "gen.jsonl"
    tooldiag.judgebench_generate(out, 5, 9)
    rewritten = tmp_path / "rw.jsonl"
    tooldiag.judgebench_rewrite(out, "ref/rewrite", rewritten)
    records = load_records(rewritten)
    plans = {r.query(d): r.expected_calls() for r in records for d in ("easy", "hard")}
    metrics = (
        "tool_selection_accuracy",
        "parameter_structure_accuracy",
        "sequence_accuracy",
        "query_coverage_accuracy",
    )

    def responder(request: RecordedRequest) -> Reply:
        body = request.body
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if body.get("tools"):  # the generator: the reference plan as tool calls
            return Reply.call(*[(c["name"], c["arguments"]) for c in plans[user]])
        return Reply.say(json.dumps({k: {"accuracy": 1.0, "justification": "ok"} for k in metrics}))

    with FakeOpenAIServer(responder=responder) as server:
        options = ModelOptions(base_url=server.base_url, cache=False, max_retries=0)
        run = tmp_path / "run"
        predicted = tooldiag.judgebench_predict(
            run, ["openai/gen"], records=str(rewritten), difficulties=["easy", "hard"], options=options
        )
        judged = tooldiag.judgebench_judge(
            run, ["openai/judge"], conditions=["with_gt"], difficulties=["easy", "hard"], options=options
        )
    assert predicted[0].statuses["ok"] == 10
    assert judged[0].statuses[("with_gt", "ok")] == 10
    report = tooldiag.judgebench_analyze(run, resamples=20)
    cells = report.tables["cells"]
    assert set(cells["judge"]) == {"openai/judge"} and set(cells["difficulty"]) == {"easy", "hard"}
