"""Definitions load in layers: file -> text -> dict -> model. Only the file layer touches disk.

Every layer raises :class:`~squad.errors.ConfigError` carrying all problems it found, each
located by file, line and column where the input came from text.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from squad.errors import ConfigError, Problem
from squad.spec.checks import check_squad
from squad.spec.models import SquadSpec
from squad.spec.yaml_source import MAX_FILE_BYTES, Positions, decode_bytes, parse_yaml

__all__ = [
    "read_text_file",
    "squad_from_dict",
    "squad_from_file",
    "squad_from_text",
    "validate_document",
]

M = TypeVar("M", bound=BaseModel)


def squad_from_file(path: str | Path) -> SquadSpec:
    """Read, parse and validate a squad YAML file."""
    source = str(path)
    return squad_from_text(read_text_file(Path(path)), source=source)


def squad_from_text(text: str, *, source: str = "<text>") -> SquadSpec:
    """Parse and validate squad YAML text; ``source`` names it in messages."""
    document = parse_yaml(text, source=source)
    return squad_from_dict(document.data, source=source, positions=document.positions)


def squad_from_dict(
    data: Any, *, source: str = "<data>", positions: Positions | None = None
) -> SquadSpec:
    """Validate plain data (from YAML or a manifest) into a :class:`SquadSpec`."""
    return validate_document(
        SquadSpec,
        data,
        source=source,
        positions=positions,
        checks=check_squad,
        what="squad definition",
    )


def read_text_file(path: Path) -> str:
    """The file's text, refusing what cannot be a definition before reading it whole."""
    source = str(path)
    try:
        if not path.is_file():
            reason = "is a directory" if path.is_dir() else "does not exist"
            raise ConfigError(
                [Problem(f"file {reason}", source=source, hint="pass the path of a .yaml file")]
            )
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(
                [
                    Problem(
                        f"file is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit "
                        "for a definition",
                        source=source,
                        hint="split it into several squad files",
                    )
                ]
            )
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError([Problem(f"cannot read file: {exc.strerror}", source=source)]) from None
    return decode_bytes(raw, source=source)


def validate_document(
    model: type[M],
    data: Any,
    *,
    source: str,
    positions: Positions | None = None,
    checks: Callable[[M], list[Problem]] | None = None,
    what: str = "document",
) -> M:
    """Validate ``data`` against ``model`` and ``checks``; locate every problem in the text."""
    positions = positions or Positions()
    if data is None:
        raise ConfigError(
            [
                Problem(
                    f"file is empty; a {what} is a mapping of keys",
                    source=source,
                    line=1,
                    hint=_required_keys_hint(model),
                )
            ]
        )
    if not isinstance(data, dict):
        found = _describe_type(data)
        raise ConfigError(
            [
                Problem(
                    f"the top level must be a mapping of keys, found {found}",
                    source=source,
                    line=1,
                    column=1,
                    hint=_required_keys_hint(model),
                )
            ]
        )
    try:
        result = model.model_validate(data)
    except ValidationError as exc:
        problems = [_translate(model, error, source) for error in exc.errors(include_url=False)]
        raise ConfigError(_locate(problems, positions)) from None
    if checks is not None:
        problems = checks(result)
        if problems:
            problems = [
                Problem(p.message, source=source, path=p.path, hint=p.hint) for p in problems
            ]
            raise ConfigError(_locate(problems, positions))
    return result


def _locate(problems: list[Problem], positions: Positions) -> list[Problem]:
    located = []
    for problem in problems:
        prefer_key = problem.message.startswith(("unknown key", "required key"))
        where = positions.locate(problem.path, prefer_key=prefer_key)
        if problem.message.startswith("required key"):
            where = positions.locate(problem.path[:-1])
        line, column = where if where else (None, None)
        located.append(
            Problem(
                problem.message,
                source=problem.source,
                line=line,
                column=column,
                path=problem.path,
                hint=problem.hint,
            )
        )
    return sorted(located, key=lambda p: (p.line or 0, p.column or 0))


def _required_keys_hint(model: type[BaseModel]) -> str:
    required = [name for name, f in model.model_fields.items() if f.is_required()]
    return "start with " + ", ".join(f"{k}:" for k in required) if required else "add some keys"


_KINDS = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "model_type": "a mapping of keys",
    "dict_type": "a mapping of keys",
}
_BOUNDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}


def _describe_type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _translate(root: type[BaseModel], error: Any, source: str) -> Problem:
    kind = error["type"]
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    value = error.get("input")
    hint: str | None = None
    if kind == "missing":
        field = _field_info(root, loc)
        message = f"required key {loc[-1]!r} is missing"
        hint = f"add {loc[-1]}: ({field.description})" if field and field.description else None
    elif kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        valid = sorted(parent.model_fields) if parent else []
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
        message = f"unknown key {loc[-1]!r}"
        hint = (f"did you mean {close[0]!r}? " if close else "") + "valid keys: " + ", ".join(valid)
    elif kind in _KINDS:
        expected = _KINDS[kind]
        if loc and loc[-1] == "model" and kind in ("model_type", "dict_type"):
            expected = "a model string like 'openai/gpt-4o-mini' or a mapping with name:"
        message = f"expected {expected}, found {_describe_type(value)}"
        if kind == "string_type" and isinstance(value, int | float | bool):
            hint = f"quote it: '{value}'"
        elif kind == "bool_type" and isinstance(value, str):
            hint = "write true or false (YAML 1.2 reads yes/no/on/off as text)"
        elif kind in ("int_type", "float_type") and isinstance(value, str):
            hint = "remove the quotes"
    elif kind in _BOUNDS:
        op, key = _BOUNDS[kind]
        message = f"{value!r} is out of range; it must be {op} {ctx.get(key)}"
    elif kind in ("too_short", "string_too_short"):
        message = "must not be empty"
    elif kind == "literal_error":
        expected = ctx.get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",")]
        close = difflib.get_close_matches(str(value), [o for o in options if o], n=1)
        message = f"{value!r} is not one of {expected}"
        hint = f"did you mean {close[0]!r}?" if close else None
    else:
        message = error["msg"]
    return Problem(message, source=source, path=loc, hint=hint)


def _field_info(root: type[BaseModel], loc: tuple[Any, ...]) -> Any:
    parent = _model_at(root, loc[:-1])
    return parent.model_fields.get(str(loc[-1])) if parent else None


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``loc`` (list indexes skipped)."""
    current: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None or part not in current.model_fields:
            return None
        current = _find_model(current.model_fields[part].annotation)
    return current


def _find_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _find_model(typing.get_args(annotation)[0])
    if origin in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _find_model(arg)
            if found:
                return found
    return None
