"""``.squad-config.json``: everything needed to restore a squad when its YAML is gone.

The manifest is read back as untrusted input (a person may edit or copy it), so it is
validated like a definition: bounded in size, refused when nested past what the JSON parser
can read, its own strict model, and the definition through the squad spec itself.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from squad.errors import ConfigError, Problem
from squad.spec.loader import squad_from_dict
from squad.spec.models import SquadSpec

__all__ = [
    "FORMAT_VERSION",
    "MAX_MANIFEST_BYTES",
    "Manifest",
    "definition_sha256",
    "experience_identity",
    "manifest_too_large",
]

FORMAT_VERSION = 1

MAX_MANIFEST_BYTES = 8 * 1024 * 1024
"""Manifests larger than this (8 MiB) are refused unread. One holds one definition (at most
1 MiB of YAML and 20,000 values); written out as JSON with every default, the largest is
about 2 MB."""


def manifest_too_large(size: int, source: str) -> Problem:
    """The problem of a manifest of ``size`` bytes, over :data:`MAX_MANIFEST_BYTES`."""
    return Problem(
        f"manifest is {size:,} bytes, over the {MAX_MANIFEST_BYTES:,}-byte limit; squad "
        "never writes one this large",
        source=source,
        hint="restore it from a backup",
    )


def definition_sha256(spec: SquadSpec) -> str:
    """Stable fingerprint of a definition's meaning (not its YAML formatting or comments)."""
    canonical = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def experience_identity(squad: str, agent_id: str, profile: str | None) -> str:
    """Identity of an agent's experiential memory: its profile, else squad and agent id."""
    return f"profile:{profile}" if profile else f"squad:{squad}/{agent_id}"


class _Source(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    path: str


class _Agent(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    name: str
    profile: str | None
    experience_identity: str
    memory_namespace: str


class _ManifestFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    format_version: int
    squad: str
    created_at: str
    updated_at: str
    definition_sha256: str
    source: _Source | None
    agents: list[_Agent]
    definition: dict[str, Any]


@dataclass(frozen=True)
class Manifest:
    squad: str
    definition: SquadSpec
    created_at: datetime
    updated_at: datetime
    source_path: str | None = None
    """The YAML file it was last created from (informational; restore never needs it)."""

    @property
    def definition_sha256(self) -> str:
        return definition_sha256(self.definition)

    def to_json(self) -> bytes:
        spec = self.definition
        data = {
            "format_version": FORMAT_VERSION,
            "squad": self.squad,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "definition_sha256": self.definition_sha256,
            "source": {"path": self.source_path} if self.source_path else None,
            "agents": [
                {
                    "id": agent.id,
                    "name": agent.display_name,
                    "profile": agent.profile,
                    "experience_identity": experience_identity(spec.name, agent.id, agent.profile),
                    "memory_namespace": f"Agent Experience: {agent.display_name}",
                }
                for agent in spec.agents
            ],
            "definition": spec.model_dump(mode="json"),
        }
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, raw: bytes, *, source: str) -> Manifest:
        """Parse and validate a manifest; a newer format or a bad definition is a ConfigError."""
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ConfigError([manifest_too_large(len(raw), source)])
        try:
            data = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise ConfigError(
                [
                    Problem(
                        "manifest is nested too deeply to read (lists or objects inside each "
                        "other hundreds of levels deep); squad never writes one like this",
                        source=source,
                        hint="restore it from a backup",
                    )
                ]
            ) from None
        except ValueError as exc:  # bad UTF-8 or JSON, a number of thousands of digits
            line = getattr(exc, "lineno", None)
            raise ConfigError(
                [
                    Problem(
                        f"manifest is not valid JSON: {exc}",
                        source=source,
                        line=line,
                        hint="restore it from a backup",
                    )
                ]
            ) from None
        if isinstance(data, dict) and isinstance(data.get("format_version"), int):
            version = data["format_version"]
            if version > FORMAT_VERSION:
                raise ConfigError(
                    [
                        Problem(
                            f"manifest format {version} is newer than this squad understands "
                            f"({FORMAT_VERSION})",
                            source=source,
                            path=("format_version",),
                            hint="upgrade squad",
                        )
                    ]
                )
        try:
            parsed = _ManifestFile.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            raise ConfigError(
                [
                    Problem(
                        f"manifest is malformed: {first['msg']}",
                        source=source,
                        path=tuple(first["loc"]),
                        hint="restore it from a backup",
                    )
                ]
            ) from None
        spec = squad_from_dict(parsed.definition, source=f"{source} (definition)")
        if spec.name != parsed.squad:
            raise ConfigError(
                [
                    Problem(
                        f"manifest names squad {parsed.squad!r} "
                        f"but its definition is {spec.name!r}",
                        source=source,
                        path=("squad",),
                    )
                ]
            )
        try:
            created = datetime.fromisoformat(parsed.created_at)
            updated = datetime.fromisoformat(parsed.updated_at)
        except ValueError as exc:
            raise ConfigError(
                [Problem(f"manifest has a bad timestamp: {exc}", source=source)]
            ) from None
        return cls(
            squad=parsed.squad,
            definition=spec,
            created_at=created,
            updated_at=updated,
            source_path=parsed.source.path if parsed.source else None,
        )
