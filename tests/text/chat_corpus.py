"""Loading the gzipped chat credential corpora, and what of a message's values redaction leaves."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from squad.classifier.cues import has_secret
from squad.text.secrets import find_secrets, redact

DATA = Path(__file__).parent / "data"


def load(name: str) -> list[dict[str, Any]]:
    """The rows of ``data/<name>`` (gzipped JSON Lines)."""
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def leaks(row: dict[str, Any]) -> list[str]:
    """The values of ``row`` still readable, whole or as a 12+ character line, after redaction."""
    redacted, _ = redact(row["text"])
    return [
        value
        for value in row["values"]
        if value in redacted or any(len(p) >= 12 and p in redacted for p in value.split("\n"))
    ]


def removed(rows: list[dict[str, Any]]) -> int:
    """How many of ``rows`` the memory writer leaves with none of their values readable."""
    return sum(not leaks(row) for row in rows)


def refused(rows: list[dict[str, Any]]) -> int:
    """How many of ``rows`` the classifier refuses as holding a credential."""
    return sum(has_secret(row["text"]) for row in rows)


def false_alarms(rows: list[dict[str, Any]]) -> list[str]:
    """The forms of the near misses in ``rows`` that the writer or the classifier flags."""
    return [row["form"] for row in rows if find_secrets(row["text"]) or has_secret(row["text"])]
