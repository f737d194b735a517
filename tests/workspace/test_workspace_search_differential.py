"""The indexed search answers exactly what the full scan answers, on generated workspaces that
change between queries: the scan (``index_dir=None``) is the oracle."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from squad.workspace.index_store import IndexStore
from squad.workspace.search import search
from squad.workspace.trigram_index import RACY_NS, refreshed, stat_walk

# English and Korean, mixed case, and the characters where SQLite's case folding and the
# matcher's disagree: Turkish dotted/dotless i, long s, Kelvin sign, final sigma, sharp s.
_WORDS = [
    "needle",
    "Needle",
    "NEEDLE",
    "deploy",
    "Deploy",
    "the",
    "검색",
    "한국어",
    "바늘",
    "텍스트를",
    "İstanbul",
    "istanbul",
    "ISTANBUL",
    "ıi",
    "DIKKAT",
    "dİkkat",
    "dıkkat",
    "ſtraße",
    "STRASSE",
    "strasse",
    "\u212aelvin",
    "kelvin",
    "ΣΊΣΥΦΟΣ",
    "σίσυφος",
    "ᏣᎳᎩ",  # Cherokee: SQLite folds it one way, regex matches both cases
    "ꮳꮃꭹ",
    "a.b*c",
    '"quoted"',
    "tab\there",
    "x",
    "",
]
_line = st.lists(st.sampled_from(_WORDS), max_size=6).map(" ".join)
_text = st.tuples(st.lists(_line, max_size=8), st.sampled_from(["\n", "\r\n"]), st.booleans()).map(
    lambda parts: parts[1].join(parts[0]) + (parts[1] if parts[2] else "")
)

_NAMES = ["a.md", "b.txt", "notes/c.md", "notes/deep/d.md", "Z.md", "한글.md", "notes/e.log"]


@dataclass(frozen=True)
class Query:
    text: str
    regex: bool
    case_sensitive: bool
    context: int
    max_matches: int
    max_file_bytes: int


_queries = st.builds(
    Query,
    text=st.one_of(
        st.sampled_from([w for w in _WORDS if w]),
        st.text("abcdeilnsxIKNS 한국어검색바늘İıſ\u212aςσΣ.*\t\"'", min_size=1, max_size=5),
    ),
    regex=st.just(False),
    case_sensitive=st.booleans(),
    context=st.integers(0, 2),
    max_matches=st.sampled_from([1, 2, 5, 1000]),
    max_file_bytes=st.sampled_from([5_000_000, 60]),
)
_regex_queries = st.builds(
    Query,
    text=st.sampled_from([r"ne+dle", r"^the", r"검색$", r"\bDeploy\b", r"i.", r"[ıİ]", r"\s$"]),
    regex=st.just(True),
    case_sensitive=st.booleans(),
    context=st.integers(0, 2),
    max_matches=st.sampled_from([1, 1000]),
    max_file_bytes=st.just(5_000_000),
)

# A step changes the tree, then a query runs; "same_size_same_mtime" rewrites a file with other
# bytes of the same length and puts its mtime back, so only ctime (or the racy rule) tells.
_steps = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "none",
                "rewrite",
                "same_size_same_mtime",
                "same_size_same_mtime",
                "same_size_same_mtime",
                "delete",
                "create",
                "binary",
                "invalid_utf8",
                "symlink",
                "fifo",
                "big",
            ]
        ),
        st.sampled_from(_NAMES),
        _text,
        st.one_of(_queries, _queries, _queries, _regex_queries),
    ),
    min_size=1,
    max_size=6,
)


def _clear(path: Path) -> None:
    """Make room for a new entry at ``path``: whatever file, link or FIFO is there goes."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)


def _write(path: Path, data: bytes) -> None:
    _clear(path)
    path.write_bytes(data)


def _same_size_other_bytes(data: bytes) -> bytes:
    """Other bytes of the same length, still UTF-8: ASCII letters swap case (or, with none,
    a first ASCII byte becomes ``q``)."""
    swapped = bytes(b ^ 0x20 if 65 <= b <= 90 or 97 <= b <= 122 else b for b in data)
    if swapped != data or not data or data[0] >= 0x80:
        return swapped
    return b"q" + data[1:]


def _apply(root: Path, action: str, name: str, text: str) -> None:
    path = root / name
    data = text.encode()
    if action == "rewrite" or action == "create":
        _write(path, data + b"\nneedle after change\n")
    elif action == "same_size_same_mtime" and path.is_file() and not path.is_symlink():
        before = path.stat()
        path.write_bytes(_same_size_other_bytes(path.read_bytes()))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif action == "delete":
        _clear(path)
    elif action == "binary":
        _write(path, b"\x00binary needle " + data)
    elif action == "invalid_utf8":
        _write(path, b"needle \xff\xfe " + data)
    elif action == "symlink":
        _clear(path)
        path.symlink_to(root / "notes")  # to a folder: listed, never entered
    elif action == "fifo" and hasattr(os, "mkfifo"):
        _clear(path)
        os.mkfifo(path)
    elif action == "big":
        _write(path, (data + b" needle\n") * 40)


def _search(root: Path, query: Query, index: Path | None) -> dict[str, object]:
    return search(
        root,
        query.text,
        regex=query.regex,
        case_sensitive=query.case_sensitive,
        context=query.context,
        max_matches=query.max_matches,
        max_file_bytes=query.max_file_bytes,
        index_dir=index,
    ).to_dict()


def _index_as_if_read_later(root: Path, index: Path) -> None:
    """Build the index as if every file had been read long after it was written, so that
    their stamps are trusted (the path a real workspace takes), then wait for the filesystem
    clock to pass every recorded ctime: a later change shows in the stamps, as it would once
    the racy window had passed."""
    walk = stat_walk(root)
    store = IndexStore.open(index, root)
    try:
        with refreshed(store, root, walk, now_ns=time.time_ns() + 10 * RACY_NS):
            pass
    finally:
        store.close()
    newest = max((max(st.st_ctime_ns, st.st_mtime_ns) for _, st in walk), default=0)
    probe = root.parent / "clock-probe"
    while True:
        probe.write_bytes(b"tick")
        if probe.stat().st_ctime_ns > newest:
            return
        time.sleep(0.001)


_CASES: list[Callable[[str], str]] = [str, str.lower, str.upper, str.swapcase, str.casefold]


def _from_the_tree(root: Path, data: st.DataObject, query: Query) -> Query:
    """Often, a query cut from a file of the tree and recased: a hit, found only through the
    case folding the index has to get right."""
    texts = [p.read_bytes().decode() for p in sorted(root.rglob("*")) if _is_text(p)]
    if query.regex or not texts or not data.draw(st.booleans()):
        return query
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, max(0, len(text) - 1)))
    cut = text[start : start + data.draw(st.integers(1, 8))] or query.text
    recased = data.draw(st.sampled_from(_CASES))(cut) or cut
    return Query(recased, False, query.case_sensitive, query.context, query.max_matches, 10**6)


def _is_text(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    try:
        return "\x00" not in path.read_bytes().decode()
    except UnicodeDecodeError:
        return False


@settings(
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    files=st.dictionaries(st.sampled_from(_NAMES), _text, max_size=len(_NAMES)),
    steps=_steps,
    data=st.data(),
)
def test_indexed_search_equals_the_scan_as_the_workspace_changes(
    files: dict[str, str], steps: list[tuple[str, str, str, Query]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root, index = Path(folder) / "ws", Path(folder) / "index"
        root.mkdir()
        for name, text in files.items():
            _write(root / name, text.encode())
        if data.draw(st.booleans()):
            _index_as_if_read_later(root, index)
        for action, name, text, query in steps:
            _apply(root, action, name, text)
            query = _from_the_tree(root, data, query)
            scanned = _search(root, query, None)
            for _ in range(2):  # the first search may re-read files; the second is all warm
                assert _search(root, query, index) == scanned, (action, name, query)
