"""Human (or LLM-rater) audit labels attached to a BFCL run (paper 001 App. F).

The paper validates its classifier against an audit in which two raters label
trajectories and a third adjudicates their disagreements. ``tooldiag audit import``
reads such labels in one small JSONL format (docs/diagnostic.md, *Audit labels*), checks
every line against the run it is attached to, and keeps them next to the run's store in
``<run_dir>/audit_labels.jsonl``; ``tooldiag audit report``
(:mod:`tooldiag.suites.bfcl.audit_report`) compares the raters with each other and
with the classifier.

Why a side file and not a table in ``run.sqlite``: labels are the auditors' data, not
the run's; a plain sorted JSONL file can be read, diffed and shared without tooldiag,
and the store's schema stays the run's own. The file is replaced atomically (write a
temporary file, then ``os.replace``), so an import that fails half-way, or a bad input
line, leaves the stored labels exactly as they were.

One row is one label of one *item* by one rater: an item is a whole case (no ``turn``)
or one turn of a case (``turn``, counted from 0 as BFCL and ``tooldiag export`` count
them). The key of a row is ``(case_id, turn, rater)``: importing the same rows again
changes nothing, and a row whose label differs from the stored one replaces it (and
is counted, so the user sees it). The adjudicated label of an item is the row whose
rater is :data:`ADJUDICATED`; there is no other way to mark one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldiag.classify.classes import ActionClass, parse_action_class
from tooldiag.errors import StoreError, UserError
from tooldiag.store import RunStore
from tooldiag.suites.bfcl.ids import case_id_order

#: File of the stored labels inside a run directory.
AUDIT_FILE = "audit_labels.jsonl"
#: The rater name of an adjudicated label (the third rater's verdict on an item).
ADJUDICATED = "adjudicated"
#: Fields of one row; ``turn`` and ``note`` are optional.
FIELDS = ("case_id", "rater", "label", "turn", "note")
_REQUIRED = ("case_id", "rater", "label")
_DOCS = "docs/diagnostic.md, section 'Audit labels'"
_EXAMPLE = '{"case_id": "multi_turn_miss_param_12", "rater": "r1", "label": "ask", "turn": 2}'
#: Keys of the paper's released audit file (one row per case, both raters' B1a..B7 codes).
_RELEASED_AUDIT_KEYS = ("rater_a", "rater_b")

#: ``(case_id, turn)``: one audited item (``turn`` ``None``: the whole case).
Item = tuple[str, int | None]


@dataclass(frozen=True)
class AuditLabel:
    """One rater's action class for one item."""

    case_id: str
    turn: int | None
    rater: str
    label: ActionClass
    note: str | None = None

    @property
    def item(self) -> Item:
        return (self.case_id, self.turn)

    @property
    def key(self) -> tuple[str, int | None, str]:
        return (self.case_id, self.turn, self.rater)

    @property
    def adjudicated(self) -> bool:
        return self.rater == ADJUDICATED

    def to_json(self) -> dict[str, Any]:
        """The stored row: the input format, with absent optional fields left out."""
        row: dict[str, Any] = {"case_id": self.case_id}
        if self.turn is not None:
            row["turn"] = self.turn
        row["rater"] = self.rater
        row["label"] = self.label.value
        if self.note is not None:
            row["note"] = self.note
        return row


def item_order(item: Item) -> tuple[Any, ...]:
    """BFCL case order, the case-level item before the case's turns."""
    case_id, turn = item
    return (case_id_order(case_id), -1 if turn is None else turn)


def label_order(label: AuditLabel) -> tuple[Any, ...]:
    return (*item_order(label.item), label.rater)


# -- one row ------------------------------------------------------------------------------------
def _text_field(row: dict[str, Any], name: str, where: str) -> str:
    value = row[name]
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: '{name}' must be a non-empty string, got {value!r}", hint=f"e.g. {_EXAMPLE}")
    return value.strip()


def parse_label_row(row: Any, where: str) -> AuditLabel:
    """One input row as an :class:`AuditLabel`; a :class:`UserError` naming ``where`` otherwise."""
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(row).__name__}", hint=f"e.g. {_EXAMPLE}")
    if all(key in row for key in _RELEASED_AUDIT_KEYS):
        raise UserError(
            f"{where}: this is the paper's released audit file (rubric codes B1a..B7 per rater, not action classes)",
            hint=f"convert it to one row per case x rater first, as {_DOCS} shows",
        )
    for key in row:
        if key == "adjudicated":
            raise UserError(
                f"{where}: unknown field 'adjudicated'",
                hint=f'an adjudicated label is a row with "rater": "{ADJUDICATED}" ({_DOCS})',
            )
        if key not in FIELDS:
            raise UserError(f"{where}: unknown field {key!r}", hint="fields: " + ", ".join(FIELDS) + f" ({_DOCS})")
    for key in _REQUIRED:
        if key not in row:
            raise UserError(f"{where}: no {key!r} field", hint=f"every row needs case_id, rater and label: {_EXAMPLE}")
    turn = row.get("turn")
    if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 0):
        raise UserError(
            f"{where}: 'turn' must be a turn index (0, 1, ...), got {turn!r}",
            hint="turns count from 0 as in `tooldiag export`; leave 'turn' out for a label of the whole case",
        )
    note = row.get("note")
    if note is not None and not isinstance(note, str):
        raise UserError(f"{where}: 'note' must be a string, got {type(note).__name__}", hint="write the note as text")
    return AuditLabel(
        case_id=_text_field(row, "case_id", where),
        turn=turn,
        rater=_text_field(row, "rater", where),
        label=parse_action_class(row["label"], where=f"{where}: label"),
        note=note,
    )


# -- one file -----------------------------------------------------------------------------------
def read_label_file(path: str | Path) -> list[tuple[int, AuditLabel]]:
    """``(line number, label)`` of every non-blank line; the first bad line raises.

    Two rows of one key with different labels are refused (which one would count?);
    an exact repeat is kept once.
    """
    path = Path(path)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UserError(f"{path} {what}", hint=f"give the audit-label JSONL file ({_DOCS})")
    out: list[tuple[int, AuditLabel]] = []
    seen: dict[tuple[str, int | None, str], tuple[int, AuditLabel]] = {}
    try:
        with path.open(encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                where = f"{path} line {number}"
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(
                        f"{where}: not valid JSON ({exc.msg})", hint=f"one JSON object per line: {_EXAMPLE}"
                    ) from None
                label = parse_label_row(value, where)
                earlier = seen.get(label.key)
                if earlier is not None:
                    if earlier[1].label is not label.label:
                        raise UserError(
                            f"{where}: {_describe(label)} was labelled {earlier[1].label.value!r} on line "
                            f"{earlier[0]} and {label.label.value!r} here",
                            hint="keep one row per case x turn x rater",
                        )
                    continue
                seen[label.key] = (number, label)
                out.append((number, label))
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text ({exc.reason})", hint="save the file as UTF-8 JSONL") from None
    if not out:
        raise UserError(f"{path} holds no labels", hint=f"one JSON object per line: {_EXAMPLE}")
    return out


def _describe(label: AuditLabel) -> str:
    turn = "" if label.turn is None else f" turn {label.turn}"
    return f"case {label.case_id}{turn} (rater {label.rater})"


def check_against_run(labels: Sequence[tuple[int, AuditLabel]], store: RunStore, source: str | Path) -> None:
    """Every label names a case of the run, and a turn that case has."""
    if store.config.suite != "bfcl":
        raise UserError(
            f"{store.run_dir} is a {store.config.suite} run; audit labels attach to BFCL runs",
            hint="give the --run-dir of a `tooldiag run bfcl` or `tooldiag import bfcl` run",
        )
    turn_counts: dict[str, int | None] = {}
    for number, label in labels:
        if label.case_id not in turn_counts:
            record = store.get_case(label.case_id)
            turn_counts[label.case_id] = None if record is None else len(record.trajectory.turns)
        turns = turn_counts[label.case_id]
        where = f"{source} line {number}"
        if turns is None:
            raise UserError(
                f"{where}: case {label.case_id!r} is not in the run at {store.run_dir} ({store.count()} cases)",
                hint="label cases of this run (`tooldiag export RUN_DIR` lists them), or import into the run "
                "of the audited model",
            )
        if label.turn is not None and label.turn >= turns:
            span = f"turns 0..{turns - 1}" if turns else "no turns"
            raise UserError(
                f"{where}: case {label.case_id} has {span}, not turn {label.turn}",
                hint="turns count from 0 as in `tooldiag export`; leave 'turn' out for a label of the whole case",
            )


# -- the stored labels --------------------------------------------------------------------------
def labels_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / AUDIT_FILE


def load_labels(run_dir: str | Path) -> list[AuditLabel]:
    """The labels stored with a run (none yet: an empty list)."""
    path = labels_path(run_dir)
    if not path.is_file():
        return []
    labels = []
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                labels.append(parse_label_row(json.loads(line), f"{path} line {number}"))
            except (json.JSONDecodeError, UserError) as exc:
                raise StoreError(
                    f"{path} line {number} is unreadable ({exc})",
                    hint="the stored audit labels are damaged; delete the file and import the labels again",
                ) from None
    return labels


def write_labels(run_dir: str | Path, labels: Iterable[AuditLabel]) -> Path:
    """Replace the stored labels atomically (rows in BFCL case order, then turn, then rater)."""
    path = labels_path(run_dir)
    text = "".join(json.dumps(label.to_json(), ensure_ascii=False) + "\n" for label in sorted(labels, key=label_order))
    handle, temporary = tempfile.mkstemp(prefix=".audit_labels.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


@dataclass(frozen=True)
class ImportSummary:
    """What an import did: rows read, and how each changed the stored labels."""

    read: int
    added: int
    unchanged: int
    #: Rows whose key was stored with another label (the new label replaced it).
    replaced: int
    #: Rows stored after the import, and their distinct items and raters.
    stored: int
    items: int
    raters: tuple[str, ...]
    path: Path

    def line(self) -> str:
        raters = ", ".join(r for r in self.raters if r != ADJUDICATED) or "none"
        adjudicated = " and adjudicated labels" if ADJUDICATED in self.raters else ""
        return (
            f"{self.read} label(s) read: {self.added} added, {self.unchanged} unchanged, {self.replaced} replaced; "
            f"{self.stored} stored for {self.items} item(s), raters {raters}{adjudicated} ({self.path})"
        )


def merge_labels(
    stored: Sequence[AuditLabel], new: Sequence[AuditLabel]
) -> tuple[list[AuditLabel], tuple[int, int, int]]:
    """``stored`` updated by ``new`` (by key), and the counts (added, unchanged, replaced).

    A row with the stored label but another note refreshes the note and counts as unchanged.
    """
    merged = {label.key: label for label in stored}
    added = unchanged = replaced = 0
    for label in new:
        old = merged.get(label.key)
        if old is None:
            added += 1
        elif old.label is label.label:
            unchanged += 1
        else:
            replaced += 1
        merged[label.key] = label
    return list(merged.values()), (added, unchanged, replaced)


def import_audit_labels(file: str | Path, run_dir: str | Path) -> ImportSummary:
    """``tooldiag audit import``: validate every row of ``file``, then merge it into the run's labels.

    Nothing is written unless every row is valid and names a case (and turn) of the run.
    """
    rows = read_label_file(file)
    store = RunStore.open(run_dir, sort_key=case_id_order)
    try:
        check_against_run(rows, store, file)
    finally:
        store.close()
    merged, (added, unchanged, replaced) = merge_labels(load_labels(run_dir), [label for _, label in rows])
    path = write_labels(run_dir, merged)
    return ImportSummary(
        read=len(rows),
        added=added,
        unchanged=unchanged,
        replaced=replaced,
        stored=len(merged),
        items=len({label.item for label in merged}),
        raters=tuple(sorted({label.rater for label in merged})),
        path=path,
    )
