"""The memory document: real markdown sections, byte-exact round trips and local edits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squad.memory.document import (
    BOM,
    MemoryDocument,
    StructureError,
    heading_lines,
    line_ending,
    open_block,
    superseded,
)
from squad.workspace.layout import memory_seed

SAMPLE = """\
Notes kept before any heading.

# Project Context
The app is React with TypeScript.

```python
# not a heading: inside a fence
x = 1
```

> # not a heading: inside a quote
- # not a heading: inside a list item
    # not a heading: indented code

## A sub-heading stays in its section
# Coding Rules
- Functional components with hooks

# Decisions
- JWT for auth (task #3)

# Insights
- The build needs Node 20
"""


def test_sections_come_from_top_level_hash_headings_only() -> None:
    document = MemoryDocument.parse(SAMPLE)
    assert document.names == ["Project Context", "Coding Rules", "Decisions", "Insights"]
    assert document.sections[0].name is None
    assert document.sections[0].body == "Notes kept before any heading.\n\n"
    context = document.read("project context")
    assert "# not a heading: inside a fence" in context
    assert "## A sub-heading stays in its section" in context


def test_setext_headings_do_not_start_sections() -> None:
    document = MemoryDocument.parse("# A\nTitle\n=====\ntext\n")
    assert document.names == ["A"]


def test_seed_has_the_four_standard_sections() -> None:
    assert MemoryDocument.parse(memory_seed()).names == [
        "Project Context",
        "Coding Rules",
        "Decisions",
        "Insights",
    ]


markdownish = st.lists(
    st.sampled_from(
        [*list("#`>-* \n\t\rabcXYZ=~1."), "# ", "```", "\n# ", "\r\n", "\u2028", BOM, "<!--"]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=300)
@given(markdownish)
def test_parse_then_render_is_the_identity(text: str) -> None:
    assert MemoryDocument.parse(text).render() == text


@settings(max_examples=200)
@given(
    markdownish,
    st.sampled_from(["Insights", "Decisions", "New Section"]),
    st.text(alphabet="abc -xyz.", min_size=1, max_size=40),
)
def test_edits_leave_every_other_section_byte_identical(text: str, name: str, line: str) -> None:
    document = MemoryDocument.parse(text + "\n# Decisions\n- a\n\n# Insights\n- b\n")
    for edit in (document.append, document.replace):
        try:
            edited = edit(name, line)
        except StructureError:
            continue
        before = {id(s): s for s in document.sections}
        untouched = [s for s in edited.sections if id(s) in before]
        assert len(untouched) >= len(document.sections) - 1
        for section in document.sections:
            if section.name is None or section.name.casefold() != name.casefold():
                assert section in edited.sections
        assert MemoryDocument.parse(edited.render()).render() == edited.render()


def test_append_adds_lines_at_the_end_of_the_section_before_its_blank_lines() -> None:
    document = MemoryDocument.parse(memory_seed()).append("Decisions", "- JWT for auth")
    assert document.render() == (
        "# Project Context\n\n# Coding Rules\n\n# Decisions\n- JWT for auth\n\n# Insights\n"
    )
    again = document.append("decisions", "- snake_case columns\n- REST not GraphQL")
    assert again.read("Decisions") == (
        "- JWT for auth\n- snake_case columns\n- REST not GraphQL\n\n"
    )


def test_append_creates_a_missing_section_at_the_end() -> None:
    document = MemoryDocument.parse("# Insights\n- a\n").append("API Notes", "- uses REST")
    assert document.render() == "# Insights\n- a\n# API Notes\n- uses REST\n"
    assert document.names == ["Insights", "API Notes"]


def test_append_to_an_empty_file_and_to_a_file_without_final_newline() -> None:
    assert MemoryDocument.parse("").append("Insights", "- x").render() == "# Insights\n- x\n"
    assert MemoryDocument.parse("# Insights\n- a").append("Insights", "- b").render() == (
        "# Insights\n- a\n- b\n"
    )


def test_replace_swaps_the_body_and_keeps_the_separation() -> None:
    document = MemoryDocument.parse(SAMPLE).replace("Decisions", "- Sessions, not JWT")
    assert document.read("Decisions") == "- Sessions, not JWT\n\n"
    assert document.read("Insights") == "- The build needs Node 20\n"


@pytest.mark.parametrize("text", ["# Sneaky heading", "```python\nopen fence", "a\n# b"])
def test_text_that_would_change_the_structure_is_refused(text: str) -> None:
    document = MemoryDocument.parse(memory_seed())
    with pytest.raises(StructureError):
        document.append("Decisions", text)
    with pytest.raises(StructureError):
        document.replace("Coding Rules", text)


def test_fenced_text_with_hashes_is_accepted() -> None:
    document = MemoryDocument.parse(memory_seed()).append(
        "Insights", "```sh\n# a shell comment\n```"
    )
    assert document.names == ["Project Context", "Coding Rules", "Decisions", "Insights"]


def test_unknown_section_read_raises_key_error() -> None:
    with pytest.raises(KeyError):
        MemoryDocument.parse(memory_seed()).read("Nope")


def test_content_lines_skip_blank_lines() -> None:
    section = MemoryDocument.parse("# A\n\n- x\n\n- y\n\n").find("a")
    assert section is not None and section.content_lines() == ["- x", "- y"]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_sections_are_found_whatever_the_line_endings(ending: str) -> None:
    text = ending.join(["# A", "x\u2028y\x0cz", "# B", "w", ""])
    document = MemoryDocument.parse(text)
    assert document.names == ["A", "B"]
    assert document.read("B") == "w" + ending
    assert document.render() == text


def test_a_byte_order_mark_is_set_aside_and_rendered_back() -> None:
    text = BOM + "# Insights\n- a\n"
    document = MemoryDocument.parse(text)
    assert document.bom and document.names == ["Insights"]
    assert heading_lines(text) == [(0, "Insights")]
    assert document.render() == text
    assert document.read() == "# Insights\n- a\n"  # what a prompt or a reader sees
    assert document.append("Insights", "- b").render() == BOM + "# Insights\n- a\n- b\n"


@pytest.mark.parametrize(
    ("text", "ending"),
    [("", "\n"), ("one line", "\n"), ("a\r\nb\n", "\r\n"), ("a\rb\r\n", "\r"), ("a\nb\r\n", "\n")],
)
def test_the_line_ending_is_the_first_one(text: str, ending: str) -> None:
    assert line_ending(text) == ending
    assert MemoryDocument.parse(text).newline == ending


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_new_text_takes_the_line_ending_of_the_document(ending: str) -> None:
    document = MemoryDocument.parse(ending.join(["# A", "- a", "", "# B", "- b", ""]))
    edited = document.append("A", "- x\n- y\r\n- z").append("C", "- c").replace("B", "- w\n")
    assert edited.render() == ending.join(
        ["# A", "- a", "- x", "- y", "- z", "", "# B", "- w", "# C", "- c", ""]
    )


@pytest.mark.parametrize(
    ("text", "opened"),
    [
        ("```python\nx = 1\n", (0, "a ``` code fence")),
        ("text\n\n~~~~\n", (2, "a ~~~~ code fence")),
        ("<!-- a note\nmore\n", (0, "an HTML block ('<!-- a note')")),
        ("```\nclosed\n```\n", None),
        ("<div>\nends at a blank line\n", None),
        ("> ```\n> in a quote\n", None),
        ("a paragraph", None),
        ("", None),
    ],
)
def test_open_block_finds_what_would_swallow_the_rest(
    text: str, opened: tuple[int, str] | None
) -> None:
    found = open_block(text)
    assert (found and found[:2]) == opened


def test_an_unclosed_fence_in_the_document_is_its_own_fault_with_its_line() -> None:
    document = MemoryDocument.parse("# Decisions\n- a\n# Insights\n```\nlog\n")
    for name in ("Insights", "Elsewhere"):
        with pytest.raises(StructureError, match="line 4 opens a ``` code fence") as caught:
            document.append(name, "- b")
        assert caught.value.line == 4
    assert document.append("Decisions", "- b").read("Decisions") == "- a\n- b\n"
    assert document.replace("Insights", "- fixed").names == ["Decisions", "Insights"]


def test_an_unclosed_fence_in_the_text_is_the_texts_fault_even_at_the_end() -> None:
    document = MemoryDocument.parse(memory_seed())
    with pytest.raises(StructureError, match="opens a ~~~ code fence on its line 2") as caught:
        document.append("Insights", "- see\n~~~\nlog")
    assert caught.value.line is None


def test_a_heading_in_the_text_is_named_in_the_refusal() -> None:
    with pytest.raises(StructureError, match=r"its line 2 \('# Oops'\) is a top-level heading"):
        MemoryDocument.parse(memory_seed()).append("Decisions", "- a\n# Oops")


def test_live_lines_leave_out_struck_through_superseded_lines_and_keep_them_in_the_file() -> None:
    from squad.extraction.lines import parse_line

    text = (
        "# Project Context\n"
        "- ~~The API listens on 8080~~ (2026-11-02; superseded 2026-11-29)\n"
        "- The API listens on 9090 (2026-11-29)\n"
        "Prose that is not a bullet stays live.\n"
        "# Insights\n"
        "- ~~struck by hand~~\n"
        "* old note (2026-10-01; superseded 2026-11-01)\n"
        "- ~~partly~~ struck is still live (2026-11-03)\n"
        "- ~~~~\n"
    )
    document = MemoryDocument.parse(text)
    assert document.live_lines() == [
        ("Project Context", "- The API listens on 9090 (2026-11-29)"),
        ("Project Context", "Prose that is not a bullet stays live."),
        ("Insights", "- ~~partly~~ struck is still live (2026-11-03)"),
        ("Insights", "- ~~~~"),
    ]
    insights = document.find("Insights")
    assert insights is not None
    assert insights.live_lines() == [
        "- ~~partly~~ struck is still live (2026-11-03)",
        "- ~~~~",
    ]
    assert document.render() == text  # superseded lines stay in the file
    for line in text.splitlines():  # the same rule as the extractor's line format
        parsed = parse_line(line)
        assert superseded(line) == (parsed is not None and parsed.superseded), line


def parser_headings(text: str) -> list[tuple[int, str]]:
    """The top-level ``#`` headings CommonMark (markdown-it) finds: the reference."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text.removeprefix(BOM))
    return [
        (token.map[0], tokens[index + 1].content.strip())
        for index, token in enumerate(tokens)
        if token.type == "heading_open"
        and token.markup == "#"
        and token.level == 0
        and token.map is not None
    ]


MEMORY_LINES = [
    *["# Insights", "#", "# ", "#  Spaced  ", "# Closed ##", "# Hash#", "# ###", "## Sub"],
    *["####### seven", "#tight", "\\# escaped", "# 한국어", "# \u3000wide\u3000", "#\u00a0nbsp"],
    *["- a fact (2026-01-02)", "- ~~old~~ (2026-01-01; superseded 2026-02-02)", "* star"],
    *["+ plus", "1. one", "1) one", "1986. a year", "- # in a list", "-", "- ", "- a\\"],
    *["", "  ", "paragraph text", "===", "---", "***", "[ref]: /url", "[ref]:", "'title'"],
    *["  continued", "    code", "> quote", "> # quoted", "- > quoted", "<div>", "<!--"],
    *["-->", "- <pre>", "</pre>", "```", "~~~", "```py", "#\ttab", "\u00a0# nbsp", "\x1c# x"],
    *["# a \x85", "`code", "\x00# nul"],
]


@settings(max_examples=2000)
@given(
    st.lists(st.sampled_from(MEMORY_LINES), max_size=14),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_headings_are_the_ones_commonmark_finds_in_any_document(
    lines: list[str], newline: str, final: bool
) -> None:
    text = newline.join(lines) + (newline if final else "")
    assert heading_lines(text) == parser_headings(text)


def test_squad_written_memory_is_read_without_the_markdown_parser() -> None:
    from squad.memory.document import _plain_heading_lines

    written = MemoryDocument.parse(memory_seed()).append("Insights", "- a fact (2026-01-02)")
    for text in (memory_seed(), written.render(), SAMPLE.split("```")[0]):
        assert _plain_heading_lines(text) == tuple(parser_headings(text))
