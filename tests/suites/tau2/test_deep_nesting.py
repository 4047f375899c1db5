"""Deeply nested JSON cannot blow up `tau2 diagnose`: memory stays bounded and the file is refused
with one line (issue 20, defect 1: prefixed ijson events made memory grow with the square of the
depth; a 40 KB file of `[` peaked at 3.9 GB)."""

import os
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


def test_a_megabyte_of_brackets_stays_small_and_exits_2(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"simulations": ' + "[" * (1 << 20))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooldiag", "tau2", "diagnose", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    peak_mb = usage.ru_maxrss / 1024  # Linux: KiB
    assert os.waitstatus_to_exitcode(status) == 2, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "nested more than" in lines[0] and "Traceback" not in err, err
    assert peak_mb < 200, f"peak RSS {peak_mb:.0f} MB"
    assert out == ""
