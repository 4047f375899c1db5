"""A block of typer options that several commands share, written once: :func:`option_group`.

Why: typer reads a command's options from its signature, so a block of options shared by several
commands would otherwise be the same run of parameters in each signature (and the same call that
gathers them up in each body). Here the command declares ONE parameter where the block belongs, typed
by the object the block fills in (``call: ModelCall``, ``options: ClassifierOptions``); the decorator
puts the block's parameters in its place in the signature typer reads, so ``--help`` lists them there,
in the block's order, and calls the command with their values packed into that one object.

What a command accepts stays readable in one place: the block's module lists its options, names,
defaults and order (``cli/model_call.py``, ``cli/classifier_options.py``).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from typing import Any

Command = Callable[..., None]


def keyword_parameters(annotated: Sequence[tuple[str, Any, Any]]) -> list[inspect.Parameter]:
    """``(name, typer annotation, default)`` triples as the keyword-only parameters of an option group."""
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in annotated
    ]


def option_group(
    slot: str, group: Sequence[inspect.Parameter], pack: Callable[..., Any]
) -> Callable[[Command], Command]:
    """Replace the command's parameter ``slot`` by the parameters ``group``, in its place; the command is
    called with ``slot=pack(**their values)`` and its own parameters as given.

    The command's own parameters become keyword-only (typer passes every value by name), so the slot may
    stand between parameters with defaults as ``*, slot: Type``. A command without ``slot`` is a
    programming error, refused when the module is imported."""
    names = [parameter.name for parameter in group]

    def decorate(command: Command) -> Command:
        hints = typing.get_type_hints(command, include_extras=True)
        own = inspect.signature(command).parameters
        if slot not in own:
            raise TypeError(f"{command.__name__} has no parameter {slot!r} for its shared options")
        parameters: list[inspect.Parameter] = []
        for name, parameter in own.items():
            if name == slot:
                parameters.extend(group)
            else:
                annotation = hints.get(name, parameter.annotation)
                parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=annotation))

        @functools.wraps(command)
        def wrapper(**values: Any) -> None:
            packed = pack(**{name: values.pop(name) for name in names})
            command(**values, **{slot: packed})

        wrapper.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return wrapper

    return decorate
