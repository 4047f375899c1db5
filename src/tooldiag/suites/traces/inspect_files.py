"""Reading Inspect AI log files without ``inspect_ai``: the ``.eval`` zip and the ``.json`` log.

Layout (inspect_ai's ``log/_recorders/eval.py`` and ``log/_log.py``; ``inspect log schema``):

* ``.eval``: a zip archive. ``header.json`` is the finished log without its samples (``eval``,
  ``plan``, ``results``, ``stats``, ``status``); a log still being written has only
  ``_journal/start.json`` (``eval`` and ``plan``). Each sample and epoch is one member
  ``samples/<id>_epoch_<n>.json``; ``summaries.json``, ``reductions.json`` and ``_journal/`` hold
  nothing the diagnostic needs. Members are DEFLATE-compressed in older logs and Zstandard-
  compressed (zip method 93) in current ones; Python's ``zipfile`` cannot decompress method 93
  before 3.14, so such a member's raw bytes are read from its local header and decompressed with
  the ``zstandard`` package, checked against the CRC the archive records.
* ``.json``: one object, the same header fields plus ``samples`` (a list).

Samples of a ``.eval`` log are read one at a time, so memory is bounded by the largest sample; a
``.json`` log is one JSON document and is read whole (use ``.eval`` for very large runs).

Every problem is one :class:`~tooldiag.errors.UserError` naming the file and what was expected.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldiag.errors import UserError

#: zip compression method of Zstandard (APPNOTE 4.4.5), what current inspect_ai writes.
ZIP_ZSTANDARD = 93
#: ``--format`` values of ``tooldiag import inspect``.
INSPECT_FORMATS = ("eval", "json")

_HINT = "give an Inspect AI log: a .eval file (inspect eval --log-format eval) or a .json log (--log-format json)"
_LOCAL_HEADER = struct.Struct("<4s22xHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"


@dataclass(frozen=True)
class InspectLogFile:
    """One Inspect log: its header (everything but the samples) and a way to read the samples."""

    path: Path
    format: str
    header: dict[str, Any]

    def samples(self) -> Iterator[dict[str, Any]]:
        """The samples as JSON objects, one at a time (file order: not sorted)."""
        if self.format == "json":
            yield from _json_samples(self.path)
        else:
            yield from _eval_samples(self.path)


def detect_format(path: Path) -> str:
    """``eval`` for a zip archive, ``json`` for a JSON document; a :class:`UserError` otherwise."""
    try:
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file ({exc.strerror})", hint=_HINT) from None
    if head.startswith(b"PK"):
        return "eval"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "json"
    raise UserError(f"{path}: not an Inspect AI log (expected a .eval zip archive or a .json log)", hint=_HINT)


def open_inspect_log(path: Path, fmt: str | None = None) -> InspectLogFile:
    """The log at ``path`` (``fmt``: ``eval`` or ``json``; ``None`` detects it from the bytes)."""
    if fmt is not None and fmt not in INSPECT_FORMATS:
        raise UserError(f"unknown Inspect log format {fmt!r}", hint=f"use one of: {', '.join(INSPECT_FORMATS)}")
    fmt = fmt or detect_format(path)
    header = _eval_header(path) if fmt == "eval" else _json_header(path)
    return InspectLogFile(path=path, format=fmt, header=header)


def _checked_header(obj: Any, path: Path, where: str) -> dict[str, Any]:
    """The header object, refused unless it carries an ``eval`` spec naming the task."""
    spec = obj.get("eval") if isinstance(obj, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("task"), str):
        raise UserError(
            f"{path}: not an Inspect AI log ({where} has no 'eval' object naming the task)",
            hint=_HINT,
        )
    return obj


# ---------------------------------------------------------------- .json logs


def _json_document(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"{path}: truncated or not a JSON Inspect log ({exc})",
            hint=_HINT,
        ) from None


def _json_header(path: Path) -> dict[str, Any]:
    document = _checked_header(_json_document(path), path, "the JSON document")
    samples = document.get("samples")
    if samples is not None and not isinstance(samples, list):
        raise UserError(f"{path}: 'samples' of an Inspect log must be a list", hint=_HINT)
    return {key: value for key, value in document.items() if key not in ("samples", "reductions")}


def _json_samples(path: Path) -> Iterator[dict[str, Any]]:
    samples = _json_document(path).get("samples") or []
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise UserError(f"{path}: samples[{index}] is not a JSON object", hint=_HINT)
        yield sample


# ---------------------------------------------------------------- .eval logs


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise UserError(
            f"{path}: truncated or damaged .eval log (expected a complete zip archive: {exc})",
            hint=_HINT,
        ) from None


def _member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """The decompressed bytes of one member: stored/DEFLATE by ``zipfile``, Zstandard by ``zstandard``."""
    where = f"{path} member {info.filename}"
    try:
        if info.compress_type != ZIP_ZSTANDARD:
            return archive.read(info)
        import zstandard

        handle = archive.fp
        if handle is None:  # pragma: no cover - the archive is open while members are read
            raise OSError("archive closed")
        handle.seek(info.header_offset)
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
        if signature != _LOCAL_SIGNATURE:
            raise zipfile.BadZipFile("bad local file header")
        handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        raw = handle.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise zipfile.BadZipFile("member is cut short")
        data = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile("CRC or size mismatch after Zstandard decompression")
        return data
    except NotImplementedError as exc:
        raise UserError(f"{where}: unsupported zip compression ({exc})", hint=_HINT) from None
    except (zipfile.BadZipFile, OSError, EOFError, struct.error, zlib.error) as exc:
        raise UserError(f"{where}: truncated or damaged ({exc})", hint=_HINT) from None
    except Exception as exc:  # zstandard.ZstdError: the module is imported lazily
        if type(exc).__name__ == "ZstdError":
            raise UserError(f"{where}: damaged Zstandard data ({exc})", hint=_HINT) from None
        raise


def _member_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Any:
    data = _member_bytes(archive, info, path)
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path} member {info.filename}: not valid JSON ({exc})", hint=_HINT) from None


def _latest_members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """Members by name, the last copy winning (inspect_ai rewrites ``header.json`` by appending)."""
    return {info.filename: info for info in archive.infolist()}


def _eval_header(path: Path) -> dict[str, Any]:
    with _open_zip(path) as archive:
        members = _latest_members(archive)
        for name in ("header.json", "_journal/start.json"):
            if name in members:
                return _checked_header(_member_json(archive, members[name], path), path, name)
    raise UserError(
        f"{path}: not an Inspect .eval log (the zip archive has no header.json or _journal/start.json)",
        hint=_HINT,
    )


def _eval_samples(path: Path) -> Iterator[dict[str, Any]]:
    with _open_zip(path) as archive:
        members = _latest_members(archive)
        for name, info in members.items():
            if not (name.startswith("samples/") and name.endswith(".json")):
                continue
            sample = _member_json(archive, info, path)
            if not isinstance(sample, dict):
                raise UserError(f"{path} member {name}: a sample must be a JSON object", hint=_HINT)
            yield sample
