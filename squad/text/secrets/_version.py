"""The detector's version: a short digest of its code and data.

Text stored before an upgrade was checked by the detector of its day; when the detector
changes (a pattern added, the learned model's weights retrained), what is already stored must
be checked again (``squad memory scan``, and the daemon at its first start after the upgrade).
The version says whether it changed: a digest of every ``squad/text/secrets/*.py`` source file
and every file under ``squad/text/secrets/data/`` (when the folder exists), read through
:mod:`importlib.resources` so it is the same whether squad runs from a checkout or a wheel.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["detector_version", "digest_of"]

_PACKAGE = "squad.text.secrets"
_DATA = "data"
_LENGTH = 16
"""Hex characters kept: 64 bits, plenty to tell two detectors apart, short enough to read."""


@functools.cache
def detector_version() -> str:
    """The version of the credential detector this process runs (16 hex characters); the
    same for the same code and data, whatever the file times or the install's location."""
    return digest_of(resources.files(_PACKAGE))


def digest_of(root: Traversable) -> str:
    """The version of the detector whose package folder is ``root``: its ``*.py`` files and
    everything under its ``data/`` (caches aside), each by name and bytes."""
    digest = hashlib.sha256(b"squad secrets detector\0")
    for name, data in _inputs(root):
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:_LENGTH]


def _inputs(root: Traversable) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each source file, then each data file, in a stable order."""
    sources = sorted(
        (entry for entry in root.iterdir() if entry.is_file() and entry.name.endswith(".py")),
        key=lambda entry: entry.name,
    )
    for entry in sources:
        yield entry.name, entry.read_bytes()
    data = root / _DATA
    if data.is_dir():
        yield from _tree(data, f"{_DATA}/")


def _tree(folder: Traversable, prefix: str) -> Iterator[tuple[str, bytes]]:
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            yield from _tree(entry, f"{prefix}{entry.name}/")
        elif entry.is_file():
            yield f"{prefix}{entry.name}", entry.read_bytes()
