"""The schema revisions this squad ships, read from its migration scripts without alembic
or SQLAlchemy: whether a database needs migrating is then one query on its stamp, which
the reading commands' sqlite3 path (:mod:`squad.store.sqlite_reader`) asks too."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["MIGRATIONS", "shipped_heads"]

MIGRATIONS = Path(__file__).with_name("migrations")
"""The alembic script folder shipped with the package."""

_REVISION = re.compile(r"^revision: str = \"([^\"]+)\"", re.MULTILINE)
_DOWN = re.compile(r"^down_revision: [^=]+= (?:\"([^\"]+)\"|None)", re.MULTILINE)


def shipped_heads(script_location: Path = MIGRATIONS) -> frozenset[str] | None:
    """The head revisions, read from the scripts' ``revision``/``down_revision`` lines (as
    every script here writes them); None when a script does not say so plainly."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (script_location / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(source), _DOWN.search(source)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        if down.group(1):
            parents.add(down.group(1))
    return frozenset(revisions - parents) or None
