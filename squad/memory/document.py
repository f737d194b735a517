"""The sectioned memory document (``agents/<agent>/memory.md``): pure parsing and editing.

A section starts at a top-level ``# Name`` heading, found as a CommonMark parser finds it, so
a ``#`` line inside a code fence, a quote or a list is not a heading (a plain document, as
squad writes them, is read line by line to the same result; any other goes to markdown-it).
Text before the first heading is kept as an unnamed preamble. The document keeps every byte
of its source: ``parse(text).render() == text`` for any text, and an edit of one section
leaves every other section byte-identical. A leading byte-order mark is set aside (so a
heading on the first line is one) and rendered back; new text takes the line ending the
document uses.

An edit is refused (:class:`StructureError`) when the result would not parse back into
exactly the sections it was built from, and when text would be added inside a code fence or
HTML block the document leaves open at its end; the error then names the line that opens it.

A superseded line stays in the file, struck through and dated (``- ~~<fact>~~ (2026-11-02;
superseded 2026-11-29)``): history, not a current fact. :meth:`Section.live_lines` and
:meth:`MemoryDocument.live_lines` leave such lines out (what a prompt should show).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = [
    "BOM",
    "MemoryDocument",
    "Section",
    "StructureError",
    "heading_lines",
    "line_ending",
    "open_block",
    "split_lines",
    "superseded",
    "undo_lines",
    "unstruck",
    "with_line_ending",
]

BOM = "\ufeff"
"""The byte-order mark some editors put at the start of a UTF-8 file."""

_NEWLINE = re.compile(r"\r\n|\r|\n")
_BULLET_LINE = re.compile(
    r"^\s*[-*]\s+(?P<text>.*?)(?:\s+\((?P<date>\d{4}-\d\d-\d\d)(?P<rest>[^)]*)\))?\s*$"
)
"""A fact line: a bullet, its text, and an optional trailing ``(YYYY-MM-DD...)`` stamp."""


_LIST_MARKER = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")
_DATE_STAMP = re.compile(r"\((?P<date>\d{4}-\d\d-\d\d)(?P<rest>[^()]*)\)\s*$")
_TRAILING_NOTE = re.compile(r"\s*\([^()]*\)\s*$")
_STRUCK = re.compile(r"^~~(?P<inner>(?:(?!~~).)*[^~\s])~~$")


class StructureError(ValueError):
    """An edit would add, remove or hide sections (a stray heading, an unclosed fence).

    ``line`` (1-based) is set when the document, not the new text, is at fault: a block opened
    on that line runs to its end and would swallow anything added after it.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


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

    def live_lines(self) -> list[str]:
        """:meth:`content_lines` without the superseded (struck-through) ones."""
        return [line for line in self.content_lines() if not superseded(line)]


def superseded(line: str) -> bool:
    """Whether ``line`` (a memory.md line, list marker or not) is a fact marked superseded:
    its whole text struck through (``- ~~old fact~~``, a note in parentheses after it
    allowed), or its date stamp saying ``superseded``. A line with only a word struck
    (``- Deploys go to ~~staging~~ production``) is a current fact. The one definition every
    reader of memory.md uses (prompt assembly, the extractor, folds, deduplication)."""
    body = _LIST_MARKER.sub("", line.strip())
    stamp = _DATE_STAMP.search(body)
    if stamp is not None and "superseded" in stamp.group("rest"):
        return True
    return unstruck(_TRAILING_NOTE.sub("", body)) is not None


def unstruck(text: str) -> str | None:
    """The text inside ``~~...~~`` when all of ``text`` is struck through, else None."""
    found = _STRUCK.match(text.strip())
    return found.group("inner").strip() if found else None


def heading_lines(text: str) -> list[tuple[int, str]]:
    """``(line index, name)`` of every top-level ATX ``#`` heading in ``text`` (a leading
    byte-order mark does not hide a heading on the first line)."""
    return list(_heading_lines(text.removeprefix(BOM)))


def line_ending(text: str) -> str:
    """The line ending ``text`` uses: its first one, ``\\n`` when it has none."""
    found = _NEWLINE.search(text)
    return found.group() if found else "\n"


def with_line_ending(text: str, newline: str) -> str:
    """``text`` with every line ending (``\\r\\n``, ``\\r``, ``\\n``) made ``newline``."""
    return _NEWLINE.sub(newline, text)


def open_block(text: str) -> tuple[int, str, str] | None:
    """A block that opens in ``text`` and runs to its end, swallowing whatever follows.

    ``(line index, what it is, how to close it)``, or None when a heading put after ``text``
    and a blank line would be a heading. Only blocks that need an explicit closing line count:
    a code fence (three backticks or ``~~~``), an HTML comment, ``<pre>``, ``<script>``...
    """
    base = text if text.endswith("\n") else text + "\n"
    probe = len(_lines(base)) + 1
    for token in _block_parser().parse(base + "\n# probe\n"):
        if token.level != 0 or token.map is None or not token.map[0] <= probe < token.map[1]:
            continue
        if token.type == "heading_open":
            return None
        if token.type == "fence":
            what, fix = f"a {token.markup} code fence", f"add a closing {token.markup} line"
        elif token.type == "html_block":
            first = (token.content.strip().splitlines() or [""])[0]
            what, fix = f"an HTML block ({first[:40]!r})", "close it (--> or </pre>, say)"
        else:
            what, fix = f"a {token.type.removesuffix('_open')} block", "end it"
        return token.map[0], what, fix
    return None


@lru_cache(maxsize=64)
def _heading_lines(text: str) -> tuple[tuple[int, str], ...]:
    # Memory files are re-read every turn, usually unchanged: the cache makes that free.
    plain = _plain_heading_lines(text)
    if plain is not None:
        return plain
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


_NOT_PLAIN = re.compile(r"```|~~~|[\t\0]")
"""What can open a block that hides a heading, or changes where one starts (a fence, a tab's
indent, a NUL the parser replaces): a document with any of it goes to the full parser."""
_MARKERS = "-*+0123456789.) "
"""What a list item's marker may be made of, and the spaces after it."""


def _plain_heading_lines(text: str) -> tuple[tuple[int, str], ...] | None:
    """The top-level ``#`` headings of a plain document, as CommonMark finds them, without
    the parser (importing and building it costs a command ~0.1-0.2 s); None when ``text`` is not
    plain.

    Plain: no fence or tab, and every line blank or starting at its first column with neither
    a quote (``>``) nor HTML (``<``), also after a list marker. In such a document no block can
    hide a line that starts with ``#``: nothing is indented (no code block, no line belongs to
    a list item's inside), and a heading interrupts a paragraph and ends a list item. This is
    what squad writes and most hand edits are; the tests hold it to the parser on generated
    documents."""
    text = _NEWLINE.sub("\n", text)
    if _NOT_PLAIN.search(text):
        return None
    found = []
    for index, line in enumerate(text.split("\n")):
        if not line.strip(" "):
            continue
        if line[0] == " " or line[0] in "<>" or line.lstrip(_MARKERS)[:1] in ("<", ">"):
            return None
        if line == "#" or line.startswith("# "):
            found.append((index, _heading_text(line[1:])))
    return tuple(found)


def _heading_text(rest: str) -> str:
    """An ATX heading's text from what follows its ``#``: a closing run of ``#`` after a space
    is not part of it (CommonMark; markdown-it's ``heading`` rule step by step)."""
    rest = rest.rstrip(" ")
    cut = rest.rstrip("#")
    if cut and len(cut) < len(rest) and cut[-1] == " ":
        rest = cut
    return rest.strip()


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
    bom: bool = False
    """The source started with a byte-order mark; :meth:`render` puts it back."""
    newline: str = "\n"
    """The line ending new text is written with: the source's first one."""

    @classmethod
    def parse(cls, text: str) -> MemoryDocument:
        bom = text.startswith(BOM)
        text = text.removeprefix(BOM)
        lines = _lines(text)
        headings = heading_lines(text)
        sections: list[Section] = []
        first = headings[0][0] if headings else len(lines)
        if first > 0 or not headings:
            sections.append(Section(None, "", "".join(lines[:first])))
        for position, (start, name) in enumerate(headings):
            end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
            sections.append(Section(name, lines[start], "".join(lines[start + 1 : end])))
        return cls(
            tuple(s for s in sections if s.name is not None or s.body),
            bom=bom,
            newline=line_ending(text),
        )

    def render(self) -> str:
        """The document as its file holds it, byte-order mark included."""
        return (BOM if self.bom else "") + self.text

    @property
    def text(self) -> str:
        """The sections' text, without the byte-order mark."""
        return "".join(section.text for section in self.sections)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sections if s.name is not None]

    def live_lines(self) -> list[tuple[str, str]]:
        """``(section, line)`` of every current line of the named sections, in file order:
        superseded (struck-through) lines are history and left out."""
        return [
            (section.name, line)
            for section in self.sections
            if section.name is not None
            for line in section.live_lines()
        ]

    def find(self, name: str) -> Section | None:
        """The first section called ``name`` (case-insensitive), if any."""
        return next(iter(self._matching(name)), None)

    def read(self, name: str | None = None) -> str:
        """One section's body, or the whole text (without a byte-order mark) for None."""
        if name is None:
            return self.text
        section = self.find(name)
        if section is None:
            raise KeyError(name)
        return section.body

    def append(self, name: str, text: str) -> MemoryDocument:
        """Add ``text`` at the end of section ``name``, creating the section if it is missing."""
        addition = self._new_lines(text)
        section = self.find(name)
        if section is None or section is self.sections[-1]:
            self._refuse_open_end()  # the text would go after a block left open
        if section is None:
            sections = list(self.sections)
            if sections and not _ends_line(self.text):
                sections[-1] = replace(sections[-1], body=sections[-1].body + self.newline)
            created = Section(name, f"# {name}{self.newline}", addition)
            return self._checked((*sections, created), addition)
        core, trailing = _split_trailing_blank(section.body)
        if core and not _ends_line(core):
            core += self.newline
        return self._edited(section, core + _joined(addition, trailing), addition)

    def replace(self, name: str, text: str) -> MemoryDocument:
        """Set section ``name``'s body to ``text`` (blank lines before the next heading kept)."""
        section = self.find(name)
        if section is None:
            return self.append(name, text)
        addition = self._new_lines(text)
        _, trailing = _split_trailing_blank(section.body)
        return self._edited(section, _joined(addition, trailing), addition)

    def with_body(self, name: str, body: str) -> MemoryDocument:
        """Section ``name``'s body set to exactly ``body`` (line endings as given); KeyError
        when there is no such section, StructureError when the sections would change."""
        section = self.find(name)
        if section is None:
            raise KeyError(name)
        return self._edited(section, body, body)

    def _matching(self, name: str) -> Iterator[Section]:
        wanted = name.strip().casefold()
        return (s for s in self.sections if s.name is not None and s.name.casefold() == wanted)

    def _new_lines(self, text: str) -> str:
        """``text`` as whole lines in this document's line ending; refused if it leaves a code
        fence or HTML block open (whatever came after it would be swallowed)."""
        stripped = _NEWLINE.sub("\n", text).strip("\n")
        if not stripped:
            return ""
        found = open_block(stripped)
        if found is not None:
            line, what, fix = found
            raise StructureError(
                f"the text would change the sections of the file: it opens {what} on its "
                f"line {line + 1} and never closes it, hiding what follows; {fix}"
            )
        return stripped.replace("\n", self.newline) + self.newline

    def _refuse_open_end(self) -> None:
        found = open_block(self.text)
        if found is not None:
            line, what, fix = found
            raise StructureError(
                f"line {line + 1} opens {what} that is never closed, so anything added at the "
                f"end of the file would land inside it (the new text is not the problem); "
                f"{fix} by hand, then try again",
                line=line + 1,
            )

    def _edited(self, target: Section, body: str, addition: str) -> MemoryDocument:
        sections = tuple(replace(s, body=body) if s is target else s for s in self.sections)
        return self._checked(sections, addition)

    def _checked(self, sections: tuple[Section, ...], addition: str) -> MemoryDocument:
        """The edited document, if it parses back into exactly these sections."""
        document = replace(self, sections=sections)
        if MemoryDocument.parse(document.render()) == document:
            return document
        for index, name in heading_lines(addition):
            line = _lines(addition)[index].rstrip("\r\n")
            raise StructureError(
                f"the text would change the sections of the file: its line {index + 1} "
                f"({line!r}) is a top-level heading, starting a section {name!r}; use '## ' "
                "for sub-headings"
            )
        raise StructureError(
            "the text would change the sections of the file (a '# ' heading line, or a code "
            "fence or HTML block it does not close); use '## ' for sub-headings and close "
            "every code fence"
        )


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split exactly where the markdown parser splits them."""
    return _LINE.findall(text)


_lines = split_lines


def _joined(addition: str, trailing: str) -> str:
    """``addition`` then ``trailing``, never merging a final CR with a blank line's LF into one
    CRLF (that would swallow the blank line)."""
    if addition.endswith("\r") and trailing.startswith("\n"):
        addition += "\n"
    return addition + trailing


def _ends_line(text: str) -> bool:
    return text.endswith(("\n", "\r"))


def _split_trailing_blank(body: str) -> tuple[str, str]:
    """``body`` split into its content and the blank lines that end it."""
    lines = _lines(body)
    cut = len(lines)
    while cut > 0 and not lines[cut - 1].strip():
        cut -= 1
    return "".join(lines[:cut]), "".join(lines[cut:])


def undo_lines(raw: bytes, before: bytes, removed: list[str], added: list[str]) -> bytes:
    """``raw`` with one occurrence of each ``added`` line taken out (the last) and each
    ``removed`` line put back after the nearest line above it in ``before`` that ``raw``
    still has (at the top when none is)."""
    nl = line_ending(raw.decode("latin-1")) if raw else "\n"
    ended = not raw or raw.endswith((b"\n", b"\r"))
    lines = raw.decode("utf-8").splitlines()
    kept = list(lines)
    for line in added:
        if line in lines:
            del lines[len(lines) - 1 - lines[::-1].index(line)]
    old = before.decode("utf-8", "replace").splitlines()
    for line in removed:
        if line in lines:
            continue
        at = 0
        if line in old:
            for above in reversed(old[: old.index(line)]):
                if above in lines:
                    at = lines.index(above) + 1
                    break
        lines.insert(at, line)
    if lines == kept:
        return raw
    text = nl.join(lines)
    return (text + (nl if ended else "")).encode() if lines else b""
