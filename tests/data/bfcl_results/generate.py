"""Write the BFCL result-file fixtures of the import tests (run once; output is committed).

    uv run python tests/data/bfcl_results/generate.py

One folder per layout, each holding result files for the four multi-turn categories,
in the shape ``bfcl generate`` writes them (JSONL, one case per line, ``result[turn][step]``
plus token counts, latency and an ``inference_log`` with tool results). Cases are
built from BFCL's ground truth by scenario: passing replays (one step or one call per
step, with undecodable junk steps and text replies), a wrong argument, a dropped call,
a text-only turn, a force-terminated entry (fewer turns), an inference error, and
layout-specific quirks. The equivalence test grades them with BFCL's own code and ours.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import random
from pathlib import Path

from tooldiag.suites.bfcl.data import load_category

HERE = Path(__file__).parent

#: layout -> (subfolder, file-name version)
FOLDERS = {
    "api_fc": ("multi_turn", "v4"),
    "json_list": ("", "v4"),
    "tool_call_tags": ("multi_turn", "v4"),
    "fenced_python": ("", "v3"),
    "prompt": ("multi_turn", "v4"),
}

SCENARIOS = {
    "base": [
        "pass_one_step",
        "pass_steps_junk",
        "wrong_arg",
        "drop_call",
        "empty_turn",
        "force_terminated",
        "inference_error",
        "quirks",
    ],
    "long_context": ["pass_steps_junk", "wrong_arg", "quirks"],
    "miss_func": ["pass_one_step", "overcall", "empty_turn", "quirks"],
    "miss_param": ["pass_steps_junk", "drop_call", "quirks"],
}


# -- ground-truth calls as (name, kwargs) -----------------------------------------------
def _method(case, name):
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    for class_name in case.involved_classes:
        cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)
        if hasattr(cls, name):
            return getattr(cls, name)
    raise KeyError(name)


def parse_call(case, text):
    node = ast.parse(text, mode="eval").body
    name = node.func.id
    kwargs = {}
    if node.args:
        params = [p for p in inspect.signature(_method(case, name)).parameters if p != "self"]
        for param, arg in zip(params, node.args):
            kwargs[param] = ast.literal_eval(arg)
    for kw in node.keywords:
        kwargs[kw.arg] = ast.literal_eval(kw.value)
    return name, kwargs


# -- one step in each layout -------------------------------------------------------------
def render(layout, calls, prose=""):
    if layout == "api_fc":
        return [{name: json.dumps(args)} for name, args in calls]
    if layout == "json_list":
        return json.dumps([{"name": name, "arguments": args} for name, args in calls])
    if layout == "tool_call_tags":
        blocks = "\n".join(
            f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>" for name, args in calls
        )
        return f"{prose}\n\n{blocks}" if prose else blocks
    if layout == "fenced_python":
        return "```\n" + json.dumps([{"name": name, "arguments": args} for name, args in calls]) + "\n```"
    if layout == "prompt":
        return (
            "[" + ", ".join(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})" for name, args in calls) + "]"
        )
    raise ValueError(layout)


JUNK = {
    "api_fc": [{"cd": '{"folder": '}],
    "json_list": '[{"name": "cd", "arguments": {"folder": "x"}',
    "tool_call_tags": 'Let me check.\n<tool_call>\n{"name": "ls", "arguments": {"a": true}\n</tool_call>',
    "fenced_python": "```\n[{'name': 'ls', 'arguments': {'a': True}}]\n```",
    "prompt": "I will list the files now: ls -a",
}


def quirk_steps(layout, case, calls):
    """Steps that exercise the layout's decoding quirks around the turn's real calls."""
    name, args = calls[0]
    if layout == "api_fc":
        first = {name: json.dumps(args)}  # a dict step, not a list
        rest = [{n: a} for n, a in calls[1:]]  # arguments as objects, not JSON text
        return [first, rest, "", None] if rest else [first, "", None]
    if layout == "json_list":
        single = json.dumps({"name": name, "arguments": args})  # one object, not a list
        rest = "; ".join(json.dumps({"name": n, "arguments": a}) for n, a in calls[1:])  # ;-separated
        return [single, rest, "[]"] if rest else [single, "[]"]
    if layout == "tool_call_tags":
        blocks = [
            "<think>\nThe user wants this.\n</think>\n<tool_call>\n"
            + json.dumps({"name": name, "arguments": json.dumps(args)})  # arguments as JSON text
            + "\n</tool_call>\nDone with the first part."
        ]
        if calls[1:]:
            blocks.append(render(layout, calls[1:]) + "\n<tool_call>\nnot json\n</tool_call>")
        blocks.append('<tool_call>\n"just a string"\n</tool_call>')  # non-object block: whole step raises
        return blocks
    if layout == "fenced_python":
        steps = ["```\n" + json.dumps({"tool_calls": [{"name": name, "arguments": args}]}) + "\n```"]
        if calls[1:]:
            steps.append(
                "```\n" + json.dumps([{"name": n, "arguments": a} for n, a in calls[1:]] + ["skip me"]) + "\n```"
            )
        steps.append("```json\n" + json.dumps([{"name": name, "arguments": args}]) + "\n```")  # 'json' tag: no call
        return steps
    if layout == "prompt":
        # Bare names become strings; +N becomes -N; arithmetic is computed; positional args dropped.
        def value(v):
            if isinstance(v, str) and v.isidentifier() and v not in ("True", "False", "None"):
                return v
            if isinstance(v, int) and not isinstance(v, bool) and v > 1:
                return f"{v - 1} + 1"
            return repr(v)

        first = f"[{name}({', '.join(f'{k}={value(v)}' for k, v in args.items())})"  # no closing bracket
        steps = [first]
        if calls[1:]:
            steps.append("```\n" + render(layout, calls[1:]) + "\n```")
        steps.append("[ls(a=lambda: 1)]")
        steps.append(f"{name}('positional')")
        return steps
    raise ValueError(layout)


# -- scenarios -------------------------------------------------------------------------
def text_reply(case, turn_index):
    if turn_index in case.missed_function or case.ground_truth[turn_index]:
        return "Done. Everything you asked for in this step is complete."
    if case.category == "miss_param":
        return "Could you tell me which value you would like me to use?"
    if case.category == "miss_func":
        return "I cannot do that: none of the available functions can perform this request."
    return "There is nothing to do for this request."


def build_result(layout, case, scenario, rng):
    gt = [[parse_call(case, c) for c in turn] for turn in case.ground_truth]
    nonempty = [i for i, t in enumerate(gt) if t]
    if scenario == "inference_error":
        return "Error during inference: Error code: 500 - {'message': 'upstream timeout'}"
    turns = []
    for i, calls in enumerate(gt):
        calls = [(n, dict(a)) for n, a in calls]
        reply = text_reply(case, i)
        if scenario == "wrong_arg" and i == nonempty[-1]:
            for _name, a in calls:
                key = next((k for k, v in a.items() if isinstance(v, str)), None)
                if key:
                    a[key] = a[key] + "_x"
                    break
        if scenario == "drop_call" and i == nonempty[-1]:
            calls = calls[:-1]
        if scenario == "empty_turn" and i == nonempty[0]:
            calls = []
        if scenario == "overcall" and not calls and i + 1 in case.missed_function:
            # call the held-out functions in the GT-empty turn, as a tool-specialised model does
            calls = [(n, dict(a)) for n, a in gt[i + 1]]
        if not calls:
            turns.append([reply])
        elif scenario in ("pass_steps_junk", "wrong_arg", "drop_call"):
            steps = [render(layout, [c], prose="Working on it.") for c in calls]
            steps.insert(min(1, len(steps)), JUNK[layout])
            turns.append([*steps, reply])
        elif scenario == "quirks" and i == nonempty[0]:
            turns.append([*quirk_steps(layout, case, calls), reply])
        else:
            turns.append([render(layout, calls, prose="Sure."), reply])
    if scenario == "force_terminated":
        turns = turns[:-1]
    return turns


def metadata(case, result):
    if not isinstance(result, list):
        return {}
    entry = {
        "input_token_count": [[1000 + 10 * s for s, _ in enumerate(turn)] for turn in result],
        "output_token_count": [[20 + s for s, _ in enumerate(turn)] for turn in result],
        "latency": [[0.5 + 0.25 * s for s, _ in enumerate(turn)] for turn in result],
    }
    log = [[{"role": "state_info", "class_name": c, "content": {}} for c in case.involved_classes]]
    for t, turn in enumerate(result):
        record = {"begin_of_turn_query": case.turns[t] if t < len(case.turns) else []}
        for s, step in enumerate(turn):
            record[f"step_{s}"] = [{"role": "assistant", "content": step}]
            if s < len(turn) - 1:  # the last step of a turn is the reply that ended it
                record[f"step_{s}"].append({"role": "tool", "content": f"result of step {s}"})
        log.append(record)
        log.append([{"role": "state_info", "class_name": c, "content": {}} for c in case.involved_classes])
    entry["inference_log"] = log
    if any(isinstance(s, str) and "<think>" in s for turn in result for s in turn):
        entry["reasoning_content"] = [
            ["The user wants this." if isinstance(s, str) and "<think>" in s else "" for s in turn] for turn in result
        ]
    return entry


def eligible(case):
    calls = " ".join(c for t in case.ground_truth for c in t)
    if "logarithm" in calls:  # sets mpmath's global precision in BFCL's process
        return False
    if case.category == "long_context" and "TravelAPI" in case.involved_classes:
        return False  # BFCL shares long-context TravelAPI dicts across cases
    return sum(1 for t in case.ground_truth if t) >= 2


#: The verdict each scenario is built to reach (checked with our grader while choosing
#: cases; the equivalence test checks BFCL agrees).
TARGETS = {
    "pass_one_step": None,
    "pass_steps_junk": None,
    "overcall": None,
    "wrong_arg": "multi_turn:instance_state_mismatch",
    "drop_call": "multi_turn:execution_response_mismatch",
    "empty_turn": "multi_turn:empty_turn_model_response",
}


def pick_case(layout, cases, scenario, rng):
    """The first unused case whose result in this scenario reaches the scenario's verdict."""
    from tooldiag.suites.bfcl.grader import grade_result
    from tooldiag.suites.bfcl.layouts import LAYOUTS

    for index, case in enumerate(cases):
        result = build_result(layout, case, scenario, rng)
        if scenario in TARGETS:
            grade, _ = grade_result(case, result, LAYOUTS[layout].decode)
            if grade.error_type != TARGETS[scenario]:
                continue
        cases.pop(index)
        return case, result
    raise RuntimeError(f"no case reaches {scenario} in {layout}")


def main() -> None:
    for layout_index, (layout, (sub, version)) in enumerate(FOLDERS.items()):
        rng = random.Random(1000 + layout_index)
        folder = HERE / layout / sub if sub else HERE / layout
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("BFCL_*_result.json"):
            old.unlink()
        for category, scenarios in SCENARIOS.items():
            cases = [c for c in load_category(category) if eligible(c)]
            rng.shuffle(cases)
            lines = []
            for scenario in scenarios:
                case, result = pick_case(layout, cases, scenario, rng)
                entry = {"id": case.id, "result": result, **metadata(case, result)}
                if scenario == "inference_error":
                    entry["traceback"] = (
                        "Traceback (most recent call last):\n  ...\nopenai.InternalServerError: upstream timeout\n"
                    )
                lines.append((case.id, json.dumps(entry, ensure_ascii=False)))
            rng.shuffle(lines)  # bfcl generate appends in completion order
            path = folder / f"BFCL_{version}_multi_turn_{category}_result.json"
            path.write_text("".join(line + "\n" for _, line in lines), encoding="utf-8")
            print(path.relative_to(HERE), len(lines))


if __name__ == "__main__":
    main()
