"""Untrusted YAML text to plain Python data, with the position of every key and value.

The parser reads ruamel.yaml's event stream and composes the node graph itself, without
recursion (:mod:`squad.spec.yaml_compose`), so it can stop on what a plain ``load`` would
accept silently (duplicate keys, tags that build Python objects) or spend without bound on
(nesting deep enough to overflow the stack, alias bombs, a million keys), and so every
problem later found in the data can be reported at a line and column. Each limit below is
checked while the text is read, before anything recursive (the builder here, pydantic, a
walk over the data) sees it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from squad.errors import ConfigError, Problem
from squad.spec.yaml_compose import MAX_DEPTH, MAX_NODES, Composer, bounded_scanner

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "MAX_NUMBER_CHARS",
    "MAX_PROBLEMS",
    "Positions",
    "YamlDocument",
    "cap_problems",
    "decode_bytes",
    "parse_yaml",
    "short_repr",
    "too_large",
]

MAX_FILE_BYTES = 1024 * 1024
"""Definitions larger than this (1 MiB) are refused before parsing."""

# MAX_DEPTH and MAX_NODES, enforced by the composer as the events arrive, are defined (and
# documented) in squad.spec.yaml_compose and exported from here with the other limits.

MAX_NUMBER_CHARS = 100
"""Longest number literal: no setting takes more than a few digits, and Python refuses to
convert decimal integers of more than 4,300 digits (CVE-2020-10735)."""

MAX_PROBLEMS = 100
"""Problems reported for one file; the rest are counted in a last line."""

_TAG_PREFIX = "tag:yaml.org,2002:"
_MERGE_TAG = _TAG_PREFIX + "merge"
_STR_TAG = _TAG_PREFIX + "str"
_INT_TAG = _TAG_PREFIX + "int"
_FLOAT_TAG = _TAG_PREFIX + "float"
_NULL_TAG = _TAG_PREFIX + "null"
_SEQUENCE_TAG = _TAG_PREFIX + "seq"
_MAPPING_TAG = _TAG_PREFIX + "map"
_SCALAR_TAGS = frozenset(_TAG_PREFIX + t for t in ("str", "int", "float", "bool", "null"))
_TEXT_TAGS = frozenset(_TAG_PREFIX + t for t in ("timestamp", "merge", "value"))
"""Scalars kept as the text written: a date, and "<<" or "=" where no key is expected."""
_MAX_KEY_CHARS = 1024
"""Longest key: YAML's own limit for a key without "?"; squad's keys are short names."""

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


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut in the middle past ``limit`` characters so a message stays a line."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, str) else ""
    half = limit // 2
    return f"{text[:half]}…{text[-half:]}{size}"


def cap_problems(problems: Sequence[Problem]) -> list[Problem]:
    """At most :data:`MAX_PROBLEMS`, in document order, plus one line counting the others."""
    ordered = sorted(problems, key=lambda p: (p.line or 0, p.column or 0))
    if len(ordered) <= MAX_PROBLEMS:
        return ordered
    rest = len(ordered) - MAX_PROBLEMS
    return [
        *ordered[:MAX_PROBLEMS],
        Problem(
            f"{rest:,} more problems not shown",
            source=ordered[MAX_PROBLEMS].source,
            hint="fix these first",
        ),
    ]


def decode_bytes(raw: bytes, *, source: str) -> str:
    """Strict UTF-8 (an optional BOM is allowed); a bad byte is reported at its line and column."""
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError([too_large(len(raw), source)])
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


def too_large(size: int, source: str) -> Problem:
    """The problem of a definition of ``size`` bytes, over :data:`MAX_FILE_BYTES`."""
    return Problem(
        f"file is {size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit for a definition",
        source=source,
        hint="split it into several squad files",
    )


def parse_yaml(text: str, *, source: str) -> YamlDocument:
    """Parse one YAML document; ``None`` data means the document is empty."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise ConfigError([too_large(size, source)])
    from ruamel.yaml import YAML, events, nodes

    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = bounded_scanner()
    root = Composer(yaml, events, nodes, text, source).compose()
    positions = Positions()
    if root is None:
        return YamlDocument(None, positions)
    builder = _Builder(yaml.constructor, nodes, source, positions)
    data = builder.build(root)
    if builder.problems:
        raise ConfigError(cap_problems(builder.problems))
    return YamlDocument(data, positions)


class _TooMany(Exception):
    def __init__(self, path: Path_) -> None:
        self.path = path


class _TooDeep(Exception):
    def __init__(self, node: Any, path: Path_) -> None:
        self.node = node
        self.path = path


def _tag_name(tag: Any) -> str:
    text = str(tag)
    return "!!" + text[len(_TAG_PREFIX) :] if text.startswith(_TAG_PREFIX) else text


class _Builder:
    """Turns a composed node graph into dicts, lists and scalars, recording positions.

    Recursive, but only as deep as :data:`MAX_DEPTH`: the composer bounds nesting in the
    text, and the builder counts the levels aliases and merge keys add.
    """

    def __init__(self, constructor: Any, nodes: Any, source: str, positions: Positions) -> None:
        self._constructor = constructor
        self._mapping_node = nodes.MappingNode
        self._sequence_node = nodes.SequenceNode
        self._scalar_node = nodes.ScalarNode
        self._source = source
        self._positions = positions
        self._visited = 0
        self.problems: list[Problem] = []

    def build(self, node: Any) -> Any:
        try:
            return self._node(node, (), 1)
        except _TooMany as exc:
            message = (
                f"the document expands to more than {MAX_NODES:,} values through aliases and "
                "merge keys (an alias bomb?)"
            )
            hint = "use fewer nested anchors (&) and aliases (*)"
            self._expansion_problem(node, exc.path, message, hint)
        except _TooDeep as exc:
            message = f"aliases and merge keys nest the data more than {MAX_DEPTH} levels deep"
            hint = "repeat less through aliases (*) and merge keys (<<)"
            self._expansion_problem(exc.node, exc.path, message, hint)
        return None

    def _expansion_problem(self, node: Any, path: Path_, message: str, hint: str) -> None:
        """The only problem: at the top-level key whose value expands too far (a position
        inside the expansion would point at the anchor, not at where it is used)."""
        line, column = self._positions.keys.get(path[:1]) or self._here(node)
        self.problems = [
            Problem(
                message, source=self._source, line=line, column=column, path=path[:1], hint=hint
            )
        ]

    def _count(self, path: Path_) -> None:
        self._visited += 1
        if self._visited > MAX_NODES:
            raise _TooMany(path)

    def _here(self, node: Any) -> tuple[int, int]:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _node(self, node: Any, path: Path_, depth: int) -> Any:
        self._count(path)
        self._positions.values.setdefault(path, self._here(node))
        if isinstance(node, self._scalar_node):
            return self._scalar(node, path)
        if depth > MAX_DEPTH:
            raise _TooDeep(node, path)
        mapping = isinstance(node, self._mapping_node)
        if node.tag != (_MAPPING_TAG if mapping else _SEQUENCE_TAG):
            self._refuse_tag(node, path)
            return None
        if mapping:
            return self._mapping(node, path, depth)
        return [self._node(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]

    def _refuse_tag(self, node: Any, path: Path_) -> None:
        self._problem(
            node,
            path,
            f"the tag {_tag_name(node.tag)!r} is not allowed",
            hint="remove it; a squad file holds plain text, numbers, true/false, lists and "
            "mappings",
        )

    def _scalar(self, node: Any, path: Path_) -> Any:
        tag = node.tag
        if tag not in _SCALAR_TAGS and tag not in _TEXT_TAGS:
            self._refuse_tag(node, path)
            return None
        if tag in _TEXT_TAGS:
            return str(node.value)  # dates as written (the schema decides), a lone "<<" or "="
        if tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > MAX_NUMBER_CHARS:
            self._problem(
                node,
                path,
                f"a number of {len(node.value):,} characters is longer than any setting takes",
                hint=f"shorten it (at most {MAX_NUMBER_CHARS} characters), or quote it if it "
                "is text",
            )
            return None
        try:
            value = self._constructor.construct_object(node, deep=True)
        except Exception as exc:  # noqa: BLE001 - ruamel raises plain errors for bad scalars
            reason = str(exc).split("\n", 1)[0]
            self._problem(node, path, f"cannot read value {short_repr(node.value)}: {reason}")
            return None
        if isinstance(value, float) and math.isinf(value) and "inf" not in node.value.lower():
            self._problem(
                node,
                path,
                f"the number {short_repr(node.value)} is too large (it overflows to infinity)",
                hint="use a smaller number",
            )
            return None
        if node.style == '"' and not self._encodable(node, path, value):
            return None
        return value

    def _encodable(self, node: Any, path: Path_, value: Any) -> bool:
        """Whether a double-quoted string's escapes made real characters (not surrogates)."""
        if not isinstance(value, str):
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            self._problem(
                node,
                path,
                f"the escape for {value[exc.start]!r} is half of a UTF-16 pair, not a character",
                hint="write the character itself, or one \\U escape such as \\U0001F600",
            )
            return False
        return True

    def _mapping(self, node: Any, path: Path_, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged.update(self._merge_sources(value_node, path, depth))
                continue
            key = self._key(key_node, path)
            if key is None:
                continue
            key_path = (*path, key)
            if key in first_seen:
                self._problem(
                    key_node,
                    key_path,
                    f"duplicate key {short_repr(key)} (first defined on line {first_seen[key]})",
                    hint="keep one of them; YAML would silently use the last",
                )
                continue
            first_seen[key] = key_node.start_mark.line + 1
            self._positions.keys[key_path] = self._here(key_node)
            out[key] = self._node(value_node, key_path, depth + 1)
        for key, value in merged.items():
            out.setdefault(key, value)
        return out

    def _merge_sources(self, node: Any, path: Path_, depth: int) -> dict[str, Any]:
        if depth + 1 > MAX_DEPTH:
            raise _TooDeep(node, path)
        sources = node.value if isinstance(node, self._sequence_node) else [node]
        result: dict[str, Any] = {}
        for source in reversed(sources):  # earlier sources win, as YAML merge keys specify
            if not isinstance(source, self._mapping_node):
                self._problem(source, path, "a merge key (<<) must refer to a mapping")
                continue
            self._count(path)
            result.update(self._mapping(source, path, depth + 1))
        return result

    def _key(self, key_node: Any, path: Path_) -> str | None:
        if not isinstance(key_node, self._scalar_node):
            self._problem(key_node, path, "a key must be a plain word, not a list or mapping")
            return None
        self._count(path)
        if len(key_node.value) > _MAX_KEY_CHARS:
            self._problem(
                key_node,
                path,
                f"a key of {len(key_node.value):,} characters is longer than any squad key",
                hint=f"keys are names such as 'agents' (at most {_MAX_KEY_CHARS:,} characters)",
            )
            return None
        if key_node.tag == _STR_TAG:
            if key_node.style == '"' and not self._encodable(key_node, path, key_node.value):
                return None
            return str(key_node.value)
        if key_node.tag not in _SCALAR_TAGS and key_node.tag not in _TEXT_TAGS:
            self._refuse_tag(key_node, path)
            return None
        if key_node.tag == _NULL_TAG:
            self._problem(key_node, path, "a key is empty (null)", hint="name the key")
            return None
        return str(key_node.value)  # the key as written: 010 stays '010', yes stays 'yes'

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
