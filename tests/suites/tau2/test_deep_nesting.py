"""Deeply nested JSON cannot blow up `tau2 diagnose`: memory stays bounded and the file is refused
with one line (issue 20, defect 1: prefixed ijson events made memory grow with the square of the
depth; a 40 KB file of `[` peaked at 3.9 GB)."""

import subprocess
import sys

import pytest

from tooldiag.errors import UserError
from tooldiag.suites.tau2.json_stream import MAX_DEPTH, scan_top_level


@pytest.mark.parametrize(
    "head",
    ['{"simulations": ', '{"info": ', '{"info": {"a": 1}, "tasks": [], "simulations": [{"messages": '],
)
def test_nesting_past_the_cap_is_one_clear_error(tmp_path, head):
    path = tmp_path / "results.json"
    path.write_text(head + "[" * (MAX_DEPTH + 5))
    with pytest.raises(UserError, match=f"nested more than {MAX_DEPTH} levels"):
        list(scan_top_level(path, stream_key="simulations"))


def test_nesting_up_to_the_cap_is_read(tmp_path):
    path = tmp_path / "results.json"
    inner = MAX_DEPTH - 3  # top-level object, the simulations array, then nested arrays up to the cap
    path.write_text('{"simulations": [' + "[" * inner + "]" * inner + "]}")
    items = [value for key, value, index in scan_top_level(path, stream_key="simulations") if index is not None]
    depth, value = 0, items[0]
    while isinstance(value, list) and value:
        depth, value = depth + 1, value[0]
    assert len(items) == 1 and depth == inner - 1


#: Runs the CLI and, at exit, writes the process's own peak RSS (VmHWM, kB) to the file named first.
#: (``ru_maxrss`` of a child from ``os.wait4`` would count the pytest process's pages before exec.)
_WITH_PEAK = """
import atexit, sys
out = sys.argv.pop(1)
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(out, "w").write(line.split()[1])
atexit.register(peak)
from tooldiag.cli.main import main
sys.argv[0] = "tooldiag"
main()
"""


def test_a_megabyte_of_brackets_stays_small_and_exits_2(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"simulations": ' + "[" * (1 << 20))
    peak_file = tmp_path / "peak_kb"
    proc = subprocess.run(
        [sys.executable, "-c", _WITH_PEAK, str(peak_file), "tau2", "diagnose", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "nested more than" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    peak_mb = int(peak_file.read_text()) / 1024
    assert peak_mb < 200, f"peak RSS {peak_mb:.0f} MB"
    assert proc.stdout == ""
