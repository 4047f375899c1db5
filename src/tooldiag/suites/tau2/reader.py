"""Open tau2-bench result files in either layout and stream their simulations.

Layouts (notes/tau2-bench.md §8; tau2 calls them "json" and "dir" formats):

* ``json``: one document with ``info``, ``tasks`` and ``simulations``; every 0.1.x-0.2.x
  run (``data/simulations/<name>.json``) and every >=1.0 text run
  (``data/simulations/<run>/results.json``).
* ``dir``: a >=1.0 run folder whose ``results.json`` has no ``simulations`` but a
  ``simulation_index``, plus one ``simulations/<sim_id>.json`` per simulation.

Tasks and policy come from the results file itself, since task sets changed between
versions; a separate tasks file is used only when a file embeds none. Memory: the json
layout is parsed incrementally (:mod:`.json_stream`), so at most one simulation is held
at a time; the dir layout reads one simulation file at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from tooldiag.errors import UserError
from tooldiag.suites.tau2.json_stream import STREAM_PRESENT, load_json_file, scan_top_level
from tooldiag.suites.tau2.schema import ORACLE_IMPLEMENTATION, RunInfo, SimulationRecord, TaskRecord
from tooldiag.suites.tau2.tau2_version import PRE_1_0, SIMULATION_V1_KEYS, V1_0_1, detect_version

Layout = Literal["json", "dir"]

_HEADER_KEYS = frozenset({"timestamp", "info", "tasks", "simulation_index"})


def validation_error(where: str, exc: ValidationError, hint: str | None = None) -> UserError:
    """One line for the first problem pydantic found, with its JSON path."""
    first = exc.errors()[0]
    loc = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"])
    return UserError(
        f"{where}{loc}: {first['msg'].lower()}",
        hint=hint or "this does not look like a tau2-bench results file (see docs/tau2.md)",
    )


def validate_model(model: type[BaseModel], data: Any, where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(where, exc) from None


@dataclass
class ResultsHeader:
    """Everything in a results file except its simulations."""

    #: What the user named (a file or a run folder).
    path: Path
    #: The JSON document holding ``info`` and ``tasks``.
    results_file: Path
    layout: Layout
    timestamp: str | None
    info: RunInfo
    tasks: dict[str, TaskRecord]
    #: ``embedded`` or the path of the tasks file used instead.
    tasks_source: str
    #: dir layout: the simulation files, in index order.
    simulation_files: list[Path] = field(default_factory=list)
    #: The tau2 release that wrote the file (:mod:`.tau2_version`) and the field that says so;
    #: read from the header, refined by the first simulation's fields while streaming.
    version: str = V1_0_1
    version_evidence: str = ""

    @property
    def domain(self) -> str:
        """``info.environment_info.domain_name``, else the tasks' ``instructions.domain``."""
        if self.info.environment_info.domain_name:
            return self.info.environment_info.domain_name
        for task in self.tasks.values():
            scenario = task.user_scenario
            if isinstance(scenario, dict):
                instructions = scenario.get("instructions")
                if isinstance(instructions, dict) and instructions.get("domain"):
                    return str(instructions["domain"])
        raise UserError(
            f"{self.path}: no domain name (info.environment_info.domain_name) and none in the tasks",
            hint="this does not look like a tau2-bench results file",
        )

    @property
    def agent_model(self) -> str:
        return self.info.agent_info.llm or self.info.agent_info.implementation or "unknown-agent"

    @property
    def user_model(self) -> str:
        return self.info.user_info.llm or self.info.user_info.implementation or "unknown-user"

    @property
    def is_oracle(self) -> bool:
        """The agent saw the reference actions (tau2's ``llm_agent_gt``); exclude from comparisons."""
        return self.info.agent_info.implementation == ORACLE_IMPLEMENTATION


class ResultsSource:
    """An opened results file: its header now, its simulations on iteration."""

    def __init__(self, header: ResultsHeader) -> None:
        self.header = header

    def simulations(self) -> Iterator[tuple[str, SimulationRecord]]:
        """Yield ``(position, simulation)``; ``position`` names the file and index."""
        header = self.header
        if header.layout == "json":
            scan = scan_top_level(
                header.results_file, stream_key="simulations", want_keys=frozenset({"simulation_index"})
            )
            for key, item, index in scan:
                if key == "simulation_index":
                    # tau2 dumps it after the simulations, past where the header scan stopped
                    if header.version != V1_0_1:
                        header.version, header.version_evidence = detect_version({key}, (), header.layout)
                    continue
                if index is None:
                    continue
                where = f"{header.results_file}: simulations[{index}]"
                if not isinstance(item, dict):
                    raise UserError(f"{where} is not a JSON object", hint="this does not look like a tau2 results file")
                self._note_version(item)
                yield where, validate_model(SimulationRecord, item, where)
        else:
            for sim_path in header.simulation_files:
                data = load_json_file(sim_path)
                where = str(sim_path)
                if not isinstance(data, dict):
                    raise UserError(f"{where}: not a JSON object", hint="expected one tau2 SimulationRun per file")
                self._note_version(data)
                yield where, validate_model(SimulationRecord, data, where)

    def _note_version(self, simulation: dict[str, Any]) -> None:
        """A 1.0 field on a simulation of a file whose header looked 0.x makes it 1.0.0."""
        header = self.header
        if header.version == PRE_1_0 and SIMULATION_V1_KEYS & simulation.keys():
            header.version, header.version_evidence = detect_version((), (), header.layout, simulation.keys())


def _resolve_results_file(path: Path) -> Path:
    if not path.exists():
        raise UserError(f"{path}: no such file or folder", hint="pass a tau2 results .json file or a run folder")
    if path.is_dir():
        candidate = path / "results.json"
        if not candidate.is_file():
            raise UserError(
                f"{path}: folder has no results.json",
                hint="pass a tau2 run folder (data/simulations/<run>/) or a results .json file",
            )
        return candidate
    return path


def _index_entries(index: Any, where: str) -> list[str]:
    """File names listed by a dir-format ``simulation_index`` (a list or a dict of entries)."""
    if isinstance(index, dict):
        items: list[Any] = []
        for key, entry in index.items():
            items.append(
                entry
                if isinstance(entry, dict) and "id" in entry
                else {"id": key, **(entry if isinstance(entry, dict) else {})}
            )
    elif isinstance(index, list):
        items = index
    else:
        raise UserError(
            f"{where}: simulation_index is neither a list nor an object", hint="re-export the run with tau2"
        )
    names: list[str] = []
    for position, entry in enumerate(items):
        if isinstance(entry, str):
            names.append(f"{entry}.json")
        elif isinstance(entry, dict) and (entry.get("file") or entry.get("path")):
            names.append(Path(str(entry.get("file") or entry.get("path"))).name)
        elif isinstance(entry, dict) and entry.get("id") is not None:
            names.append(f"{entry['id']}.json")
        else:
            raise UserError(
                f"{where}: simulation_index[{position}] names no simulation id", hint="re-export the run with tau2"
            )
    return names


def _load_tasks_file(tasks_file: Path) -> list[Any]:
    data = load_json_file(tasks_file)
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        data = data["tasks"]
    if not isinstance(data, list):
        raise UserError(f"{tasks_file}: not a list of tasks", hint="pass tau2's data/tau2/domains/<domain>/tasks.json")
    return data


def open_results(path: str | Path, *, tasks_file: str | Path | None = None) -> ResultsSource:
    """Read the header of a tau2 results file or run folder; simulations stream later."""
    path = Path(path)
    results_file = _resolve_results_file(path)
    found: dict[str, Any] = {}
    simulations_inline = False
    for key, value, _ in scan_top_level(
        results_file,
        stream_key="simulations",
        want_keys=_HEADER_KEYS,
        stream_items=False,
        stop_at_stream_if_have=frozenset({"info", "tasks"}),
    ):
        if key == "simulations":
            simulations_inline = value is STREAM_PRESENT
        else:
            found[key] = value

    info = validate_model(RunInfo, found.get("info") or {}, f"{results_file}: info")
    raw_tasks = found.get("tasks")
    tasks_source = "embedded"
    if not raw_tasks:
        if tasks_file is None:
            raise UserError(
                f"{results_file}: embeds no tasks",
                hint="pass the tau2 tasks file the run used with --tasks data/tau2/domains/<domain>/tasks.json",
            )
        raw_tasks = _load_tasks_file(Path(tasks_file))
        tasks_source = str(tasks_file)
        where_tasks = str(tasks_file)
    else:
        where_tasks = f"{results_file}: tasks"
    if not isinstance(raw_tasks, list):
        raise UserError(f"{where_tasks} is not a list", hint="this does not look like a tau2 results file")
    tasks: dict[str, TaskRecord] = {}
    for position, raw in enumerate(raw_tasks):
        task = validate_model(TaskRecord, raw, f"{where_tasks}[{position}]")
        tasks[task.id] = task

    layout: Layout = "json"
    simulation_files: list[Path] = []
    if not simulations_inline:
        folder = results_file.parent / "simulations"
        index = found.get("simulation_index")
        if index is not None:
            names = _index_entries(index, str(results_file))
            simulation_files = [folder / name for name in names]
            missing = [p for p in simulation_files if not p.is_file()]
            if missing:
                raise UserError(
                    f"{missing[0]}: listed in {results_file.name}'s simulation_index but missing"
                    + (f" ({len(missing)} missing in all)" if len(missing) > 1 else ""),
                    hint="copy the whole run folder, including simulations/",
                )
        elif folder.is_dir():
            simulation_files = sorted(folder.glob("*.json"))
        if not simulation_files:
            raise UserError(
                f"{results_file}: holds no simulations and no simulations/ folder with any",
                hint="pass a finished tau2 run: a results file with 'simulations', or a run folder with "
                "simulations/*.json",
            )
        layout = "dir"

    raw_info = found.get("info")
    version, evidence = detect_version(found.keys(), raw_info.keys() if isinstance(raw_info, dict) else (), layout)
    header = ResultsHeader(
        version=version,
        version_evidence=evidence,
        path=path,
        results_file=results_file,
        layout=layout,
        timestamp=found.get("timestamp"),
        info=info,
        tasks=tasks,
        tasks_source=tasks_source,
        simulation_files=simulation_files,
    )
    return ResultsSource(header)
