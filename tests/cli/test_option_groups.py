"""A shared option block stands where the command declares its slot, and reaches the command as one object."""

from __future__ import annotations

from typing import Annotated

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from tooldiag.cli.classifier_options import ClassifierOptions, classifier_options

Before = Annotated[int, typer.Option("--before")]
After = Annotated[int, typer.Option("--after")]


def _app(seen: list[tuple[int, ClassifierOptions, int]]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @classifier_options(executor=True)
    def probe(before: Before = 1, *, options: ClassifierOptions, after: After = 2) -> None:
        seen.append((before, options, after))

    @app.command()
    def other() -> None:  # a second command keeps `probe` a subcommand
        pass

    return app


def test_the_block_takes_the_slots_place_in_order():
    command = typer.main.get_command(_app([])).commands["probe"]  # type: ignore[attr-defined]
    names = [parameter.name for parameter in command.params]
    assert names == [
        "before",
        "cues",
        "judge",
        "judge_base_url",
        "judge_api_key_env",
        "judge_concurrency",
        "judge_timeout",
        "judge_cache",
        "judge_max_retries",
        "executor",
        "ray_address",
        "after",
    ]


def test_the_values_reach_the_command_as_one_object():
    seen: list[tuple[int, ClassifierOptions, int]] = []
    args = ["probe", "--before", "7", "--judge", "ref/x", "--judge-concurrency", "3", "--no-judge-cache"]
    result = CliRunner().invoke(_app(seen), [*args, "--executor", "ray", "--after", "9"])
    assert result.exit_code == 0, result.output
    before, options, after = seen[0]
    assert (before, after) == (7, 9)
    assert options == ClassifierOptions(judge="ref/x", judge_concurrency=3, judge_cache=False, executor="ray")


def test_the_defaults_are_the_option_defaults():
    seen: list[tuple[int, ClassifierOptions, int]] = []
    result = CliRunner().invoke(_app(seen), ["probe"])
    assert result.exit_code == 0, result.output
    assert seen == [(1, ClassifierOptions(), 2)]
    assert (seen[0][1].judge_concurrency, seen[0][1].judge_max_retries, seen[0][1].judge_cache) == (8, 2, True)


def test_a_command_without_the_slot_is_refused_at_definition():
    def no_slot(before: int = 1) -> None:
        pass

    with pytest.raises(TypeError, match="no parameter 'options'"):
        classifier_options()(no_slot)
