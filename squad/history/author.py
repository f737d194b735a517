"""Who made a change to a workspace, as its history records it: git's author of each commit."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SQUAD", "UNATTRIBUTED", "Author"]

_EMAIL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Author:
    """Who made a change, as git records it: ``extractor``, ``cli``, ``web``,
    ``mcp:<client>``, ``agent:<id>``, ``run``, ``unattributed``, ``squad``."""

    name: str

    @property
    def email(self) -> str:
        return f"{_EMAIL_UNSAFE.sub('-', self.name).strip('-') or 'squad'}@squad"


SQUAD = Author("squad")
UNATTRIBUTED = Author("unattributed")
