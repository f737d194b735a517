"""Validated definitions kept across restarts, so a daemon over 200 unchanged files starts
without parsing 200 YAML files again.

``$SQUAD_HOME/definitions-cache.json`` holds, for each valid definition file, the SHA-256 of
its bytes, its validated definition as JSON and where each key sits in the file. A file whose
bytes hash the same is loaded from there: its definition is validated again as data (pydantic
and the squad checks, a fraction of a millisecond; the YAML parse is what costs), never
trusted as is, and its warnings are checked again (an MCP command installed since is no
longer reported missing) and located at their lines. The cache is keyed by a fingerprint of
the code that validates (``squad/spec/`` and ``squad/errors.py``), so an upgrade that changes
what is valid, what the defaults are or what a warning says reads every file again. Anything
wrong with the cache (gone, corrupt, another version, an entry that no longer validates) only
means a file is parsed; it is rewritten, 0600 like the rest of the home, when a loaded file
changed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from squad.daemon.definitions import Definition
from squad.errors import ConfigError
from squad.fsutil import atomic_write
from squad.spec.yaml_source import Positions

__all__ = ["CACHE_FILE", "DefinitionCache", "code_fingerprint"]

CACHE_FILE = "definitions-cache.json"
_FORMAT = 1
_CODE = ("spec", "errors.py")
"""What decides whether a definition is valid, relative to the ``squad`` package."""


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 over the sources of the code that parses and validates definitions."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"format {_FORMAT}".encode())
    for name in _CODE:
        target = package / name
        files = sorted(target.glob("*.py")) if target.is_dir() else [target]
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


class DefinitionCache:
    """The cache file of one squad home; not thread-safe (the catalog holds its lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, dict[str, Any]] | None = None
        self._saved: dict[str, str] = {}
        """Path -> digest of what the file on disk holds, to skip a rewrite that changes
        nothing."""

    def lookup(self, path: Path, digest: str) -> Definition | None:
        """The definition of ``path`` as cached for bytes hashing to ``digest``, validated
        again; None when the cache has no such entry or it no longer validates."""
        entry = self._read().get(str(path))
        if entry is None or entry.get("digest") != digest:
            return None
        from squad.spec.loader import located_warnings, squad_from_dict

        try:
            positions = _positions(entry["positions"])
            spec = squad_from_dict(entry["definition"], source=str(path))
        except (ConfigError, KeyError, TypeError, ValueError):
            self._saved.pop(str(path), None)  # so the next save replaces the bad entry
            return None
        warnings = located_warnings(spec, positions, source=str(path))
        return Definition(path, digest, spec, warnings=warnings, positions=positions)

    def save(self, files: Mapping[Path, Definition]) -> None:
        """Keep the valid definitions of ``files`` (a write only when one changed). A cache
        that cannot be written is left as it is: it only costs the next start time."""
        self._read()
        valid = {
            str(p): d for p, d in files.items() if d.spec is not None and d.positions is not None
        }
        if {p: d.digest for p, d in valid.items()} == self._saved:
            return
        entries = {
            path: {
                "digest": d.digest,
                "definition": d.spec.model_dump(mode="json", exclude_unset=True)
                if d.spec
                else None,
                "positions": _positions_json(d.positions) if d.positions else None,
            }
            for path, d in sorted(valid.items())
        }
        body = {"format": _FORMAT, "code": code_fingerprint(), "files": entries}
        try:
            atomic_write(self.path, json.dumps(body, separators=(",", ":")).encode())
            self.path.chmod(0o600)
        except OSError:
            return
        self._entries = entries
        self._saved = {p: d.digest for p, d in valid.items()}

    def _read(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = _load(self.path)
            self._saved = {
                p: str(e.get("digest")) for p, e in self._entries.items() if isinstance(e, dict)
            }
        return self._entries


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        body = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(body, dict) or body.get("code") != code_fingerprint():
        return {}
    files = body.get("files")
    if not isinstance(files, dict):
        return {}
    return {p: e for p, e in files.items() if isinstance(e, dict)}


def _positions_json(positions: Positions) -> dict[str, list[list[Any]]]:
    return {
        "keys": [[list(path), *at] for path, at in positions.keys.items()],
        "values": [[list(path), *at] for path, at in positions.values.items()],
    }


def _positions(data: dict[str, Any]) -> Positions:
    def table(rows: list[list[Any]]) -> dict[tuple[str | int, ...], tuple[int, int]]:
        return {tuple(path): (int(line), int(column)) for path, line, column in rows}

    return Positions(table(data["keys"]), table(data["values"]))
