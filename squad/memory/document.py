"""The sectioned memory document (``agents/<agent>/memory.md``): pure parsing and editing.

A section starts at a top-level ``# Name`` heading, found with a real CommonMark parser, so a
``#`` line inside a code fence, a quote or a list is not a heading. Text before the first
heading is kept as an unnamed preamble. The document keeps every byte of its source:
``parse(text).render() == text`` for any text, and an edit of one section leaves every
other section byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["MemoryDocument", "Section", "StructureError", "heading_lines"]


class StructureError(ValueError):
    """An edit would add, remove or hide sections (a stray heading, an unclosed fence)."""


@dataclass(frozen=True)
class Section:
    """One section: its heading line as written (empty for the preamble) and its body."""

    name: str | None
    heading: str
    body: str

    @property
    def text(self) -> str:
        return self.heading + self.body

    def content_lines(self) -> list[str]:
        """Non-blank body lines, without line endings."""
        return [line for line in self.body.splitlines() if line.strip()]


def heading_lines(text: str) -> list[tuple[int, str]]:
    """``(line index, name)`` of every top-level ATX ``#`` heading in ``text``."""
    return list(_heading_lines(text))


@lru_cache(maxsize=64)
def _heading_lines(text: str) -> tuple[tuple[int, str], ...]:
    # Memory files are re-read every turn, usually unchanged: the cache makes that free.
    tokens = _block_parser().parse(text)
    found = []
    for index, token in enumerate(tokens):
        if (
            token.type == "heading_open"
            and token.tag == "h1"
            and token.markup == "#"
            and token.level == 0
            and token.map is not None
        ):
            found.append((token.map[0], tokens[index + 1].content.strip()))
    return tuple(found)


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """CommonMark without inline parsing: headings are block structure, and this is faster."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark")
    parser.core.ruler.disable(["inline", "text_join"])
    return parser


@dataclass(frozen=True)
class MemoryDocument:
    sections: tuple[Section, ...]

    @classmethod
    def parse(cls, text: str) -> MemoryDocument:
        lines = _lines(text)
        headings = heading_lines(text)
        sections: list[Section] = []
        first = headings[0][0] if headings else len(lines)
        if first > 0 or not headings:
            sections.append(Section(None, "", "".join(lines[:first])))
        for position, (start, name) in enumerate(headings):
            end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
            sections.append(Section(name, lines[start], "".join(lines[start + 1 : end])))
        return cls(tuple(s for s in sections if s.name is not None or s.body))

    def render(self) -> str:
        return "".join(section.text for section in self.sections)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sections if s.name is not None]

    def find(self, name: str) -> Section | None:
        """The first section called ``name`` (case-insensitive), if any."""
        return next(iter(self._matching(name)), None)

    def read(self, name: str | None = None) -> str:
        """One section's body, or the whole document when ``name`` is None."""
        if name is None:
            return self.render()
        section = self.find(name)
        if section is None:
            raise KeyError(name)
        return section.body

    def append(self, name: str, text: str) -> MemoryDocument:
        """Add ``text`` at the end of section ``name``, creating the section if it is missing."""
        addition = _as_lines(text)
        section = self.find(name)
        if section is None:
            prefix = "" if not self.sections or self.render().endswith("\n") else "\n"
            sections = list(self.sections)
            if prefix:
                sections[-1] = replace(sections[-1], body=sections[-1].body + prefix)
            created = Section(name, f"# {name}\n", addition)
            return self._checked((*tuple(sections), created), [*self.names, name])
        core, trailing = _split_trailing_blank(section.body)
        if core and not core.endswith("\n"):
            core += "\n"
        return self._edited(section, core + addition + trailing)

    def replace(self, name: str, text: str) -> MemoryDocument:
        """Set section ``name``'s body to ``text`` (blank lines before the next heading kept)."""
        section = self.find(name)
        if section is None:
            return self.append(name, text)
        _, trailing = _split_trailing_blank(section.body)
        return self._edited(section, _as_lines(text) + trailing)

    def _matching(self, name: str) -> Iterator[Section]:
        wanted = name.strip().casefold()
        return (s for s in self.sections if s.name is not None and s.name.casefold() == wanted)

    def _edited(self, target: Section, body: str) -> MemoryDocument:
        sections = tuple(replace(s, body=body) if s is target else s for s in self.sections)
        return self._checked(sections, self.names)

    def _checked(self, sections: tuple[Section, ...], expected: list[str]) -> MemoryDocument:
        document = MemoryDocument(sections)
        if MemoryDocument.parse(document.render()).names != expected:
            raise StructureError(
                "the text would change the sections of the file (a '# ' heading line or an "
                "unclosed ``` fence); use '## ' for sub-headings and close every code fence"
            )
        return document


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _lines(text: str) -> list[str]:
    """Lines with their endings, split exactly where the markdown parser splits them."""
    return _LINE.findall(text)


def _as_lines(text: str) -> str:
    stripped = text.strip("\n")
    return stripped + "\n" if stripped else ""


def _split_trailing_blank(body: str) -> tuple[str, str]:
    """``body`` split into its content and the blank lines that end it."""
    lines = _lines(body)
    cut = len(lines)
    while cut > 0 and not lines[cut - 1].strip():
        cut -= 1
    return "".join(lines[:cut]), "".join(lines[cut:])
