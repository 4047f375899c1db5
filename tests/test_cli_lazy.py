"""The CLI loads only the invoked command's module; the name table matches what modules register."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import typer

from tooldiag.cli import main as cli_main


def registered_names(module_name: str) -> set[str]:
    """The top-level names ``module.register`` adds to a fresh app (read off typer's registry)."""
    scratch = typer.Typer()
    importlib.import_module(module_name).register(scratch)
    commands = {info.name or info.callback.__name__ for info in scratch.registered_commands if info.callback}
    groups = {info.name for info in scratch.registered_groups if info.name}
    return commands | groups


def test_every_module_registers_the_names_the_table_gives_it():
    table: dict[str, set[str]] = {}
    for name, module in cli_main.COMMAND_NAMES.items():
        table.setdefault(module, set()).add(name)
    for module in cli_main.COMMAND_MODULES:
        if module in table:
            assert registered_names(module) == table[module], module
    assert set(table) <= set(cli_main.COMMAND_MODULES)


def test_modules_for_a_command_line():
    every = tuple(cli_main.COMMAND_MODULES)
    assert cli_main.modules_for([]) == every
    assert cli_main.modules_for(["--help"]) == every
    assert cli_main.modules_for(["--help", "run"]) == every
    assert cli_main.modules_for(["no-such-command"]) == every
    run_only = cli_main.modules_for(["run", "bfcl", "--help"])
    assert "tooldiag.cli.run" in run_only and "tooldiag.cli.judgebench" not in run_only


def test_one_command_imports_no_other_command_module(tmp_path):
    script = (
        "import sys\n"
        "from tooldiag.cli.main import main\n"
        "main(['run', 'bfcl', '--help'])\n"
        "print(__import__('json').dumps(sorted(m for m in sys.modules if m.startswith('tooldiag.cli.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "tooldiag.cli.run" in loaded
    assert not loaded & {"tooldiag.cli.judgebench", "tooldiag.cli.tau2", "tooldiag.cli.report", "tooldiag.cli.demo"}
    assert "--model" in done.stdout


def test_the_whole_app_is_still_importable():
    from tooldiag.cli.main import app

    names = {info.name for info in app.registered_groups} | {info.name for info in app.registered_commands}
    assert set(cli_main.COMMAND_NAMES) <= names


def test_the_cli_default_response_cap_is_the_model_options_default():
    from tooldiag.cli.options import DEFAULT_MAX_RESPONSE_BYTES
    from tooldiag.models.base import ModelOptions

    assert ModelOptions().max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES
