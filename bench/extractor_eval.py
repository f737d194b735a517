"""Quality of the offline fact extractor: per-class precision, recall, F1, macro-F1, confusion.

    python -m bench.extractor_eval [--errors]

    python -m bench.extractor_eval --no-dev [--errors]   # our own sets only

Three sets, none ever used for training: the shared dev set `../shared/data/facts-dev.jsonl`
(an evaluation set: never copy from it, never tune to it), `bench/data/extract_heldout.jsonl`,
examples of our own written before any tuning and kept out of training to show how the rules
generalise, and `bench/data/extract_heldout_hard.jsonl`, our own harder messages written before
the second round of tuning: facts buried in long messages, corrections, indirect preferences,
credentials in casual forms, and `bench/data/extract_heldout_fresh.jsonl`, 240 messages written
by someone who saw neither the training examples nor the other sets, before the third round
(its figures before that round are in the README), and `bench/data/extract_heldout_junk.jsonl`,
356 messages (196 of them "none", most full of project words: status, questions, guesses,
rumours, undecided proposals, one-time incidents) written the same way before the fourth round,
and `bench/data/extract_heldout_mixed.jsonl`, 360 messages (half "none", a tenth of those with a
credential said in chat) written the same way, from the labelling guide alone, before the fifth,
and `bench/data/extract_heldout_sixth.jsonl`, 237 messages from projects that are not web apps
(lab pipelines, firmware, modding, accounting, robotics...) written so after the fifth round,
and `bench/data/extract_heldout_domains.jsonl`, 679 more from 28 such domains, written the same
way as training examples for a sixth round that was left out, so never trained on.
For every set it prints per-class figures,
macro-F1 overall and per language, and the share of gold-"none" messages that yield any fact
(``classify`` not None).
``--errors`` lists our held-out messages it gets wrong (never the dev set's: looking at those
one by one invites tuning to them). Also prints the extractor's throughput.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from squad.classifier.classify import LABELS, Example, classify, parse_examples

REPO = Path(__file__).resolve().parent.parent
DEV = REPO.parent / "shared" / "data" / "facts-dev.jsonl"
HELDOUT = REPO / "bench" / "data" / "extract_heldout.jsonl"
HELDOUT_HARD = REPO / "bench" / "data" / "extract_heldout_hard.jsonl"
HELDOUT_FRESH = REPO / "bench" / "data" / "extract_heldout_fresh.jsonl"
HELDOUT_JUNK = REPO / "bench" / "data" / "extract_heldout_junk.jsonl"
HELDOUT_MIXED = REPO / "bench" / "data" / "extract_heldout_mixed.jsonl"
HELDOUT_SIXTH = REPO / "bench" / "data" / "extract_heldout_sixth.jsonl"
HELDOUT_DOMAINS = REPO / "bench" / "data" / "extract_heldout_domains.jsonl"
TODAY = date(2026, 11, 29)


@dataclass(frozen=True)
class Report:
    gold: list[str]
    predicted: list[str]

    def counts(self, label: str) -> tuple[int, int, int]:
        pairs = list(zip(self.gold, self.predicted, strict=True))
        tp = sum(g == p == label for g, p in pairs)
        fp = sum(p == label != g for g, p in pairs)
        fn = sum(g == label != p for g, p in pairs)
        return tp, fp, fn

    def f1(self, label: str) -> float:
        tp, fp, fn = self.counts(label)
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

    @property
    def macro_f1(self) -> float:
        return sum(self.f1(label) for label in LABELS) / len(LABELS)

    @property
    def none_yielding_fact(self) -> float:
        """The share of gold-"none" messages for which the extractor returned a fact."""
        predicted = [p for g, p in zip(self.gold, self.predicted, strict=True) if g == "none"]
        return sum(p != "none" for p in predicted) / len(predicted) if predicted else 0.0

    def render(self, title: str) -> str:
        lines = [f"{title}: {len(self.gold)} messages", ""]
        lines.append(f"  {'label':<13} {'precision':>9} {'recall':>7} {'F1':>6} {'support':>8}")
        for label in LABELS:
            tp, fp, fn = self.counts(label)
            precision = tp / (tp + fp) if tp + fp else 0.0
            recall = tp / (tp + fn) if tp + fn else 0.0
            lines.append(
                f"  {label:<13} {precision:>9.3f} {recall:>7.3f} {self.f1(label):>6.3f}"
                f" {tp + fn:>8}"
            )
        lines += ["", f"  macro-F1 {self.macro_f1:.3f}"]
        lines += [f"  gold-none messages yielding a fact {self.none_yielding_fact:.1%}", ""]
        lines.append("  confusion (rows: gold, columns: predicted)")
        lines.append("  " + " " * 13 + "".join(f"{label:>13}" for label in LABELS))
        for g in LABELS:
            row = [
                sum(a == g and b == p for a, b in zip(self.gold, self.predicted, strict=True))
                for p in LABELS
            ]
            lines.append(f"  {g:<13}" + "".join(f"{n:>13}" for n in row))
        return "\n".join(lines)


def predict(example: Example) -> str:
    fact = classify(example.text, role=example.role, today=TODAY)
    return "none" if fact is None else fact.scope


def evaluate(examples: Sequence[Example]) -> Report:
    return Report([e.label for e in examples], [predict(e) for e in examples])


def load(path: Path) -> list[Example]:
    return parse_examples(path.read_text(encoding="utf-8"))


def throughput(examples: Sequence[Example], seconds: float = 0.5) -> float:
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for e in examples:
            classify(e.text, role=e.role, today=TODAY)
        done += len(examples)
    return done / (time.perf_counter() - start)


def _by_language(examples: Sequence[Example]) -> str:
    lines = []
    for lang in ("en", "ko"):
        part = [e for e in examples if e.lang == lang]
        if part:
            report = evaluate(part)
            lines.append(
                f"  {lang}: {len(part)} messages, macro-F1 {report.macro_f1:.3f},"
                f" gold-none yielding a fact {report.none_yielding_fact:.1%}"
            )
    return "\n".join(lines)


def _report(examples: Sequence[Example], title: str, errors: bool) -> None:
    report = evaluate(examples)
    print(report.render(title))
    print(_by_language(examples))
    if errors:
        print("\n  mistakes (gold -> predicted):")
        for e, p in zip(examples, report.predicted, strict=True):
            if p != e.label:
                print(f"    {e.label:>12} -> {p:<12} {e.lang} {e.role[0]} {e.text}")
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list our held-out mistakes")
    parser.add_argument("--no-dev", action="store_true", help="skip the shared dev set")
    args = parser.parse_args(argv)
    if args.no_dev:
        pass
    elif DEV.is_file():
        dev = load(DEV)
        print(evaluate(dev).render(f"dev set {DEV}"))
        print(_by_language(dev))  # never its mistakes
        print()
    else:
        print(f"dev set {DEV} not found; skipped\n")
    heldout = load(HELDOUT)
    sets = (HELDOUT, HELDOUT_HARD, HELDOUT_FRESH, HELDOUT_JUNK, HELDOUT_MIXED)
    for path in (*sets, HELDOUT_SIXTH, HELDOUT_DOMAINS):
        _report(load(path), f"held-out examples {path.relative_to(REPO)}", args.errors)
    print(f"throughput: {throughput(heldout):,.0f} messages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
