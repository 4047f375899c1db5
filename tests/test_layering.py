"""The house rule, checked: shared layers know no suite, and private names stay in their package.

The README says data flows one way (suite -> runner -> store -> metrics -> report) and that the
shared layers know no suite. Nothing enforced it, so code reached across (a lazy import hidden in
a function, an ``importlib.import_module("tooldiag.suites...")`` string, a private helper imported
from another package). This module makes the rule checkable:

- statically, by parsing every module under ``src/tooldiag`` with :mod:`ast`: every ``import``,
  ``from ... import`` (relative ones resolved, those inside functions and ``TYPE_CHECKING`` blocks
  included) and every ``importlib.import_module("...")`` / ``__import__("...")`` string literal;
- dynamically, by importing the generic layers in a fresh interpreter and looking at
  ``sys.modules``.

The allowed edges are the table :data:`LAYERS` below (CONTRIBUTING.md shows the same table). A
unit is the first name under ``tooldiag`` (``tooldiag.metrics.gar`` -> ``metrics``); an entry
``"classify.classes"`` allows that module (and below) only. A unit may always import itself.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "tooldiag"

#: The floors that must know no suite (issue 10).
GENERIC = (
    "errors",
    "trajectory",
    "sqlite",
    "versions",
    "models",
    "store",
    "classify",
    "metrics",
    "report",
    "diagnose",
    "runner",
    "judges",
)
#: What no generic floor may import, in any form.
ABOVE_GENERIC = ("suites", "cli", "testing", "__main__")

_CORE = ("errors", "trajectory", "sqlite")
#: unit -> what it may import (besides itself). Keep in step with CONTRIBUTING.md.
LAYERS: dict[str, tuple[str, ...]] = {
    "errors": (),
    "trajectory": ("errors",),
    # the one SQLite helper every store and the response cache open files with
    "sqlite": ("errors",),
    # who wrote a file: tooldiag's, a suite's package's and Python's versions (read, never stored here)
    "versions": (PACKAGE,),
    "models": _CORE,
    "store": _CORE,
    "runner": (*_CORE, "models", "store"),
    "judges": (*_CORE, "models", "runner"),
    "classify": (*_CORE, "models", "runner", "judges"),
    "metrics": ("errors", "classify.classes"),
    "report": (*_CORE, "classify", "metrics", "store"),
    "diagnose": (*_CORE, "classify", "metrics", "report"),
    "suites": (*_CORE, "versions", "models", "store", "runner", "judges", "classify", "metrics", "report", "diagnose"),
    # tooldiag/__init__.py serves the front door (api) lazily; never the CLI
    PACKAGE: ("api",),
    # the Python front door: one function per CLI command (tooldiag/__init__.py serves them lazily)
    "api": (*_CORE, "models", "store", "runner", "judges", "classify", "metrics", "report", "diagnose", "suites"),
    "testing": (*_CORE, "models", "store", "runner", "judges", "classify", "metrics", "report", "suites"),
    "cli": (
        *_CORE,
        "models",
        "store",
        "runner",
        "judges",
        "classify",
        "metrics",
        "report",
        "diagnose",
        "suites",
        "api",
    ),
    "__main__": ("cli",),
}

#: Names that belong to one suite. A generic floor that spells them in code (not in prose) holds
#: that suite's facts; the BFCL note keys are the untyped contract issue 10 names.
SUITE_WORDS = re.compile(r"bfcl|tau2|judgebench", re.IGNORECASE)
SUITE_NOTE_KEYS = frozenset({"ground_truth_sizes", "give_back_turns"})


@dataclass(frozen=True)
class ImportRef:
    """One thing a module imports: ``target`` is a module path, ``name`` what was taken from it."""

    importer: str
    line: int
    target: str
    name: str | None = None

    @property
    def full(self) -> str:
        """The imported thing as one dotted path (``from a import b`` -> ``a.b``)."""
        return f"{self.target}.{self.name}" if self.name and self.name != "*" else self.target

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.full}"


# ---------------------------------------------------------------- the checker


def iter_modules(src: Path, package: str) -> Iterator[tuple[str, Path]]:
    """``(dotted module name, file)`` for every ``.py`` under ``src/package``."""
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _resolve_relative(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - level + 1]
    return ".".join([*base, name] if name else base)


def _string_import(node: ast.Call) -> str | None:
    """The literal of ``importlib.import_module("x")``, ``import_module("x")`` or ``__import__("x")``."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called not in {"import_module", "__import__"} or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imports_of(module: str, path: Path) -> list[ImportRef]:
    """Every import in ``path`` wherever it stands (module level, functions, ``if TYPE_CHECKING``)."""
    is_package = path.name == "__init__.py"
    refs: list[ImportRef] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            refs += [ImportRef(module, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                target = _resolve_relative(module, is_package, node.level, node.module)
            refs += [ImportRef(module, node.lineno, target, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and (literal := _string_import(node)):
            refs.append(ImportRef(module, node.lineno, literal))
    return refs


def unit_of(module: str, package: str = PACKAGE) -> str | None:
    """``tooldiag.metrics.gar`` -> ``metrics``; ``tooldiag`` -> ``tooldiag``; outside -> None."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    return parts[1] if len(parts) > 1 else package


def home_package(module: str, package: str = PACKAGE) -> str:
    """Where a private name may travel: one suite (``tooldiag.suites.bfcl``) or one top unit."""
    parts = module.split(".")
    depth = 3 if len(parts) > 2 and parts[1] == "suites" else 2
    return ".".join(parts[:depth])


def _allows(entry: str, relative: str) -> bool:
    return relative == entry or relative.startswith(entry + ".")


def layer_violations(
    refs: Sequence[ImportRef], layers: Mapping[str, Sequence[str]], package: str = PACKAGE
) -> list[str]:
    """Imports inside ``package`` that the table does not allow (a unit without a row is one too)."""
    found: list[str] = []
    for ref in refs:
        source, target_unit = unit_of(ref.importer, package), unit_of(ref.full, package)
        if source is None or target_unit is None or target_unit == source:
            continue
        if source not in layers:
            found.append(f"{ref} ({source} has no row in the layer table)")
            continue
        relative = ref.full.removeprefix(package).removeprefix(".") or package
        # ``from tooldiag.classify.classes import ActionClass``: the module is what is allowed
        relative_module = ref.target.removeprefix(package).removeprefix(".") or package
        if not any(_allows(entry, relative) or _allows(entry, relative_module) for entry in layers[source]):
            found.append(f"{ref} ({source} may import: {', '.join(layers[source]) or 'nothing'})")
    return found


def suite_imports(refs: Sequence[ImportRef], generic: Sequence[str], package: str = PACKAGE) -> list[str]:
    """Imports from a generic unit into ``suites``/``cli``/``testing`` (the rule the issue states)."""
    return [
        str(ref)
        for ref in refs
        if unit_of(ref.importer, package) in generic and unit_of(ref.full, package) in ABOVE_GENERIC
    ]


def _private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def private_violations(refs: Sequence[ImportRef], package: str = PACKAGE) -> list[str]:
    """A private module or name (``_x``) of ``package`` imported from another home package."""
    found: list[str] = []
    for ref in refs:
        if unit_of(ref.full, package) is None:
            continue
        target_home = home_package(ref.full, package)
        if target_home == home_package(ref.importer, package):
            continue
        # segments below the home: ``tooldiag.models._x`` or ``from tooldiag.models.cache import _y``
        below_home = ref.full.split(".")[len(target_home.split(".")) :]
        if any(_private(segment) for segment in below_home):
            found.append(str(ref))
    return found


def suite_vocabulary(module: str, path: Path) -> set[str]:
    """Identifiers naming a suite, and suite note keys as string constants, in one module's code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name]
        elif isinstance(node, ast.Constant) and node.value in SUITE_NOTE_KEYS:
            found.add(f"{module}: {node.value!r}")
        found |= {f"{module}: {name}" for name in names if SUITE_WORDS.search(name)}
    return found


def all_refs(src: Path, package: str) -> list[ImportRef]:
    return [ref for module, path in iter_modules(src, package) for ref in imports_of(module, path)]


# ---------------------------------------------------------------- the checker, proven able to fail


def _write(root: Path, relative: str, text: str = "") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_catches_every_kind_of_reach_in_a_synthetic_package(tmp_path: Path) -> None:
    toy = "toy"
    _write(tmp_path, "toy/__init__.py")
    _write(tmp_path, "toy/errors.py")
    _write(tmp_path, "toy/models/__init__.py", "def later():\n    from toy.suites.alpha import runner\n")
    _write(tmp_path, "toy/models/_secret.py", "VALUE = 1\n")
    _write(tmp_path, "toy/models/base.py", "from toy.models._secret import VALUE\n")  # same package: fine
    _write(tmp_path, "toy/store/__init__.py", 'import importlib\nimportlib.import_module("toy.cli.main")\n')
    _write(
        tmp_path,
        "toy/classify/__init__.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy import suites\n"
        "from toy.models.base import _helper\nfrom toy.models import _secret\n",
    )
    _write(tmp_path, "toy/metrics/__init__.py", "from ..store import thing\nfrom .gar import x\n")
    _write(tmp_path, "toy/metrics/gar.py")
    _write(tmp_path, "toy/suites/__init__.py")
    _write(tmp_path, "toy/suites/alpha/__init__.py", "from toy.suites.alpha.runner import _shared\n")
    _write(tmp_path, "toy/suites/alpha/runner.py", "from toy.suites.beta.core import _other\n")
    _write(tmp_path, "toy/cli/__init__.py")
    _write(tmp_path, "toy/cli/main.py", "from toy.suites.alpha import runner\n")
    _write(tmp_path, "toy/extra/__init__.py", "import toy.errors\n")

    refs = all_refs(tmp_path, toy)
    generic = ("models", "store", "classify", "metrics")
    table = {
        "models": ("errors",),
        "store": ("errors",),
        "classify": ("models",),
        "metrics": ("errors",),
        "suites": ("models",),
        "cli": ("suites",),
        toy: (),
    }

    assert sorted(suite_imports(refs, generic, toy)) == [
        "toy.classify:3 -> toy.suites",
        "toy.models:2 -> toy.suites.alpha.runner",
        "toy.store:2 -> toy.cli.main",
    ]
    assert sorted(private_violations(refs, toy)) == [
        "toy.classify:4 -> toy.models.base._helper",
        "toy.classify:5 -> toy.models._secret",
        "toy.suites.alpha.runner:1 -> toy.suites.beta.core._other",
    ]
    violations = layer_violations(refs, table, toy)
    assert any(v.startswith("toy.metrics:1 -> toy.store.thing") for v in violations)  # relative import resolved
    assert any(v.startswith("toy.extra:1 -> toy.errors (extra has no row") for v in violations)
    assert not any(v.startswith(("toy.metrics:2", "toy.cli.main", "toy.models.base")) for v in violations)


def test_checker_sees_suite_vocabulary_in_code_not_in_prose(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "toy/metrics/gar.py",
        '"""Gold classes, as BFCL defines them."""\n'
        "BFCL_GOLD = {}\n"
        "def gold(notes):\n    return notes.get('give_back_turns')\n",
    )
    found = suite_vocabulary("toy.metrics.gar", tmp_path / "toy/metrics/gar.py")
    assert found == {"toy.metrics.gar: BFCL_GOLD", "toy.metrics.gar: 'give_back_turns'"}


# ---------------------------------------------------------------- the real tree


@pytest.fixture(scope="module")
def refs() -> list[ImportRef]:
    return all_refs(SRC, PACKAGE)


def test_every_unit_has_a_row_in_the_layer_table() -> None:
    units = {unit_of(module) for module, _ in iter_modules(SRC, PACKAGE)}
    assert units - set(LAYERS) == set(), "add the new package to LAYERS (and to CONTRIBUTING.md)"


def test_generic_layers_import_no_suite_and_no_cli(refs: list[ImportRef]) -> None:
    assert suite_imports(refs, GENERIC) == []


def test_imports_follow_the_layer_table(refs: list[ImportRef]) -> None:
    assert layer_violations(refs, LAYERS) == []


def test_no_private_name_crosses_a_package(refs: list[ImportRef]) -> None:
    assert private_violations(refs) == []


def _generic_vocabulary() -> set[str]:
    return {
        item
        for module, path in iter_modules(SRC, PACKAGE)
        if unit_of(module) in GENERIC
        for item in suite_vocabulary(module, path)
    }


def test_generic_layers_hold_no_suite_facts() -> None:
    """No generic floor spells a suite's name or its note keys in code (prose is fine)."""
    assert _generic_vocabulary() == set()


def test_bench_does_not_import_tests() -> None:
    reached = [
        str(ref)
        for path in sorted((ROOT / "bench").glob("*.py"))
        for ref in imports_of(f"bench.{path.stem}", path)
        if ref.full == "tests" or ref.full.startswith("tests.")
    ]
    assert reached == []


def test_importing_generic_layers_loads_no_suite() -> None:
    """The dynamic half: entry points, registries and ``__init__`` side effects included."""
    layers = [f"{PACKAGE}.{unit}" for unit in GENERIC if importlib.util.find_spec(f"{PACKAGE}.{unit}") is not None]
    code = f"import json, sys\nimport {', '.join(layers)}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    loaded = json.loads(done.stdout)
    above = tuple(f"{PACKAGE}.{unit}" for unit in ABOVE_GENERIC)
    assert [name for name in loaded if name.startswith(above)] == []
