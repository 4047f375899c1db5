"""The joint view: the agent's calibration flags beside which judge to trust, and `report --judgebench`."""

from __future__ import annotations

import re

import pytest

import tooldiag
from tooldiag.cli.main import main
from tooldiag.report.html.joint import joint_section
from tooldiag.suites.judgebench.demo import DEMO_CONDITIONS, DEMO_GENERATORS, DEMO_JUDGES


def test_each_half_says_what_to_add_when_it_is_missing():
    body = joint_section(["m: masking on miss_func (GAR 0.0 vs Acc 72.0)"], []).body
    assert "masking on miss_func" in body and "--judgebench DIR" in body
    body = joint_section([], ["With the reference, trust j at every difficulty."]).body
    assert "trust j" in body and "add BFCL run directories" in body
    assert "&lt;b&gt;" in joint_section(["<b>"], []).body


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("joint")
    tooldiag.run_bfcl("ref/overcall", root / "overcall", categories=["miss_func", "base"], limit=4)
    store = root / "judges"
    tooldiag.judgebench_predict(store, list(DEMO_GENERATORS))
    tooldiag.judgebench_judge(store, list(DEMO_JUDGES), conditions=list(DEMO_CONDITIONS))
    return root


def test_report_with_judgebench_puts_both_halves_on_one_page(runs, tmp_path):
    out = tmp_path / "joint.html"
    main(
        ["report", str(runs / "overcall"), "--judgebench", str(runs / "judges"), "--format", "html", "--out", str(out)]
    )
    html = out.read_text(encoding="utf-8")
    assert re.findall(r"<h2>([^<]+)</h2>", html) == ["Summary", "Calibration", "Case browser", "Judge reliability"]
    summary = html[html.index('<section id="summary">') : html.index('<section id="calibration">')]
    assert "ref/overcall: masking on miss_func" in summary
    assert "With the reference, trust" in summary and "Without the reference" in summary
    assert not re.search(r"https?://", html)


def test_judgebench_goes_with_html_only(runs, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(runs / "overcall"), "--judgebench", str(runs / "judges")])
    assert exc.value.code == 2 and "--judgebench joins a judge study to the HTML page only" in capsys.readouterr().err
