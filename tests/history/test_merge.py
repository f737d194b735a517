"""carry_over: one write's edit replayed onto another version of the file (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from squad.history.merge import carry_over

SEED = b"# Project Context\n\n# Coding Rules\n\n# Decisions\n\n# Insights\n"


def test_an_edit_of_the_committed_version_is_the_new_version() -> None:
    after = SEED + b"- new fact\n"
    assert carry_over(SEED, after, SEED) == after


def test_a_pass_line_lands_without_the_run_line_written_before_it() -> None:
    run = SEED + b"- run line\n"
    assert carry_over(run, run + b"- pass line\n", SEED) == SEED + b"- pass line\n"


def test_an_append_to_a_middle_section_keeps_its_section() -> None:
    head = b"# Project Context\n- old\n\n# Insights\n"
    before = b"# Project Context\n- old\n- run line\n\n# Insights\n- run insight\n"
    after = b"# Project Context\n- old\n- run line\n- pass line\n\n# Insights\n- run insight\n"
    assert (
        carry_over(before, after, head) == b"# Project Context\n- old\n- pass line\n\n# Insights\n"
    )


def test_a_replaced_line_is_replaced_where_head_has_it() -> None:
    head = b"a\nb\nc\n"
    before = b"a\nb\nX\nc\n"
    after = b"a\n~~b~~\nX\nc\n"
    assert carry_over(before, after, head) == b"a\n~~b~~\nc\n"


def test_an_edit_of_lines_head_does_not_have_cannot_be_placed() -> None:
    head = b"a\nc\n"
    before = b"a\nX\nc\n"
    after = b"a\nY\nc\n"  # X changed: it is the run's line, not in head
    assert carry_over(before, after, head) is None


def test_a_first_write_into_a_missing_file_is_the_whole_file() -> None:
    assert carry_over(b"", b"# 2026-12-06\n\nentry\n", b"") == b"# 2026-12-06\n\nentry\n"


lines = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"- x\n", b"\n", b"# H\n"]), max_size=8)


@given(lines, lines)
def test_with_nothing_else_changed_the_answer_is_after(
    before: list[bytes], after: list[bytes]
) -> None:
    b, a = b"".join(before), b"".join(after)
    assert carry_over(b, a, b) == a


@given(lines, lines)
def test_an_edit_that_changes_nothing_leaves_head_alone(
    before: list[bytes], head: list[bytes]
) -> None:
    b, h = b"".join(before), b"".join(head)
    assert carry_over(b, b, h) == h


@given(lines, st.lists(st.sampled_from([b"- run 1\n", b"- run 2\n"]), max_size=3), lines)
def test_a_pass_appended_after_run_lines_lands_on_head_without_them(
    head: list[bytes], run: list[bytes], added: list[bytes]
) -> None:
    base = b"".join(head)
    before = base + b"".join(run)
    after = before + b"".join(added)
    merged = carry_over(before, after, base)
    assert merged == base + b"".join(added)
