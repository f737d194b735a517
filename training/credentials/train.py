"""Train the learned credential detector and write ``squad/text/secrets/data/learned_weights.bin``.

``python training/credentials/train.py [--evaluate [--hold CORPUS]...] [--write]``

Data (no evaluation set that has not been reported yet): the chat credential corpora of earlier
rounds and the blind sets already reported (``tests/text/data/*.jsonl.gz``), the hand-written
rows of ``data/`` (``written/gen.py`` makes them from its sentences), the rule tests' cases
(``tests/text/secrets_corpus.py``), the fact classifier's chat examples as plain chat (those
the rules flag left out), and the synthetic rows of ``synth.py``. ``--evaluate`` reports, for
each earlier corpus held out in turn (trained on everything else), how many credential messages
the rules alone and the rules with the learned detector keep out, and how many look-alikes each
flags; ``--write`` trains on everything and writes the weights.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]

import synth  # noqa: E402

from squad.text import secrets  # noqa: E402
from squad.text.secrets import _learned, redact  # noqa: E402

Row = dict[str, object]
DATA = ROOT / "squad" / "text" / "secrets" / "data"
SEED_CUES = [
    "password",
    "passwd",
    "pw",
    "pwd",
    "pass",
    "passcode",
    "passphrase",
    "phrase",
    "pin",
    "code",
    "otp",
    "2fa",
    "mfa",
    "cvv",
    "cvc",
    "combo",
    "combination",
    "login",
    "creds",
    "credentials",
    "secret",
    "key",
    "token",
    "share",
    "unseal",
    "비번",
    "비밀번호",
    "암호",
    "패스워드",
    "인증번호",
    "코드",
    "번호",
    "pgpass",
]
MIN_CUE_COUNT = 3
MIN_CUE_PRECISION = 0.25
FALSE_ALARM_BUDGET = float(os.environ.get("FA_BUDGET", "0.015"))


def _jsonl(path: Path) -> list[Row]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _bracketed(text: str) -> tuple[str, list[str]]:
    values = re.findall("⟦(.*?)⟧", text, re.DOTALL)
    return text.replace("⟦", "").replace("⟧", ""), values


def load_groups() -> dict[str, list[Row]]:
    """Every training source by name: rows of ``{text, values, lang, form}``."""
    data = ROOT / "tests" / "text" / "data"
    groups: dict[str, list[Row]] = {}
    for name, pos, neg in (
        ("chat-1", "chat_credentials", "chat_credential_negatives"),
        ("unseen", "chat_credentials_unseen", "chat_credential_negatives_unseen"),
        ("third", "chat_credentials_third", "chat_credential_negatives_third"),
        ("blind-1", "chat_credentials_blind1", "chat_credential_negatives_blind1"),
        ("blind-2", "chat_credentials_blind2", "chat_credential_negatives_blind2"),
    ):
        rows = _jsonl(data / f"{pos}.jsonl.gz")
        rows += [{**r, "values": []} for r in _jsonl(data / f"{neg}.jsonl.gz")]
        groups[name] = rows
    sys.path.insert(0, str(ROOT / "tests" / "text"))
    import secrets_corpus as corpus  # type: ignore[import-not-found]

    rows = []
    for _, text in corpus.POSITIVES:
        plain, values = _bracketed(text)
        rows.append({"text": plain, "values": values, "form": "rule case"})
    rows += [{"text": t, "values": [], "form": "rule negative"} for t in corpus.NEGATIVES]
    groups["rule-cases"] = rows
    import test_secrets_casual as casual  # type: ignore[import-not-found]

    rows = []
    for _, text in casual.CASUAL:
        plain, values = _bracketed(text)
        rows.append({"text": plain, "values": values, "form": "casual"})
    rows += [{"text": t, "values": [], "form": "casual prose"} for t in casual.PROSE]
    groups["casual"] = rows
    chat = ROOT / "training" / "classifier" / "extract_examples.jsonl"
    lines = [json.loads(line) for line in chat.read_text(encoding="utf-8").splitlines() if line]
    groups["chat"] = [
        {"text": r["text"], "values": [], "form": "chat"}
        for r in lines
        if not redact(r["text"], learned=False)[1]
    ]
    written = Path(__file__).parent / "data"
    for path in sorted(written.glob("written*_credentials.jsonl.gz")):
        name = path.name.removesuffix("_credentials.jsonl.gz")
        rows = _jsonl(path)
        rows += [{**r, "values": []} for r in _jsonl(written / f"{name}_lookalikes.jsonl.gz")]
        groups[name] = rows
    groups["synthetic"] = list(synth.rows())
    return groups


def _views(text: str) -> list[str]:
    """The text as given, and as the learned detector reads it: the rules' finds redacted."""
    found = secrets._find_once(text, (), learned=False)
    return [text, secrets._apply(text, found)[0]] if found else [text]


def _labelled(row: Row, cues: frozenset[str]) -> Iterable[tuple[list[str], int]]:
    for view in _views(str(row["text"])):
        yield from _labelled_view(view, row, cues)


def _labelled_view(text: str, row: Row, cues: frozenset[str]) -> Iterable[tuple[list[str], int]]:
    spans = []
    for value in row["values"]:  # type: ignore[attr-defined]
        at = text.find(value)
        while value and at >= 0:
            spans.append((at, at + len(value)))
            at = text.find(value, at + 1)
    model = _learned.Model({}, 0.5, cues)
    for unit, before, after in _learned.scored_units(text, model):
        feats = _learned.features(unit, before, after)
        inside = any(s < unit.end and unit.start < e for s, e in spans)
        yield feats, int(inside)


def learn_cues(rows: list[Row]) -> frozenset[str]:
    """The words that come before (or just after) credentials: the gate's cue words."""
    near: Counter[str] = Counter()
    messages: Counter[str] = Counter()
    with_value: Counter[str] = Counter()
    for row in rows:
        text = str(row["text"])
        singles = _learned.units(text)
        words = [_learned._norm(u.text) for u in singles]
        present = set(words)
        messages.update(present)
        if not row["values"]:
            continue
        with_value.update(present)
        for value in row["values"]:  # type: ignore[attr-defined]
            at = text.find(value)
            if at < 0:
                continue
            idx = [i for i, u in enumerate(singles) if u.start < at + len(value) and at < u.end]
            if not idx:
                continue
            lo, hi = max(0, idx[0] - _learned.BEFORE), idx[-1] + 1 + _learned.AFTER
            near.update(set(words[lo : idx[0]] + words[idx[-1] + 1 : hi]))
    cues = {w for w in SEED_CUES}
    for word, count in near.items():
        if (
            count >= MIN_CUE_COUNT
            and len(word) >= 2
            and not word.isdigit()
            and with_value[word] / messages[word] >= MIN_CUE_PRECISION
            and _learned.CUE_SHAPE.fullmatch(word)
        ):
            cues.add(word)
    return frozenset(cues)


def train(
    rows: list[Row],
    *,
    epochs: int = int(os.environ.get("EPOCHS", "12")),
    l2: float = float(os.environ.get("L2", "1e-4")),
    seed: int = 7,
) -> tuple[dict[int, float], frozenset[str]]:
    """Logistic regression by Adagrad over hashed features; the weights and the cue words."""
    cues = learn_cues(rows)
    examples = [ex for row in rows for ex in _labelled(row, cues)]
    buckets = [
        np.array(sorted({_learned._bucket(f) for f in feats}), dtype=np.int64)
        for feats, _ in examples
    ]
    labels = np.array([y for _, y in examples], dtype=np.float64)
    pos = labels.sum()
    weight_pos = float(os.environ.get("POS_WEIGHT", "0")) or max(
        1.0, (len(labels) - pos) / max(pos, 1) / 3
    )
    print(
        f"  {len(labels)} units, {int(pos)} credentials, positive weight {weight_pos:.1f}",
        file=sys.stderr,
    )
    w = np.zeros(_learned.BUCKETS)
    g2 = np.full(_learned.BUCKETS, 1e-8)
    rng = np.random.default_rng(seed)
    rate = 0.3
    for _ in range(epochs):
        for i in rng.permutation(len(examples)):
            idx = buckets[i]
            z = w[idx].sum()
            p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
            grad = (p - labels[i]) * (weight_pos if labels[i] else 1.0)
            g = grad + l2 * w[idx]
            g2[idx] += g * g
            w[idx] -= rate * g / np.sqrt(g2[idx])
    nonzero = np.flatnonzero(np.abs(w) >= 1e-3)
    return {int(b): float(w[b]) for b in nonzero}, cues


def _model(weights: dict[int, float], cues: frozenset[str], threshold: float) -> _learned.Model:
    return _learned.Model(weights, threshold, cues)


def kept_out(row: Row, redacted: str) -> bool:
    for value in row["values"]:  # type: ignore[attr-defined]
        if value in redacted or any(len(p) >= 12 and p in redacted for p in value.split("\n")):
            return False
    return True


def judge(rows: list[Row], model: _learned.Model | None) -> tuple[int, int, int, int, list[Row]]:
    """(credentials kept out, credentials, look-alikes flagged, look-alikes, missed rows)."""
    _learned.load_model = lambda: model  # type: ignore[assignment]
    kept = creds = alarms = looks = 0
    missed = []
    for row in rows:
        redacted, found = redact(str(row["text"]))
        if not row["values"] and found and os.environ.get("SHOW_ALARMS"):
            print("   alarm:", redacted[:110].replace("\n", " "))
        if row["values"]:
            creds += 1
            if kept_out(row, redacted):
                kept += 1
            else:
                missed.append(row)
        else:
            looks += 1
            alarms += bool(found)
    return kept, creds, alarms, looks, missed


def pick_threshold(rows: list[Row]) -> float:
    """The lowest threshold whose false alarms on look-alikes the model did not train on stay
    in budget: two folds, each scored by a model trained on the other."""
    scores = []
    for fold in (0, 1):
        train_rows = [r for i, r in enumerate(rows) if i % 2 != fold]
        weights, cues = train(train_rows)
        model = _model(weights, cues, 0.0)
        for row in rows[fold::2]:
            if row["values"] or row.get("form") == "chat":
                continue  # the budget is per look-alike: plain chat is easy
            units = _learned.scored_units(_views(str(row["text"]))[-1], model)
            scores.append(max((model.unit_probability(*u) for u in units), default=0.0))
    scores.sort()
    cut = scores[int(len(scores) * (1 - FALSE_ALARM_BUDGET))]
    return max(0.5, min(0.995, cut + 1e-6))


HELD_OUT = (
    "chat-1",
    "unseen",
    "third",
    "blind-1",
    "blind-2",
    "written",
    "written2",
    "written3",
    "casual",
)


def evaluate(groups: dict[str, list[Row]], held_out: Iterable[str] = HELD_OUT) -> None:
    for held in held_out:
        rows = [r for name, g in groups.items() if name != held for r in g]
        weights, cues = train(rows)
        threshold = pick_threshold(rows)
        test = groups[held]
        base = judge(test, None)
        both = judge(test, _model(weights, cues, threshold))
        print(
            f"{held:8} rules: kept {base[0]}/{base[1]} alarms {base[2]}/{base[3]}   "
            f"rules+learned (t={threshold:.2f}): "
            f"kept {both[0]}/{both[1]} alarms {both[2]}/{both[3]}"
        )
        for row in both[4][:40]:
            print("   missed:", row.get("form"), "|", str(row["text"])[:100].replace("\n", " "))


def write(groups: dict[str, list[Row]]) -> None:
    rows = [r for g in groups.values() for r in g]
    weights, cues = train(rows)
    threshold = pick_threshold(rows)
    DATA.mkdir(exist_ok=True)
    meta = {
        "about": "squad's learned credential detector; trained by training/credentials/train.py",
        "threshold": round(threshold, 4),
        "weights": len(weights),
        "cues": sorted(cues),
    }
    _write(DATA / _learned.WEIGHTS_FILE, _learned.weights_bytes(weights))
    _write(DATA / _learned.MODEL_FILE, json.dumps(meta, ensure_ascii=False, indent=0).encode())
    print(f"wrote {DATA} ({len(weights)} weights, {len(cues)} cues, threshold {threshold:.3f})")


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--hold", action="append", choices=HELD_OUT, help="the corpora --evaluate holds out"
    )
    args = parser.parse_args()
    groups = load_groups()
    print({k: len(v) for k, v in groups.items()})
    if args.evaluate:
        evaluate(groups, args.hold or HELD_OUT)
    if args.write:
        write(groups)


if __name__ == "__main__":
    main()
