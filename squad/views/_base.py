"""The base of every view: closed (a field no model names is refused) and frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["View"]


class View(BaseModel):
    """What a front end shows: the CLI's ``--json``, the HTTP API and MCP print its
    ``model_dump(mode="json")``; the fields are the whole contract."""

    model_config = ConfigDict(extra="forbid", frozen=True)
