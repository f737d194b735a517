"""The JSON Schemas of squad's YAML files, for editors (the ``yaml-language-server`` header)
and ``squad schema``: generated from the pydantic models, so they never drift from them."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

__all__ = ["DIALECT", "schema_text", "squad_schema"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect pydantic writes (named in each document's ``$schema``)."""


def _document(model: type[BaseModel]) -> dict[str, Any]:
    from squad.spec.docs import json_schema

    return {"$schema": DIALECT, **json_schema(model)}


def squad_schema() -> dict[str, Any]:
    """The schema of a squad definition (``configs/squads/*.yaml``)."""
    from squad.spec.models import SquadSpec

    return _document(SquadSpec)


def schema_text(model: type[BaseModel] | None = None) -> str:
    """A schema as the file editors read: indented JSON ending in a newline; the squad
    definition's unless ``model`` names another (``SettingsFile`` for settings.yaml)."""
    document = squad_schema() if model is None else _document(model)
    return json.dumps(document, indent=2) + "\n"
