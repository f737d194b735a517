"""A bounded, thread-safe cache of what was worked out from texts, that does not keep the
texts alive.

A daemon redacts, counts and filters the same texts many times in a short while (a turn's
reply is scanned by the recorder, the output's redaction, the store write, working memory
and the extractor), so the answers are worth keeping; but it runs for weeks on texts nobody
chose, and a cache keyed by the texts themselves holds its ``maxsize`` largest texts for
good. Here a key longer than :data:`KEY_CHARS` is replaced by a 16-byte BLAKE2 digest of its
parts: at most ``maxsize`` short strings or digests, and the values, stay.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar, cast

__all__ = ["KEY_CHARS", "BoundedCache", "text_key"]

KEY_CHARS = 512
"""The longest key kept as it is; a longer one is kept as its digest."""

V = TypeVar("V")
_MISSING = object()


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
    """The ``maxsize`` values last asked for, by key; the least recently used goes first."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._values: OrderedDict[str | bytes, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str | bytes, make: Callable[[], V]) -> V:
        """The value kept for ``key``, else ``make()``'s, then kept. ``make`` runs outside the
        lock: two threads asking for one new key at once may both make it (the values must be
        the same for the same key)."""
        with self._lock:
            found = self._values.get(key, _MISSING)
            if found is not _MISSING:
                self._values.move_to_end(key)
                return cast(V, found)
        made = make()
        with self._lock:
            self._values[key] = made
            self._values.move_to_end(key)
            while len(self._values) > self._maxsize:
                self._values.popitem(last=False)
        return made

    def keys(self) -> list[str | bytes]:
        """The keys kept, least recently used first."""
        with self._lock:
            return list(self._values)

    def __len__(self) -> int:
        return len(self._values)
