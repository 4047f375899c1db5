"""Judgebench's prompt templates: versioned files in ``prompts/`` (see :mod:`tooldiag.judges.prompts`).

Each template's tag ``name@version`` is stored with every judgement, and a run directory refuses
to resume a judge under a different tag, so verdicts from two prompt versions never mix. A user
may point ``--prompts DIR`` at their own copies (e.g. the paper's exact texts). The template
machinery is the shared LLM-judge toolkit's; what is judgebench's own here is where the files
live and the Prometheus rubric sections.
"""

from __future__ import annotations

from pathlib import Path

from tooldiag.judges.prompts import PromptTemplate, load_prompt, parse_template

__all__ = ["PromptTemplate", "load_rubrics", "load_template", "parse_template"]


def load_template(name: str, prompt_dir: str | Path | None = None) -> PromptTemplate:
    """Template ``name`` from ``prompt_dir`` when it has the file, else the packaged one."""
    return load_prompt("tooldiag.suites.judgebench", name, prompt_dir)


def load_rubrics(prompt_dir: str | Path | None = None) -> tuple[dict[str, str], str]:
    """The Prometheus per-metric rubrics (``## metric`` sections) and their tag."""
    template = load_template("prometheus_rubrics", prompt_dir)
    rubrics: dict[str, str] = {}
    current: str | None = None
    for line in template.body.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            rubrics[current] = ""
        elif current is not None:
            rubrics[current] += line + "\n"
    return {k: v.strip() for k, v in rubrics.items()}, template.tag
