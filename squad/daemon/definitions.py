"""The squads folder as the daemon sees it: which files define which squads, and what changed.

A file is read, hashed and validated on its own; a bad one is kept as an error (reported in
the log and by ``squad status``) and the others are unaffected. Two files naming one squad:
the file that had it keeps it, else the first by name, and the other is an error. Planning
what to schedule, reschedule and unschedule is a pure function of the old and new contents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from squad.errors import ConfigError, Problem
from squad.spec.loader import read_text_file, squad_from_text
from squad.spec.models import SquadSpec

__all__ = [
    "Definition",
    "Plan",
    "assign_squads",
    "is_definition_file",
    "list_definition_files",
    "load_definition",
    "plan_changes",
]

SUFFIXES = (".yaml", ".yml")


def is_definition_file(path: Path) -> bool:
    """A squad YAML by its name: ``*.yaml``/``*.yml``, not hidden or an editor's temp file."""
    name = path.name
    return path.suffix in SUFFIXES and not name.startswith((".", "#", "~"))


def list_definition_files(folder: Path) -> list[Path]:
    """The definition files directly in ``folder``, sorted by name."""
    try:
        entries = sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in entries if is_definition_file(p) and p.is_file()]


@dataclass(frozen=True)
class Definition:
    """One file of the squads folder: its squad, or why it has none."""

    path: Path
    digest: str
    """SHA-256 of the file's bytes; a change of it is a change of the file."""
    spec: SquadSpec | None = None
    problems: tuple[Problem, ...] = field(default=())

    @property
    def error(self) -> str | None:
        """Every problem, one per line; None when the file is valid."""
        if not self.problems:
            return None
        return "\n".join(p.render() for p in self.problems)

    def failed(self, message: str) -> Definition:
        """This file, refused for ``message`` (a conflict found after validation)."""
        return Definition(self.path, self.digest, None, (Problem(message, source=str(self.path)),))

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "squad": self.spec.name if self.spec else None,
            "error": self.error,
            "problems": [p.to_dict() for p in self.problems],
        }


def file_digest(path: Path) -> str | None:
    """SHA-256 of the file's bytes; None when it cannot be read (gone, a folder...)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def load_definition(path: Path) -> Definition:
    """Read and validate one file; never raises for what is wrong with the file."""
    digest = file_digest(path) or ""
    try:
        spec = squad_from_text(read_text_file(path), source=str(path))
    except ConfigError as error:
        return Definition(path, digest, None, error.problems)
    except Exception as exc:  # noqa: BLE001 - one file never stops the others (RecursionError too)
        # A fault of ours on a strange file (the loader's bounds should give ConfigError):
        # the file is reported as failed, its siblings load, and the daemon goes on.
        problem = Problem(
            f"the file could not be read as a squad definition ({type(exc).__name__}: {exc})",
            source=str(path),
            hint="simplify the file; please report this as a bug in squad",
        )
        return Definition(path, digest, None, (problem,))
    return Definition(path, digest, spec)


def assign_squads(
    definitions: Mapping[Path, Definition], owners: Mapping[str, Path]
) -> tuple[dict[str, Definition], dict[Path, Definition]]:
    """Which file defines each squad, and the files refused for naming a taken squad.

    ``owners`` is the squad -> file assignment so far: a file keeps its squad when another
    file starts naming it too.
    """
    squads: dict[str, Definition] = {}
    for name, path in owners.items():
        definition = definitions.get(path)
        if definition is not None and definition.spec is not None and definition.spec.name == name:
            squads[name] = definition
    refused: dict[Path, Definition] = {}
    for path in sorted(definitions):
        definition = definitions[path]
        if definition.spec is None:
            continue
        name = definition.spec.name
        holder = squads.get(name)
        if holder is None:
            squads[name] = definition
        elif holder.path != path:
            refused[path] = definition.failed(
                f"squad {name!r} is already defined by {holder.path.name}; "
                "give this squad another name (or remove one of the files)"
            )
    return squads, refused


@dataclass(frozen=True)
class Plan:
    """What to do to go from the squads running to the squads defined."""

    add: list[str]
    change: list[str]
    remove: list[str]


def plan_changes(current: Mapping[str, Definition], wanted: Mapping[str, Definition]) -> Plan:
    """Squads to schedule (new), reschedule (their file or its content changed), unschedule."""
    add = sorted(set(wanted) - set(current))
    remove = sorted(set(current) - set(wanted))
    change = sorted(
        name
        for name in set(wanted) & set(current)
        if (wanted[name].path, wanted[name].digest) != (current[name].path, current[name].digest)
    )
    return Plan(add, change, remove)
