"""The finders' pre-filter (:mod:`squad.text.secrets._triggers`, :mod:`._scan`): a pattern run
only where its literals are must find exactly what it finds run over the whole text."""

from __future__ import annotations

import re
import string
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squad.text import secrets
from squad.text.secrets import find_secrets
from squad.text.secrets._scan import Scan, declared
from squad.text.secrets._triggers import fold, read, table, table_text, trigger
from tests.text.secrets_golden import inputs

MODULES = [
    secrets._tokens,
    secrets._named,
    secrets._files,
    secrets._followup,
    secrets._context,
    secrets._layout,
    secrets._spoken,
]
TEXTS = [text for text, _ in inputs()]
"""Every corpus text, the bench shapes, and the corpora joined on lines, with blank lines
between (what a match crossing lines meets) and on one line."""


def spans(matches: object) -> list[tuple[tuple[int, int], ...]]:
    return [m.regs for m in matches]  # type: ignore[attr-defined]


def test_each_pattern_finds_through_the_scan_what_it_finds_in_the_whole_text() -> None:
    """The gate admits every corpus credential: no pattern loses a match, on a message, a
    long text, a long line, or across blank lines; none gains one."""
    patterns = declared()
    assert len(patterns) > 80, "every finder module declares its patterns"
    for text in TEXTS:
        scan = Scan(text)
        for pattern in patterns:
            found = spans(scan.finditer(pattern))
            assert found == spans(pattern.finditer(text)), (pattern.pattern[:60], text[:80])
            if found and len(text) > 2048:  # a search from within a long text
                pos = len(text) // 3
                first, whole = scan.search(pattern, pos), pattern.search(text, pos)
                assert spans([first] if first else []) == spans([whole] if whole else [])


def test_a_module_whose_gate_is_shut_has_no_pattern_that_matches() -> None:
    for text in TEXTS:
        scan = Scan(text)
        for module in MODULES:
            if not scan.admits(module.RULES):
                matching = [p.pattern[:40] for p in module.RULES.patterns if p.search(text)]
                assert not matching, (module.__name__, matching, text[:80])


def test_a_message_with_nothing_key_like_opens_no_module() -> None:
    """Only the blobs (base64 needs no literal) are looked for; a full stop opens the token
    module too, since a Discord token's only literals are its dots."""
    for message, opened in (
        ("thanks, see you tomorrow", []),
        ("좋아요, 내일 회의에서 다시 이야기해요.", [secrets._tokens]),
    ):
        scan = Scan(message)
        assert [m for m in MODULES if scan.admits(m.RULES)] == opened
        assert find_secrets(message) == []


def test_a_credential_deep_in_a_long_text_is_found_on_the_lines_around_its_cue() -> None:
    """Line by line, a follow-up after its cue, a table under its header and a value a few
    lines after its name are found in a long text whose other lines hold no cue."""
    filler = [f"- step {i}: the build ran and the review notes were merged" for i in range(400)]
    lines = [
        *filler[:150],
        "what's the db password?",
        "Tr0ub4dor&3x",
        *filler[150:250],
        "| user | password |",
        "|------|----------|",
        "| ci   | Wint3r!Sky |",
        *filler[250:],
    ]
    text = "\n".join(lines)
    found = [(m.kind, text[m.start : m.end]) for m in find_secrets(text)]
    assert found == [("followup_secret", "Tr0ub4dor&3x"), ("password_table", "Wint3r!Sky")]


def test_an_undeclared_pattern_is_refused() -> None:
    with pytest.raises(AssertionError, match="declare"):
        list(Scan("some text").finditer(re.compile("some")))


class _Open(Scan):
    """A scan whose module gates are all open: every finder reaches every pattern."""

    def admits(self, rules: object) -> bool:
        return True


def test_every_pattern_a_finder_runs_is_declared_in_its_module() -> None:
    """An undeclared pattern is refused when it runs; with every gate open, every finder runs
    every one of its patterns on the corpora (a follow-up with a cue before it too)."""
    for text in TEXTS[:-3]:
        scan = _Open(text)
        for module in MODULES:
            if module is secrets._followup:
                list(module.candidates(text, ["what's the password?"], scan))
            else:
                list(module.candidates(text, scan))


# -- what a pattern needs, read from it --------------------------------------------------


def test_a_required_word_is_a_trigger_and_its_case_is_folded() -> None:
    rule = trigger(re.compile(r"(?<![\w-])(?i:pass(?:word)?)[ \t]*[:=]"))
    assert frozenset({"pass"}) in rule.needs
    assert rule.reach == 0


def test_an_optional_or_one_sided_word_is_no_trigger() -> None:
    assert trigger(re.compile(r"(?:token)?[A-Za-z0-9]{20,}")).needs == ()
    rule = trigger(re.compile(r"(?:token|[A-Z]{4}\d)=x"))
    assert all("token" not in need for need in rule.needs)


def test_white_space_runs_bound_the_lines_a_match_may_reach() -> None:
    assert trigger(re.compile(r"password\s*:\s*\S+")).reach == 2
    assert trigger(re.compile(r"password(?:\s+\w+){0,3}")).reach == 3
    for unbounded in (r"password[^\"]*", r"password(?:\s+\w+)*", r"(?s)password.*"):
        assert trigger(re.compile(unbounded)).reach is None, unbounded


def test_what_tells_a_line_end_from_the_text_end_leaves_no_bound() -> None:
    for pattern in (r"password \w+$", r"password \w+\Z", r"password \w+(?=\s)"):
        assert trigger(re.compile(pattern)).reach is None, pattern
    assert trigger(re.compile(r"(?m)password \w+$")).reach == 0
    assert trigger(re.compile(r"password \w+(?![\w-])")).reach == 0


def test_every_letter_re_folds_to_an_ascii_one_folds_to_it_here() -> None:
    """A folded literal is looked for in the text as :func:`fold` folds it: every character
    that ``re`` matches to an ASCII letter under IGNORECASE must fold to that letter."""
    every = "".join(map(chr, range(sys.maxunicode + 1))).replace("\n", "")
    folding = re.compile("(?i)[a-z]")
    for m in folding.finditer(every):
        char = m[0]
        folded = fold(char)
        assert folded in string.ascii_lowercase and re.fullmatch(f"(?i){folded}", char), char


def test_the_stored_trigger_table_is_what_the_patterns_give() -> None:
    """The table spares each process reading ~90 patterns on its first redaction; a pattern
    changed since is read afresh (its key is its text), so this only keeps start-up fast:
    rewrite the table with ``python -m squad.text.secrets``."""
    patterns = declared()
    assert table().read_text(encoding="utf-8") == table_text(patterns)
    assert all(trigger(p) == read(p) for p in patterns)


_FRAGMENTS = [
    *("password", "pw", "token", "api key", "secret", "login", "admin", "key", "비번", "토큰"),
    *(" is ", ": ", "=", " / ", "?", "'", '"', "`", " ", "\t", "-p", "://", "@", "Q~"),
    *("\n", "\n\n", "\n \n", "\r\n", "\u2028", "\x85", "은 ", "이에요", "the usual", " not "),
    *("hunter2x", "Tr0ub4dor&3", "Ab12Cd34Ef56Gh78Ij90", "sk-proj-", "ghp_", "AKIA", "4471"),
]
_FILLER = "\n".join(f"line {i} of the notes, {'x' * (i % 40)}" for i in range(60))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=80))
def test_each_pattern_finds_the_same_in_any_long_text_of_cue_fragments(parts: list[str]) -> None:
    """Cues and values glued at random, between lines with no cue (so the text is long and
    only some of its lines are scanned): line breaks, blank lines and Unicode white space
    where a match may cross them."""
    text = f"{_FILLER}\n{''.join(parts)}\n{_FILLER}"
    scan = Scan(text)
    for pattern in declared():
        found = spans(scan.finditer(pattern))
        assert found == spans(pattern.finditer(text)), pattern.pattern[:60]
