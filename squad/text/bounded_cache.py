"""A bounded, thread-safe cache of what was worked out from texts, that does not keep the
texts alive.

A daemon redacts, counts and filters the same texts many times in a short while (a turn's
reply is scanned by the recorder, the output's redaction, the store write, working memory
and the extractor), so the answers are worth keeping; but it runs for weeks on texts nobody
chose, and a cache keyed by the texts themselves holds its ``maxsize`` largest texts for
good. Here a key longer than :data:`KEY_CHARS` is replaced by a 16-byte BLAKE2 digest of its
parts, and a cache whose answers grow with their text (a text's words) is bounded by the
characters of the texts it answered for too (``max_weight``), not only by their count.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["KEY_CHARS", "BoundedCache", "text_key"]

KEY_CHARS = 512
"""The longest key kept as it is; a longer one is kept as its digest."""

V = TypeVar("V")


def text_key(*parts: str) -> str | bytes:
    """A cache key for ``parts``: the one part itself when it is short, else a digest of
    every part with its length (so ``("ab", "c")`` and ``("a", "bc")`` differ)."""
    if len(parts) == 1 and len(parts[0]) <= KEY_CHARS:
        return parts[0]
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


class BoundedCache(Generic[V]):
    """The values last asked for, by key: at most ``maxsize`` of them and, when
    ``max_weight`` is given, at most that total weight (each value's, given when it is made:
    the length of its text); the least recently used goes first."""

    def __init__(self, maxsize: int, *, max_weight: int | None = None) -> None:
        self._maxsize = maxsize
        self._max_weight = max_weight
        self._values: OrderedDict[str | bytes, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: str | bytes, make: Callable[[], V], weight: int = 1) -> V:
        """The value kept for ``key``, else ``make()``'s, then kept with ``weight``.
        ``make`` runs outside the lock: two threads asking for one new key at once may both
        make it (the values must be the same for the same key)."""
        found = self._values.get(key)  # a hit takes no lock: each step is atomic on its own
        if found is not None:
            with contextlib.suppress(KeyError):  # dropped by another thread meanwhile
                self._values.move_to_end(key)
            return found[0]
        made = make()
        if self._max_weight is not None and weight > self._max_weight:
            return made  # heavier than the whole cache may be: not kept
        with self._lock:
            old = self._values.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._values[key] = (made, weight)
            self._weight += weight
            while len(self._values) > self._maxsize or (
                self._max_weight is not None and self._weight > self._max_weight
            ):
                self._weight -= self._values.popitem(last=False)[1][1]
        return made

    def keys(self) -> list[str | bytes]:
        """The keys kept, least recently used first."""
        with self._lock:
            return list(self._values)

    def weight(self) -> int:
        """The total weight kept."""
        with self._lock:
            return self._weight

    def __len__(self) -> int:
        return len(self._values)
