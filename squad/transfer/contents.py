"""What an export archive holds besides the workspace, as data both sides agree on.

``manifest.json`` is read back at a trust boundary (an archive may come from anywhere), so it
is a pydantic model that forbids unknown keys; experiential facts and decisions travel as
JSON Lines of the same strictness.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from squad.paths import SLUG_PATTERN

__all__ = [
    "FORMAT",
    "VERSION",
    "AgentEntry",
    "ExportManifest",
    "ExportedDecision",
    "ExportedFact",
    "HistoryEntry",
]

FORMAT = "squad-export"
VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HistoryEntry(_Strict):
    head: Annotated[str, Field(pattern=r"^[0-9a-f]{40,64}$")]
    commits: Annotated[int, Field(ge=1)]


class AgentEntry(_Strict):
    id: Annotated[str, Field(pattern=SLUG_PATTERN)]
    identity: Annotated[str, Field(min_length=1, max_length=300)]
    """The agent's experience identity (``profile:<id>`` or ``squad:<squad>/<agent>``)."""
    namespace: Annotated[str, Field(min_length=1, max_length=300)]
    facts: Annotated[int, Field(ge=0)]


class ExportManifest(_Strict):
    format: Literal["squad-export"]
    version: Annotated[int, Field(ge=1)]
    squad: Annotated[str, Field(pattern=SLUG_PATTERN)]
    exported_at: datetime
    squad_version: Annotated[str, Field(max_length=100)]
    history: HistoryEntry | None
    """None: exported without its history (``--without-history``)."""
    agents: Annotated[list[AgentEntry], Field(max_length=1000)]
    decisions: Annotated[int, Field(ge=0)]
    files: Annotated[int, Field(ge=0)]
    source_yaml: bool


class ExportedFact(_Strict):
    identity: Annotated[str, Field(min_length=1, max_length=300)]
    namespace: Annotated[str, Field(min_length=1, max_length=300)]
    text: Annotated[str, Field(min_length=1, max_length=20_000)]
    subject: Annotated[str | None, Field(max_length=500)] = None
    squad: Annotated[str, Field(max_length=200)]
    agent: Annotated[str, Field(max_length=200)]
    run_id: Annotated[str | None, Field(max_length=200)] = None
    source: Annotated[str, Field(max_length=200)]
    status: Literal["active", "dormant"]
    created_at: datetime
    transient: bool = False
    expires_at: datetime | None = None


class ExportedDecision(_Strict):
    id: Annotated[int, Field(ge=1)]
    title: Annotated[str, Field(min_length=1, max_length=500)]
    decision: Annotated[str, Field(min_length=1, max_length=20_000)]
    reasons: Annotated[list[str], Field(min_length=1, max_length=100)]
    alternatives: Annotated[list[str], Field(max_length=100)]
    decided_by: Annotated[str, Field(min_length=1, max_length=200)]
    decided_at: datetime
    supersedes: int | None = None
