"""The one table type: values stay values, and each renderer option does what it says."""

import csv
import io
import json
import math

import numpy as np
import pytest

from tooldiag.classify import ActionClass
from tooldiag.errors import UserError
from tooldiag.metrics import CaseObservation
from tooldiag.report import build_report
from tooldiag.report.render import Delta, table1, table5, tidy_table
from tooldiag.report.table import (
    BLANK,
    RENDERERS,
    Column,
    Table,
    escape_pipe,
    latex_lines,
    markdown_lines,
    no_escape,
    one_line_escape_pipe,
    pipe_to_slash,
    raw_text,
    render_table,
    table_json,
    table_records,
    tex_escape,
    to_csv,
    to_latex,
    to_markdown,
)


def small() -> Table:
    table = Table(
        columns=[
            Column("name"),
            Column("rate", key="rate_pct", decimals=1, percent=True, missing="–"),
            Column("shift", decimals=2, signed=True, missing="n/a"),
            Column("n"),
        ],
        key="small",
        title="A small table",
        note="rates in %",
    )
    table.add("a|b", 0.256, 1.5, 3)
    table.add("c_d", None, -0.25, BLANK)
    return table


def test_cells_are_values_and_columns_format_them():
    table = small()
    assert table.rows[0] == ["a|b", 0.256, 1.5, 3]  # numbers stay numbers
    assert table.column("rate_pct") == table.column("rate") == [0.256, None]
    with pytest.raises(KeyError, match="no column 'nope'"):
        table.column("nope")
    assert table.texts() == [["a|b", "25.6", "+1.50", "3"], ["c_d", "–", "-0.25", ""]]


def test_column_text_rules():
    assert Column("x").text(None) == "" and Column("x", missing="-").text(None) == "-"
    assert Column("x", missing="-").text(BLANK) == ""  # no value in this row is not "undefined"
    assert Column("x", decimals=0).text(2.5) == "2" and Column("x", decimals=3).text(2) == "2.000"
    assert Column("x", decimals=1).text(True) == "True"  # a bool is no number to format
    assert Column("x", format=lambda v: f"<{v}>").text(7) == "<7>"
    assert Column("x", signed=True, decimals=1).text(0.0) == "+0.0"
    assert repr(BLANK) == "BLANK" and type(BLANK)() is BLANK


def test_add_checks_the_row_length():
    with pytest.raises(ValueError, match="row of 1 values for 4 columns"):
        small().add("only one")


def test_markdown_escapes_only_escaping_columns_and_never_headers():
    table = Table(columns=[Column("a|h"), Column("b", md_escape=False)])
    table.add("x|y", "p|q")
    assert markdown_lines(table) == ["| a|h | b |", "|---|---|", "| x\\|y | p|q |"]
    assert (
        to_markdown(table, escape=pipe_to_slash, header=lambda h: h.upper())
        == "| A|H | B |\n|---|---|\n| x/y | p|q |\n"
    )
    assert escape_pipe("a|b") == "a\\|b" and no_escape("a|b") == "a|b"
    assert one_line_escape_pipe("two\n  lines | here") == "two lines \\| here"


def test_trailing_blanks_padded_or_tight():
    table = Table(columns=[Column(c) for c in "abcd"])
    table.add("x", BLANK, "y", BLANK)
    table.add("x", BLANK, BLANK, BLANK)
    table.add(BLANK, BLANK, BLANK, BLANK)
    padded = markdown_lines(table)[2:]
    tight = markdown_lines(table, trailing_blanks="tight")[2:]
    assert padded == ["| x |  | y |  |", "| x |  |  |  |", "|  |  |  |  |"]
    # only the blanks at the end of a row tighten; a blank between values keeps its padding
    assert tight == ["| x |  | y | |", "| x | | | |", "|  | | | |"]


def test_csv_text_versus_raw_cells():
    table = Table(columns=[Column("v", key="value", decimals=2), Column("note")])
    table.add(1 / 3, 'say "hi", then go')
    table.add(float("nan"), None)
    table.add(BLANK, BLANK)
    assert to_csv(table) == 'value,note\n0.33,"say ""hi"", then go"\nnan,\n,\n'
    assert to_csv(table, cells="raw") == f'value,note\n{1 / 3!r},"say ""hi"", then go"\n,\n,\n'
    assert list(csv.reader(io.StringIO(to_csv(table))))[1] == ["0.33", 'say "hi", then go']
    assert [raw_text(v) for v in (None, BLANK, math.nan, 0.1, np.float64(0.1), np.int64(3))] == [
        "",
        "",
        "",
        "0.1",
        "0.1",
        "3",
    ]


def test_json_keeps_display_rows_beside_plain_records():
    table = small()
    table.records.append({"name": "a|b", "rate": 0.256})
    data = json.loads(render_table(table, "json"))
    assert data == {
        "key": "small",
        "title": "A small table",
        "columns": ["name", "rate", "shift", "n"],
        "rows": [["a|b", "25.6", "+1.50", "3"], ["c_d", "–", "-0.25", ""]],
        "records": [{"name": "a|b", "rate": 0.256}],
        "note": "rates in %",
    }
    assert table_json(Table(columns=[Column("x")]))["records"] == []


def test_records_are_plain_json_values():
    table = Table(columns=[Column("a"), Column("b"), Column("c")])
    table.add(np.int64(4), np.float64(0.5), float("nan"))
    table.add(np.bool_(True), BLANK, "s")
    records = table_records(table)
    assert records == [{"a": 4, "b": 0.5, "c": None}, {"a": True, "b": None, "c": "s"}]
    assert type(records[0]["a"]) is int and type(records[1]["a"]) is bool
    json.dumps(records, allow_nan=False)


def test_from_records_unions_keys_in_first_seen_order():
    table = Table.from_records([{"section": "a", "x": 1}, {"section": "b", "y": None, "x": 2}])
    assert [c.id for c in table.columns] == ["section", "x", "y"]
    assert table.rows == [["a", 1, BLANK], ["b", 2, None]]
    assert to_csv(table) == "section,x,y\na,1,\nb,2,\n"


def test_latex_escapes_names_and_takes_formatters_and_raw_headers():
    table = Table(
        columns=[
            Column("run_name"),
            Column("n", latex_name="$n$"),
            Column(
                "ratio",
                missing="–",
                format=lambda r: f"{r:.1f}×",
                latex=lambda r: "--" if r is None else f"{r:.1f}$\\times$",
            ),
        ]
    )
    table.add("a_b & 50%", 3, 2.0)
    table.add("c", 1, None)
    assert latex_lines(table) == [
        r"\begin{tabular}{l r r}",
        r"\toprule",
        r"run\_name & $n$ & ratio \\",
        r"\midrule",
        r"a\_b \& 50\% & 3 & 2.0$\times$ \\",
        r"c & 1 & -- \\",
        r"\bottomrule",
        r"\end{tabular}",
    ]
    custom = to_latex(table, spec="lcc", header=[r"\multicolumn{3}{c}{all} \\"])
    assert custom.startswith("\\begin{tabular}{lcc}\n\\toprule\n\\multicolumn{3}{c}{all} \\\\\n\\midrule\n")
    assert tex_escape("~^{}#$\\") == r"\~{}\^{}\{\}\#\$\textbackslash{}"


def test_every_format_has_a_renderer_and_unknown_ones_are_user_errors():
    assert set(RENDERERS) == {"md", "csv", "json", "latex"}
    for fmt in RENDERERS:
        assert render_table(small(), fmt).endswith("\n")
    with pytest.raises(UserError, match="unknown table format 'xlsx'"):
        render_table(small(), "xlsx")


def _reports():
    tc, ask = ActionClass.TOOL_CALL, ActionClass.ASK

    def obs(category, gold, emitted, passed, i):
        return CaseObservation(
            case_id=f"{category}_{i}", category=category, gold=gold, passed=passed, turns=(frozenset(emitted),)
        )

    cases = [obs("base", tc, {tc}, i < 1, i) for i in range(4)] + [
        obs("miss_param", ask, {tc}, i < 3, i) for i in range(4)
    ]
    return [build_report("r1", cases, scheme="default"), build_report("r2", cases[:4], scheme="default")]


def test_the_calibration_tables_hold_numbers():
    reports = _reports()
    t1 = table1(reports)
    assert t1.column("Overall Acc") == [pytest.approx(50.0), pytest.approx(25.0)]
    assert t1.column("base GAR") == [100.0, 100.0]
    assert t1.column("miss_param GAR")[1] is BLANK  # r2 has no miss_param cases
    delta = t1.column("miss_param Δ")[0]
    assert isinstance(delta, Delta) and delta.pp == pytest.approx(-75.0) and "masking" in delta.flags
    counts = table5(reports).column("tool_call")
    assert [(c.cases, c.capable) for c in counts] == [(8, False), (4, False)]
    tidy = tidy_table(reports)
    assert tidy.column("gar")[0] == 100.0 and tidy.texts()[0][6] == "100.0000"
