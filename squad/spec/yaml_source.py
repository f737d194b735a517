"""Untrusted YAML text to plain Python data, with the position of every key and value.

The parser composes nodes with ruamel.yaml and builds the data itself, so it can refuse what a
plain ``load`` would accept silently (duplicate keys) or expand without bound (alias bombs),
and so every problem later found in the data can be reported at a line and column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from squad.errors import ConfigError, Problem

__all__ = ["MAX_FILE_BYTES", "MAX_NODES", "Positions", "YamlDocument", "decode_bytes", "parse_yaml"]

MAX_FILE_BYTES = 1024 * 1024
"""Definitions larger than this (1 MiB) are refused before parsing."""

MAX_NODES = 100_000
"""Nodes a document may expand to, counting every alias use; stops "billion laughs"."""

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"

Path_ = tuple[str | int, ...]


@dataclass
class Positions:
    """Where each key path sits in the text: 1-based (line, column) of keys and of values."""

    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: Path_, *, prefer_key: bool = False) -> tuple[int, int] | None:
        """Position for ``path``, or for its nearest ancestor that has one."""
        probe = tuple(path)
        while True:
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            if probe in first:
                return first[probe]
            if probe in second:
                return second[probe]
            if not probe:
                return None
            probe = probe[:-1]


@dataclass(frozen=True)
class YamlDocument:
    data: Any
    positions: Positions


def decode_bytes(raw: bytes, *, source: str) -> str:
    """Strict UTF-8 (an optional BOM is allowed); a bad byte is reported at its line and column."""
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError([_too_large(len(raw), source)])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        bad = raw[exc.start : exc.start + 1].hex()
        raise ConfigError(
            [
                Problem(
                    f"file is not valid UTF-8 (byte 0x{bad} at offset {exc.start})",
                    source=source,
                    line=line,
                    column=column,
                    hint="save the file with UTF-8 encoding",
                )
            ]
        ) from None


def _too_large(size: int, source: str) -> Problem:
    return Problem(
        f"file is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for a definition",
        source=source,
        hint="split it into several squad files",
    )


def parse_yaml(text: str, *, source: str) -> YamlDocument:
    """Parse one YAML document; ``None`` data means the document is empty."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise ConfigError([_too_large(len(text.encode("utf-8", "surrogatepass")), source)])
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="safe", pure=True)
    try:
        root = yaml.compose(text)
    except MarkedYAMLError as exc:
        raise ConfigError([_syntax_problem(exc, source)]) from None
    except YAMLError as exc:
        raise ConfigError([Problem(f"YAML error: {exc}", source=source)]) from None
    positions = Positions()
    if root is None:
        return YamlDocument(None, positions)
    builder = _Builder(yaml.constructor, source, positions)
    data = builder.build(root, ())
    if builder.problems:
        raise ConfigError(builder.problems)
    return YamlDocument(data, positions)


def _syntax_problem(exc: Any, source: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    parts = [p for p in (exc.context, exc.problem) if p]
    message = "YAML syntax error: " + (", ".join(parts) if parts else "cannot parse")
    hint = "check indentation, colons and quotes on this line"
    if exc.problem and ("tab" in exc.problem or "\\t" in exc.problem):
        hint = "indent with spaces, not tabs"
    return Problem(
        message,
        source=source,
        line=mark.line + 1 if mark else None,
        column=mark.column + 1 if mark else None,
        hint=hint,
    )


class _AliasBomb(Exception):
    pass


class _Builder:
    """Turns a composed node graph into dicts, lists and scalars, recording positions."""

    def __init__(self, constructor: Any, source: str, positions: Positions) -> None:
        self._constructor = constructor
        self._source = source
        self._positions = positions
        self._visited = 0
        self.problems: list[Problem] = []

    def build(self, node: Any, path: Path_) -> Any:
        try:
            return self._node(node, path)
        except _AliasBomb:
            self.problems = [
                Problem(
                    f"document expands to more than {MAX_NODES:,} values through aliases "
                    "(an alias bomb?)",
                    source=self._source,
                    line=node.start_mark.line + 1,
                    hint="use fewer nested anchors (&) and aliases (*)",
                )
            ]
            return None

    def _count(self) -> None:
        self._visited += 1
        if self._visited > MAX_NODES:
            raise _AliasBomb

    def _here(self, node: Any) -> tuple[int, int]:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _node(self, node: Any, path: Path_) -> Any:
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        self._count()
        self._positions.values.setdefault(path, self._here(node))
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            return [self._node(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _scalar(self, node: Any, path: Path_) -> Any:
        try:
            value = self._constructor.construct_object(node, deep=True)
        except Exception as exc:  # noqa: BLE001 - ruamel raises plain errors for bad scalars
            self._problem(node, path, f"cannot read value {node.value!r}: {exc}")
            return None
        if node.tag == "tag:yaml.org,2002:timestamp":
            return str(node.value)  # keep dates as written; the schema decides their meaning
        return value

    def _mapping(self, node: Any, path: Path_) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.update(self._merge_sources(value_node, path))
                continue
            key = self._key(key_node, path)
            if key is None:
                continue
            key_path = (*path, key)
            if key in first_seen:
                self._problem(
                    key_node,
                    key_path,
                    f"duplicate key {key!r} (first defined on line {first_seen[key]})",
                    hint="keep one of them; YAML would silently use the last",
                )
                continue
            first_seen[key] = key_node.start_mark.line + 1
            self._positions.keys[key_path] = self._here(key_node)
            out[key] = self._node(value_node, key_path)
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    def _merge_sources(self, node: Any, path: Path_) -> dict[str, Any]:
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        sources = node.value if isinstance(node, SequenceNode) else [node]
        result: dict[str, Any] = {}
        for source in reversed(sources):  # earlier sources win, as YAML merge keys specify
            if not isinstance(source, MappingNode):
                self._problem(source, path, "a merge key (<<) must refer to a mapping")
                continue
            result.update(self._mapping(source, path))
        return result

    def _key(self, key_node: Any, path: Path_) -> str | None:
        from ruamel.yaml.nodes import ScalarNode

        if not isinstance(key_node, ScalarNode):
            self._problem(key_node, path, "a key must be a plain word, not a list or mapping")
            return None
        self._count()
        if key_node.tag == _STR_TAG:
            return str(key_node.value)
        value = self._constructor.construct_object(key_node, deep=True)
        if value is None:
            self._problem(key_node, path, "a key is empty (null)", hint="name the key")
            return None
        return str(key_node.value)

    def _problem(self, node: Any, path: Path_, message: str, *, hint: str | None = None) -> None:
        line, column = self._here(node)
        self.problems.append(
            Problem(message, source=self._source, line=line, column=column, path=path, hint=hint)
        )


def iter_paths(data: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every key path in plain data (used by tests to check positions are complete)."""
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from iter_paths(value, (*prefix, i))
