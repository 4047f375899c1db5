"""Read an HTML report back in tests: one table's cells by id (text and sort value), figure ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str
    value: float | None


@dataclass
class ParsedTable:
    header: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    row_attrs: list[dict[str, str]] = field(default_factory=list)

    def column(self, name: str) -> list[Cell]:
        index = self.header.index(name)
        return [row[index] for row in self.rows]


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, ParsedTable] = {}
        self.ids: list[str] = []
        self._table: ParsedTable | None = None
        self._cell: Cell | None = None
        self._in_header = False
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if "id" in attr:
            self.ids.append(attr["id"])
        if tag == "table" and "id" in attr:
            self._table = self.tables[attr["id"]] = ParsedTable()
        elif self._table is None:
            return
        elif tag == "th":
            self._in_header = True
            self._table.header.append("")
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._table.rows.append([])
            self._table.row_attrs.append(attr)
        elif tag == "td":
            self._cell = Cell("", float(attr["data-v"]) if "data-v" in attr else None)

    def handle_endtag(self, tag: str) -> None:
        if self._table is None:
            return
        if tag == "th":
            self._in_header = False
        elif tag == "td" and self._cell is not None:
            self._table.rows[-1].append(self._cell)
            self._cell = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._table is None:
            return
        if self._in_header:
            self._table.header[-1] += data
        elif self._cell is not None:
            self._cell.text += data


def parse_html(page: str) -> tuple[dict[str, ParsedTable], list[str]]:
    """Every table with an id (header, cells, row attributes) and every element id of ``page``."""
    parser = _Tables()
    parser.feed(page)
    return parser.tables, parser.ids
