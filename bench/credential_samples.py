"""The labelled sets of ``bench.credential_paths``: credential messages and look-alikes.

JSON Lines, gzipped when the name ends in ``.gz``. A credential line is
``{"text", "lang", "values", "form"}``, every value a substring of the text; a look-alike line
the same without ``values``. Anything else is a :class:`~squad.errors.UsageError` naming the
file and line, never a value.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.errors import UsageError

__all__ = ["Sample", "load"]


@dataclass(frozen=True)
class Sample:
    """One labelled message; ``values`` is empty for a look-alike."""

    index: int
    """Its line number in its file (what the report shows instead of the text)."""
    text: str
    lang: str
    form: str
    values: tuple[str, ...] = ()


def load(path: Path, *, credentials: bool, limit: int | None = None) -> list[Sample]:
    """The samples of a JSON Lines file (gzipped when its name ends in ``.gz``); UsageError
    naming the file and line for anything malformed."""
    opener: Callable[..., Any] = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise UsageError(f"{path}: cannot read it: {exc}") from None
    samples: list[Sample] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if limit is not None and len(samples) >= limit:
            break
        samples.append(_sample(_row(path, number, line), f"{path}:{number}", number, credentials))
    if not samples:
        raise UsageError(f"{path}: holds no messages")
    return samples


def _row(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{number}: not JSON: {exc.msg}") from None
    if not isinstance(row, dict):
        raise UsageError(f"{path}:{number}: expected an object, got {type(row).__name__}")
    return row


def _sample(row: dict[str, Any], where: str, number: int, credentials: bool) -> Sample:
    for key in ("text", "lang", "form"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise UsageError(f"{where}: {key!r} must be a non-empty string")
    values: tuple[str, ...] = ()
    if credentials:
        raw = row.get("values")
        if not isinstance(raw, list) or not raw or not all(isinstance(v, str) and v for v in raw):
            raise UsageError(f"{where}: 'values' must be a non-empty list of strings")
        values = tuple(raw)
        missing = sum(v not in row["text"] for v in values)
        if missing:  # the value itself is never printed
            raise UsageError(f"{where}: {missing} of its values are not in its text")
    elif row.get("values"):
        raise UsageError(f"{where}: a look-alike has no 'values'; is this the credentials file?")
    return Sample(number, row["text"], row["lang"], row["form"], values)
