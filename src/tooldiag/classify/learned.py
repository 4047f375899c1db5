"""A small learned text model beside the ``default`` rules: features, weights file, scoring.

Three rounds of tuning the rules moved each next unseen batch of labelled emissions by
only a few points (docs/diagnostic.md, "Measuring the classifier"): rules learn the
wordings they are shown, not the language. A linear model over word and character
n-grams generalises differently, so the default scheme consults one where the rules'
evidence is weakest (:mod:`tooldiag.classify.default`, ``_learned_override``).

Everything here is pure Python (no numpy: the fast-start test forbids it on the
classify path): the weights are a gzip'd JSON file (``model/text_model.json.gz``),
loaded lazily on first use, trained by ``bench/train_classifier_model.py`` only on the
rows the rules were tuned on, and reproducible byte for byte from them. Scoring reads at
most :data:`MAX_FEATURE_CHARS` characters (the start and the end of a long emission),
so its cost is bounded whatever the input length.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from tooldiag.classify.syntax import REASONING_BLOCK

#: Name of the shipped weights file inside ``tooldiag.classify/model/`` (hashed into the cue digest).
MODEL_FILE = "text_model.json.gz"

#: A long emission is read only at its start and its end (where questions and refusals sit).
HEAD_CHARS = 600
TAIL_CHARS = 1400
MAX_FEATURE_CHARS = HEAD_CHARS + TAIL_CHARS

_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_CJK = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Words (letters and apostrophes), CJK runs, and the punctuation that carries class evidence.
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W\d_{_CJK}]+(?:'[^\W\d_{_CJK}]+)*|[?!:¿]")  # full-width marks are folded first
_CJK_RUN = re.compile(rf"[{_CJK}]")
_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\uff1f": "?", "\uff01": "!", "\uff1a": ":", "`": " "})


def _prepare(text: str) -> str:
    if len(text) > 4 * MAX_FEATURE_CHARS:
        text = text[: 2 * HEAD_CHARS] + "\n" + text[-2 * TAIL_CHARS :]
    if "<" in text:
        text = REASONING_BLOCK.sub(" ", text)
    if "```" in text:
        text = _CODE.sub(" code ", text)
    if "://" in text or "www." in text:
        text = _URL.sub(" url ", text)
    if len(text) > MAX_FEATURE_CHARS:
        text = text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:]
    return _NUMBER.sub("0", text.lower().translate(_FOLD))


def features(text: str) -> list[str]:
    """The n-gram features of one emission, in text order (duplicates kept: counts matter).

    Word unigrams and bigrams (with start and end markers, so "?" at the end differs from
    "?" mid-text); a CJK run contributes its characters and character bigrams, since
    Chinese and Japanese write no spaces.
    """
    tokens: list[str] = []
    for token in _TOKEN.findall(_prepare(text)):
        if _CJK_RUN.match(token):
            tokens.extend(token)
        else:
            tokens.append(token)
    out = list(tokens)
    previous = "<s>"
    for token in tokens:
        out.append(previous + " " + token)
        previous = token
    out.append(previous + " </s>")
    return out


@dataclass(frozen=True)
class TextModel:
    """A multinomial linear model: ``score(class) = bias + sum of weights of the features present``."""

    version: str
    classes: tuple[str, ...]
    bias: tuple[float, ...]
    weights: dict[str, tuple[float, ...]]
    #: SHA-256 over the training files (names and bytes): which rows these weights were trained on.
    training_digest: str = ""

    def probabilities(self, text: str) -> dict[str, float]:
        """Softmax of the class scores; each distinct feature counts once (binary presence)."""
        weights = self.weights
        rows = [row for row in map(weights.get, set(features(text))) if row is not None]
        # one exact C-level sum per class (zip(*rows) transposes): math.fsum is correctly rounded, so the
        # scores do not depend on the order of the set (str hashes vary between processes)
        scores = (
            [math.fsum((bias, *column)) for bias, column in zip(self.bias, zip(*rows))] if rows else list(self.bias)
        )
        top = max(scores)
        exps = [math.exp(score - top) for score in scores]
        total = sum(exps)
        return {name: value / total for name, value in zip(self.classes, exps)}

    def predict(self, text: str) -> tuple[str, float]:
        """The most probable class and its probability (ties: the earlier class in :attr:`classes`)."""
        probs = self.probabilities(text)
        best = max(self.classes, key=lambda name: probs[name])
        return best, probs[best]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "training_digest": self.training_digest,
            "classes": list(self.classes),
            "bias": list(self.bias),
            "weights": {key: list(row) for key, row in sorted(self.weights.items())},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextModel:
        return cls(
            version=str(data["version"]),
            classes=tuple(data["classes"]),
            bias=tuple(float(x) for x in data["bias"]),
            weights={key: tuple(float(x) for x in row) for key, row in data["weights"].items()},
            training_digest=str(data.get("training_digest", "")),
        )


def encode_model(model: TextModel) -> bytes:
    """The weights file's bytes: sorted compact JSON, gzip with a zero timestamp (reproducible)."""
    raw = json.dumps(model.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return gzip.compress(raw, compresslevel=9, mtime=0)


def model_bytes() -> bytes:
    """The shipped weights file (hashed into the default scheme's cue digest)."""
    return resources.files("tooldiag.classify").joinpath("model", MODEL_FILE).read_bytes()


@lru_cache(maxsize=1)
def shipped_model() -> TextModel:
    """The shipped model, read on first use (importing the classifier costs nothing for it)."""
    return TextModel.from_json(json.loads(gzip.decompress(model_bytes()).decode("utf-8")))
