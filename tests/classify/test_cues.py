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


# -- per-language lists ("languages": {code: {...}}) -----------------------------------

NL_LISTS = {
    "ask": ["wat is uw", "kunt u mij"],
    "refuse": ["ik kan niet", "ik kan geen", "helaas kan ik"],
    "consent": ["zal ik doorgaan", "re:\\bzal ik (?:de|het) \\w+ (?:annuleren|boeken)"],
    "offer": ["kan ik nog ergens mee helpen", "nog iets anders"],
}


def test_extension_extends_a_builtin_language(tmp_path):
    ext = write(tmp_path / "es.json", {"languages": {"es": {"refuse": ["no me corresponde"]}}})
    text = "Eso no me corresponde, lo siento."
    assert classify(text) is ActionClass.OTHER
    assert get_classifier("default", cue_files=[ext])(text, False) is ActionClass.REFUSE


def test_extension_removes_from_a_builtin_language(tmp_path):
    ext = write(tmp_path / "es.json", {"languages": {"es": {"remove": {"offer": ["le interesa"]}}}})
    text = "¿Le interesa la tarifa con equipaje?"
    assert classify(text) is ActionClass.OTHER
    assert get_classifier("default", cue_files=[ext])(text, False) is ActionClass.ASK


def test_extension_adds_a_new_language(tmp_path):
    ext = write(tmp_path / "nl.json", {"languages": {"nl": NL_LISTS}})
    text = "Helaas kan ik geen hotels boeken."
    assert classify(text) is ActionClass.OTHER  # structural rules only
    classifier = get_classifier("default", cue_files=[ext])
    assert "nl" in classifier.languages and "nl" not in get_classifier("default").languages
    assert classifier(text, False) is ActionClass.REFUSE
    assert classifier("Ik annuleer de bestelling. Zal ik doorgaan?", False) is ActionClass.CONFIRM
    assert classifier("Uw bestelling is geannuleerd. Kan ik nog ergens mee helpen?", False) is ActionClass.OTHER


def test_languages_en_means_the_top_level_lists(tmp_path):
    ext = write(tmp_path / "en.json", {"languages": {"en": {"refuse": ["above my pay grade"]}}})
    assert get_classifier("default", cue_files=[ext])(TEXT, False) is ActionClass.REFUSE


@pytest.mark.parametrize(
    "content, message",
    [
        ({"languages": ["es"]}, "'languages' must be an object"),
        ({"languages": {"spanish": {"refuse": ["x"]}}}, "'spanish' is not a language code"),
        ({"languages": {"ES": {"refuse": ["x"]}}}, "'ES' is not a language code"),
        ({"languages": {"es": ["x"]}}, "languages.es must be an object"),
        ({"languages": {"es": {"refuse_words": ["x"]}}}, "language 'es': unknown cue list 'refuse_words'"),
        ({"languages": {"es": {"refuse": [""]}}}, "language 'es': empty entry"),
        ({"languages": {"es": {"refuse": ["re:(x"]}}}, "bad regular expression"),
        ({"languages": {"nl": {"refuse": ["ik kan niet"]}}}, "language 'nl' has no built-in cue data"),
        ({"languages": {"en": {"question_words": ["wat"]}}}, "unknown cue list 'question_words'"),
    ],
)
def test_bad_language_sections_are_user_errors(tmp_path, content, message):
    ext = write(tmp_path / "bad.json", content)
    with pytest.raises(UserError, match=message) as caught:
        get_classifier("default", cue_files=[ext])
    assert str(ext) in str(caught.value)


def test_bad_language_section_through_the_cli(tmp_path):
    import subprocess
    import sys

    ext = write(tmp_path / "bad.json", {"languages": {"xx1": {"refuse": ["x"]}}})
    msgs = tmp_path / "m.jsonl"
    msgs.write_text(json.dumps({"role": "assistant", "content": "Hola"}) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tooldiag", "classify", str(msgs), "--cues", str(ext)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error:") and "'xx1' is not a language code" in proc.stderr
