"""The joint view: what the agent does, and which judge can be trusted to grade it, side by side.

Paper 001 says a grader can mask a wrong action (Acc > GAR) and that GAR >> Acc means the
right action failed downstream; paper 000 says how far an LLM judge agrees with a verified
reference, per difficulty, with and without the reference in its prompt. A user deciding
whether to trust an agent's score needs both at once: the calibration flags per category,
and for the judges that would grade it, which one to use at which difficulty. This section
puts the two lists next to each other, each line taken from the section that proves it
(:func:`tooldiag.report.html.calibration.calibration_summary` and the judge section's
summary), and says which half is missing when only one was given.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooldiag.report.html.elements import esc, note_html
from tooldiag.report.html.page import Section

_STYLE = (
    "<style>.joint{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:18px}"
    ".joint>div{border:1px solid var(--line);border-radius:4px;padding:4px 14px}"
    ".joint h3{margin-top:8px}.joint li{margin:4px 0}</style>"
)


def _column(title: str, lines: Sequence[str], anchor: str, missing: str) -> str:
    if lines:
        items = "".join(f"<li>{esc(line)}</li>" for line in lines)
        body = f'<ul>{items}</ul><p class="note"><a href="#{esc(anchor)}">the figures and tables</a></p>'
    else:
        body = note_html(missing)
    return f"<div><h3>{esc(title)}</h3>{body}</div>"


def joint_section(
    calibration_lines: Sequence[str],
    judge_lines: Sequence[str],
    *,
    calibration_anchor: str = "calibration",
    judge_anchor: str = "judges",
    case_anchor: str | None = "case-browser",
) -> Section:
    """The summary at the top of the page: the agent's calibration flags beside the judges' guide."""
    agent = _column(
        "What the agent does (paper 001)",
        calibration_lines,
        calibration_anchor,
        "No run was given: add BFCL run directories to see the agent's calibration profile.",
    )
    judges = _column(
        "Which judge to trust, by difficulty (paper 000)",
        judge_lines,
        judge_anchor,
        "No judge study was given: add --judgebench DIR (a `tooldiag judgebench judge` store) to see which "
        "judge can grade these plans at which difficulty.",
    )
    cases = (
        f'<p class="note">Each flag is a set of cases: the <a href="#{esc(case_anchor)}">case browser</a> lists '
        "them (verdict masked = passed without the gold action; execution_failure = gold action, not passed) and "
        "opens each transcript.</p>"
        if case_anchor
        else ""
    )
    return Section("summary", "Summary", f'{_STYLE}<div class="joint">{agent}{judges}</div>{cases}')
