"""The trials table of the tau2 HTML page: on the multi-trial fixture of test_trials, the JSON's numbers.

The expected cells are written here from the JSON report (``tau2 diagnose --format json``): mean, sd,
min and max in percent, pass^k per k, flips over eligible tasks; the page must show the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.suites.tau2.test_trials import write_trials_file
from tests.suites.tau2.v101_fixtures import write_banking
from tests.support.html_tables import parse_html
from tooldiag.cli.main import main
from tooldiag.suites.tau2.html import TRIALS_TABLE


@pytest.fixture
def trials_path(tmp_path: Path) -> Path:
    """The airline file of test_trials (3 trials of tasks w, r, e), written from its PLAN."""
    return write_trials_file(tmp_path)


def _diagnose(path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The CLI's output in ``fmt`` (html goes to a file: it needs --out)."""
    if fmt != "html":
        main(["tau2", "diagnose", str(path), "--format", fmt])
        return capsys.readouterr().out
    out = path.with_suffix(".html")
    main(["tau2", "diagnose", str(path), "--format", "html", "--out", str(out)])
    return out.read_text("utf-8")


def _spread(cell: dict[str, Any] | None) -> str:
    if cell is None or cell["mean"] is None:
        return "–"
    sd = "" if cell["sd"] is None else f" ± {100 * cell['sd']:.1f}"
    return f"{100 * cell['mean']:.1f}{sd} [{100 * cell['low']:.1f}, {100 * cell['high']:.1f}]"


def _pass_ks(values: dict[str, float], present: bool) -> str:
    return " / ".join(f"{100 * values[k]:.1f}" for k in sorted(values, key=int)) if present and values else "–"


def _flip(flips: int, n: int, present: bool) -> str:
    return f"{100 * flips / n:.1f} ({flips}/{n})" if present and n else "–"


def test_trials_table_shows_the_jsons_numbers(trials_path, capsys):
    payload = json.loads(_diagnose(trials_path, "json", capsys))
    page = _diagnose(trials_path, "html", capsys)
    table = parse_html(page)[0][TRIALS_TABLE]
    assert len(table.rows) == len(payload["trials"]) == 6
    for cells, row in zip(table.rows, payload["trials"], strict=True):
        gar = row["gar"] is not None
        expected = [row["agent_model"], row["domain"], row["task_class"], str(row["trials"]), str(row["n_tasks"]),
                    _spread(row["acc"]), _spread(row["gar"]), _spread(row["delta"]),
                    _pass_ks(row["pass_hat_k_acc"], True), _pass_ks(row["pass_hat_k_gar"], gar),
                    _flip(row["flips_acc"], row["flip_n_acc"], True),
                    _flip(row["flips_gar"], row["flip_n_gar"], gar)]  # fmt: skip
        assert [c.text for c in cells] == expected
    first = table.rows[0]  # by hand from test_trials: all tasks, Acc 77.8 ± 38.5 [33.3, 100.0], 2 of 3 flip
    assert [first[2].text, first[5].text, first[10].text] == ["all", "77.8 ± 38.5 [33.3, 100.0]", "66.7 (2/3)"]
    assert "<h3>Trials: spread, pass^k and flip rates</h3>" in page and "http" not in page


def test_one_trial_page_has_no_trials_table(tmp_path, capsys):
    page = _diagnose(write_banking(tmp_path), "html", capsys)
    assert TRIALS_TABLE not in page and "Trials:" not in page and 'id="tau2-consent"' in page


def test_trials_page_passes_the_browser_check(trials_path, capsys):
    """The page with the trials table renders in headless Chromium, fetches nothing, and its filters work.

    The fixture's writes: 2 of the 4 passed without a consent request (masked), so the filter selects some rows.
    """
    from tests.support.browser import check_report_in_browser

    page = _diagnose(trials_path, "html", capsys)
    assert 'id="tau2-trials"' in page
    facts = check_report_in_browser(
        trials_path.with_suffix(".html"), ["tau2-bench"], "tau2-writes", "verdict", "masked"
    )
    assert (facts.rows, facts.matching_rows) == (4, 2)
