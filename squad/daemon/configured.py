"""The squads folder as ``squad status`` sees it with the daemon down: each file's squad (its
schedule and warnings) or why it has none, the way the daemon would load them.

Validating a folder of YAML costs; ``$SQUAD_HOME/status-validated.json`` keeps each file's
validation by its identity, size and modification time, so a file is validated again only
when it changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from squad.cache_file import read_cache, write_cache

__all__ = ["VALIDATED_FILE", "configured_squads"]

VALIDATED_FILE = "status-validated.json"
"""What ``squad status`` (daemon down) learned of each squad file, by path, with the file's
identity, size and modification time: a file is validated again only when they change."""
_VALIDATED_VERSION = 1


def _file_mark(path: Path) -> list[int] | None:
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _validated(path: Path) -> dict[str, Any]:
    """One file as ``squad status`` shows it: its squad (with schedule and warnings), or
    why it has none (JSON-ready, for the cache)."""
    from squad.daemon.definitions import load_definition
    from squad.daemon.triggers import describe_schedule

    definition = load_definition(path)
    if definition.spec is None:
        return {"name": None, "failed": definition.to_dict()}
    return {
        "name": definition.spec.name,
        "schedule": describe_schedule(definition.spec.schedule),
        "warnings": [w.to_dict() for w in definition.warnings],
    }


def configured_squads(
    folder: Path, owners: Mapping[str, Path], *, cache: Path | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Squads (with their warnings) and failed files of the folder, as the daemon would load
    them: a file that takes a squad name already taken is refused, the file that had the
    squad (``owners``) keeping it, else the first by name (as
    :func:`~squad.daemon.definitions.assign_squads`).

    ``cache`` (a JSON file) keeps each file's validation by its identity, size and
    modification time; only new and changed files are read and validated again."""
    from squad.daemon.definitions import list_definition_files
    from squad.errors import Problem

    known = read_cache(cache, _VALIDATED_VERSION, "files")
    seen: dict[str, Any] = {}
    files: dict[Path, dict[str, Any]] = {}
    for path in list_definition_files(folder):
        mark = _file_mark(path)
        entry = known.get(str(path))
        if mark is None or entry is None or entry.get("mark") != mark:
            entry = {**_validated(path), "mark": mark}
        seen[str(path)] = files[path] = entry
    if cache is not None and seen != known:
        write_cache(cache, _VALIDATED_VERSION, "files", seen)
    valid = {path: str(e["name"]) for path, e in files.items() if e.get("name") is not None}
    squads = {name: path for name, path in owners.items() if valid.get(path) == name}
    refused: dict[Path, dict[str, Any]] = {}
    for path in sorted(valid):
        name = valid[path]
        holder = squads.setdefault(name, path)
        if holder != path:
            message = (
                f"squad {name!r} is already defined by {holder.name}; "
                "give this squad another name (or remove one of the files)"
            )
            problem = Problem(message, source=str(path))
            refused[path] = {
                "file": str(path),
                "squad": None,
                "error": problem.render(),
                "problems": [problem.to_dict()],
            }
    configured = [
        {
            "name": name,
            "file": str(path),
            "schedule": files[path]["schedule"],
            "warnings": list(files[path]["warnings"]),
        }
        for name, path in sorted(squads.items())
    ]
    failed = {path: e["failed"] for path, e in files.items() if e.get("name") is None}
    failed.update(refused)
    return configured, [failed[path] for path in sorted(failed)]
