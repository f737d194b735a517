"""The base of every view: closed (a field no model names is refused) and frozen.

Views are built on first use (``defer_build``): a command imports the view modules of its
neighbours too, and pydantic's validators for some 60 views would cost each command that
shows one or two of them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["View"]


class View(BaseModel):
    """What a front end shows: the CLI's ``--json``, the HTTP API and MCP print its
    ``model_dump(mode="json")``; the fields are the whole contract."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
