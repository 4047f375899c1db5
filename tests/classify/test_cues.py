"""Cue lists are data that users extend with --cues FILE or TOOLDIAG_CUES."""

import json

import pytest

from tooldiag.classify import ActionClass, classify, get_classifier
from tooldiag.errors import UserError

TEXT = "That is above my pay grade."


def write(path, data):
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_extension_file_adds_cues(tmp_path):
    ext = write(tmp_path / "cues.json", {"refuse": ["above my pay grade"], "ask": ["re:\\bwhat say you\\b"]})
    classifier = get_classifier("default", cue_files=[ext])
    assert classify(TEXT) is ActionClass.OTHER
    assert classifier(TEXT, False) is ActionClass.REFUSE
    assert classifier("So, what say you", False) is ActionClass.ASK


def test_extension_can_remove_cues(tmp_path):
    ext = write(tmp_path / "cues.json", {"remove": {"offer": ["is there anything else"]}})
    assert classify("Is there anything else?") is ActionClass.OTHER
    assert get_classifier("default", cue_files=[ext])("Is there anything else?", False) is ActionClass.ASK


def test_environment_variable(tmp_path, monkeypatch):
    ext = write(tmp_path / "cues.json", {"refuse": ["above my pay grade"]})
    monkeypatch.setenv("TOOLDIAG_CUES", str(ext))
    assert classify(TEXT) is ActionClass.REFUSE
    assert classify(TEXT, scheme="paper") is ActionClass.OTHER  # the paper's lists are frozen


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ({"refuse_words": ["x"]}, "unknown cue list 'refuse_words'"),
        ({"refuse": "x"}, "must be a list of strings"),
        ({"refuse": ["re:(unclosed"]}, "bad regular expression"),
        ({"remove": ["x"]}, "'remove' must be an object"),
        ({"refuse": [""]}, "empty entry in list 'refuse'"),
        ({"ask": ["  "]}, "empty entry in list 'ask'"),
        ({"refuse": ["re:"]}, "empty entry in list 'refuse'"),
        ({"refuse": ["re:x*"]}, "matches empty text"),
    ],
)
def test_bad_extension_files_are_user_errors(tmp_path, content, message):
    ext = write(tmp_path / "bad.json", content)
    with pytest.raises(UserError, match=message):
        get_classifier("default", cue_files=[ext])


def test_missing_extension_file(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        get_classifier("default", cue_files=[tmp_path / "nope.json"])
