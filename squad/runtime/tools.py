"""Tools offered to agents: a JSON-schema spec plus a function, built from plain methods.

Tool errors never escape into the agent loop: a refusal (bad path, secret, stale write) comes
back to the model as text it can act on.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, get_type_hints

from squad.errors import SquadError
from squad.model.types import ToolSpec

__all__ = ["Tool", "tool_from_function", "tools_by_name"]

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    function: Callable[..., str]

    @property
    def name(self) -> str:
        return self.spec.name

    def call(self, arguments: Mapping[str, Any]) -> str:
        try:
            return str(self.function(**arguments))
        except TypeError as exc:
            return f"refused: bad arguments for {self.name}: {exc}"
        except SquadError as exc:
            return f"refused: {exc}"


def tool_from_function(function: Callable[..., str]) -> Tool:
    """A tool whose name, description and parameters come from ``function`` itself."""
    return Tool(_spec_of(getattr(function, "__func__", function)), function)


@lru_cache(maxsize=256)
def _spec_of(function: Callable[..., str]) -> ToolSpec:
    """The spec of a plain function (bound methods share their function's spec)."""
    hints = get_type_hints(function)
    properties: dict[str, Any] = {}
    required = []
    for name, parameter in inspect.signature(function).parameters.items():
        if name == "self":
            continue
        annotation = hints.get(name, str)
        base = next((t for t in _JSON_TYPES if annotation is t or annotation == t | None), str)
        properties[name] = {"type": _JSON_TYPES[base]}
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    description = inspect.getdoc(function) or function.__name__
    return ToolSpec(function.__name__, description.strip(), schema)


def tools_by_name(tools: Sequence[Tool]) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools}
