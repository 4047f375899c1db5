"""The case browser: every case row of ``tooldiag cases``, and each case's transcript on a click.

A calibration profile says *that* a grader masked wrong actions; the browser shows *which*
cases and *what* the model did in them, in one file. Two parts:

* a sortable table with one row per :class:`~tooldiag.metrics.cases.CaseRow` (the columns of
  ``tooldiag cases``; the classes of every turn as coloured badges) and the page's row
  filters (run, verdict, category, class emitted at any turn, a text search, the count). Row
  attributes: ``data-run`` (``r0``, ``r1``, ...: the report's position, since run names hold
  spaces), ``data-verdict``, ``data-category``, ``data-class`` (every class emitted, space
  separated) and ``data-key`` (``REPORT.CASE``: where its transcript is). The table's id is
  ``cases``, so ``#cases:verdict=masked,category=miss_func`` opens a filtered view and
  ``#cases:verdict=masked,open=first`` also opens the first case it shows;
* the transcripts, turn by turn as ``tooldiag show`` prints them, in the compact form of
  :func:`tooldiag.report.transcript.compact_json` (long texts cut with a marker naming
  ``tooldiag show --format json``). All cases of one report are one JSON document, gzip
  compressed and base64 encoded in a ``<script type="application/octet-stream"
  id="cases-data-N">`` element; their texts (user messages, replies, decoded calls, tool
  results) are stored once for all reports in ``cases-data-strings`` (:class:`StringTable`:
  runs of one benchmark share them). Base64 cannot close a script element whatever the data
  hold. The page decompresses the documents with the browser's ``DecompressionStream("gzip")``
  the first time a case is opened, and renders them with ``textContent`` only (data never
  becomes markup).

Why not render every transcript as HTML: 2,400 BFCL transcripts are 7 MB as compact JSON alone,
more as markup; compressed JSON opened on demand is a small fraction of that (3 runs x 800 BFCL cases: about
0.45 MB of transcripts and 0.8 MB of table rows; ``bench/case_browser.py`` measures it).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tooldiag.classify.classes import ActionClass
from tooldiag.metrics.cases import VERDICTS, CaseRow
from tooldiag.report.html.elements import esc, note_html
from tooldiag.report.html.page import Section, asset
from tooldiag.report.model import RunReport
from tooldiag.report.transcript import (
    COMPACT_RESULT_CHARS,
    COMPACT_TEXT_CHARS,
    Transcript,
    compact_json,
)

#: The table's element id (the browser test and hash presets name it).
TABLE_ID = "cases"
#: The id of the detail panel a click on a row fills.
PANEL_ID = "case-panel"
#: The id prefix of the embedded transcript documents (one per report: ``cases-data-0``, ...).
DATA_ID = "cases-data-"
#: The key of the document holding the shared texts (``cases-data-strings``).
STRINGS_KEY = "strings"
#: Step fields whose texts are stored in the shared table (user messages ``u`` of turns are too).
INTERNED = ("x", "rs", "d", "o")
#: Column headings, in the order of ``tooldiag cases``.
COLUMNS = (
    "run",
    "case_id",
    "category",
    "gold class",
    "classes per turn",
    "gold_hit",
    "passed",
    "error_type",
    "verdict",
)

#: A transcript as :class:`Transcript` or its :meth:`~Transcript.to_json` form, keyed by (run name, case id).
TranscriptMap = Mapping[tuple[str, str], Transcript | Mapping[str, Any]]


def transcript_map(transcripts: Iterable[Transcript]) -> dict[tuple[str, str], Transcript]:
    """``transcripts`` keyed as :func:`case_browser_section` reads them: ``(run, case_id)``.

    The run name must be the report's (:attr:`RunReport.name`): when reports were renamed
    (two runs of one model), build the transcripts with that name
    (``bfcl_transcripts(run_dir, classifier, run=report.name)``).
    """
    return {(t.run, t.case_id): t for t in transcripts}


def case_browser_section(
    reports: Sequence[RunReport],
    transcripts: TranscriptMap | None = None,
    *,
    section_id: str = "case-browser",
    title: str = "Case browser",
) -> Section:
    """The case browser over the case rows of ``reports``, with the transcripts in ``transcripts``.

    ``transcripts`` maps ``(report name, case id)`` to a :class:`Transcript` (or its JSON form,
    ``tooldiag show --format json``); a row without one says so when opened. Build them with
    :func:`tooldiag.suites.bfcl.transcript.bfcl_transcripts` (BFCL runs) or
    :func:`tooldiag.diagnose.transcript.log_transcripts` (agent logs).
    """
    transcripts = transcripts or {}
    rows: list[str] = []
    documents: list[str] = []
    rows_all: list[CaseRow] = []
    strings = StringTable()
    embedded = 0
    for index, report in enumerate(reports):
        cases: list[dict[str, Any]] = []
        for row in report.cases:
            if row.extra.get("sample", 0):  # a --repeats run: the browser shows draw 0, as the tables
                continue
            found = transcripts.get((report.name, row.case_id))
            key = None
            if found is not None:
                key = f"{index}.{len(cases)}"
                cases.append(strings.intern_case(compact_json(found)))
            rows.append(_row_html(row, index, key))
            rows_all.append(row)
        embedded += len(cases)
        documents.append(_document_html(str(index), {"run": report.name, "source": report.source, "cases": cases}))
    documents.append(_document_html(STRINGS_KEY, {"strings": strings.values}))
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name in COLUMNS)
    table = (
        f'<div class="table-wrap case-table"><table class="sortable" id="{TABLE_ID}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    panel = (
        f'<div class="case-panel" id="{PANEL_ID}" tabindex="-1" aria-live="polite" data-state="empty">'
        '<p class="note">Click a row (or focus it and press Enter) to see its transcript here.</p></div>'
    )
    body = (
        f"<style>{asset('cases.css')}</style>"
        + _intro(len(rows_all), embedded)
        + _filters_html(reports, rows_all)
        + f'<div class="case-browser">{table}{panel}</div>'
        + "".join(documents)
    )
    return Section(section_id, title, body, script=asset("cases.js"))


class StringTable:
    """The texts of every embedded transcript, each stored once and named by its index.

    Runs of one benchmark share their user messages (and many tool results): a report of
    three models over the same 800 cases would carry each message three times, and gzip's
    window is too short to notice. :data:`INTERNED` fields hold indices into the table.
    """

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def intern(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.values)
            self.values.append(text)
        return found

    def intern_case(self, case: dict[str, Any]) -> dict[str, Any]:
        """``case`` (:func:`compact_json`) with its :data:`INTERNED` texts replaced by indices."""
        for turn in case["t"]:
            if "u" in turn:
                turn["u"] = [self.intern(text) for text in turn["u"]]
            for step in turn["s"]:
                for key in INTERNED:
                    value = step.get(key)
                    if isinstance(value, str):
                        step[key] = self.intern(value)
                    elif isinstance(value, list):
                        step[key] = [self.intern(text) for text in value]
        return case


def expand_case(case: Mapping[str, Any], strings: Sequence[str]) -> dict[str, Any]:
    """The inverse of :meth:`StringTable.intern_case`: the case in :func:`compact_json` form again."""
    out = json.loads(json.dumps(case))
    for turn in out["t"]:
        if "u" in turn:
            turn["u"] = [strings[i] for i in turn["u"]]
        for step in turn["s"]:
            for key in INTERNED:
                value = step.get(key)
                if isinstance(value, int):
                    step[key] = strings[value]
                elif isinstance(value, list):
                    step[key] = [strings[i] for i in value]
    return out


def _document_html(key: str, document: Mapping[str, Any]) -> str:
    return (
        f'<script type="application/octet-stream" id="{DATA_ID}{key}" data-encoding="gzip+base64">'
        f"{encode_document(document)}</script>"
    )


def encode_document(document: Mapping[str, Any]) -> str:
    """``document`` as the page embeds it: compact JSON, gzip (reproducible: no timestamp), base64.

    ``<`` is written ``\\u003c`` as well, so that even the decoded text holds no markup.
    """
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")


def decode_document(text: str) -> dict[str, Any]:
    """The inverse of :func:`encode_document` (for tests and for reading a page back)."""
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))
    return data


def _intro(total: int, embedded: int) -> str:
    missing = total - embedded
    text = (
        f"{total} case(s), one row each (the rows of `tooldiag cases`; classes per turn in order, a turn per group, "
        "x2 for repeats). Click a row for its transcript, turn by turn as `tooldiag show` prints it; "
        f"user messages, texts and reasoning are cut at {COMPACT_TEXT_CHARS} characters, tool results, "
        f"arguments and decoded calls at {COMPACT_RESULT_CHARS} (`tooldiag show RUN CASE_ID --format json` has all)."
    )
    out = note_html(text)
    if missing:
        out += note_html(f"{missing} case(s) have no transcript in this page (their rows still count).", "warn")
    return out


def _options(attr: str, label: str, values: Sequence[tuple[str, str]], counts: Counter[str]) -> str:
    options = "".join(
        f'<option value="{esc(value)}">{esc(text)} ({counts.get(value, 0)})</option>' for value, text in values
    )
    return (
        f'<label>{esc(label)} <select data-attr="{esc(attr)}"><option value="">all</option>{options}</select></label>'
    )


def _filters_html(reports: Sequence[RunReport], rows: Sequence[CaseRow]) -> str:
    run_counts = Counter({f"r{i}": len(report.cases) for i, report in enumerate(reports)})
    categories = list(dict.fromkeys(row.category for row in rows))
    classes = Counter(name for row in rows for name in row.emitted())
    return (
        f'<div class="filters" data-table="{TABLE_ID}">'
        + _options("run", "run", [(f"r{i}", report.name) for i, report in enumerate(reports)], run_counts)
        + _options("verdict", "verdict", [(v, v) for v in VERDICTS], Counter(row.verdict.value for row in rows))
        + _options("category", "category", [(c, c) for c in categories], Counter(row.category for row in rows))
        + _options("class", "class (any turn)", [(a.value, a.value) for a in ActionClass], classes)
        + '<label>search <input type="search" data-attr="text" placeholder="case id, error type, run"></label>'
        + '<span class="count"></span></div>'
    )


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "no"


def classes_text(classes: Sequence[Sequence[str]]) -> str:
    """Per turn, the classes of its emissions in order (consecutive repeats as ``x2``), turns apart.

    The page's script turns every class name of the cell into a coloured badge (the text stays the
    same, so sorting and the text search read what the eye sees); plain text keeps 2,400 rows small.
    """
    turns = []
    for turn in classes:
        words: list[str] = []
        previous, times = None, 0
        for name in [*turn, None]:
            if name == previous:
                times += 1
                continue
            if previous is not None:
                words.append(previous if times == 1 else f"{previous} x{times}")
            previous, times = name, 1
        turns.append(" ".join(words) or "-")
    return " | ".join(turns)


def _row_html(row: CaseRow, report_index: int, key: str | None) -> str:
    """One row; end tags of cells are left out (HTML allows it) and badges are the script's: 2,400 rows add up."""
    emitted = " ".join(sorted(row.emitted()))
    attrs = (
        f' data-run="r{report_index}" data-verdict="{esc(row.verdict.value)}" data-category="{esc(row.category)}"'
        f' data-class="{esc(emitted)}"'
    )
    if key is not None:
        attrs += f' data-key="{key}"'
    verdict = esc(row.verdict.value)
    return (
        f"<tr{attrs}><td>{esc(row.run)}<td>{esc(row.case_id)}<td>{esc(row.category)}"
        f'<td class="k">{esc(row.gold_class)}<td class="k">{esc(classes_text(row.classes))}'
        f"<td>{_yes_no(row.gold_hit)}<td>{_yes_no(row.passed)}<td>{esc(row.error_type or '')}"
        f'<td class="verdict {verdict}">{verdict}</tr>'
    )
