"""Credential redaction at scale: does a text twice as long cost twice as much?

``python -m bench.redaction_scale [--sizes 0.25,1,2] [--json]`` redacts texts of 0.25, 1 and 2 MB
(:func:`squad.text.secrets.redact`, what the dashboard's file preview, search results, MCP
resources and the run log pay for) and reports, for each kind of text, the CPU seconds per MB
at each size and the linearity ratios ``t(1 MB) / (4 t(0.25 MB))`` and ``t(2 MB) / (8 t(0.25
MB))``: 1.0 is linear, 2.0 at 2 MB is what a quadratic cost would show at 0.5 MB already.
CPU time (``time.process_time``) rather than wall time, so other processes on a shared machine
weigh less; each size is the median of a few repetitions. Target: every ratio <= 1.5.

The texts, generated (seeded) so that every run measures the same thing:

* ``log+markdown``: what a workspace holds most: run logs, JSONL events, notes with headings,
  lists and tables, a code block, a credential every few hundred lines; short lines.
* ``one long line``: a minified JSON export of messages with base64 payloads, no newline at
  all: the shape that made every lookup of "the start of this line" read back to
  the start of the text (issue 30: a 2 MB preview cost 12.9 s of CPU).
* ``blobs on one line``: padded base64 chunks separated by spaces, no newline: the worst shape
  found (each chunk is a candidate credential that looked back to the start of the text).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import time
from collections.abc import Callable

SIZES_MB = (0.25, 1.0, 2.0)
TARGET = 1.5
_WORDS = [
    "the",
    "agent",
    "wrote",
    "a",
    "plan",
    "for",
    "task",
    "review",
    "deploy",
    "build",
    "test",
    "merge",
    "config",
    "file",
    "output",
    "result",
    "memory",
    "section",
    "insight",
    "coding",
    "rule",
    "decision",
    "project",
    "context",
    "squad",
    "run",
    "step",
    "tool",
    "call",
    "cache",
    "retry",
    "budget",
    "schema",
    "worker",
    "queue",
    "latency",
]


def log_and_markdown(size: int, seed: int = 7) -> str:
    """``size`` characters of logs, events and notes, a credential every ~900 lines."""
    rnd = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(rnd.choice(_WORDS) for _ in range(n))

    lines: list[str] = []
    total = i = 0
    while total < size:
        i += 1
        kind = i % 9
        if i % 1800 == 5:
            line = "db password: Tr0ub4dor&3x"
        elif i % 900 == 5:
            line = "export OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
        elif kind == 0:
            line = f"## Section {i}: {words(5)}"
        elif kind == 1:
            event = {"event": "task_done", "run": f"r{i:06x}", "tokens": rnd.randint(10, 9000)}
            line = json.dumps(event)
        elif kind == 2:
            line = f"2026-12-06 05:{i % 60:02d}:{i % 60:02d} INFO step={i} agent=writer {words(8)}"
        elif kind == 3:
            line = f"- {words(12)}."
        elif kind == 4:
            line = f"    def step_{i}(x: int) -> int:  # returns x + {i}"
        elif kind == 5:
            line = f"| {rnd.choice(_WORDS)} | {rnd.randint(1, 99)} | {words(2)} |"
        else:
            line = words(rnd.randint(5, 15))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def one_long_line(size: int, seed: int = 7) -> str:
    """``size`` characters of minified JSON: messages with base64 payloads (one every ~60
    characters), some with a name and a digest."""
    rnd = random.Random(seed)
    parts: list[str] = []
    total = i = 0
    while total < size:
        i += 1
        record: dict[str, object] = {
            "id": i,
            "payload": base64.b64encode(rnd.randbytes(rnd.randint(24, 40))).decode(),
        }
        if i % 4 == 0:
            record |= {"name": f"{rnd.choice(_WORDS)}-{i}", "sha256": rnd.randbytes(32).hex()}
        part = json.dumps(record, separators=(",", ":"))
        parts.append(part)
        total += len(part) + 1
    return ("[" + ",".join(parts) + "]")[:size]


def blobs_on_one_line(size: int, seed: int = 7) -> str:
    """``size`` characters of padded base64 chunks separated by spaces, no newline: encoded
    frames logged on one line, the worst shape found (every chunk is a candidate)."""
    rnd = random.Random(seed)
    chunks = (base64.b64encode(rnd.randbytes(31)).decode() for _ in range(size // 44 + 1))
    return " ".join(chunks)[:size]


TEXTS: dict[str, Callable[[int], str]] = {
    "log+markdown": log_and_markdown,
    "one long line": one_long_line,
    "blobs on one line": blobs_on_one_line,
}


def cpu_seconds(text: str, repeat: int) -> float:
    from squad.text.secrets import redact

    samples = []
    for _ in range(repeat):
        start = time.process_time()
        redact(text)
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def measure(sizes: tuple[float, ...] = SIZES_MB) -> dict[str, dict[str, float]]:
    """For each text: seconds per MB at each size, and each size's ratio to the first."""
    results: dict[str, dict[str, float]] = {}
    for name, make in TEXTS.items():
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(f"{s:g}" for s in SIZES_MB))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = tuple(float(s) for s in args.sizes.split(","))
    results = measure(sizes)
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


if __name__ == "__main__":
    main()
