"""A few values made lately, found again by their key's identity rather than its hash.

A run's graph hands the same task list to its steps again and again; hashing or rebuilding a
200-task list at every step made a long plan's steps cost more with its length. Keyed by
identity, a lookup is a handful of ``is`` checks. Each entry holds its key, so the object an
identity belongs to cannot be freed, and its id reused, while the entry is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["RecentByIdentity"]

K = TypeVar("K")
V = TypeVar("V")


class RecentByIdentity(Generic[K, V]):
    """The values made for the last ``size`` keys, newest first; safe across threads."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._entries: list[tuple[K, V]] = []
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V], *, keep: bool = True) -> V:
        """The value kept for ``key`` itself, else ``make()`` (kept unless ``keep`` is False:
        a mutable key may change under the same identity)."""
        with self._lock:
            for seen, value in self._entries:
                if seen is key:
                    return value
        value = make()
        if keep:
            with self._lock:
                self._entries.insert(0, (key, value))
                del self._entries[self._size :]
        return value
