"""What squad's text caches keep in memory after many messages nobody chose.

``python -m bench.text_kept [--messages 1000] [--tree DIR ...]`` reads ``--messages``
distinct messages of about 2 KB (cut from :mod:`bench.redaction_texts`' shapes: logs,
JSON, chat in English and Korean, ``.env`` dumps, tables) as a daemon's turns, stores and
extractor do: each is redacted and scanned for credentials with the two before it as its cue
messages, asked whether it restates them (the chatter filter) and how much of them it holds
(the extractor's echo check). It reports the memory the caches still hold afterwards
(``tracemalloc``, after a collection), for this checkout and each ``--tree`` (each in a
process of its own, ``PYTHONPATH`` set to it).

A daemon reads every reply a few times within moments and then never again, for weeks: what
its caches keep must stay bounded and small whatever the texts. Target: at most
:data:`TARGET_MB` after 1,000 messages (the caches hold digests and answers, not texts, and
those whose answers grow with the text are bounded by the characters they answered for).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.redaction_texts import TEXTS
from bench.support import REPO, tree_args

MESSAGE_CHARS = 2000
TARGET_MB = 15.0


def messages(count: int) -> list[str]:
    """``count`` distinct messages of :data:`MESSAGE_CHARS`, the text shapes in turn."""
    per_kind = -(-count // len(TEXTS))
    cut: list[list[str]] = []
    for make in TEXTS.values():
        text = make(per_kind * MESSAGE_CHARS + MESSAGE_CHARS)
        cut.append(
            [text[i : i + MESSAGE_CHARS] for i in range(0, per_kind * MESSAGE_CHARS, MESSAGE_CHARS)]
        )
    mixed = [m for group in zip(*cut, strict=False) for m in group]
    return mixed[:count]


CHILD = """
import gc, json, sys, tracemalloc
from squad.extraction.quality import containment
from squad.text.chatter import restates
from squad.text.secrets import find_secrets, redact
texts = json.load(open(sys.argv[1], encoding="utf-8"))
redact("warm up: the detector's tables load here", known=())
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
for i, text in enumerate(texts):
    redact(text, known=())
    before = texts[max(0, i - 2) : i]
    find_secrets(text, previous=before)
    restates(text, before)
    for earlier in before:
        containment(earlier, text)
del texts
gc.collect()
print(tracemalloc.get_traced_memory()[0] - base)
"""
"""The measure, in a process whose ``squad`` is the checkout's: the bytes still traced after
the messages in the JSON file it is given were scanned and dropped."""


def measure(trees: list[Path], count: int) -> dict[str, float]:
    """MB kept after ``count`` messages, by checkout."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "messages.json"
        path.write_text(json.dumps(messages(count)), encoding="utf-8")
        for tree in trees:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(path)],
                cwd=tmp,
                env={**os.environ, "PYTHONPATH": str(tree)},
                capture_output=True,
                text=True,
                check=True,
            )
            out[str(tree)] = int(done.stdout.strip().splitlines()[-1]) / 1e6
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--tree", action="append", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure([REPO, *tree_args(sys.argv[1:])], args.messages)
    if args.json:
        print(json.dumps(figures))
        return 0
    for tree, mb in figures.items():
        verdict = "ok" if mb <= TARGET_MB else f"over {TARGET_MB:g} MB"
        print(f"{tree}: {mb:.1f} MB kept after {args.messages} messages [{verdict}]")
    return 0 if figures[str(REPO)] <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
