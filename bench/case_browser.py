"""Size and speed of the HTML case browser on whole BFCL runs (issue 13: < 5 MB, < 10 s for 3 x 800).

    python bench/case_browser.py                         # runs ref/oracle, overcall, halt (800 cases each)
    python bench/case_browser.py --runs DIR DIR --out page.html

Times the reports, the batch transcript builder and the section, writes a page with the
case browser alone (``render_page``) and prints its size, and that of the embedded
transcripts. Open the page at ``#cases:verdict=masked,open=first`` to see a filtered view.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import tooldiag
from tooldiag.report.html import render_page
from tooldiag.report.html.cases import case_browser_section, transcript_map
from tooldiag.suites.bfcl.transcript import bfcl_transcripts

POLICIES = ("ref/oracle", "ref/overcall", "ref/halt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="*", type=Path, help="BFCL run directories (default: run the ref policies)")
    parser.add_argument("--limit", type=int, default=None, help="cases per category when running the ref policies")
    parser.add_argument("--out", type=Path, default=Path("case_browser.html"))
    args = parser.parse_args()
    runs = args.runs
    if not runs:
        base = Path(tempfile.mkdtemp(prefix="case-browser-"))
        runs = []
        for policy in POLICIES:
            run_dir = base / policy.split("/")[1]
            tooldiag.run_bfcl(policy, run_dir, limit=args.limit)
            runs.append(run_dir)
    classifier = tooldiag.classifier("default")
    started = time.perf_counter()
    reports = tooldiag.report_runs(runs, classifier)
    reported = time.perf_counter()
    transcripts = {}
    for report, run_dir in zip(reports, runs, strict=True):
        transcripts.update(transcript_map(bfcl_transcripts(run_dir, classifier, run=report.name)))
    built = time.perf_counter()
    section = case_browser_section(reports, transcripts)
    page = render_page("Case browser", [section])
    rendered = time.perf_counter()
    args.out.write_text(page, encoding="utf-8")
    data = sum(len(part.split("</script>", 1)[0]) for part in page.split('data-encoding="gzip+base64">')[1:])
    cases = sum(len(r.cases) for r in reports)
    print(f"{len(reports)} runs, {cases} cases, {len(transcripts)} transcripts")
    print(
        f"reports {reported - started:.2f} s; transcripts (batch) {built - reported:.2f} s; "
        f"section + page {rendered - built:.2f} s"
    )
    print(f"page {len(page.encode()) / 1e6:.2f} MB, of which embedded transcripts {data / 1e6:.2f} MB -> {args.out}")


if __name__ == "__main__":
    main()
