"""Full-text search over real folders on disk."""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from squad.errors import UsageError
from squad.text.grep import (
    MAX_EXPANSION,
    check_timeout,
    compile_query,
    contains,
    expansion,
    find_spans,
    matching_lines,
)
from squad.workspace.search import LineMatch, Skipped, search


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_bytes(data.encode("utf-8"))  # write_text would translate newlines on Windows
    else:
        path.write_bytes(data)
    return path


def numbered(count: int, marks: dict[int, str] | None = None) -> str:
    """``count`` lines "line N", with some replaced by ``marks`` (1-based line -> text)."""
    marks = marks or {}
    return "".join(marks.get(n, f"line {n}") + "\n" for n in range(1, count + 1))


def only_matches(root: Path, query: str, **options: object) -> list[LineMatch]:
    result = search(root, query, **options)  # type: ignore[arg-type]
    assert len(result.files) == 1
    return result.files[0].matches


# -- what matches ------------------------------------------------------------------------


def test_search_literal_query_escapes_regex_characters(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "cost: 3.50 (approx)\ncost: 3x50\n")
    matches = only_matches(tmp_path, "3.50 (")
    assert [(m.line_number, m.spans) for m in matches] == [(1, [(6, 12)])]


def test_search_regex_query_matches_pattern(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "task-12 done\ntask-x open\ntask-7 open\n")
    matches = only_matches(tmp_path, r"task-\d+", regex=True)
    assert [(m.line_number, m.line) for m in matches] == [(1, "task-12 done"), (3, "task-7 open")]


def test_search_is_case_insensitive_by_default(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "Deploy\ndeploy\nDEPLOY\nother\n")
    assert [m.line_number for m in only_matches(tmp_path, "deploy")] == [1, 2, 3]


def test_search_case_sensitive_matches_exact_case_only(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "Deploy\ndeploy\nDEPLOY\n")
    matches = only_matches(tmp_path, "Deploy", case_sensitive=True)
    assert [m.line_number for m in matches] == [1]


def test_search_case_flag_applies_to_regex_too(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "ERROR one\nerror two\n")
    assert len(only_matches(tmp_path, "^error", regex=True)) == 2
    assert len(only_matches(tmp_path, "^error", regex=True, case_sensitive=True)) == 1


def test_search_reports_every_match_span_on_a_line(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "cat, Cat and CAT\n")
    (match,) = only_matches(tmp_path, "cat")
    assert match.spans == [(0, 3), (5, 8), (13, 16)]


def test_search_spans_are_character_offsets_not_bytes(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "été fini\n")
    (match,) = only_matches(tmp_path, "fini")
    assert match.spans == [(4, 8)]
    assert match.line[4:8] == "fini"


@pytest.mark.parametrize("pattern", ["^", "$", "x*", r"\b"])
def test_search_skips_zero_width_regex_matches(tmp_path: Path, pattern: str) -> None:
    write(tmp_path / "notes.md", numbered(50))
    result = search(tmp_path, pattern, regex=True)
    assert (result.files, result.files_scanned) == ([], 1)


def test_search_keeps_only_non_empty_spans_of_a_pattern_that_can_be_empty(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "baaab\n")
    (match,) = only_matches(tmp_path, "a*", regex=True)
    assert match.spans == [(1, 4)]


def test_search_strips_carriage_returns_from_lines(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "first\r\nsecond end\r\n")
    (match,) = only_matches(tmp_path, "end$", regex=True)
    assert (match.line_number, match.line) == (2, "second end")


def test_search_counts_a_last_line_without_newline(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "one\ntwo")
    (match,) = only_matches(tmp_path, "two")
    assert match.line_number == 2


def test_search_lists_files_sorted_by_path(tmp_path: Path) -> None:
    for name in ["tasks/t2/out.md", ".squad-config.json", "agents/b/memory.md", "a.md"]:
        write(tmp_path / name, "needle\n")
    result = search(tmp_path, "needle")
    assert [f.path for f in result.files] == [
        ".squad-config.json",
        "a.md",
        "agents/b/memory.md",
        "tasks/t2/out.md",
    ]
    assert result.files_scanned == 4


# -- context -----------------------------------------------------------------------------


def test_search_context_lines_clip_at_file_edges(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", numbered(5, {1: "hit first", 5: "hit last"}))
    first, last = only_matches(tmp_path, "hit", context=2)
    assert first.before == []
    assert first.after == [(2, "line 2"), (3, "line 3")]
    assert last.before == [(4, "line 4")]  # line 3 was already shown after the first hit
    assert last.after == []


def test_search_context_around_a_single_match(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", numbered(9, {5: "hit"}))
    (match,) = only_matches(tmp_path, "hit", context=2)
    assert match.before == [(3, "line 3"), (4, "line 4")]
    assert match.after == [(6, "line 6"), (7, "line 7")]


def test_search_overlapping_context_shows_each_line_once(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", numbered(12, {3: "hit a", 6: "hit b", 7: "hit c"}))
    a, b, c = only_matches(tmp_path, "hit", context=2)
    assert (a.before, a.after) == ([(1, "line 1"), (2, "line 2")], [(4, "line 4"), (5, "line 5")])
    assert (b.before, b.after) == ([], [])  # line 4-5 shown by a; line 7 is itself a hit
    assert (c.before, c.after) == ([], [(8, "line 8"), (9, "line 9")])
    shown = [n for m in (a, b, c) for n in [*(x for x, _ in m.before), m.line_number]] + [
        n for m in (a, b, c) for n, _ in m.after
    ]
    assert sorted(shown) == list(range(1, 10))  # every line once, none twice


def test_search_context_keeps_a_gap_between_distant_matches(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", numbered(20, {2: "hit a", 15: "hit b"}))
    a, b = only_matches(tmp_path, "hit", context=1)
    assert a.after == [(3, "line 3")]
    assert b.before == [(14, "line 14")]


def test_search_without_context_has_no_context_lines(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", numbered(5, {3: "hit"}))
    (match,) = only_matches(tmp_path, "hit")
    assert (match.before, match.after) == ([], [])


# -- what is read and what is skipped ----------------------------------------------------


def test_search_counts_skipped_files_by_reason(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "needle\n")
    write(tmp_path / "image.png", b"\x89PNG\x00needle")
    write(tmp_path / "latin1.txt", "needle café".encode("latin-1"))
    write(tmp_path / "big.log", "needle " * 20)
    (tmp_path / "link.md").symlink_to(tmp_path / "a.md")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
    result = search(tmp_path, "needle", max_file_bytes=100)
    assert [f.path for f in result.files] == ["a.md"]
    assert result.files_scanned == 1
    expected = {"binary": 2, "link": 1, "too_large": 1}
    if hasattr(os, "mkfifo"):
        expected["special"] = 1
    assert result.files_skipped == expected


def test_search_reads_a_file_of_exactly_max_file_bytes(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "needle\n")  # 7 bytes
    result = search(tmp_path, "needle", max_file_bytes=7)
    assert (result.files_scanned, result.files_skipped) == (1, {})


def test_search_never_reads_through_a_link_to_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    write(outside / "secret.md", "TOP SECRET\n")
    write(root / "plans/plan.md", "nothing here\n")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "plans/escape").symlink_to(outside, target_is_directory=True)
    result = search(root, "secret")
    assert result.files == []
    assert result.files_skipped == {"link": 2}


def test_search_of_empty_workspace_finds_nothing(tmp_path: Path) -> None:
    result = search(tmp_path, "x")
    assert (result.files, result.files_scanned, result.files_skipped, result.truncated) == (
        [],
        0,
        {},
        False,
    )


# -- limits and errors -------------------------------------------------------------------


def test_search_stops_at_max_matches_and_says_so(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "hit\nhit\n")
    write(tmp_path / "b.md", "hit\nhit\n")
    result = search(tmp_path, "hit", max_matches=3)
    assert [(f.path, len(f.matches)) for f in result.files] == [("a.md", 2), ("b.md", 1)]
    assert result.truncated and result.match_count == 3


def test_search_with_exactly_max_matches_is_not_truncated(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "hit\nhit\n")
    write(tmp_path / "b.md", "hit\nmiss\n")
    write(tmp_path / "c.md", "miss\n")
    result = search(tmp_path, "hit", max_matches=3)
    assert (result.match_count, result.truncated) == (3, False)


def test_search_truncation_reaching_into_the_next_file_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "hit\n")
    write(tmp_path / "b.md", "miss\n")
    write(tmp_path / "c.md", "hit\n")
    result = search(tmp_path, "hit", max_matches=1)
    assert ([f.path for f in result.files], result.truncated) == (["a.md"], True)


def test_search_rejects_invalid_regex_quoting_pattern(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"invalid regular expression '\(unclosed': .*missing \)"):
        search(tmp_path, "(unclosed", regex=True)


def test_search_treats_regex_syntax_literally_without_regex_flag(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "call f(unclosed\n")
    assert len(only_matches(tmp_path, "(unclosed")) == 1


def test_search_rejects_empty_query(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="empty"):
        search(tmp_path, "")


@pytest.mark.parametrize(
    "options",
    [{"context": -1}, {"max_matches": 0}, {"max_file_bytes": -1}],
)
def test_search_rejects_impossible_limits(tmp_path: Path, options: dict[str, int]) -> None:
    with pytest.raises(UsageError, match=next(iter(options))):
        search(tmp_path, "x", **options)  # type: ignore[arg-type]


def test_search_result_to_dict_is_json_ready(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "before\nhit hit\nafter\n")
    write(tmp_path / "b.bin", b"\x00")
    data = json.loads(json.dumps(search(tmp_path, "hit", context=1).to_dict()))
    assert data == {
        "query": "hit",
        "files": [
            {
                "path": "a.md",
                "matches": [
                    {
                        "line_number": 2,
                        "line": "hit hit",
                        "spans": [[0, 3], [4, 7]],
                        "before": [{"line_number": 1, "line": "before"}],
                        "after": [{"line_number": 3, "line": "after"}],
                    }
                ],
            }
        ],
        "match_count": 1,
        "files_scanned": 1,
        "files_skipped": {"binary": 1},
        "skipped": [{"path": "b.bin", "reason": "binary"}],
        "max_file_bytes": 5_000_000,
        "truncated": False,
    }


# -- bounds on patterns and time -----------------------------------------------------------

SLOW = "(a|aa)+$"  # exponential in the run of a's before the b


def test_a_line_that_takes_too_long_stops_the_search_naming_file_and_line(
    tmp_path: Path,
) -> None:
    write(tmp_path / "a.md", "aaa b\n")
    write(tmp_path / "b.md", "fine\n" + "a" * 40 + "b\n")
    with pytest.raises(UsageError) as caught:
        search(tmp_path, SLOW, regex=True, timeout_s=0.05)
    message = str(caught.value)
    assert message.startswith(f"the pattern {SLOW!r} took longer than 0.05s on b.md:2; ")
    assert "simplify it" in message and "nothing is listed" in message


def test_a_case_insensitive_literal_stays_linear_on_a_long_line(tmp_path: Path) -> None:
    """``re`` takes the line's length times the query's here (minutes); regex does not."""
    write(tmp_path / "a.md", "a" * 2_000_000 + "\n")
    result = search(tmp_path, "A" * 5_000 + "b", timeout_s=5)
    assert (result.files, result.files_scanned) == ([], 1)


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("a" * 1_001, "1,001 characters long; a --regex pattern may have at most 1,000"),
        ("(?:a{1000}){1000}", "repeats too much to compile: its repeat counts ({n}) expand it"),
        ("(?:" + "[ab]" * 200 + "){1000}", "repeats too much"),  # a big body, a small count
        ("a{99999999999999999999}", "repeats too much"),
        ("a{00000000001000000}", "repeats too much"),
        ("(?:a{1000, 2000}){1000}", "repeats too much"),  # regex reads the space too
        ("(?x)a{1000 000}", "repeats too much"),  # and, verbose, ignores it
        ("(" * 400 + ")" * 400, "nested too deeply"),
        ("(unclosed", "invalid regular expression '(unclosed'"),
        ("(?R)*", "calls a group"),  # left recursion: half a GB, then MemoryError
        ("x|(?R)a", "calls a group"),
        ("(a(?1)?b)", "calls a group"),
        ("(?<n>a(?&n)?b)", "calls a group"),
        ("(?P<n>a(?P>n)?b)", "calls a group"),
        (r"(a\g<1>?b)", "calls a group"),
    ],
)
def test_a_regex_too_big_or_broken_is_refused_before_it_compiles(query: str, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        compile_query(query, regex=True, case_sensitive=False)
    assert says in str(caught.value)


@pytest.mark.parametrize(
    "query",
    [
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        r"\{100000\}\{100000\}",  # escaped braces are text, not repeats
        r"\p{L}{3,}",
        r".{0,500}needle.{0,500}",  # only least counts are expanded
        r"(?:(?:a|b)[(){}]{300}){300}",  # brackets in a class are characters
        "x" * 1_000,
    ],
)
def test_ordinary_patterns_fit_the_bounds(query: str) -> None:
    compile_query(query, regex=True, case_sensitive=True)


@pytest.mark.parametrize(
    ("query", "pieces"),
    [
        ("abc", 3),
        ("a{5}", 6),
        ("(ab){3}", 8),  # the group once, then three more copies
        ("(a{2}){3}", 12),
        ("a{0,1000}", 1),
        ("a|b*|c+", 3),
        ("[(]{9}", 10),
        ("(?#((({99999})x", 1),
        ("[[:alpha:]]{4}", 5),
    ],
)
def test_expansion_counts_what_a_repeat_copies(query: str, pieces: int) -> None:
    assert expansion(query) == pieces


@pytest.mark.parametrize(
    "query",
    [
        "(?x)(?:#)\n a{400}){400}",  # a comment: its ) is no group end
        "(?V1)(?:[[a]--[b](]a{400}){400}",  # a nested set: its ( is a character
    ],
)
def test_an_uncertain_structure_falls_back_to_a_bound_true_for_any(query: str) -> None:
    assert expansion(query) > MAX_EXPANSION


def test_a_literal_query_has_its_own_longer_bound() -> None:
    compile_query("(" * 10_000, regex=False, case_sensitive=False)
    with pytest.raises(UsageError, match="10,001 characters long"):
        compile_query("x" * 10_001, regex=False, case_sensitive=False)


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf")])
def test_a_timeout_must_be_a_positive_number_of_seconds(seconds: float) -> None:
    with pytest.raises(UsageError, match="timeout must be above 0 seconds"):
        check_timeout(seconds)


def test_a_pattern_built_with_re_is_matched_untimed() -> None:
    """The memory tool escapes its own literal with ``re``; it still matches as before."""
    pattern = re.compile(re.escape("x"), re.IGNORECASE)
    assert find_spans(pattern, "aXbx", timeout_s=1e-9, where="t") == [(1, 2), (3, 4)]
    assert matching_lines(pattern, ["a", "x"], limit=5) == [(1, [(0, 1)])]


def test_a_match_that_runs_out_of_memory_is_a_usage_error() -> None:
    class Hungry:
        pattern = "(x)+"

        def finditer(self, text: str, timeout: float) -> list[object]:
            raise MemoryError

        def search(self, text: str, timeout: float) -> object:
            raise MemoryError

    with pytest.raises(UsageError, match=r"'\(x\)\+' ran out of memory on a.md:3"):
        find_spans(Hungry(), "x", timeout_s=1, where="a.md:3")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"ran out of memory on a\.md"):
        contains(Hungry(), "x", timeout_s=1, where="a.md")  # type: ignore[arg-type]


def test_skipped_files_are_listed_with_path_and_reason(tmp_path: Path) -> None:
    write(tmp_path / "a.md", "needle\n")
    write(tmp_path / "big.log", "needle " * 20)
    write(tmp_path / "sub/image.png", b"\x00")
    (tmp_path / "link.md").symlink_to(tmp_path / "a.md")
    result = search(tmp_path, "needle", max_file_bytes=100)
    assert result.skipped == [
        Skipped("big.log", "too_large"),
        Skipped("link.md", "link"),
        Skipped("sub/image.png", "binary"),
    ]
    assert result.max_file_bytes == 100


# -- property ----------------------------------------------------------------------------

# Letters whose lower() is one character and agrees with case-insensitive matching; full
# Unicode case folding (ß, İ, the Kelvin sign) differs between the two by design, not by bug.
_ALPHABET = "abcABCxyzXYZ éÉüÜ.*()[]?+\\|^$-_:\t"
_lines = st.lists(st.text(_ALPHABET, max_size=30), max_size=30)


@settings(deadline=None, max_examples=150)
@given(lines=_lines, query=st.text(_ALPHABET, min_size=1, max_size=4))
def test_search_finds_exactly_the_lines_containing_a_literal_query(
    lines: list[str], query: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write(root / "notes.md", "".join(line + "\n" for line in lines))
        result = search(root, query, max_matches=10_000)
    found = [m.line_number for f in result.files for m in f.matches]
    expected = [n for n, line in enumerate(lines, 1) if query.lower() in line.lower()]
    assert found == expected
    for match in (m for f in result.files for m in f.matches):
        assert all(match.line[a:b].lower() == query.lower() for a, b in match.spans)


_PATTERN_PARTS = [*"abAB xé.*()[]?+|^$-_:", r"\b", r"\w", r"\d", "(?:", "(?=", "(?<=", "{2}", "*?"]


@settings(deadline=None, max_examples=300)
@given(
    parts=st.lists(st.sampled_from(_PATTERN_PARTS), min_size=1, max_size=8),
    line=st.text("abAB xé-_:", max_size=20),
    case_sensitive=st.booleans(),
)
def test_a_regex_matches_what_python_re_matches(
    parts: list[str], line: str, case_sensitive: bool
) -> None:
    """The regex engine is a bounded stand-in for re, not a different dialect."""
    pattern = "".join(parts)
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            expected = re.compile(pattern, flags)
    except (re.error, FutureWarning):
        return
    ours = compile_query(pattern, regex=True, case_sensitive=case_sensitive)
    spans = [m.span() for m in expected.finditer(line) if m.end() > m.start()]
    assert find_spans(ours, line, timeout_s=5, where="t") == spans
