"""The llm scheme as a first-class classifier, over real HTTP: reports name the judge, its prompt
and how many labels fell back to the rules; a judge that is down costs seconds, never the run."""

import json
import socket
import time

import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply
from tooldiag.classify.llm import PROMPT_VERSION
from tooldiag.cli.main import main

#: Ground-truth-free cases of the BFCL multi-turn set, played by ref/halt (text halts reach the judge).
IDS = "multi_turn_base_1,multi_turn_miss_param_1"


def judge_answer(request):
    """The fake judge: 'refuse' for texts with "cannot", 'ask' for a '?', else 'other'."""
    message = request.body["messages"][-1]["content"].rsplit("<<<", 1)[1]
    label = "refuse" if "cannot" in message.lower() else "ask" if "?" in message else "other"
    return Reply.say(f'{{"action_class": "{label}"}}')


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLDIAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("TOOLDIAG_CLASSIFY_MODEL", raising=False)


@pytest.fixture
def judge():
    with FakeOpenAIServer(responder=judge_answer) as server:
        yield server


@pytest.fixture(scope="module")
def bfcl_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("runs") / "halt"
    main(["run", "bfcl", "--model", "ref/halt", "--ids", IDS, "--run-dir", str(run_dir), "-q"])
    return run_dir


def dead_port() -> int:
    """A local port with nothing listening (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LOG = [
    {
        "id": "c1",
        "gold_class": "refuse",
        "passed": True,
        "messages": [
            {"role": "user", "content": "Book me a flight to the moon."},
            {"role": "assistant", "content": "Sorry, I cannot book that: no such function."},
        ],
    },
    {
        "id": "c2",
        "gold_class": "ask",
        "passed": False,
        "messages": [
            {"role": "user", "content": "Move the file."},
            {"role": "assistant", "content": "Which folder should it go to?"},
            {"role": "user", "content": "tmp"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "mv", "arguments": "{}"}}]},
        ],
    },
]  # fmt: skip


def write_log(tmp_path, rows=LOG, extra_lines=()):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*(json.dumps(row) for row in rows), *extra_lines]) + "\n")
    return path


def judge_args(base_url):
    return ["--scheme", "llm", "--judge", "openai/fake", "--judge-base-url", base_url]


def test_bfcl_report_names_judge_prompt_and_fallbacks(bfcl_run, judge, tmp_path, capsys):
    judge.script(Reply.say("I think it is a refusal, probably"))  # one garbled answer: one fallback
    out = tmp_path / "report.json"
    # without the cache, so that the halts' repeated texts each reach the server
    main(
        [
            "report",
            str(bfcl_run),
            *judge_args(judge.base_url),
            "--no-judge-cache",
            "--format",
            "json",
            "--out",
            str(out),
        ]
    )
    run = json.loads(out.read_text())["runs"][0]
    assert set(run) == {
        "name", "overall_acc", "categories", "capability_counts", "classifier", "provenance", "usage", "cases",
    }  # fmt: skip
    judged = run["provenance"]["classifier"]
    assert (judged["scheme"], judged["judge"], judged["prompt_version"]) == ("llm", "openai/fake", PROMPT_VERSION)
    classifier = run["classifier"]
    assert classifier["scheme"] == "llm" and classifier["judge"] == "openai/fake"
    assert classifier["prompt"] == PROMPT_VERSION and classifier["fallbacks"] == 1
    assert classifier["text_emissions"] == judge.request_count > 0 and classifier["emissions"] > judge.request_count
    assert classifier["outside_languages"] == {} and classifier["judge_error"] is None
    assert "warning: 1 of" in capsys.readouterr().err

    main(["report", str(bfcl_run), *judge_args(judge.base_url)])
    md = capsys.readouterr().out
    line = next(line for line in md.splitlines() if line.startswith("Classifier: "))
    assert f"llm (judge openai/fake; prompt {PROMPT_VERSION})" in line and "0 fell back to the default rules" in line
    assert md.index("Gold action per category") < md.index(line) < md.index("## Case- vs turn-level GAR")


def test_rule_schemes_are_named_too(bfcl_run, tmp_path):
    out = tmp_path / "report.json"
    main(["report", str(bfcl_run), "--scheme", "paper", "--format", "json", "--out", str(out)])
    classifier = json.loads(out.read_text())["runs"][0]["classifier"]
    assert classifier["scheme"] == "paper" and classifier["judge"] is None and classifier["fallbacks"] == 0


def test_diagnose_with_a_judge_records_it(judge, tmp_path, capsys):
    log = write_log(tmp_path)
    main(["diagnose", str(log), *judge_args(judge.base_url), "--judge-concurrency", "2", "--format", "json"])
    captured = capsys.readouterr()
    run = json.loads(captured.out)["runs"][0]
    assert run["categories"]["refuse"]["gar"] == 100.0 and run["categories"]["ask"]["gar"] == 100.0
    assert run["classifier"]["judge"] == "openai/fake" and run["classifier"]["fallbacks"] == 0
    assert (run["classifier"]["emissions"], run["classifier"]["text_emissions"]) == (3, 2)
    assert judge.request_count == 2 and "warning" not in captured.err
    main(["diagnose", str(log), *judge_args(judge.base_url)])
    assert f"Classifier: llm (judge openai/fake; prompt {PROMPT_VERSION}): 3 emissions" in capsys.readouterr().out
    assert judge.request_count == 2  # the second run came from the response cache


def test_judge_down_falls_back_fast_and_says_so(bfcl_run, tmp_path, capsys):
    down = f"http://127.0.0.1:{dead_port()}/v1"
    log = write_log(tmp_path)
    started = time.perf_counter()
    main(["diagnose", str(log), *judge_args(down), "--format", "json"])
    elapsed = time.perf_counter() - started
    captured = capsys.readouterr()
    classifier = json.loads(captured.out)["runs"][0]["classifier"]
    assert classifier["fallbacks"] == 2 and "unreachable" in classifier["judge_error"]
    assert "warning: 2 of 2 text emissions fell back to the default rules" in captured.err
    assert elapsed < 6.0, f"a judge that is down took {elapsed:.1f} s"

    started = time.perf_counter()
    main(["report", str(bfcl_run), *judge_args(down)])
    elapsed = time.perf_counter() - started
    captured = capsys.readouterr()
    line = next(line for line in captured.out.splitlines() if line.startswith("Classifier: "))
    fallbacks = int(line.split(" fell back")[0].rsplit(" ", 1)[1])
    assert fallbacks > 0 and f"warning: {fallbacks} of" in captured.err
    assert elapsed < 6.0, f"a judge that is down took {elapsed:.1f} s"


def test_judge_timeout_reaches_the_request(judge, tmp_path, capsys):
    judge.script(Reply.stall(3.0, then=Reply.say('{"action_class": "ask"}')))
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"content": "Which folder?"}) + "\n")
    started = time.perf_counter()
    main(["classify", str(path), *judge_args(judge.base_url), "--judge-timeout", "0.3", "--judge-max-retries", "0"])
    captured = capsys.readouterr()
    assert time.perf_counter() - started < 2.5
    assert json.loads(captured.out)["action_class"] == "ask"  # the rules' label
    assert "1 fell back to the default rules" in captured.err and "no answer within 0.3 s" in captured.err


def test_classify_summary_line_counts_languages(tmp_path, capsys):
    path = tmp_path / "m.jsonl"
    rows = [{"content": "Какую папку вы хотите использовать для этого файла?"}, {"content": "Which folder?"}]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    main(["classify", str(path)])
    err = capsys.readouterr().err
    assert "classifier: default: 2 emissions (2 with text), 1 outside the supported languages (ru 1)" in err
    assert "warning: 1 of 2 text emissions (50.0%) are in languages without cue data (ru 1)" in err


def test_evaluate_the_llm_scheme_with_kappa(judge, tmp_path, capsys):
    rows = [
        ("I cannot do that.", "refuse"),
        ("Which file?", "ask"),
        ("Done.", "other"),
        ("Shall I delete it?", "confirm"),  # the fake judge says ask
    ]
    path = tmp_path / "labelled.jsonl"
    path.write_text("\n".join(json.dumps({"content": text, "label": label}) for text, label in rows) + "\n")
    main(["classify", str(path), "--evaluate", *judge_args(judge.base_url), "--format", "json"])
    (llm,) = json.loads(capsys.readouterr().out)["schemes"]
    assert llm["scheme"] == "llm" and llm["accuracy"] == 0.75
    # p_o = 3/4; p_e = (1*1 [refuse] + 1*2 [ask] + 1*1 [other]) / 16 = 1/4; kappa = (3/4 - 1/4) / (3/4) = 2/3
    assert llm["kappa"] == pytest.approx(2 / 3, abs=1e-4)
    assert llm["classifier"]["judge"] == "openai/fake" and llm["classifier"]["prompt"] == PROMPT_VERSION
    assert llm["confusion"]["confirm"]["ask"] == 1 and llm["classes"]["ask"]["precision"] == 0.5
