"""One table type for every report: typed values in, md / csv / json / latex text out.

Every report of tooldiag (the calibration profile, the tau2 diagnostic, the probe shifts,
the judge-reliability study, the classifier evaluation) lays its numbers out as a
:class:`Table`: column definitions plus rows of *values* (numbers stay numbers, ``None``
means "not defined", :data:`BLANK` means "no value in this row"). How a value shows as
text is the column's business (:class:`Column`: decimals, percent, sign, a formatter for
composite cells such as a value with its interval), so one table renders the same
numbers in every format and a test can ask for the numbers rather than parse text.

The renderers below only lay the text out. Where the reports have always differed in a
detail (which cells escape ``|`` and how, how trailing empty cells pad, formatted or raw
CSV cells) the difference is an explicit option, so that every report keeps its
byte-exact output. :data:`RENDERERS` names them by format; an HTML renderer slots in there.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tooldiag.errors import UserError

Formatter = Callable[[Any], str]


class _Blank:
    """The type of :data:`BLANK`."""

    _instance: _Blank | None = None

    def __new__(cls) -> _Blank:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "BLANK"


#: A cell with no value in this row (a category the run lacks, a key a CSV section lacks).
#: It renders as an empty cell in every format; ``None``, in contrast, is a value that is
#: not defined (no graded case) and renders as the column's ``missing`` text.
BLANK: Any = _Blank()


@dataclass(frozen=True)
class Column:
    """One column: its header, its machine name and how its values show as text."""

    #: Header as shown in md and csv (csv uses ``key`` when given).
    name: str
    #: Machine name (csv header, json key); defaults to ``name``.
    key: str = ""
    #: Fixed decimals for numbers; ``None`` shows numbers as ``str`` does.
    decimals: int | None = None
    #: The value is a fraction (0..1) shown as a percentage (x 100).
    percent: bool = False
    #: Positive numbers get a leading ``+``.
    signed: bool = False
    #: Text for ``None`` (a value that is not defined).
    missing: str = ""
    #: Text of a composite value (a value with its interval, a count with a flag); gets
    #: every value except ``None`` and :data:`BLANK`.
    format: Formatter | None = None
    #: LaTeX text of a value, ``None`` included (colours, math mode); default: the
    #: column's text with LaTeX's special characters escaped.
    latex: Formatter | None = None
    #: Header in LaTeX (math such as ``$n$``); default: ``name`` escaped.
    latex_name: str | None = None
    #: Whether the markdown renderer's ``escape`` applies to this column's cells.
    md_escape: bool = True

    @property
    def id(self) -> str:
        return self.key or self.name

    def text(self, value: Any) -> str:
        """The value as display text (md, csv)."""
        if value is BLANK:
            return ""
        if value is None:
            return self.missing
        if self.format is not None:
            return self.format(value)
        if self.decimals is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            number = 100 * value if self.percent else value
            return f"{number:{'+' if self.signed else ''}.{self.decimals}f}"
        return str(value)

    def latex_text(self, value: Any) -> str:
        if value is BLANK:
            return ""
        if self.latex is not None:
            return self.latex(value)
        return tex_escape(self.text(value))


@dataclass
class Table:
    """Column definitions and rows of values, plus the words that go with them."""

    columns: list[Column]
    rows: list[list[Any]] = field(default_factory=list)
    #: Machine name of the table (json, file names).
    key: str = ""
    title: str = ""
    #: A sentence under the table (units, legend).
    note: str = ""
    #: Raw numbers behind composite cells, for audit in json (e.g. a shift and its base).
    records: list[dict[str, Any]] = field(default_factory=list)

    def add(self, *values: Any) -> None:
        """Append one row; its values in column order."""
        if len(values) != len(self.columns):
            raise ValueError(f"row of {len(values)} values for {len(self.columns)} columns")
        self.rows.append(list(values))

    def texts(self) -> list[list[str]]:
        """Every cell as display text (what md and csv show)."""
        return [[column.text(value) for column, value in zip(self.columns, row, strict=True)] for row in self.rows]

    def column(self, key: str) -> list[Any]:
        """The values of one column (by key or name)."""
        for index, column in enumerate(self.columns):
            if column.id == key or column.name == key:
                return [row[index] for row in self.rows]
        raise KeyError(f"no column {key!r}")

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], **kwargs: Any) -> Table:
        """A table over dicts: columns are the union of their keys in first-seen order,
        and a key a record lacks is :data:`BLANK` there (a tidy CSV with sections)."""
        records = list(records)
        keys: dict[str, None] = {}
        for record in records:
            keys.update(dict.fromkeys(record))
        columns = [Column(key) for key in keys]
        rows = [[record.get(key, BLANK) for key in keys] for record in records]
        return cls(columns=columns, rows=rows, **kwargs)


# -- markdown -------------------------------------------------------------------------------
def escape_pipe(text: str) -> str:
    """``|`` as ``\\|``, so a name cannot split a markdown cell."""
    return text.replace("|", "\\|")


def one_line_escape_pipe(text: str) -> str:
    """Whitespace runs (newlines of free text) as one space, then :func:`escape_pipe`."""
    return escape_pipe(" ".join(text.split()))


def pipe_to_slash(text: str) -> str:
    """``|`` as ``/`` (the judge-reliability report's convention)."""
    return text.replace("|", "/")


def no_escape(text: str) -> str:
    return text


def markdown_lines(
    table: Table,
    *,
    escape: Callable[[str], str] = escape_pipe,
    header: Callable[[str], str] = no_escape,
    trailing_blanks: Literal["padded", "tight"] = "padded",
) -> list[str]:
    """Header, alignment row and one line per row of a GitHub markdown table.

    ``escape`` applies to cells of columns with ``md_escape``; ``header`` to the column
    names. ``trailing_blanks="tight"`` writes empty cells at the end of a row as ``| |``
    instead of ``|  |`` (the layout of the classifier evaluation and the ask-scan tables).
    """
    names = [header(column.name) for column in table.columns]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join("---" for _ in names) + "|"]
    for row in table.texts():
        cells = [escape(text) if column.md_escape else text for column, text in zip(table.columns, row, strict=True)]
        blanks = 0
        if trailing_blanks == "tight":
            while blanks < len(cells) - 1 and cells[len(cells) - 1 - blanks] == "":
                blanks += 1
        kept = cells[: len(cells) - blanks]
        lines.append("| " + " | ".join(kept) + " |" + " |" * blanks)
    return lines


def to_markdown(
    table: Table,
    *,
    escape: Callable[[str], str] = escape_pipe,
    header: Callable[[str], str] = no_escape,
    trailing_blanks: Literal["padded", "tight"] = "padded",
) -> str:
    """The table as markdown ending in a newline (see :func:`markdown_lines`)."""
    return "\n".join(markdown_lines(table, escape=escape, header=header, trailing_blanks=trailing_blanks)) + "\n"


# -- csv --------------------------------------------------------------------------------------
def raw_text(value: Any) -> str:
    """A value as written by ``str``, and "" where there is none (``None``, NaN, :data:`BLANK`)."""
    if value is None or value is BLANK or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def to_csv(table: Table, *, cells: Literal["text", "raw"] = "text") -> str:
    """A header line of column keys, then one line per row (``\n`` line ends, minimal quoting).

    ``cells="text"`` writes each cell's display text (the column's decimals and
    formatter; the calibration report's fixed 4 decimals); ``cells="raw"`` writes the
    value itself as :func:`raw_text` (full precision, NaN empty: what pandas writes for a
    data frame). For a column without decimals or formatter the two agree.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([column.id for column in table.columns])
    if cells == "raw":
        writer.writerows([raw_text(value) for value in row] for row in table.rows)
    else:
        writer.writerows(table.texts())
    return buffer.getvalue()


# -- json -------------------------------------------------------------------------------------
def json_value(value: Any) -> Any:
    """A value as plain JSON data: NaN and :data:`BLANK` as ``None``, numpy scalars as Python ones."""
    if value is BLANK:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
        if isinstance(value, float) and math.isnan(value):
            return None
    return value


def table_records(table: Table) -> list[dict[str, Any]]:
    """Rows as ``{column key: value}`` with :func:`json_value` applied (pandas ``orient="records"``)."""
    keys = [column.id for column in table.columns]
    return [{key: json_value(value) for key, value in zip(keys, row, strict=True)} for row in table.rows]


def table_json(table: Table) -> dict[str, Any]:
    """``{"key", "title", "columns", "rows", "records", "note"}``: display rows beside the raw records.

    ``records`` are the table's own :attr:`Table.records` (the numbers behind composite
    cells; empty when it carries none); :func:`table_records` gives the rows as records.
    """
    return {
        "key": table.key,
        "title": table.title,
        "columns": [column.name for column in table.columns],
        "rows": table.texts(),
        "records": table.records,
        "note": table.note,
    }


def to_json(table: Table, *, indent: int | None = 2) -> str:
    return json.dumps(table_json(table), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"


# -- latex ------------------------------------------------------------------------------------
_TEX_ESCAPES = {
    "\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$",
    "{": r"\{", "}": r"\}", "^": r"\^{}", "~": r"\~{}",
}  # fmt: skip


def tex_escape(text: str) -> str:
    """LaTeX's special characters as commands, so a run name typesets as written."""
    return "".join(_TEX_ESCAPES.get(char, char) for char in text)


def latex_lines(table: Table, *, spec: str | None = None, header: Sequence[str] | None = None) -> list[str]:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), one line per row.

    ``spec`` is the column spec (default: ``l`` for the first column, ``r`` for the
    rest); ``header`` replaces the one header line built from the column names by raw
    LaTeX lines ending in ``\\\\``: a layout's multi-level headers (``\\multicolumn``
    spans) are typography, not data.
    """
    if spec is None:
        spec = " ".join(["l"] + ["r"] * (len(table.columns) - 1))
    if header is None:
        names = [c.latex_name if c.latex_name is not None else tex_escape(c.name) for c in table.columns]
        header = [" & ".join(names) + r" \\"]
    lines = [r"\begin{tabular}{" + spec + "}", r"\toprule", *header, r"\midrule"]
    for row in table.rows:
        cells = [column.latex_text(value) for column, value in zip(table.columns, row, strict=True)]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return lines


def to_latex(table: Table, *, spec: str | None = None, header: Sequence[str] | None = None) -> str:
    return "\n".join(latex_lines(table, spec=spec, header=header)) + "\n"


#: Renderer of one table per format name. The HTML renderer (a later issue) joins here.
RENDERERS: dict[str, Callable[[Table], str]] = {
    "md": to_markdown,
    "csv": to_csv,
    "json": to_json,
    "latex": to_latex,
}


def render_table(table: Table, fmt: str) -> str:
    """``table`` in ``fmt`` (one of :data:`RENDERERS`) with each renderer's defaults."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise UserError(f"unknown table format {fmt!r}", hint="use one of: " + ", ".join(RENDERERS)) from None
    return renderer(table)
