"""Every text the credential corpora hold, and what the rules of :func:`find_secrets` find in
each, pinned (``learned=False``: the learned detector changes with each training run).

The redactor's speed work (issue 32) must leave its decisions as they were: the golden file
``data/secrets_golden.json.gz`` holds, for each input below, the finds as they were when it was
written. Regenerate it after a deliberate change of decisions (a new rule, a new corpus case)
with ``python -m tests.text.secrets_golden``, and say in the commit what changed and why.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from bench.redaction_texts import TEXTS
from squad.text.secrets import find_secrets
from tests.text.chat_corpus import DATA, load
from tests.text.secrets_corpus import FOLLOWUP_NEGATIVES, FOLLOWUPS, NEGATIVES, POSITIVES, TOKENS

GOLDEN = DATA / "secrets_golden.json.gz"
SHAPE_SIZE = 20_000
"""Characters of each bench shape (``bench.redaction_texts``): many lines, many cues."""

Input = tuple[str, tuple[str, ...]]
"""A text and the messages before it."""


def _unmarked(marked: str) -> str:
    return marked.replace("⟦", "").replace("⟧", "")


def inputs() -> list[Input]:
    """Every corpus text (with the messages before it, for a follow-up), then each bench
    shape, then the corpora joined into long texts: on lines, with blank lines between, and
    on one line (the shapes that take the finders' line-by-line paths)."""
    texts: list[Input] = [(text, ()) for _, text in TOKENS]
    texts += [(_unmarked(marked), ()) for _, marked in POSITIVES]
    texts += [(text, ()) for text in NEGATIVES]
    texts += [(_unmarked(marked), tuple(before)) for before, _, marked in FOLLOWUPS]
    texts += [(text, tuple(before)) for before, text in FOLLOWUP_NEGATIVES]
    for path in sorted(DATA.glob("chat_credential*.jsonl.gz")):
        texts += [(row["text"], ()) for row in load(path.name)]
    texts += [(make(SHAPE_SIZE), ()) for make in TEXTS.values()]
    plain = [text for text, before in texts if not before and len(text) < SHAPE_SIZE]
    for joiner, stride in (("\n", 2), ("\n\n \n", 3), (" ", 5)):  # ~30-60 KB each
        texts.append((joiner.join(plain[::stride]), ()))
    return texts


def finds(texts: list[Input]) -> list[list[tuple[str, int, int]]]:
    """What :func:`find_secrets` finds in each of ``texts``."""
    return [
        [(m.kind, m.start, m.end) for m in find_secrets(text, previous=before, learned=False)]
        for text, before in texts
    ]


def digest(texts: list[Input]) -> str:
    """A digest of the inputs: the golden file is stale when the corpora change."""
    return hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode()).hexdigest()


def load_golden(path: Path = GOLDEN) -> dict[str, object]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        golden: dict[str, object] = json.load(f)
    return golden


def write_golden(path: Path = GOLDEN) -> None:
    texts = inputs()
    golden = {"inputs": digest(texts), "finds": finds(texts)}
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(golden, f, separators=(",", ":"))


if __name__ == "__main__":
    write_golden()
    print(f"wrote {GOLDEN}")
