""".ci/run's Chromium step: installs with apt-get only when the browser is missing and CI is root.

The script is sourced in bash (it runs nothing when sourced) and ``ensure_chromium`` is called
with stand-ins for ``id`` and ``apt-get`` first on PATH, so every branch runs without touching
this machine's packages: the fake apt-get records its arguments instead of installing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI_RUN = ROOT / ".ci" / "run"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def ensure_chromium(tmp_path: Path, *, uid: int, apt: str | None, browser: Path | None = None) -> tuple[str, str]:
    """Run ``ensure_chromium``; ``apt`` is the fake apt-get's exit status as text, None for no apt-get."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    calls = tmp_path / "apt-calls"
    (stubs / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    if apt is not None:
        (stubs / "apt-get").write_text(f'#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> {calls}\necho E: stub\nexit {apt}\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    # PATH: the stand-ins, then only what the function itself needs (no real apt-get, no browser).
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    for tool in ("mktemp", "rm", "tail", "sed", "cat"):
        target = tools / tool
        if not target.exists():
            target.symlink_to(shutil.which(tool) or f"/bin/{tool}")
    env = {
        "PATH": f"{stubs}:{tools}",
        "CHROMIUM_BIN": str(browser or tmp_path / "no-chromium"),
        "CHROMIUM_NAMES": "tooldiag-no-such-browser",
        "HOME": os.environ.get("HOME", str(tmp_path)),
    }
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run(
        [bash, "-c", f'source "{CI_RUN}" && ensure_chromium'], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout, calls.read_text() if calls.exists() else ""


def test_script_parses() -> None:
    subprocess.run(["bash", "-n", str(CI_RUN)], check=True)


def test_installs_quietly_when_root_and_missing(tmp_path: Path) -> None:
    out, calls = ensure_chromium(tmp_path, uid=0, apt="0")
    assert calls.splitlines() == [
        "noninteractive update -qq",
        "noninteractive install -y -qq --no-install-recommends chromium fonts-liberation",
    ]
    assert out == "ci: installing Chromium for the browser tests (apt-get install chromium fonts-liberation)\n"


def test_nothing_to_do_when_the_browser_is_there(tmp_path: Path) -> None:
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    assert ensure_chromium(tmp_path, uid=0, apt="0", browser=browser) == ("", "")


def test_not_root_says_the_tests_will_be_skipped(tmp_path: Path) -> None:
    out, calls = ensure_chromium(tmp_path, uid=1000, apt="0")
    assert calls == "" and out.count("\n") == 1
    assert "not root" in out and "browser tests will be skipped" in out


def test_no_apt_get_says_the_tests_will_be_skipped(tmp_path: Path) -> None:
    out, _ = ensure_chromium(tmp_path, uid=0, apt=None)
    assert out == "ci: no Chromium and no apt-get to install it with: the browser tests will be skipped\n"


def test_failed_install_does_not_fail_ci(tmp_path: Path) -> None:
    out, calls = ensure_chromium(tmp_path, uid=0, apt="100")
    assert calls == "noninteractive update -qq\n"  # update failed: install is not attempted
    assert "apt-get install chromium failed: the browser tests will be skipped" in out and "ci:   E: stub" in out
