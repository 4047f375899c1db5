"""Execute BFCL call strings on the backend classes without ``eval``.

BFCL's ``execute_multi_turn_func_call`` (``multi_turn_utils.py``) rewrites every known
method name followed by ``(`` into ``<instance>.<name>(`` and ``eval``s the string in
module globals, where instances live forever. That ``eval`` runs model-chosen names
(a tool named ``__import__('os').getpid`` executes), and the global instance cache
leaks state between runs of one id in one process.

:class:`BackendSession` reproduces BFCL's observable behaviour exactly for every
legitimate call, and nothing else:

* the same textual rewrite (the same regex and the same instance names, so even the
  rewriting of method names inside string arguments, a BFCL quirk that affects
  grading, is identical);
* the same denylist check (``kill``, ``exit``, ``quit``, ``remove``, ``unlink``,
  ``popen``, ``Popen``, ``run``) with BFCL's message;
* instead of ``eval``: ``ast.parse`` and a restricted interpreter that accepts only
  literals (and numeric arithmetic, :mod:`~tooldiag.suites.bfcl.arithmetic`) and calls of the form
  ``<known instance>.<public method>(...)``; anything else (an unknown name, attribute
  chains, subscripts, lambdas, comprehensions) becomes
  ``"Error during execution: name '...' is not defined"`` and is never executed;
* the same result strings (``str`` kept, ``dict`` -> ``json.dumps``, else ``str``;
  exceptions -> ``"Error during execution: <message>"``), converted inside the same
  ``try`` as BFCL's, so a result too large for text (``power(base=10, exponent=5000)``:
  Python's 4300-digit int-to-str limit) is BFCL's error string too;
* instances live in the session, so every rollout and every grading call starts from
  a fresh backend.

Known, documented difference: BFCL's ``eval`` also resolves Python builtins and the
module globals of ``multi_turn_utils`` (``len(...)``, ``json.dumps(...)``); here such a
name is "not defined". No ground-truth call and no offered tool is such a name.

Long-context ``TravelAPI`` instances insert the module-level ``CREDIT_CARD_EXTENSION``
and ``BOOKING_RECORD_EXTENSION`` dicts by reference, so a charge on an extension card
would leak into later cases. Each session gets its own deep copy of both (shared by
the session's instances, as BFCL's instances of one case share them).
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import re
import threading
from typing import Any

from tooldiag.suites.bfcl import arithmetic

#: ``kill, exit, ...``: the names BFCL refuses before ``eval``.
DENYLIST = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
_METHOD_PATTERN = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
_NAME_SANITISER = re.compile(r"[-./:]")
#: The message of a call that ran out of memory (under :mod:`~tooldiag.suites.bfcl.budget`,
#: its memory budget); ``str(MemoryError())`` is empty, which would explain nothing.
MEMORY_EXCEEDED = "execution budget exceeded: the call ran out of memory"

_CREATE_LOCK = threading.Lock()
_PUBLIC_METHODS: dict[type, tuple[str, ...]] = {}
_PRISTINE_EXTENSIONS: dict[str, Any] | None = None


class UnsafeCall(Exception):
    """A call string that is not ``<instance>.<method>(<literals>)``; never executed."""


def instance_name(model_name: str, case_id: str, class_name: str) -> str:
    """The global name BFCL gives an instance (``- . / :`` replaced by ``_``)."""
    return _NAME_SANITISER.sub("_", f"{model_name}_{case_id}_{class_name}_instance")


def stringify_result(value: Any) -> str:
    """Turn a backend return value into the string BFCL feeds back."""
    if type(value) == str:  # noqa: E721 - BFCL compares exact types
        return value
    if type(value) == dict:  # noqa: E721
        try:
            return json.dumps(value)
        except Exception:  # noqa: BLE001 - BFCL falls back to str() for anything json cannot dump
            return str(value)
    return str(value)


def _backend_config():
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES

    return CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES


def _public_methods(instance: Any) -> tuple[str, ...]:
    cls = type(instance)
    names = _PUBLIC_METHODS.get(cls)
    if names is None:
        names = tuple(
            name for name, _ in inspect.getmembers(instance, predicate=inspect.ismethod) if not name.startswith("_")
        )
        _PUBLIC_METHODS[cls] = names
    return names


def _pristine_extensions() -> dict[str, Any]:
    global _PRISTINE_EXTENSIONS
    if _PRISTINE_EXTENSIONS is None:
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context

        _PRISTINE_EXTENSIONS = {
            "CREDIT_CARD_EXTENSION": copy.deepcopy(long_context.CREDIT_CARD_EXTENSION),
            "BOOKING_RECORD_EXTENSION": copy.deepcopy(long_context.BOOKING_RECORD_EXTENSION),
        }
    return _PRISTINE_EXTENSIONS


class BackendSession:
    """Backend instances of one rollout or one grading call, and a safe executor."""

    def __init__(self) -> None:
        self.instances: dict[str, Any] = {}
        self._extensions: dict[str, Any] | None = None

    # -- instances -------------------------------------------------------------
    def _create(self, class_name: str, initial_config: dict, long_context: bool) -> Any:
        mapping, stateless = _backend_config()
        module = importlib.import_module(mapping[class_name])
        instance = getattr(module, class_name)()
        if class_name in stateless:
            return instance
        config = copy.deepcopy(initial_config.get(class_name, {}))
        if class_name == "TravelAPI" and long_context:
            if self._extensions is None:
                self._extensions = copy.deepcopy(_pristine_extensions())
            with _CREATE_LOCK:
                saved = {key: getattr(module, key) for key in self._extensions}
                for key, value in self._extensions.items():
                    setattr(module, key, value)
                try:
                    instance._load_scenario(config, long_context=long_context)
                finally:
                    for key, value in saved.items():
                        setattr(module, key, value)
        else:
            instance._load_scenario(config, long_context=long_context)
        return instance

    def execute(
        self,
        func_call_list: list[str],
        initial_config: dict,
        involved_classes: list[str],
        model_name: str,
        test_entry_id: str,
        long_context: bool = False,
        is_evaL_run: bool = False,  # BFCL's parameter name, spelled as BFCL spells it
    ) -> tuple[list[str], dict[str, Any]]:
        """Same contract as BFCL's ``execute_multi_turn_func_call``."""
        if is_evaL_run:
            model_name += "_eval"
        method_to_instance: dict[str, str] = {}
        involved: dict[str, Any] = {}
        for class_name in involved_classes:
            name = instance_name(model_name, test_entry_id, class_name)
            instance = self.instances.get(name)
            if instance is None:
                instance = self._create(class_name, initial_config, long_context)
                self.instances[name] = instance
            involved[class_name] = instance
            for method in _public_methods(instance):
                method_to_instance[method] = name
        results = [self._execute_one(call, method_to_instance) for call in func_call_list]
        return results, involved

    # -- one call --------------------------------------------------------------
    def _execute_one(self, func_call: str, method_to_instance: dict[str, str]) -> str:
        processed = _METHOD_PATTERN.sub(
            lambda m: (
                f"{method_to_instance[m.group(1)]}.{m.group(1)}" if m.group(1) in method_to_instance else m.group(1)
            ),
            func_call,
        )
        head = processed.split("(")[0] if "(" in processed else processed
        if "." in head:
            head = head.split(".")[1]
        if head in DENYLIST:
            return f"Error during execution: Function call {head} is not allowed."
        try:
            tree = ast.parse(processed, filename="<string>", mode="eval")
            value = self._value(tree.body, method_to_instance)
            # Inside the ``try``, as in BFCL: a result that cannot become text (an int past
            # Python's 4300-digit str limit) is BFCL's error string, not an exception.
            return stringify_result(value)
        except MemoryError:
            return f"Error during execution: {MEMORY_EXCEEDED}"
        except Exception as exc:  # noqa: BLE001 - every failure becomes BFCL's error string
            return f"Error during execution: {exc}"

    def _value(self, node: ast.AST, methods: dict[str, str]) -> Any:
        if isinstance(node, ast.Call):
            return self._call(node, methods)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            raise NameError(f"name '{node.id}' is not defined")
        if isinstance(node, ast.List):
            return [self._value(e, methods) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self._value(e, methods) for e in node.elts)
        if isinstance(node, ast.Set):
            return {self._value(e, methods) for e in node.elts}
        if isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            if len(keys) != len(node.keys):
                raise UnsafeCall("dict unpacking is not supported")
            return {self._value(k, methods): self._value(v, methods) for k, v in zip(keys, node.values)}
        if isinstance(node, ast.UnaryOp):
            return arithmetic.unary(node.op, self._value(node.operand, methods))
        if isinstance(node, ast.BinOp):
            return arithmetic.binary(node.op, self._value(node.left, methods), self._value(node.right, methods))
        raise UnsafeCall(f"name '{ast.unparse(node)}' is not defined")

    def _call(self, node: ast.Call, methods: dict[str, str]) -> Any:
        func = node.func
        if isinstance(func, ast.Name):
            raise NameError(f"name '{func.id}' is not defined")
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and methods.get(func.attr) == func.value.id
            and func.value.id in self.instances
        ):
            raise UnsafeCall(f"name '{ast.unparse(func)}' is not defined")
        target = getattr(self.instances[func.value.id], func.attr)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise UnsafeCall("argument unpacking is not supported")
            args.append(self._value(arg, methods))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise UnsafeCall("keyword unpacking is not supported")
            kwargs[keyword.arg] = self._value(keyword.value, methods)
        return target(*args, **kwargs)


def render_call(name: str, arguments: dict[str, Any]) -> str:
    """``name(k=repr(v),...)``, as BFCL's ``convert_to_function_call`` builds it.

    The name is inserted verbatim, as in BFCL; the executor, not this function,
    decides what may run.
    """
    return f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"
