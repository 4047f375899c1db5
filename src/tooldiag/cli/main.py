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
    "tooldiag.cli.show",
    "tooldiag.cli.classify",
    "tooldiag.cli.diagnose",
    "tooldiag.cli.audit",
    "tooldiag.cli.tau2",
    "tooldiag.cli.judgebench",
    "tooldiag.cli.score_plan",
]

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


def _load_commands() -> None:
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.register(app)


_load_commands()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; user errors print one line and exit with status 2.

    Usage errors (unknown option, value out of range) are the CLI framework's own,
    printed as a short usage message with exit status 2 (standalone mode).
    """
    restore = _replace_unencodable_output()
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
