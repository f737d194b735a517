"""Names in the order people count: ``plan-999.md`` before ``plan-1000.md``. Pure."""

from __future__ import annotations

import re

__all__ = ["natural_key"]

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(name: str) -> tuple[tuple[tuple[str, int], ...], str]:
    """A sort key that compares the runs of digits in ``name`` as numbers and the rest as
    text; names equal but for leading zeros (``a01``, ``a1``) still get a fixed order."""
    parts = _DIGITS.split(name)
    key = tuple((part, 0) if i % 2 == 0 else ("", int(part)) for i, part in enumerate(parts))
    return key, name
