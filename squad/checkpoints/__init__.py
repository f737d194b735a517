"""Run checkpoints: the one seam over LangGraph's checkpointers, beside the store.

Every run is a LangGraph thread (thread id = run id) checkpointed durably after each step, so
a run killed or stopped mid-way resumes without redoing finished tasks. Where: a SQLite file in
the squad home (``checkpoints.sqlite``) when the store is SQLite, the store's own database when
it is PostgreSQL. Nothing else in squad opens a checkpoint database or knows its tables.

A home whose store moved to PostgreSQL keeps its old ``checkpoints.sqlite`` untouched and
unused (nothing is migrated): :func:`left_behind` says which runs it holds, for ``squad
status``, the daemon's log and a refused resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from squad.checkpoints.base import Checkpoints
from squad.checkpoints.sqlite import FILE_NAME, SqliteCheckpoints

if TYPE_CHECKING:
    from squad.settings import Settings

__all__ = [
    "Checkpoints",
    "LeftBehind",
    "SqliteCheckpoints",
    "left_behind",
    "open_checkpoints",
    "sqlite_path",
]


def sqlite_path(home: Path) -> Path:
    """The SQLite checkpoint file of a squad home."""
    return home / FILE_NAME


def open_checkpoints(settings: Settings) -> Checkpoints:
    """The checkpoints of this home: in the store's database when it is PostgreSQL, else in
    the home's SQLite file. Opens nothing yet: the first use connects."""
    from squad.store.sqlite_reader import sqlite_path as store_file

    if store_file(settings.database_url) is not None:  # plain SQLite: no URL parser imported
        return SqliteCheckpoints(sqlite_path(settings.home))
    from squad.store.engine import parse_url

    if parse_url(settings.database_url).get_backend_name() == "postgresql":
        from squad.checkpoints.postgres import PostgresCheckpoints

        return PostgresCheckpoints(settings.database_url)
    return SqliteCheckpoints(sqlite_path(settings.home))


@dataclass(frozen=True)
class LeftBehind:
    """Checkpoints a home kept from before its store moved to PostgreSQL: not migrated, not
    used; those runs can resume only with the SQLite store again."""

    path: Path
    runs: tuple[str, ...]

    def describe(self) -> str:
        count = f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}"
        return (
            f"{self.path} holds the checkpoints of {count} from before this home's store moved "
            "to PostgreSQL; it is kept as it is and not used (nothing was migrated)"
        )

    def to_dict(self) -> dict[str, object]:
        return {"file": str(self.path), "runs": list(self.runs)}


def left_behind(home: Path, active: Checkpoints) -> LeftBehind | None:
    """The home's SQLite checkpoints when ``active`` is elsewhere and they hold any runs."""
    path = sqlite_path(home)
    if isinstance(active, SqliteCheckpoints) and active.path == path:
        return None
    runs = SqliteCheckpoints(path).threads()
    return LeftBehind(path, tuple(runs)) if runs else None
