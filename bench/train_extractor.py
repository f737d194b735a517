"""Train the offline fact classifier's weights from our own examples; write them as package data.

    python -m bench.train_extractor            # cross-validate, then write the weights
    python -m bench.train_extractor --check    # exit 1 when the shipped weights are stale

Multinomial logistic regression over :func:`squad.classifier.cues.features`, full-batch
Adam from zero weights over a sparse feature matrix: deterministic, about two seconds a fit
(a minute and a half with the cross-validation grid). Cue features get a lighter L2 penalty
than lexical ones, so the hand-written cues carry most of the decision and word weights only
adjust it. The penalties are chosen by 5-fold cross-validation on the training examples alone
(the most penalised setting within 0.005 macro-F1 of the best);
the dev set (`../shared/data/facts-dev.jsonl`) and our held-out examples are never read here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product
from pathlib import Path

import numpy as np
import numpy.typing as npt

from squad.classifier.classify import LABELS, WEIGHTS_FILE, Example, parse_examples
from squad.classifier.cues import features, has_secret

EXAMPLES = (
    Path(__file__).resolve().parents[1] / "training" / "classifier" / "extract_examples.jsonl"
)
"""Our labelled messages (JSON Lines: ``text``, ``label``, optional ``role`` and ``lang``);
kept in the repository, out of the wheel: only the weights trained from them ship."""
_LEXICAL_MIN_COUNT = 2
_STEPS = 600
_LEARNING_RATE = 0.05
_GRID = {"l2_cue": (0.001, 0.003, 0.01, 0.03), "l2_lex": (0.003, 0.01, 0.03, 0.1)}
_FOLDS = 5

Matrix = npt.NDArray[np.float64]


@cache
def _feature_set(text: str, role: str) -> frozenset[str]:
    """The features of one message, computed once per run (cross-validation reuses them)."""
    return frozenset(features(text, role))


@dataclass(frozen=True)
class Trained:
    names: list[str]
    weights: Matrix  # (features, labels)
    bias: Matrix  # (labels,)

    def predict(self, rows: Sequence[Example]) -> list[str]:
        index = {name: i for i, name in enumerate(self.names)}
        out: list[str] = []
        for row in rows:
            score = self.bias.copy()
            for name in _feature_set(row.text, row.role):
                if name in index:
                    score += self.weights[index[name]]
            out.append(LABELS[int(np.argmax(score))])
        return out


def _vocabulary(rows: Sequence[Example]) -> list[str]:
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(_feature_set(row.text, row.role))
    return sorted(n for n, c in counts.items() if n.startswith("@") or c >= _LEXICAL_MIN_COUNT)


def train(rows: Sequence[Example], l2_cue: float, l2_lex: float) -> Trained:
    """Fit weights to ``rows``; the same rows and penalties always give the same weights."""
    names = _vocabulary(rows)
    index = {name: i for i, name in enumerate(names)}
    # x is binary and sparse: kept as the (row, feature) pairs of its ones, sorted by row
    pairs = [
        (r, index[name])
        for r, row in enumerate(rows)
        for name in sorted(_feature_set(row.text, row.role))
        if name in index
    ]
    row_of = np.array([r for r, _ in pairs], dtype=np.intp)
    feature_of = np.array([f for _, f in pairs], dtype=np.intp)
    row_start = np.searchsorted(row_of, np.arange(len(rows)))
    y = np.zeros((len(rows), len(LABELS)))
    y[np.arange(len(rows)), [LABELS.index(row.label) for row in rows]] = 1.0
    penalty = np.array([l2_cue if n.startswith("@") else l2_lex for n in names])[:, None]
    w, b = np.zeros((len(names), len(LABELS))), np.zeros(len(LABELS))
    m_w, v_w, m_b, v_b = np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)
    for step in range(1, _STEPS + 1):
        logits = np.add.reduceat(w[feature_of], row_start, axis=0) + b  # x @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        error = (p - y)[row_of]
        x_t_error = np.stack(  # x.T @ (p - y)
            [np.bincount(feature_of, error[:, k], len(names)) for k in range(len(LABELS))], 1
        )
        grad_w = x_t_error / len(rows) + penalty * w
        grad_b = (p - y).mean(axis=0)
        for g, m, v, param in ((grad_w, m_w, v_w, w), (grad_b, m_b, v_b, b)):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            m_hat, v_hat = m / (1 - 0.9**step), v / (1 - 0.999**step)
            param -= _LEARNING_RATE * m_hat / (np.sqrt(v_hat) + 1e-8)
    return Trained(names, w, b)


def macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    scores = []
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, predicted, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores)


def cross_validate(rows: Sequence[Example], l2_cue: float, l2_lex: float) -> float:
    gold: list[str] = []
    predicted: list[str] = []
    for fold in range(_FOLDS):
        test = [row for i, row in enumerate(rows) if i % _FOLDS == fold]
        model = train([row for i, row in enumerate(rows) if i % _FOLDS != fold], l2_cue, l2_lex)
        gold += [row.label for row in test]
        predicted += model.predict(test)
    return macro_f1(gold, predicted)


_TOLERANCE = 0.005
"""Cross-validated macro-F1 within this of the best is a tie: five folds of a few thousand
messages do not tell such settings apart."""


def choose(scores: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The most penalised ``(score, l2_cue, l2_lex)`` whose score ties the best: among settings
    the folds cannot tell apart, the simpler model generalises further."""
    top = max(score for score, _, _ in scores)
    tied = [row for row in scores if row[0] >= top - _TOLERANCE]
    return max(tied, key=lambda row: (row[1] + row[2], row[0]))


def load_examples() -> list[Example]:
    """Our labelled training examples (:data:`EXAMPLES`)."""
    return parse_examples(EXAMPLES.read_text(encoding="utf-8"))


def training_rows() -> list[Example]:
    """Our examples minus credentials: :func:`classify` refuses those before the model."""
    return [row for row in load_examples() if not has_secret(row.text)]


def examples_digest() -> str:
    data = EXAMPLES.read_bytes()
    rules = resources.files("squad.classifier").joinpath("cues.py").read_bytes()
    return hashlib.sha256(data + b"\0" + rules).hexdigest()


def to_json(model: Trained, settings: dict[str, float]) -> str:
    weights = {
        name: [round(float(v), 4) for v in model.weights[i]]
        for i, name in enumerate(model.names)
        if float(np.abs(model.weights[i]).max()) >= 1e-3
    }
    header = {
        "comment": "Generated by `python -m bench.train_extractor`; do not edit.",
        "source_sha256": examples_digest(),
        "labels": list(LABELS),
        "settings": settings,
        "bias": [round(float(v), 4) for v in model.bias],
    }
    lines = [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in header.items()]
    body = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v)}" for k, v in weights.items()]
    return "{\n" + "\n".join(lines) + '\n"weights": {\n' + ",\n".join(body) + "\n}}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the weights are fresh")
    args = parser.parse_args(argv)
    target = resources.files("squad.classifier").joinpath("data", WEIGHTS_FILE)
    if args.check:
        shipped = json.loads(target.read_text(encoding="utf-8"))["source_sha256"]
        fresh = shipped == examples_digest()
        print("fresh" if fresh else "stale: run python -m bench.train_extractor")
        return 0 if fresh else 1
    rows = training_rows()
    print(f"{len(rows)} training examples: {dict(Counter(row.label for row in rows))}")
    scores: list[tuple[float, float, float]] = []
    for l2_cue, l2_lex in product(_GRID["l2_cue"], _GRID["l2_lex"]):
        score = cross_validate(rows, l2_cue, l2_lex)
        print(f"  l2_cue={l2_cue:<6} l2_lex={l2_lex:<6} 5-fold macro-F1 {score:.3f}")
        scores.append((score, l2_cue, l2_lex))
    best = choose(scores)
    _, l2_cue, l2_lex = best
    model = train(rows, l2_cue, l2_lex)
    with resources.as_file(target) as path:
        path.write_text(to_json(model, {"l2_cue": l2_cue, "l2_lex": l2_lex}), encoding="utf-8")
    print(f"wrote {target} (l2_cue={l2_cue}, l2_lex={l2_lex}, cross-validated {best[0]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
