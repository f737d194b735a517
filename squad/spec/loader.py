"""Definitions load in layers: file -> text -> dict -> model. Only the file layer touches disk.

Every layer raises :class:`~squad.errors.ConfigError` carrying all problems it found, each
located by file, line and column where the input came from text.
"""

from __future__ import annotations

import difflib
import errno
import os
import stat
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from squad.errors import ConfigError, Problem
from squad.fsutil import read_up_to
from squad.spec.checks import check_squad
from squad.spec.lint import warnings_for
from squad.spec.models import SquadSpec
from squad.spec.yaml_source import (
    MAX_FILE_BYTES,
    Positions,
    cap_problems,
    decode_bytes,
    parse_yaml,
    short_repr,
    too_large,
)

__all__ = [
    "LoadedSquad",
    "load_squad_file",
    "load_squad_text",
    "locate_problems",
    "located_warnings",
    "read_text_file",
    "squad_from_dict",
    "squad_from_file",
    "squad_from_text",
    "validate_document",
]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class LoadedSquad:
    """A valid squad and the warnings about it: what validates but is unlikely to be meant."""

    spec: SquadSpec
    warnings: tuple[Problem, ...] = ()
    positions: Positions | None = field(default=None, compare=False, repr=False)
    """Where each key sat in the text (None: not loaded from text)."""


def squad_from_file(path: str | Path) -> SquadSpec:
    """Read, parse and validate a squad YAML file."""
    return load_squad_file(path).spec


def squad_from_text(text: str, *, source: str = "<text>") -> SquadSpec:
    """Parse and validate squad YAML text; ``source`` names it in messages."""
    return load_squad_text(text, source=source).spec


def load_squad_file(path: str | Path) -> LoadedSquad:
    """:func:`squad_from_file`, with the warnings located in the file."""
    return load_squad_text(read_text_file(Path(path)), source=str(path))


def load_squad_text(text: str, *, source: str = "<text>") -> LoadedSquad:
    """:func:`squad_from_text`, with the warnings located in the text."""
    document = parse_yaml(text, source=source)
    spec = squad_from_dict(document.data, source=source, positions=document.positions)
    return LoadedSquad(
        spec, located_warnings(spec, document.positions, source=source), document.positions
    )


def located_warnings(spec: SquadSpec, positions: Positions, *, source: str) -> tuple[Problem, ...]:
    """:func:`~squad.spec.checks.warnings_for` ``spec``, each at its line in the text that
    ``positions`` describes (checked now: a warning about this machine, such as an MCP
    command not found, is never stale)."""
    warnings = [
        Problem(w.message, source=source, path=w.path, hint=w.hint) for w in warnings_for(spec)
    ]
    return tuple(_locate(warnings, positions))


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


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check must not block open()
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_NOT_A_FILE_HINT = "pass the path of a .yaml file; squad reads definitions from regular files"


def read_text_file(path: Path) -> str:
    """The file's text, refusing what cannot be a definition before reading it whole.

    Only a regular file (or a symbolic link to one) is opened: a FIFO would block the read,
    a device such as /dev/zero would never end. Each refusal says exactly what the path is.
    """
    source = str(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError([_missing_problem(path, exc, source)]) from None
    except ValueError:  # a NUL byte in the name, which no file can have
        raise ConfigError(
            [
                Problem(
                    "file does not exist: its name holds a NUL character",
                    source=source,
                    hint="check the path",
                )
            ]
        ) from None
    _check_regular(info.st_mode, path, source)
    if info.st_size > MAX_FILE_BYTES:
        raise ConfigError([too_large(info.st_size, source)])
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise ConfigError([_os_problem(exc, source)]) from None
    try:
        _check_regular(os.fstat(fd).st_mode, path, source)  # replaced since the stat?
        raw = read_up_to(fd, MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError([_os_problem(exc, source)]) from None
    finally:
        os.close(fd)
    return decode_bytes(raw, source=source)


def _check_regular(mode: int, path: Path, source: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        message = "path is a directory, not a file"
        hint = f"pass the .yaml files in it, for example {str(path / '*.yaml')!r}"
    elif stat.S_ISFIFO(mode):
        message = "path is a FIFO (named pipe), not a regular file"
        hint = _NOT_A_FILE_HINT + "; save the YAML to a file first"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character" if stat.S_ISCHR(mode) else "block"
        message = f"path is a device ({kind} special file), not a regular file"
        hint = _NOT_A_FILE_HINT
    elif stat.S_ISSOCK(mode):
        message = "path is a socket, not a regular file"
        hint = _NOT_A_FILE_HINT
    else:
        message = "path is not a regular file"
        hint = _NOT_A_FILE_HINT
    raise ConfigError([Problem(message, source=source, hint=hint)])


def _missing_problem(path: Path, exc: OSError, source: str) -> Problem:
    """Why ``path`` cannot be looked at: missing, a broken link, a folder on the way..."""
    if isinstance(exc, FileNotFoundError) and path.is_symlink():
        try:
            target = str(path.readlink())
        except OSError:
            target = "?"
        return Problem(
            f"file is a broken symbolic link (to {target!r}, which does not exist)",
            source=source,
            hint="point the link at an existing .yaml file, or pass the file itself",
        )
    if isinstance(exc, FileNotFoundError):
        return Problem("file does not exist", source=source, hint="check the path and name")
    if isinstance(exc, NotADirectoryError):
        return Problem(
            "file does not exist: a part of the path is a file, not a folder",
            source=source,
            hint="check the path",
        )
    if exc.errno == errno.ELOOP:
        return Problem(
            "path is a loop of symbolic links", source=source, hint="fix the symbolic links"
        )
    return _os_problem(exc, source)


def _os_problem(exc: OSError, source: str) -> Problem:
    if isinstance(exc, PermissionError):
        return Problem(
            "permission denied: the file (or a folder on its path) is not readable",
            source=source,
            hint="check its permissions, for example with 'ls -l'; 'chmod u+r FILE' allows reading",
        )
    if exc.errno == errno.ENAMETOOLONG:
        return Problem("path is too long", source=source, hint="use a shorter path")
    reason = exc.strerror or exc.__class__.__name__
    return Problem(f"cannot read file: {reason}", source=source)


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


_AT_THE_KEY = ("unknown key", "required key", "MCP server name")
"""Problems with a key itself, shown at the key rather than at its value."""


def locate_problems(problems: list[Problem], positions: Positions) -> list[Problem]:
    """``problems`` found on a loaded squad, each given the line and column of its key path
    in the text ``positions`` describes."""
    return _locate(problems, positions)


def _locate(problems: list[Problem], positions: Positions) -> list[Problem]:
    located = []
    for problem in problems:
        path = problem.path
        prefer_key = problem.message.startswith(_AT_THE_KEY)
        if path and path[-1] == "[key]":  # pydantic's mark for a bad mapping key
            path, prefer_key = path[:-1], True
        where = positions.locate(path, prefer_key=prefer_key)
        if problem.message.startswith("required key"):
            where = positions.locate(problem.path[:-1])
        line, column = where if where else (None, None)
        located.append(
            Problem(
                problem.message,
                source=problem.source,
                line=line,
                column=column,
                path=path,
                hint=problem.hint,
            )
        )
    return cap_problems(located)


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
        doc = _field_doc(root, loc)
        message = f"required key {loc[-1]!r} is missing"
        hint = f"add {loc[-1]}: ({doc})" if doc else None
    elif kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        valid = sorted(parent.model_fields) if parent else []
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
        message = f"unknown key {short_repr(loc[-1])}"
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
    if isinstance(value, str) and len(value) > _QUOTE_LIMIT:
        message = message.replace(repr(value), short_repr(value))  # a 1 MB value, quoted whole
    return Problem(message, source=source, path=loc, hint=hint)


_QUOTE_LIMIT = 200


def _field_doc(root: type[BaseModel], loc: tuple[Any, ...]) -> str | None:
    from squad.spec.docs import field_doc

    parent = _model_at(root, loc[:-1])
    return field_doc(parent, str(loc[-1])) if parent else None


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``loc`` (list indexes and the keys of a
    mapping of models, such as ``mcp_servers``' server names, skipped)."""
    current: type[BaseModel] | None = root
    skip_key = False
    for part in loc:
        if isinstance(part, int):
            continue
        if skip_key:
            skip_key = False
            continue
        if current is None or part not in current.model_fields:
            return None
        annotation = current.model_fields[part].annotation
        skip_key = typing.get_origin(annotation) is dict
        current = _find_model(annotation)
    return current


def _find_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _find_model(typing.get_args(annotation)[0])
    if origin is dict:
        return _find_model(typing.get_args(annotation)[1])
    if origin in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _find_model(arg)
            if found:
                return found
    return None
