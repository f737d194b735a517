"""Token counts of short texts kept between processes, so that a command that counts a few
texts it counted before (``squad memory context`` on a memory that has not changed: the boot
files, the memory block) neither imports tiktoken nor reads its tables.

A count depends on the text, the encoding's rank files (litellm's, by name, size and
modification time), tiktoken's own files (likewise: an upgrade changes them) and Python's
version; the file of kept counts is named for all of these (:func:`counts_path`), so a count
read back is the count tiktoken would give. Each process adds the counts of the first
:data:`BUDGET_CHARS` characters it counts in texts of at most :data:`LONGEST` characters (a
run or a daemon, which count far more, add no more than a command does), and the file keeps
the last :data:`KEPT` of them. Texts are kept by a 16-byte BLAKE2b digest, never in clear. A
file that cannot be read is empty; one that cannot be written only makes the next process
count again.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import marshal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["BUDGET_CHARS", "KEPT", "LONGEST", "KeptCounts", "counts_path"]

LONGEST = 2_048
"""Longer texts are not looked up or kept (a count past this is cheap next to its text)."""
BUDGET_CHARS = 2_048
"""Characters of texts whose counts one process adds to the file."""
KEPT = 4_096
"""Counts the file keeps, the newest."""


class KeptCounts:
    """The kept counts of one encoding: read from :func:`counts_path` at the first look-up,
    written back once (atomically, not durably: it is a cache) as the process exits, when it
    added any (:meth:`flush`). A process killed first keeps none: the next one counts again."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._counts: dict[bytes, int] | None = None
        self._budget = BUDGET_CHARS
        self._added = False

    def count(self, text: str, count: Callable[[str], int]) -> int:
        """``text``'s kept count, else ``count(text)`` (kept while this process's budget
        lasts)."""
        if len(text) > LONGEST:
            return count(text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            if self._counts is None:
                self._counts = _read(self._path)
            found = self._counts.get(key)
        if found is not None:
            return found
        counted = count(text)
        with self._lock:
            if self._budget >= len(text):
                self._budget -= len(text)
                self._counts[key] = counted
                while len(self._counts) > KEPT:
                    del self._counts[next(iter(self._counts))]
                if not self._added:
                    self._added = True
                    atexit.register(self.flush)
        return counted

    def flush(self) -> None:
        """Write the counts back if this process added any since the last flush (one write a
        process, not one a count: the file is rewritten whole)."""
        with self._lock:
            if not self._added or self._counts is None:
                return
            self._added = False
            _write(self._path, self._counts)


def counts_path(name: str, rank_files: Path, cache: Path) -> Path | None:
    """Where the counts of encoding ``name`` are kept under ``cache``, for these rank files
    and the installed tiktoken; None when tiktoken is not installed as a package folder."""
    spec = importlib.util.find_spec("tiktoken")
    if spec is None or not spec.submodule_search_locations:
        return None
    from squad.text.tokens import digest_folder

    digest = hashlib.blake2b(f"{name} {sys.version_info[:2]}".encode(), digest_size=8)
    for folder in (rank_files, Path(next(iter(spec.submodule_search_locations)))):
        try:
            digest_folder(digest, folder)
        except OSError:
            return None
        digest.update(b"\0")
    return cache / f"{name}-{digest.hexdigest()}.marshal"


def _read(path: Path) -> dict[bytes, int]:
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        key: value
        for key, value in kept.items()
        if type(key) is bytes and len(key) == 16 and type(value) is int
    }


def _write(path: Path, counts: dict[bytes, int]) -> None:
    from squad.fsutil import atomic_write, private_dir

    try:
        private_dir(path.parent)
        atomic_write(path, marshal.dumps(counts), durable=False)
    except (OSError, ValueError):
        pass
