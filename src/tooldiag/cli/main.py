"""Entry point of the ``tooldiag`` command.

Each command lives in its own module exposing ``register(app)``; this module only
assembles them and turns :class:`~tooldiag.errors.UserError` into one clear line and
exit status 2 (never a traceback).
"""

from __future__ import annotations

import importlib
import io
import sys
from collections.abc import Callable

import typer

from tooldiag.errors import UserError

#: Command modules, in the order their commands appear in ``--help``.
COMMAND_MODULES = [
    "tooldiag.cli.demo",
    "tooldiag.cli.run",
    "tooldiag.cli.import_",
    "tooldiag.cli.export",
    "tooldiag.cli.report",
    "tooldiag.cli.cases",
    "tooldiag.cli.compare",
    "tooldiag.cli.show",
    "tooldiag.cli.classify",
    "tooldiag.cli.diagnose",
    "tooldiag.cli.audit",
    "tooldiag.cli.tau2",
    "tooldiag.cli.judgebench",
    "tooldiag.cli.score_plan",
]

#: The top-level name each command module registers: a command line that names one of these
#: imports and registers only that module (and any module of ``COMMAND_MODULES`` missing
#: here), so ``tooldiag run bfcl`` neither imports the other commands' modules nor has typer
#: build their parameters. ``tests/test_cli_lazy.py`` checks this table against ``register``.
COMMAND_NAMES = {
    "demo": "tooldiag.cli.demo",
    "run": "tooldiag.cli.run",
    "import": "tooldiag.cli.import_",
    "export": "tooldiag.cli.export",
    "report": "tooldiag.cli.report",
    "cases": "tooldiag.cli.cases",
    "show": "tooldiag.cli.show",
    "classify": "tooldiag.cli.classify",
    "diagnose": "tooldiag.cli.diagnose",
    "audit": "tooldiag.cli.audit",
    "tau2": "tooldiag.cli.tau2",
    "judgebench": "tooldiag.cli.judgebench",
    "score-plan": "tooldiag.cli.score_plan",
    "compare": "tooldiag.cli.compare",
}


def _group() -> None:
    """Makes the app a group even with one command registered (typer would otherwise run a
    lone command without its name: `tooldiag cases RUN` would read `cases` as RUN)."""


def _new_app() -> typer.Typer:
    app = typer.Typer(
        name="tooldiag",
        help=(
            "What tool-calling agents really do, and how far the LLM judges grading them can be "
            "trusted.\n\nStart with `tooldiag demo` (offline, no API key), then "
            "`tooldiag run bfcl --model openai/NAME --run-dir runs/NAME`."
        ),
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
    )
    app.callback()(_group)
    return app


_APPS: dict[tuple[str, ...], typer.Typer] = {}


def build_app(modules: tuple[str, ...] = tuple(COMMAND_MODULES)) -> typer.Typer:
    """The CLI with the commands of ``modules`` (all of them by default), built once per set."""
    app = _APPS.get(modules)
    if app is None:
        app = _new_app()
        for module_name in modules:
            importlib.import_module(module_name).register(app)
        _APPS[modules] = app
    return app


def modules_for(args: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the named command's, or all of them (the
    top-level ``--help``, no command, an unknown one: the listing needs every command)."""
    module = COMMAND_NAMES.get(args[0]) if args else None
    if module is None:
        return tuple(COMMAND_MODULES)
    named = set(COMMAND_NAMES.values())
    return tuple(m for m in COMMAND_MODULES if m == module or m not in named)


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole CLI (every command), for callers that drive typer themselves."""
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors print one line and exit with status 2.

    Usage errors (unknown option, value out of range) are the CLI framework's own,
    printed as a short usage message with exit status 2 (standalone mode).
    """
    restore = _replace_unencodable_output()
    if argv is None:
        _prestart_for(sys.argv[1:])
    app = build_app(modules_for(sys.argv[1:] if argv is None else list(argv)))
    try:
        app(args=argv, standalone_mode=True)
    except SystemExit as exc:
        # Standalone mode always exits; a programmatic call (argv given) that
        # succeeded returns instead, so tests and scripts can go on.
        if argv is not None and exc.code in (0, None):
            return
        raise
    except UserError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            typer.echo(f"  fix: {exc.hint}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted; finished cases are stored, re-run the same command to resume", err=True)
        sys.exit(130)
    finally:
        restore()


def _prestart_for(args: list[str]) -> None:
    """``tooldiag run bfcl``: start BFCL's budget worker (the process its backend calls run in) now,
    so that its start-up (about 0.6 s here, most of it importing the backends' modules) overlaps
    this process's imports instead of delaying the first cases (bench/README.md, "Sixth pass").
    Not when the command line sends the cases elsewhere (``--workers N`` above 1, ``--executor``);
    a run that does so by default (``--workers`` left out, many cases) closes it unused."""
    if args[:2] != ["run", "bfcl"] or {"--help", "-h"} & set(args):
        return
    for index, arg in enumerate(args):
        name, _, value = arg.partition("=")
        if name == "--workers" and not value and index + 1 < len(args):
            value = args[index + 1]
        if name == "--executor" or (name == "--workers" and value != "1"):
            return
    from tooldiag.suites.bfcl.budget import prestart_worker

    prestart_worker()


def _replace_unencodable_output() -> Callable[[], None]:
    """Let stdout/stderr write any text: what the terminal's encoding cannot take is escaped (``\\udc80``).

    A file name of non-UTF-8 bytes (which Python decodes to lone surrogates) printed in a
    report, or any character outside a ``LANG=C`` terminal's ASCII, would otherwise end the
    command in a ``UnicodeEncodeError`` traceback half-way through the output.
    Returns what puts the streams' own error handlers back.
    """
    saved: list[tuple[io.TextIOWrapper, str]] = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            saved.append((stream, stream.errors))
            stream.reconfigure(errors="backslashreplace")

    def restore() -> None:
        for stream, errors in saved:
            stream.reconfigure(errors=errors)

    return restore


if __name__ == "__main__":  # pragma: no cover
    main()
