"""The learned text model beside the default rules: reproducible, pure Python, opt-in, explained."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldiag.classify import ActionClass, get_classifier
from tooldiag.classify.default import LEARNED_THRESHOLD, DefaultClassifier
from tooldiag.classify.learned import MAX_FEATURE_CHARS, encode_model, features, model_bytes, shipped_model
from tooldiag.classify.provenance import cue_digest

ROOT = Path(__file__).resolve().parents[2]


def trainer():
    spec = importlib.util.spec_from_file_location(
        "train_classifier_model", ROOT / "bench" / "train_classifier_model.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_uses_only_the_tuned_on_files():
    t = trainer()
    names = [path.name for path in t.training_files()]
    assert "en-original.jsonl" in names and "fr-holdout-b.jsonl" in names and "xx-dev.jsonl" in names
    # batch i measures the model; it is never trained on
    assert not [n for n in names if n.endswith("-holdout-i.jsonl")]
    assert t.is_training_file("de-holdout-g.jsonl") and not t.is_training_file("de-holdout-i.jsonl")


def test_shipped_weights_were_trained_on_the_current_training_files():
    # a change to a training file without retraining fails here (`bench/train_classifier_model.py`)
    assert shipped_model().training_digest == trainer().training_digest()


def test_the_trainer_is_deterministic_and_seeded():
    t = trainer()
    rows = t.training_rows()[::20]
    first = encode_model(t.train(rows, epochs=2))
    assert encode_model(t.train(rows, epochs=2)) == first
    assert encode_model(t.train(rows, epochs=2, seed=12)) != first  # the order of the rows matters
    assert gzip.decompress(first)[:1] == b"{"


def test_features_are_word_and_cjk_ngrams():
    assert features("Can I?") == ["can", "i", "?", "<s> can", "can i", "i ?", "? </s>"]
    assert features("取消吗\uff1f") == ["取", "消", "吗", "?", "<s> 取", "取 消", "消 吗", "吗 ?", "? </s>"]
    assert features("Order 12345 isn't here") == [
        "order",
        "isn't",
        "here",
        "<s> order",
        "order isn't",
        "isn't here",
        "here </s>",
    ]


def test_a_very_long_emission_is_read_only_at_its_ends():
    long_text = "Is it ok? " * 100_000 + "I cannot do that."
    count = len(features(long_text))
    assert count <= 2 * MAX_FEATURE_CHARS
    assert "that </s>" in features(long_text)  # the end is read


def test_the_registered_default_scheme_does_not_use_the_model():
    classifier = get_classifier("default")
    assert getattr(classifier, "learned", None) is False
    text = "Unfortunately that is something our team does not handle."
    assert classifier(text, False) is ActionClass.OTHER


def test_with_learned_on_the_model_overrides_weak_findings_and_says_so():
    classifier = DefaultClassifier(learned=True)
    text = "Unfortunately that is something our team does not handle."
    assert classifier.rule_signals(text) == frozenset()  # the rules find nothing
    label, probability = shipped_model().predict(text)
    assert label == "refuse" and probability >= LEARNED_THRESHOLD
    assert classifier(text, False) is ActionClass.REFUSE
    why = classifier.explain(text)
    assert why.label is ActionClass.REFUSE and why.rule == "refuse:learned_model"
    assert why.cue is not None and why.cue.startswith(f"p={probability:.3f}") and "text-model-v1" in why.cue


def test_explicit_rule_findings_and_tool_calls_stand():
    classifier = DefaultClassifier(learned=True)
    consent = "I have the booking ready: Paris, 2 nights, $480. Good to lock it in?"
    assert classifier(consent, False) is ActionClass.CONFIRM
    assert classifier.explain(consent).rule != "confirm:learned_model"
    assert classifier("[cancel_booking(id='A1')]", False) is ActionClass.TOOL_CALL
    assert classifier("anything", True) is ActionClass.TOOL_CALL


@pytest.mark.parametrize("text", ["", "   ", None])
def test_empty_text_is_other(text):
    assert DefaultClassifier(learned=True)(text, False) is ActionClass.OTHER


def test_probabilities_do_not_depend_on_the_string_hash_seed():
    script = (
        "from tooldiag.classify.learned import shipped_model;"
        "print(repr(shipped_model().probabilities('Lo siento, no puedo ayudarte con eso. ¿Algo más?')))"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        outputs.add(proc.stdout)
    assert len(outputs) == 1


def test_scoring_imports_no_numeric_library():
    script = (
        "import sys; from tooldiag.classify.default import DefaultClassifier;"
        "DefaultClassifier(learned=True)('I cannot help with that.', False);"
        "print(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def test_weights_file_is_compact_sorted_json():
    data = json.loads(gzip.decompress(model_bytes()))
    assert data["classes"] == ["ask", "refuse", "confirm", "other"]
    assert list(data["weights"]) == sorted(data["weights"])


def test_provenance_names_the_combination_and_hashes_the_weights(monkeypatch):
    from tooldiag.classify import learned
    from tooldiag.classify.provenance import CountingClassifier

    counted = CountingClassifier(DefaultClassifier(learned=True))
    counted("Unfortunately that is something our team does not handle.", False)
    summary = counted.summary()
    assert summary.scheme == "default+learned"
    assert summary.cue_digest == cue_digest("default+learned") != cue_digest("default")
    monkeypatch.setattr(learned, "model_bytes", lambda: b"other weights")
    assert cue_digest("default+learned") != summary.cue_digest  # new weights, new digest


def test_a_cue_extension_turns_the_model_off(tmp_path):
    ext = tmp_path / "cues.json"
    ext.write_text(json.dumps({"remove": {"offer": ["is there anything else"]}}))
    classifier = DefaultClassifier([ext], learned=True)
    assert classifier.learned is False and classifier.name == "default"
    assert classifier("Is there anything else?", False) is ActionClass.ASK  # the extension decides


def test_the_default_learned_scheme_is_reachable_by_name_and_from_the_cli(tmp_path):

    from typer.testing import CliRunner

    from tooldiag.cli.main import app

    text = "Unfortunately that is something our team does not handle."
    learned = get_classifier("default+learned")
    assert learned.name == "default+learned" and learned(text, False) is ActionClass.REFUSE
    lines = tmp_path / "messages.jsonl"
    lines.write_text(json.dumps({"role": "assistant", "content": text}) + "\n")
    labels = {}
    for name in ("default", "default+learned"):
        result = CliRunner().invoke(app, ["classify", str(lines), "--scheme", name])
        assert result.exit_code == 0, result.output
        labels[name] = json.loads(result.stdout.splitlines()[0])["action_class"]
    assert labels == {"default": "other", "default+learned": "refuse"}


def test_the_default_learned_scheme_refuses_cue_files(tmp_path):
    from tooldiag.classify.registry import SchemeOptions, resolve_classifier
    from tooldiag.errors import UserError

    cues = tmp_path / "cues.json"
    cues.write_text("{}")
    with pytest.raises(UserError, match="takes no --cues"):
        resolve_classifier("default+learned", SchemeOptions(cue_files=(cues,)))
