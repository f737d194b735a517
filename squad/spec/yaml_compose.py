"""The event-stream composer: ruamel.yaml's events to a node graph, without recursion.

:func:`~squad.spec.yaml_source.parse_yaml` hands it the text; it reads the events one by one
with an explicit stack, so nesting deep enough to overflow Python's, a million keys, a tag
ruamel would spend seconds decoding, a second document or an alias into its own anchor are
refused at the event that shows them, at its line and column, before anything recursive
sees the graph.
"""

from __future__ import annotations

import functools
from contextlib import closing
from typing import Any

from squad.errors import ConfigError, Problem

__all__ = ["MAX_DEPTH", "MAX_NODES", "Composer", "bounded_scanner"]

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

_MAX_TAG_CHARS = 100
"""Longest tag (or alias name quoted in a message); a longer tag is refused unread."""
_NO_TAGS = "a squad file takes no tags"


@functools.cache
def bounded_scanner() -> type:
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


class Composer:
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
