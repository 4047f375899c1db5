"""Imported BFCL results grade exactly as ``bfcl evaluate`` grades them.

BFCL's side runs in a separate Python process (this file, run as a script). It imports
the real, unpatched ``multi_turn_checker`` (with BFCL's own ``eval``-based executor and
module-level instance cache) and BFCL's ``load_file``/``load_dataset_entry``/
``load_ground_truth_entry`` from ``bfcl_eval.utils`` (under a temporary
``BFCL_PROJECT_ROOT``). ``eval_checker/eval_runner.py``, ``eval_runner_helper.py``,
``model_handler/utils.py`` and the handler modules do not import without BFCL's
dependency list (tree_sitter, openai, overrides, ...), so the functions the multi-turn
evaluation needs are taken from BFCL's installed source files by name with ``ast`` and
compiled into the oracle's namespace: ``_subset_entries_by_model_ids``,
``_evaluate_single_multi_turn_entry``, ``multi_turn_runner``, ``save_eval_results``,
``convert_to_function_call``, ``default_decode_execute_prompting`` and its helpers, and
each handler's ``decode_execute``. This runs BFCL's own code on test-authored fixtures
only (``tests/data/bfcl_results``), never in the package. The oracle grades each
layout's folder sequentially under one model name, as ``multi_turn_runner`` does, and
writes BFCL's score files (line 1 accuracy, then the failed entries), which the tests
compare with the grades our import stores.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "bfcl_results"
LAYOUT_FOLDERS = ("api_fc", "json_list", "tool_call_tags", "fenced_python", "prompt")

#: layout -> (handler source file, class, methods, attributes): the handler whose
#: ``decode_execute`` BFCL uses for result files of that layout.
HANDLERS = {
    "api_fc": (
        "model_handler/api_inference/openai_response.py",
        "OpenAIResponsesHandler",
        ["decode_execute"],
        {"is_fc_model": True},
    ),
    "json_list": (
        "model_handler/local_inference/salesforce_llama.py",
        "SalesforceLlamaHandler",
        ["decode_execute"],
        {},
    ),
    "tool_call_tags": (
        "model_handler/local_inference/qwen_fc.py",
        "QwenFCHandler",
        ["decode_execute", "_extract_tool_calls"],
        {},
    ),
    "fenced_python": (
        "model_handler/local_inference/hammer.py",
        "HammerHandler",
        ["decode_execute", "xlam_json_to_python_tool_calls"],
        {},
    ),
    "prompt": ("model_handler/local_inference/base_oss_handler.py", "OSSHandler", ["decode_execute"], {}),
}
UTILS_FUNCTIONS = [
    "convert_to_function_call",
    "ast_parse",
    "resolve_ast_call",
    "resolve_ast_by_type",
    "default_decode_execute_prompting",
    "decoded_output_to_execution_list",
    "parse_nested_value",
]
RUNNER_FUNCTIONS = ["_subset_entries_by_model_ids", "_evaluate_single_multi_turn_entry", "multi_turn_runner"]

#: Step values decoded by both sides, beyond every step of the fixture files.
STEP_CORPUS = {
    "api_fc": [
        [{"cd": '{"folder": "a"}'}],
        {"cd": '{"folder": "a"}'},
        [{"cd": {"folder": "a"}}],
        [{"ls": "{}"}],
        [],
        "",
        "text",
        None,
        [{"cd": "not json"}],
        [{"cd": "[1, 2]"}],
        [{"cd": "null"}],
        [{"ls": None}],
        [{}],
        [{"cd": 5}],
        [{"a": '{"x": 1}', "b": '{"y": [1, 2.5, null, true, {"z": "caf\\u00e9"}]}'}],
        [{"__import__('os').system('echo hi')": "{}"}],
        [{"cd": '{"folder": "a"}'}, {"ls": '{"a": true}'}],
    ],
    "json_list": [
        '[{"name": "cd", "arguments": {"folder": "a"}}]',
        '{"name": "cd", "arguments": {"folder": "a"}}',
        '{"name": "cd", "arguments": {"folder": "a"}}; {"name": "ls", "arguments": {}}',
        "[]",
        "text",
        "",
        '[{"name": "cd"}]',
        '[{"name": "cd", "arguments": "x"}]',
        "[1]",
        '"str"',
        "null",
        "NaN",
        '[{"name": 5, "arguments": {"a": [1, {"b": null}]}}]',
        '{"name": "cd", "arguments": {}} ; garbage',
        '[{"arguments": {"x": 1}, "name": "f"}, {"name": "g", "arguments": {"y": NaN}}]',
        '```\n[{"name": "cd", "arguments": {}}]\n```',
        None,
    ],
    "tool_call_tags": [
        '<tool_call>\n{"name": "cd", "arguments": {"folder": "a"}}\n</tool_call>',
        'Sure.\n<tool_call>\n{"name": "cd", "arguments": {"folder": "a"}}\n</tool_call>\n<tool_call>\n{"name": '
        '"ls", "arguments": {}}\n</tool_call>\nDone.',
        '<tool_call>{"name": "cd", "arguments": {"folder": "a"}}</tool_call>',
        "<tool_call>\nnot json\n</tool_call>",
        "<tool_call>\n[1]\n</tool_call>",
        '<tool_call>\n{"name": "cd"}\n</tool_call>',
        '<tool_call>\n{"name": "cd", "arguments": "{\\"folder\\": \\"a\\"}"}\n</tool_call>',
        '<tool_call>\n{"name": "cd", "arguments": "{bad"}\n</tool_call>',
        '<tool_call>\n{"name": "cd", "arguments": [1]}\n</tool_call>',
        '<tool_call>\n{\n  "name": "cd",\n  "arguments": {"folder": "a"}\n}\n</tool_call>',
        "text",
        "",
        None,
    ],
    "fenced_python": [
        '```\n[{"name": "cd", "arguments": {"folder": "a"}}]\n```',
        "```\n[{'name': 'cd', 'arguments': {'folder': 'a'}}]\n```",
        '```json\n[{"name": "cd", "arguments": {"folder": "a"}}]\n```',
        '```\n{"tool_calls": [{"name": "cd", "arguments": {}}]}\n```',
        '```\n{"tool_calls": {"name": "cd", "arguments": {}}}\n```',
        '```\n["x", {"name": "cd"}]\n```',
        '```\n[{"arguments": {"a": 1}}]\n```',
        '```\n[{"name": "cd", "arguments": "x"}]\n```',
        "text",
        "",
        None,
        "```\n5\n```",
        '[{"name": "cd", "arguments": {"folder": "a"}}, {"name": "ls", "arguments": {"a": true}}]',
        "```\n[]\n```",
    ],
    "prompt": [
        "[cd(folder='a')]",
        "cd(folder='a')",
        "[cd(folder='a'), ls(a=True)]",
        "```\n[cd(folder='a')]\n```",
        "```python\n[cd(folder='a')]\n```",
        "'[cd(folder=\"a\")]'",
        "[cd('a')]",
        "[cd(folder=a)]",
        "[f(x=+5)]",
        "[f(x=-5)]",
        "[f(x=not True)]",
        "[f(x=~3)]",
        "[f(x=-'a')]",
        "[f(x=1+2)]",
        "[f(x=2**10)]",
        "[f(x=10/4)]",
        "[f(x=(1+2)*3.5)]",
        "[f(x=-(1+2))]",
        "[f(x=1/0)]",
        "[f(x=True + 1)]",
        "[f(x=(-2) ** 0.5)]",
        "[f(x=7 // 2 % 3)]",
        "[f(x=1 << 3 | 1)]",
        "[f(x=[1, 'a', None, True])]",
        "[f(x={'a': 1})]",
        "[f(x={})]",
        "[f(x={'a': {'b': 1}})]",
        "[f(x={'a': {}})]",
        "[f(x={'a': {'b': 1}, 'c': 2})]",
        "[f(x=(1, 2))]",
        "[f(x={1, 2})]",
        "[f(x=g(1))]",
        "[f(x=g(y=1))]",
        "[f(x=a[0])]",
        "[f(x=a.b)]",
        "[f(x=lambda: 1)]",
        "[f(x=...)]",
        "[f(x=1j)]",
        "[f(x=b'ab')]",
        "[a.b.c(x=1)]",
        "[a().b(x=1)]",
        "[f(**{'x': 1})]",
        "[f(x=1, **k)]",
        "[f(x=1), 'text']",
        "[]",
        "",
        "text",
        "I will call cd(folder='a')",
        "[f(x=1 if True else 2)]",
        "[f(x=f'{1}')]",
        "[f(x=1 < 2)]",
        "[f(x=-True)]",
        "[f(x=[a, b])]",
        "(f(x=1), g(y=2))",
        "[f(x=-1.5e3)]",
        "[f(x={'k': [1, {'m': 2}]})]",
        "[f(x=1)][0]",
        None,
    ],
}
#: Steps where BFCL ``eval``s a non-numeric binary operation and we refuse (documented).
EXPECTED_DIFFERENCES = {
    ("prompt", "[f(x='a' + 'b')]"),
    ("prompt", "[f(x=[1] * 2)]"),
    ("prompt", "[f(x=len('ab') + 1)]"),
}
for _layout, _step in EXPECTED_DIFFERENCES:
    STEP_CORPUS[_layout].append(_step)


# -- the oracle (runs in its own process) ----------------------------------------------
def _compile_functions(path: Path, names: list[str], namespace: dict, class_name: str | None = None) -> None:
    """Compile the named top-level (or class-level) function definitions of BFCL's source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    body = tree.body
    if class_name is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == class_name).body
    nodes = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in names]
    missing = set(names) - {n.name for n in nodes}
    assert not missing, f"{path} lacks {missing}"
    module = ast.Module(body=nodes, type_ignores=[])
    exec(compile(module, str(path), "exec"), namespace)  # BFCL's own source, not model output


def _oracle_namespace() -> tuple[dict, dict]:
    import bfcl_eval
    from bfcl_eval import utils as bfcl_utils
    from bfcl_eval.constants.enums import ReturnFormat
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

    package = Path(bfcl_eval.__file__).parent
    namespace = {k: v for k, v in vars(bfcl_utils).items() if not k.startswith("__")}
    namespace.update(
        __name__="bfcl_oracle",
        ast=ast,
        json=json,
        re=re,
        builtins=builtins,
        ReturnFormat=ReturnFormat,
        BaseHandler=object,
        multi_turn_checker=multi_turn_checker,
        is_empty_execute_response=is_empty_execute_response,
    )
    _compile_functions(package / "model_handler" / "utils.py", UTILS_FUNCTIONS, namespace)
    _compile_functions(package / "eval_checker" / "eval_runner.py", RUNNER_FUNCTIONS, namespace)
    _compile_functions(package / "eval_checker" / "eval_runner_helper.py", ["save_eval_results"], namespace)
    handlers = {}
    for layout, (source, class_name, methods, attributes) in HANDLERS.items():
        handler_ns = dict(namespace, override=lambda f: f, final=lambda f: f)
        _compile_functions(package / source, methods, handler_ns, class_name)
        cls = type(class_name, (), {m: handler_ns[m] for m in methods})
        handler = cls()
        for key, value in attributes.items():
            setattr(handler, key, value)
        handlers[layout] = handler
    return namespace, handlers


def oracle_main(spec_path: str, out_dir: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    namespace, handlers = _oracle_namespace()
    out = Path(out_dir)
    score_dir = out / "score"
    for run in spec["runs"]:
        handler = handlers[run["layout"]]
        model_name = f"oracle_{run['layout']}"  # one model name for the whole run, as bfcl evaluate
        for item in run["files"]:
            test_category = f"multi_turn_{item['category']}"
            model_result = namespace["load_file"](item["path"], sort_by_id=True)
            prompt = namespace["load_dataset_entry"](
                test_category, include_prereq=False, include_language_specific_hint=False
            )
            possible_answer = namespace["load_ground_truth_entry"](test_category)
            prompt, possible_answer = namespace["_subset_entries_by_model_ids"](
                model_result, prompt, possible_answer, allow_missing=True
            )
            namespace["multi_turn_runner"](
                handler, model_result, prompt, possible_answer, model_name, test_category, score_dir
            )
    decodes = []
    for layout, step in spec["steps"]:
        try:
            decodes.append({"ok": True, "calls": handlers[layout].decode_execute(step, has_tool_call_tag=False)})
        except Exception as exc:  # noqa: BLE001
            decodes.append({"ok": False, "error": type(exc).__name__})
    (out / "decodes.json").write_text(json.dumps(decodes))


if __name__ == "__main__":
    oracle_main(sys.argv[1], sys.argv[2])
    sys.exit(0)


# -- the tests -------------------------------------------------------------------------
import pytest  # noqa: E402

from tooldiag.store import RunStore  # noqa: E402
from tooldiag.suites.bfcl.importer import import_bfcl_results, plan_import  # noqa: E402
from tooldiag.suites.bfcl.layouts import LAYOUTS, UnsafeExpression  # noqa: E402


def _fixture_steps(plan) -> list[tuple[str, object]]:
    steps = []
    for result_file in plan.files:
        for entry in result_file.entries:
            result = entry.data["result"]
            for turn in result if isinstance(result, list) else []:
                steps.extend((result_file.layout, step) for step in turn)
    return steps


@pytest.fixture(scope="module")
def plans():
    return {layout: plan_import(FIXTURES / layout) for layout in LAYOUT_FOLDERS}


@pytest.fixture(scope="module")
def oracle(plans, tmp_path_factory):
    """BFCL's verdicts and decodes, from a separate process running BFCL's own code."""
    work = tmp_path_factory.mktemp("bfcl_oracle")
    steps = [[layout, step] for layout, items in STEP_CORPUS.items() for step in items]
    for plan in plans.values():
        steps.extend([layout, step] for layout, step in _fixture_steps(plan))
    spec = {
        "runs": [
            {"layout": layout, "files": [{"category": f.category, "path": str(f.path)} for f in plan.files]}
            for layout, plan in plans.items()
        ],
        "steps": steps,
    }
    (work / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, BFCL_PROJECT_ROOT=str(work / "bfcl_root"))
    (work / "bfcl_root").mkdir()
    proc = subprocess.run(
        [sys.executable, __file__, str(work / "spec.json"), str(work / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tempfile.gettempdir(),
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    verdicts: dict[str, dict[str, tuple[bool, str | None]]] = {}
    for layout, plan in plans.items():
        per_case = {}
        for f in plan.files:
            lines = (
                (
                    work
                    / "out"
                    / "score"
                    / f"oracle_{layout}"
                    / "multi_turn"
                    / f"BFCL_v4_multi_turn_{f.category}_score.json"
                )
                .read_text()
                .splitlines()
            )
            header = json.loads(lines[0])
            failed = {row["id"]: row["error"]["error_type"] for row in map(json.loads, lines[1:])}
            assert header["total_count"] == len(f.entries)
            assert header["correct_count"] == len(f.entries) - len(failed)
            for entry in f.entries:
                per_case[entry.case_id] = (entry.case_id not in failed, failed.get(entry.case_id))
        verdicts[layout] = per_case
    decodes = json.loads((work / "out" / "decodes.json").read_text())
    return verdicts, list(zip(steps, decodes))


@pytest.fixture(scope="module")
def ours(plans, tmp_path_factory):
    root = tmp_path_factory.mktemp("imports")
    grades = {}
    for layout in LAYOUT_FOLDERS:
        import_bfcl_results(FIXTURES / layout, f"model-{layout}", root / layout, plan=plans[layout])
        with RunStore.open(root / layout) as store:
            grades[layout] = {r.case_id: (r.passed, r.error_type) for r in store.iter_cases()}
    return grades


def test_layouts_are_detected(plans):
    for layout, plan in plans.items():
        assert {f.layout for f in plan.files} == {layout}, layout
        assert {f.category for f in plan.files} == {"base", "long_context", "miss_func", "miss_param"}


@pytest.mark.parametrize("layout", LAYOUT_FOLDERS)
def test_per_case_verdicts_equal_bfcl_score_files(layout, oracle, ours):
    verdicts, _ = oracle
    assert ours[layout] == verdicts[layout]


def test_fixtures_cover_passes_and_every_failure_type(oracle):
    verdicts, _ = oracle
    for layout, per_case in verdicts.items():
        kinds = {error for _, error in per_case.values()}
        assert None in kinds, f"{layout}: no passing case"
        assert {
            "multi_turn:inference_error",
            "multi_turn:force_terminated",
            "multi_turn:empty_turn_model_response",
            "multi_turn:instance_state_mismatch",
            "multi_turn:execution_response_mismatch",
        } <= kinds, (layout, kinds)
    # passes and failures in the long_context and miss_func categories too
    for category in ("long_context", "miss_func"):
        outcomes = {v[0] for per_case in verdicts.values() for cid, v in per_case.items() if f"_{category}_" in cid}
        assert outcomes == {True, False}, category


def test_every_step_decodes_as_bfcl_decodes_it(oracle):
    _, decodes = oracle
    mismatches = []
    compared = 0
    for (layout, step), theirs in decodes:
        try:
            mine = {"ok": True, "calls": LAYOUTS[layout].decode(step)}
        except Exception as exc:  # noqa: BLE001
            mine = {"ok": False, "error": type(exc).__name__, "exc": exc}
        compared += 1
        key = (layout, step if isinstance(step, str) else json.dumps(step))
        if key in EXPECTED_DIFFERENCES:
            assert theirs["ok"] and not mine["ok"] and isinstance(mine["exc"], UnsafeExpression), key
            continue
        if theirs["ok"] != mine["ok"] or (theirs["ok"] and theirs["calls"] != mine["calls"]):
            mismatches.append((layout, step, theirs, {k: v for k, v in mine.items() if k != "exc"}))
    assert compared > 400
    assert mismatches == []
