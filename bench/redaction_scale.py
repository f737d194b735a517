"""Credential redaction at scale: does a text twice as long cost twice as much?

``python -m bench.redaction_scale [--sizes 0.25,1,2] [--json]`` redacts texts of 0.25, 1 and 2 MB
(:func:`squad.text.secrets.redact`, what the dashboard's file preview, search results, MCP
resources and the run log pay for) and reports, for each kind of text, the CPU seconds per MB
at each size and the linearity ratios ``t(1 MB) / (4 t(0.25 MB))`` and ``t(2 MB) / (8 t(0.25
MB))``: 1.0 is linear, 2.0 at 2 MB is what a quadratic cost would show at 0.5 MB already.
CPU time (``time.process_time``) rather than wall time, so other processes on a shared machine
weigh less; each size is the median of a few repetitions. Target: every ratio <= 1.5.

The texts (``bench.redaction_texts``, generated and seeded so every run measures the same
thing) are each a shape the finders key on differently: logs and notes, one long line of JSON,
base64 blobs, English and Korean chat about credentials, a ``.env`` dump, markdown tables, JSON
logs with keys named for tokens, short lines of cue words.

``--modules`` adds, per text at the first size, the CPU seconds each rule module's finders take
(where to look when one shape is slow). ``--benign`` measures instead the median microseconds
one call costs on a message with nothing key-like (what most chat turns are), over 10,000 calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from bench.redaction_texts import BENIGN, TEXTS

SIZES_MB = (0.25, 1.0, 2.0)
TARGET = 1.5


def cpu_seconds(text: str, repeat: int) -> float:
    from squad.text.secrets import redact

    samples = []
    for _ in range(repeat):
        start = time.process_time()
        redact(text)
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def measure(
    sizes: tuple[float, ...] = SIZES_MB, kinds: tuple[str, ...] = tuple(TEXTS)
) -> dict[str, dict[str, float]]:
    """For each text: seconds per MB at each size, and each size's ratio to the first."""
    results: dict[str, dict[str, float]] = {}
    for name in kinds:
        make = TEXTS[name]
        row: dict[str, float] = {}
        times = []
        for mb in sizes:
            text = make(int(mb * 1_000_000))
            seconds = cpu_seconds(text, repeat=3 if mb <= 0.5 else 1)
            times.append(seconds)
            row[f"s_per_mb@{mb:g}"] = seconds / mb
        for mb, seconds in zip(sizes[1:], times[1:], strict=True):
            row[f"ratio@{mb:g}"] = seconds / (mb / sizes[0] * times[0])
        results[name] = row
    return results


def by_module(text: str) -> dict[str, float]:
    """CPU seconds each rule module's finders take over ``text`` (their candidates drained)."""
    from squad.text import secrets

    modules = {
        name: getattr(secrets, f"_{name}")
        for name in ("tokens", "named", "files", "followup", "context", "layout", "spoken")
    }
    seconds: dict[str, float] = {}
    for name, module in modules.items():
        start = time.process_time()
        for _ in module.candidates(text):
            pass
        seconds[name] = time.process_time() - start
    return seconds


def benign_microseconds(calls: int = 10_000) -> dict[str, float]:
    """Median microseconds of one :func:`find_secrets` call on each benign message."""
    from squad.text.secrets import find_secrets

    results: dict[str, float] = {}
    for message in BENIGN:
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            find_secrets(message)
            samples.append(time.perf_counter() - start)
        results[f"{message[:24]}... ({len(message)} chars)"] = statistics.median(samples) * 1e6
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(f"{s:g}" for s in SIZES_MB))
    parser.add_argument("--kinds", default=",".join(TEXTS), help="comma-separated text names")
    parser.add_argument("--modules", action="store_true", help="CPU per rule module, too")
    parser.add_argument("--benign", action="store_true", help="µs per benign message instead")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.benign:
        figures = benign_microseconds()
        if args.json:
            print(json.dumps(figures, indent=2))
            return
        for message, micros in figures.items():
            print(f"{micros:8.1f} µs  {message}")
        return
    sizes = tuple(float(s) for s in args.sizes.split(","))
    kinds = tuple(k.strip() for k in args.kinds.split(","))
    unknown = [k for k in kinds if k not in TEXTS]
    if unknown:
        parser.error(f"unknown text kind {unknown[0]!r}; choose from {', '.join(TEXTS)}")
    results = measure(sizes, kinds)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    first = f"{sizes[0]:g}"
    for name, row in results.items():
        per_mb = ", ".join(f"{mb:g} MB {row[f's_per_mb@{mb:g}']:.2f}" for mb in sizes)
        print(f"{name}: CPU s/MB at {per_mb}")
        for mb in sizes[1:]:
            ratio = row[f"ratio@{mb:g}"]
            verdict = "ok" if ratio <= TARGET else f"over {TARGET}"
            factor = f"{mb / sizes[0]:g}"
            print(f"  t({mb:g} MB) / ({factor} t({first} MB)) = {ratio:.2f}  [{verdict}]")
        if args.modules:
            split = by_module(TEXTS[name](int(sizes[0] * 1_000_000)))
            print(
                "  by module, s/MB: "
                + ", ".join(
                    f"{m} {s / sizes[0]:.2f}" for m, s in sorted(split.items(), key=lambda x: -x[1])
                )
            )


if __name__ == "__main__":
    main()
