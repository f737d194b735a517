"""Untrusted YAML text to plain Python data, with the position of every key and value.

The parser reads ruamel.yaml's event stream and composes the node graph itself, without
recursion, so it can stop on what a plain ``load`` would accept silently (duplicate keys, tags
that build Python objects) or spend without bound on (nesting deep enough to overflow the
stack, alias bombs, a million keys), and so every problem later found in the data can be
reported at a line and column. Each limit below is checked while the text is read, before
anything recursive (the builder, pydantic, a walk over the data) sees it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from squad.errors import ConfigError, Problem

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

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings, aliases and merge keys expanded. A squad needs five
levels (``agents[0].memory.enabled``); 64 leaves room for anything hand-written while keeping
every recursive step after the parser (builder, pydantic, checks) a few hundred frames deep,
far from Python's default limit of 1,000, even when called from a deep stack."""

MAX_NODES = 20_000
"""Keys and values a document may hold, counting every value an alias or merge key repeats;
stops "billion laughs". Checked while parsing too, so a file of 300,000 tiny values is
refused after reading 20,000 of them (under a second of the pure-Python parser, which spends
20-40 µs a value) rather than after reading them all. The example squads hold 90-150; a squad
of a thousand tasks about 10,000."""

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
_MAX_TAG_CHARS = 100
"""Longest tag (or alias name quoted in a message); a longer tag is refused unread."""
_NO_TAGS = "a squad file takes no tags"
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
    yaml.Scanner = _bounded_scanner()
    root = _Composer(yaml, events, nodes, text, source).compose()
    positions = Positions()
    if root is None:
        return YamlDocument(None, positions)
    builder = _Builder(yaml.constructor, nodes, source, positions)
    data = builder.build(root)
    if builder.problems:
        raise ConfigError(cap_problems(builder.problems))
    return YamlDocument(data, positions)


@functools.cache
def _bounded_scanner() -> type:
    """ruamel's scanner, refusing a tag over :data:`_MAX_TAG_CHARS` as soon as it is read.

    ruamel decodes a tag in time quadratic in its length (a 1 MB tag takes 15 s); every tag
    squad accepts is a short standard one, so a long one is refused before it is decoded.
    """
    from ruamel.yaml.scanner import Scanner, ScannerError

    class BoundedScanner(Scanner):
        def scan_tag_uri(self, name: Any, start_mark: Any) -> Any:
            value = super().scan_tag_uri(name, start_mark)
            if len(value) > _MAX_TAG_CHARS:
                raise ScannerError(
                    f"while scanning a {name}",
                    start_mark,
                    f"found one of {len(value):,} characters; {_NO_TAGS}",
                    start_mark,
                )
            return value

    return BoundedScanner


def _mark_at(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset into ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _syntax_problem(exc: Any, source: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    parts = [p for p in (exc.context, exc.problem) if p]
    message = "YAML syntax error: " + (", ".join(parts) if parts else "cannot parse")
    hint = "check indentation, colons and quotes on this line"
    if exc.problem and _NO_TAGS in exc.problem:
        hint = "remove the tag"
    elif exc.problem and ("tab" in exc.problem or "\\t" in exc.problem):
        hint = "indent with spaces, not tabs"
    return Problem(
        message,
        source=source,
        line=mark.line + 1 if mark else None,
        column=mark.column + 1 if mark else None,
        hint=hint,
    )


class _Open:
    """A sequence or mapping whose end event has not come yet."""

    __slots__ = ("anchor", "key", "mapping", "node")

    def __init__(self, node: Any, anchor: str | None, *, mapping: bool) -> None:
        self.node = node
        self.anchor = anchor
        self.mapping = mapping
        self.key: Any = None  # a mapping's key node, until its value arrives


class _Composer:
    """Events to a node graph with an explicit stack: no recursion, limits checked per event.

    Differs from ruamel's composer on purpose: an anchor is usable only after its node ends,
    so an alias can never point into the node that holds it (no cyclic graphs); redefining
    an anchor is allowed, as YAML specifies, without a warning.
    """

    def __init__(self, yaml: Any, events: Any, nodes: Any, text: str, source: str) -> None:
        self._yaml = yaml
        self._ev = events  # ruamel.yaml.events and .nodes, imported once per parse
        self._nodes_module = nodes
        self._text = text
        self._source = source
        self._anchors: dict[str, Any] = {}
        self._stack: list[_Open] = []
        self._root: Any = None
        self._nodes = 0
        self._documents = 0
        self._last: Any = None  # end mark of the last event, to place errors ruamel leaves bare

    def compose(self) -> Any:
        from ruamel.yaml.error import MarkedYAMLError, YAMLError
        from ruamel.yaml.reader import ReaderError

        try:
            with closing(self._yaml.parse(self._text)) as events:
                for event in events:
                    self._event(event)
                    self._last = event.end_mark
        except MarkedYAMLError as exc:
            raise ConfigError([_syntax_problem(exc, self._source)]) from None
        except ReaderError as exc:
            raise ConfigError([self._reader_problem(exc)]) from None
        except YAMLError as exc:
            raise ConfigError([Problem(f"YAML error: {exc}", source=self._source)]) from None
        except (ValueError, OverflowError) as exc:
            # ruamel's scanner lets some of Python's own errors out: chr() of a "\UFFFFFFFF"
            # escape, int() of a %YAML version with thousands of digits.
            raise ConfigError([self._scanner_bug(exc)]) from None
        return self._root

    def _event(self, event: Any) -> None:
        ev = self._ev
        if isinstance(event, ev.ScalarEvent):
            self._count(event)
            self._done(self._scalar(event), event.anchor)
        elif isinstance(event, ev.SequenceStartEvent | ev.MappingStartEvent):
            self._count(event)
            self._start(event, mapping=isinstance(event, ev.MappingStartEvent))
        elif isinstance(event, ev.CollectionEndEvent):
            opened = self._stack.pop()
            opened.node.end_mark = event.end_mark
            self._done(opened.node, opened.anchor)
        elif isinstance(event, ev.AliasEvent):
            self._count(event)
            self._done(self._alias(event), None)
        elif isinstance(event, ev.DocumentStartEvent):
            self._document(event)

    def _document(self, event: Any) -> None:
        self._documents += 1
        if self._documents > 1:
            raise self._error(
                event.start_mark,
                "expected a single document in the file, but found another one",
                "a squad file holds one squad; remove this '---' (or put each squad in its "
                "own file)",
            )
        if event.version is not None and tuple(event.version) != (1, 2):
            version = ".".join(str(v) for v in event.version)
            raise self._error(
                event.start_mark,
                f"the file declares YAML {version}; squad reads YAML 1.2 only",
                "remove the %YAML line (YAML 1.1 reads yes/no as true/false and 010 as 8)",
            )

    def _count(self, event: Any) -> None:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise self._error(
                event.start_mark,
                f"the file holds more than {MAX_NODES:,} keys and values",
                "a squad needs a few thousand at most; split it into several files",
            )

    def _scalar(self, event: Any) -> Any:
        scalar_node = self._nodes_module.ScalarNode
        tag = event.ctag
        if tag is None or str(tag) == "!":
            tag = self._yaml.resolver.resolve(scalar_node, event.value, event.implicit)
        return scalar_node(tag, event.value, event.start_mark, event.end_mark, style=event.style)

    def _start(self, event: Any, *, mapping: bool) -> None:
        if len(self._stack) >= MAX_DEPTH:
            raise self._error(
                event.start_mark,
                f"lists and mappings are nested more than {MAX_DEPTH} levels deep",
                "a squad needs about five levels; is a bracket left open?",
            )
        kind = self._nodes_module.MappingNode if mapping else self._nodes_module.SequenceNode
        tag = event.ctag
        if tag is None or str(tag) == "!":
            tag = self._yaml.resolver.resolve(kind, None, event.implicit)
        node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        self._stack.append(_Open(node, event.anchor, mapping=mapping))

    def _alias(self, event: Any) -> Any:
        name = event.anchor
        shown = name if len(name) <= _MAX_TAG_CHARS else name[:_MAX_TAG_CHARS] + "…"
        if name in self._anchors:
            return self._anchors[name]
        if any(opened.anchor == name for opened in self._stack):
            raise self._error(
                event.start_mark,
                f"alias *{shown} is inside the node its anchor &{shown} names (a cycle)",
                "an alias can only repeat a node that ends before it",
            )
        raise self._error(
            event.start_mark,
            f"alias *{shown} has no anchor &{shown} before it",
            "define the anchor (&name) before using the alias (*name)",
        )

    def _done(self, node: Any, anchor: str | None) -> None:
        if anchor is not None:
            self._anchors[anchor] = node
        if not self._stack:
            self._root = node
            return
        parent = self._stack[-1]
        if not parent.mapping:
            parent.node.value.append(node)
        elif parent.key is None:
            parent.key = node
        else:
            parent.node.value.append((parent.key, node))
            parent.key = None

    def _error(self, mark: Any, message: str, hint: str) -> ConfigError:
        return ConfigError(
            [
                Problem(
                    message,
                    source=self._source,
                    line=mark.line + 1,
                    column=mark.column + 1,
                    hint=hint,
                )
            ]
        )

    def _reader_problem(self, exc: Any) -> Problem:
        line, column = _mark_at(self._text, exc.position)
        character = exc.character
        code = f"U+{character:04X}" if isinstance(character, int) else repr(character)
        return Problem(
            f"the file holds the control character {code}, which YAML does not allow",
            source=self._source,
            line=line,
            column=column,
            hint="remove it; inside double quotes write it as an escape such as \\x07",
        )

    def _scanner_bug(self, exc: Exception) -> Problem:
        mark = self._last
        return Problem(
            f"YAML syntax error: cannot read what follows this point ({exc})",
            source=self._source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            hint="look for an escape past \\U0010FFFF or an over-long number",
        )


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
