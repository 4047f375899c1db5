"""The LLM-judge toolkit shared by every judge (``llm`` classifier, tau2 consent judge, judgebench).

Versioned prompt files (:mod:`~tooldiag.judges.prompts`), robust JSON extraction from a reply
(:mod:`~tooldiag.judges.extract`), typed reply schemas and retries as new draws
(:mod:`~tooldiag.judges.reply`). Each judge keeps its own prompt and schema; the machinery is
one. This package knows no suite.
"""

from tooldiag.judges.extract import (
    BY_POSITION,
    FENCES_FIRST,
    Extraction,
    iter_json_values,
    json_values,
    strip_reasoning,
)
from tooldiag.judges.prompts import PromptTemplate, load_prompt, parse_template
from tooldiag.judges.reply import Draws, draw_context, draw_until_parsed, parse_reply

__all__ = [
    "BY_POSITION",
    "FENCES_FIRST",
    "Draws",
    "Extraction",
    "PromptTemplate",
    "draw_context",
    "draw_until_parsed",
    "iter_json_values",
    "json_values",
    "load_prompt",
    "parse_reply",
    "parse_template",
    "strip_reasoning",
]
