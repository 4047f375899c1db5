"""The one --out writer and the one JSONL reader of the CLI, with each command's wording."""

import io
import sys

import pytest

from tooldiag.cli.io import (
    CLASSIFY_INPUT,
    JSONL_OUT,
    REPORT_OUT,
    SCORE_PLAN_INPUT,
    iter_jsonl,
    jsonl_name,
    open_out,
    write_out,
)
from tooldiag.errors import UserError


def test_write_out_to_stdout_or_a_file_in_a_new_folder(tmp_path, capsys):
    write_out("to stdout\n", None)
    assert capsys.readouterr().out == "to stdout\n"
    target = tmp_path / "new" / "deeper" / "r.md"
    write_out("to a file\n", target)
    captured = capsys.readouterr()
    assert target.read_text() == "to a file\n" and captured.out == "" and captured.err == f"wrote {target}\n"


def test_bad_out_paths_are_user_errors_in_each_commands_words(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    with pytest.raises(UserError) as info:
        write_out("x", tmp_path)
    assert (
        info.value.message == f"{tmp_path}: cannot write (Is a directory)"
        and info.value.hint == REPORT_OUT.cannot_write_hint
    )
    with pytest.raises(UserError, match=r"a_file/x.md: cannot write \(File exists\)"):
        write_out("x", a_file / "x.md")
    with pytest.raises(UserError) as info, open_out(tmp_path, JSONL_OUT):
        pass
    assert info.value.message == f"--out {tmp_path} is a folder; --format jsonl writes a file"
    with pytest.raises(UserError) as info, open_out(a_file / "e.jsonl", JSONL_OUT):
        pass
    assert info.value.message == f"cannot write {a_file / 'e.jsonl'} (File exists)"


def test_open_out_streams_into_a_file_and_leaves_stdout_open(tmp_path):
    target = tmp_path / "n" / "e.jsonl"
    with open_out(target, JSONL_OUT) as handle:
        handle.write("{}\n")
    assert handle.closed and target.read_text() == "{}\n"
    with open_out(None) as handle:
        assert handle is sys.stdout
    assert not sys.stdout.closed


def test_iter_jsonl_numbers_lines_and_skips_blank_ones(tmp_path, monkeypatch):
    source = tmp_path / "in.jsonl"
    source.write_text('{"a": 1}\n\n  \n[2]\n"three"\r\n')
    assert list(iter_jsonl(str(source))) == [(1, {"a": 1}), (4, [2]), (5, "three")]
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"b": 2}\n'))
    assert list(iter_jsonl("-")) == [(1, {"b": 2})]
    assert jsonl_name("-", CLASSIFY_INPUT) == "stdin"


def test_iter_jsonl_errors_in_each_commands_words(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\nnope\n')
    with pytest.raises(UserError, match=r"bad.jsonl line 2: not valid JSON \(Expecting value\)"):
        list(iter_jsonl(str(bad), CLASSIFY_INPUT))
    with pytest.raises(UserError, match=r"bad.jsonl:2 is not valid JSON \(Expecting value\)"):
        list(iter_jsonl(str(bad), SCORE_PLAN_INPUT))
    # a missing input fails when asked, before a command opens its output
    with pytest.raises(UserError, match=r"missing\.jsonl does not exist"):
        iter_jsonl(str(tmp_path / "missing.jsonl"), CLASSIFY_INPUT)
    with pytest.raises(UserError, match="is a directory"):
        iter_jsonl(str(tmp_path), CLASSIFY_INPUT)
    with pytest.raises(UserError, match="is not a file"):
        iter_jsonl(str(tmp_path), SCORE_PLAN_INPUT)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"a": "\xff"}\n')
    with pytest.raises(UserError, match=r"latin.jsonl is not UTF-8 text \(invalid start byte\)"):
        list(iter_jsonl(str(latin)))
