"""Numeric arithmetic on parsed literals: what Python's ``eval`` of ``1 + 2`` gives.

BFCL ``eval``s call strings, so an argument written as ``-3``, ``2 * 60`` or ``1 << 4``
arrives as a number. Both places that must reproduce that without ``eval`` use this
module: the executor (call arguments) and the prompt-mode decoder of imported result
files. Only numbers are combined (never strings, lists or names), and integer results
are capped in size, so an expression such as ``9 ** 9 ** 9`` is refused instead of
exhausting memory.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
NUMBER_TYPES = (int, float, complex, bool)
MAX_INT_BITS = 100_000


class ArithmeticRefused(ValueError):
    """An operation outside numeric arithmetic, or an integer result too large to compute."""


def _too_large(op: ast.operator, left: Any, right: Any) -> bool:
    if not (type(left) in (int, bool) and type(right) in (int, bool)):
        return False
    left, right = int(left), int(right)
    if isinstance(op, ast.Pow):
        return right > 0 and abs(left) > 1 and right * left.bit_length() > MAX_INT_BITS
    if isinstance(op, ast.LShift):
        return bool(left) and right + left.bit_length() > MAX_INT_BITS
    if isinstance(op, ast.Mult):
        return left.bit_length() + right.bit_length() > MAX_INT_BITS
    return False


def binary(op: ast.operator, left: Any, right: Any) -> Any:
    """``left <op> right`` for numbers; :class:`ArithmeticRefused` otherwise."""
    if type(op) not in BINARY:
        raise ArithmeticRefused(f"operator {type(op).__name__} is not numeric arithmetic")
    if type(left) not in NUMBER_TYPES or type(right) not in NUMBER_TYPES:
        raise ArithmeticRefused("arithmetic is only computed on numbers")
    if _too_large(op, left, right):
        raise ArithmeticRefused("integer result too large to compute")
    return BINARY[type(op)](left, right)


def unary(op: ast.unaryop, operand: Any) -> Any:
    """``<op> operand`` for a number; :class:`ArithmeticRefused` otherwise."""
    if type(operand) not in NUMBER_TYPES:
        raise ArithmeticRefused("unary operators are only computed on numbers")
    return UNARY[type(op)](operand)
