"""The squads folder as the daemon sees it: which files define which squads, and what changed.

A file is read, hashed and validated on its own; a bad one is kept as an error, a valid one
with its warnings (both reported in the log and by ``squad status``), and the others are
unaffected. Reading never blocks or runs on: what is not a regular file (a FIFO, a device
linked in) or is over the definition size limit is left unread. Two files naming one squad:
the file that had it keeps it, else the first by name, and the other is an error. Planning
what to schedule, reschedule and unschedule is a pure function of the old and new contents.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from squad.errors import ConfigError, Problem
from squad.fsutil import read_up_to

if TYPE_CHECKING:  # the loader and the models load with the first file read (not for status)
    from squad.spec.models import SquadSpec
    from squad.spec.yaml_source import Positions

__all__ = [
    "Definition",
    "DefinitionDict",
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
    """The definition files directly in ``folder``, sorted by name: every ``*.yaml`` entry but
    folders, so a FIFO, device, socket or broken link of that name is loaded (and reported as
    what it is, without blocking) instead of being skipped without a word."""
    try:
        entries = sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [p for p in entries if is_definition_file(p) and not p.is_dir()]


class DefinitionDict(TypedDict):
    """:meth:`Definition.to_dict`: a file of the squads folder, its squad or its problems."""

    file: str
    squad: str | None
    error: str | None
    problems: list[dict[str, object]]


@dataclass(frozen=True)
class Definition:
    """One file of the squads folder: its squad, or why it has none."""

    path: Path
    digest: str
    """SHA-256 of the file's bytes, or the mark of a file not read (:func:`file_digest`); a
    change of it is a change of the file."""
    spec: SquadSpec | None = None
    problems: tuple[Problem, ...] = field(default=())
    warnings: tuple[Problem, ...] = field(default=())
    """What validates but is unlikely to be meant (a valid file only)."""
    positions: Positions | None = field(default=None, compare=False, repr=False)
    """Where each key sits in the file (a valid file read from its text), to locate warnings."""

    @property
    def error(self) -> str | None:
        """Every problem, one per line; None when the file is valid."""
        if not self.problems:
            return None
        return "\n".join(p.render() for p in self.problems)

    @property
    def warning_text(self) -> str | None:
        """Every warning, one per line; None when there is none."""
        if not self.warnings:
            return None
        return "\n".join(p.render() for p in self.warnings)

    def failed(self, message: str) -> Definition:
        """This file, refused for ``message`` (a conflict found after validation)."""
        return Definition(self.path, self.digest, None, (Problem(message, source=str(self.path)),))

    def to_dict(self) -> DefinitionDict:
        return {
            "file": str(self.path),
            "squad": self.spec.name if self.spec else None,
            "error": self.error,
            "problems": [p.to_dict() for p in self.problems],
        }


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the stat must not block open()
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def file_digest(path: Path) -> str:
    """SHA-256 of the file's bytes, or a mark of why they are not read.

    Never blocks and never reads more than
    :data:`~squad.spec.yaml_source.MAX_FILE_BYTES` and one byte: what is not
    a regular file (a FIFO or socket, a device such as /dev/zero linked in) and a file over
    the limit are marked by their kind and size, unread, and one that cannot be read (gone,
    not permitted) by the error; :func:`load_definition` then says what is wrong. A mark
    changes when the file does (size, time, kind), so a fixed file is read again.
    """
    from squad.spec.yaml_source import MAX_FILE_BYTES  # not for a status of unchanged files

    try:
        info = path.stat()
    except (OSError, ValueError) as exc:
        return _unreadable_mark(exc)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
        return _unread_mark(info)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return _unreadable_mark(exc)
    try:
        opened = os.fstat(fd)  # replaced by a FIFO or device since the stat?
        if not stat.S_ISREG(opened.st_mode):
            return _unread_mark(opened)
        raw = read_up_to(fd, MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:  # it grew past the limit since the stat
            return _unread_mark(os.fstat(fd))
        digest = hashlib.sha256(raw)
        return digest.hexdigest()
    except OSError as exc:
        return _unreadable_mark(exc)
    finally:
        os.close(fd)


def _unread_mark(info: os.stat_result) -> str:
    """A digest for a file not read: its kind, size and modification time."""
    kind = "file" if stat.S_ISREG(info.st_mode) else f"mode {stat.S_IFMT(info.st_mode):o}"
    return f"unread: {kind}, {info.st_size} bytes, mtime {info.st_mtime_ns}"


def _unreadable_mark(exc: Exception) -> str:
    """A digest for a file that cannot be looked at or opened: the error."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"unreadable: {errno.errorcode.get(exc.errno, exc.errno)}"
    return f"unreadable: {type(exc).__name__}"


def load_definition(path: Path) -> Definition:
    """Read and validate one file; never raises for what is wrong with the file."""
    from squad.spec.loader import load_squad_text, read_text_file

    digest = file_digest(path)
    try:
        loaded = load_squad_text(read_text_file(path), source=str(path))
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
    return Definition(
        path, digest, loaded.spec, warnings=loaded.warnings, positions=loaded.positions
    )


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
