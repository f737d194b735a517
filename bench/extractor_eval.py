"""Quality of the offline fact extractor: per-class precision, recall, F1, macro-F1, confusion.

    python -m bench.extractor_eval [--errors]

Two sets, neither ever used for training: the shared dev set `../shared/data/facts-dev.jsonl`
(an evaluation set: never copy from it), and `bench/data/extract_heldout.jsonl`, examples of our
own written before any tuning and kept out of training to show how the rules generalise.
``--errors`` lists the held-out messages it gets wrong (never the dev set's: looking at those
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
        lines += ["", f"  macro-F1 {self.macro_f1:.3f}", ""]
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list held-out mistakes")
    args = parser.parse_args(argv)
    heldout = load(HELDOUT)
    if DEV.is_file():
        print(evaluate(load(DEV)).render(f"dev set {DEV}"))
    else:
        print(f"dev set {DEV} not found; skipped")
    print()
    report = evaluate(heldout)
    print(report.render(f"held-out examples {HELDOUT.relative_to(REPO)}"))
    for lang in ("en", "ko"):
        part = evaluate([e for e in heldout if e.lang == lang])
        print(f"  macro-F1 ({lang} only) {part.macro_f1:.3f}")
    if args.errors:
        print("\n  held-out mistakes (gold -> predicted):")
        for e, p in zip(heldout, report.predicted, strict=True):
            if p != e.label:
                print(f"    {e.label:>12} -> {p:<12} {e.text}")
    print(f"\nthroughput: {throughput(heldout):,.0f} messages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
