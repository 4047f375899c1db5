"""Load BFCL's multi-turn cases from the installed ``bfcl-eval`` package.

We read the data files directly instead of importing ``bfcl_eval.utils``: that module
creates ``result/``, ``score/`` and ``.file_locks/`` folders inside site-packages on
import, and it drags in dependencies the multi-turn categories never use. The steps
mirror ``bfcl_eval.utils.load_dataset_entry`` (2026.3.23) for multi-turn entries:

1. questions and ground truth from ``data/BFCL_v4_multi_turn_<cat>.json`` and
   ``data/possible_answer/...`` (JSONL, same ids, same order);
2. function docs: for each class of ``involved_classes`` in order, every doc of its
   file in ``data/multi_turn_func_doc`` in file order
   (``populate_test_cases_with_predefined_functions``);
3. miss_func: each held-out function's doc is popped from the list and kept for its
   give-back turn;
4. the language hint " Note that the provided function is in Python 3 syntax." is
   appended to every remaining description (after the pop, so held-out docs lack it).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError
from tooldiag.suites.bfcl import CATEGORIES

VERSION_PREFIX = "BFCL_v4"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
#: ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC`` (constants/default_prompts.py).
GIVE_BACK_MESSAGE = "I have updated some more functions you can choose from. What about now?"
#: ``MAXIMUM_STEP_LIMIT`` (constants/default_prompts.py): force-quit after 21 executed steps.
MAXIMUM_STEP_LIMIT = 20


@dataclass
class BfclCase:
    """One multi-turn entry with everything the runner and the grader need."""

    id: str
    category: str
    #: ``question``: per turn, the user messages (dicts with role/content).
    turns: list[list[dict[str, Any]]]
    ground_truth: list[list[str]]
    initial_config: dict[str, Any]
    involved_classes: list[str]
    #: Function docs offered from the first turn (hint appended).
    functions: list[dict[str, Any]]
    #: give-back turn index -> held-out docs appended at that turn (miss_func).
    missed_function: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def long_context(self) -> bool:
        # multi_turn_checker.py derives it from the category name.
        return "long_context" in self.category

    @property
    def entry(self) -> dict[str, Any]:
        """The prompt entry as BFCL's checker expects it (``id``, config, classes)."""
        return {
            "id": self.id,
            "initial_config": self.initial_config,
            "involved_classes": self.involved_classes,
        }

    def ground_truth_sizes(self) -> list[int]:
        return [len(t) for t in self.ground_truth]


def bfcl_package_dir() -> Path:
    """Where ``bfcl_eval`` is installed, found without importing it."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "the bfcl-eval package is not installed",
            hint="install it without its dependency list: pip install --no-deps bfcl-eval==2026.3.23 mpmath",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@functools.cache
def _func_docs(class_name: str) -> tuple[str, ...]:
    """The doc lines of one class, kept as JSON text so every case gets fresh dicts."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    path = bfcl_package_dir() / "data" / "multi_turn_func_doc" / MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    with path.open(encoding="utf-8") as fh:
        return tuple(line for line in fh if line.strip())


def normalise_category(name: str) -> str:
    """Accept ``base`` or ``multi_turn_base``; reject anything else clearly."""
    short = name.strip().removeprefix("multi_turn_")
    if short not in CATEGORIES:
        raise UserError(
            f"unknown BFCL category {name!r}",
            hint=f"use one or more of: {', '.join(CATEGORIES)}",
        )
    return short


def category_of(case_id: str) -> str:
    """``multi_turn_miss_func_12`` -> ``miss_func``."""
    prefix = case_id.rsplit("_", 1)[0]
    return normalise_category(prefix)


@functools.lru_cache(maxsize=8)
def _load_category_raw(category: str) -> tuple[tuple[dict, ...], dict[str, list[list[str]]]]:
    data_dir = bfcl_package_dir() / "data"
    questions = _read_jsonl(data_dir / f"{VERSION_PREFIX}_multi_turn_{category}.json")
    answers = _read_jsonl(data_dir / "possible_answer" / f"{VERSION_PREFIX}_multi_turn_{category}.json")
    return tuple(questions), {a["id"]: a["ground_truth"] for a in answers}


def _build_case(raw: dict[str, Any], ground_truth: list[list[str]], category: str) -> BfclCase:
    functions: list[dict[str, Any]] = []
    for class_name in raw["involved_classes"]:
        functions.extend(json.loads(line) for line in _func_docs(class_name))
    missed: dict[int, list[dict[str, Any]]] = {}
    for turn_index, names in raw.get("missed_function", {}).items():
        held_out = []
        for name in names:
            for i, doc in enumerate(functions):
                if doc["name"] == name:
                    held_out.append(functions.pop(i))
                    break
        missed[int(turn_index)] = held_out
    for doc in functions:
        doc["description"] = doc["description"] + PYTHON_HINT
    return BfclCase(
        id=raw["id"],
        category=category,
        turns=copy.deepcopy(raw["question"]),
        ground_truth=copy.deepcopy(ground_truth),
        initial_config=copy.deepcopy(raw.get("initial_config", {})),
        involved_classes=list(raw["involved_classes"]),
        functions=functions,
        missed_function=missed,
    )


def load_category(category: str) -> list[BfclCase]:
    category = normalise_category(category)
    questions, answers = _load_category_raw(category)
    return [_build_case(q, answers[q["id"]], category) for q in questions]


def load_cases(
    categories: list[str] | None = None,
    ids: list[str] | None = None,
    limit: int | None = None,
) -> list[BfclCase]:
    """Cases of ``categories`` (default all four), optionally only ``ids``, at most
    ``limit`` per category, in BFCL's order."""
    cats = [normalise_category(c) for c in (categories or CATEGORIES)]
    if ids:
        wanted = list(dict.fromkeys(ids))
        by_cat: dict[str, list[str]] = {}
        for case_id in wanted:
            try:
                cat = category_of(case_id)
            except UserError:
                raise UserError(
                    f"unknown BFCL case id {case_id!r}",
                    hint="ids look like multi_turn_base_0 ... multi_turn_miss_param_199",
                ) from None
            by_cat.setdefault(cat, []).append(case_id)
        out: list[BfclCase] = []
        for cat, cat_ids in by_cat.items():
            questions, answers = _load_category_raw(cat)
            known = {q["id"]: q for q in questions}
            for case_id in cat_ids:
                if case_id not in known:
                    raise UserError(
                        f"unknown BFCL case id {case_id!r}",
                        hint=f"{cat} has ids multi_turn_{cat}_0 ... multi_turn_{cat}_{len(questions) - 1}",
                    )
                out.append(_build_case(known[case_id], answers[case_id], cat))
        return out
    cases: list[BfclCase] = []
    for cat in cats:
        questions, answers = _load_category_raw(cat)
        chosen = questions if limit is None else questions[:limit]
        cases.extend(_build_case(q, answers[q["id"]], cat) for q in chosen)
    return cases


def case_by_id(case_id: str) -> BfclCase:
    return load_cases(ids=[case_id])[0]
