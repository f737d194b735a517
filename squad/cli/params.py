"""A parameter's value coerced without pydantic where pydantic would hand it back unchanged.

Typer coerces every parameter through a pydantic ``TypeAdapter`` it builds at the first parse,
even one left at ``None``: five to eight adapters and typer's adapter module for a command
such as ``squad memory context`` (about 5 ms of its CPU, 2%). :func:`runtime_param`
gives each parameter a coercion that builds typer's own only for a value that needs it: a
value left at ``None`` never reaches it (typer's coercion returns ``None`` or ``()`` first,
the same code), and a plain ``str``, ``int`` or ``float`` parameter (no parser, choices,
bounds or path checks) given a value exactly of its type gets it back as it is, as from the
adapter. Any other value (``"12"`` for an ``int``, a path, a choice) goes through typer's
adapter, which coerces it or words the error as typer always has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from typer._coercion import RuntimeParam

__all__ = ["runtime_param"]

_PLAIN = (str, int, float)


@dataclass(frozen=True)
class _Deferred(RuntimeParam):
    """Typer's coercion of ``owner``, built on the first value that needs it."""

    owner: Any
    plain: bool

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        if self.plain and type(value) is self.annotation:
            return value
        return _typers(self.owner)._coerce_value(value, param=param, ctx=ctx)


def runtime_param(param: Any) -> Any:
    """The runtime coercion of typer's ``param`` (an option or argument), kept on it."""
    if param._runtime_param is None:
        desc = param.type_descriptor
        param._runtime_param = _Deferred(
            desc.parameter_info, desc.annotation, owner=param, plain=_plain(desc)
        )
    return param._runtime_param


def _typers(param: Any) -> Any:
    """Typer's own coercion of ``param`` (its pydantic adapter), built once."""
    built = getattr(param, "_typer_runtime_param", None)
    if built is None:
        from typer._coercion import build_runtime_param

        built = build_runtime_param(param.type_descriptor)
        param._typer_runtime_param = built
    return built


def _plain(desc: Any) -> bool:
    info = desc.parameter_info
    return (
        desc.annotation in _PLAIN
        and info.parser is None
        and desc.file_annotation is None
        and not (desc.is_choice or desc.is_path or desc.is_ranged or desc.is_datetime)
    )
