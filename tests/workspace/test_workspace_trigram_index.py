"""The search index over real folders and real SQLite files: it follows every change, survives
damage and concurrent searches, and answers exactly what the full scan answers."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import regex as rx

from squad.errors import UsageError
from squad.text.grep import compile_query
from squad.workspace import trigram_index
from squad.workspace.index_store import FORMAT, IndexStore, index_path
from squad.workspace.inspect import _walk
from squad.workspace.search import search
from squad.workspace.trigram_index import (
    INDEX_MAX_BYTES,
    RACY_NS,
    FoldProbe,
    Refresh,
    match_expression,
    refreshed,
    stat_walk,
)
from tests.conftest import EXAMPLES

LATER = 10 * RACY_NS  # a read this long after every change in a test: nothing is racy


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def both(root: Path, index: Path, query: str, **options: object) -> dict[str, object]:
    """The scan's answer, after checking that the indexed search gives the same."""
    scanned = search(root, query, **options).to_dict()  # type: ignore[arg-type]
    indexed = search(root, query, index_dir=index, **options).to_dict()  # type: ignore[arg-type]
    assert indexed == scanned
    return scanned


def found(result: dict[str, object]) -> list[tuple[str, int]]:
    files = result["files"]
    assert isinstance(files, list)
    return [(f["path"], m["line_number"]) for f in files for m in f["matches"]]


def refresh(root: Path, index: Path, *, now_ns: int) -> Refresh:
    """One refresh of ``root``'s index as a search does it, the walk taken at ``now_ns``."""
    store = IndexStore.open(index, root)
    try:
        with refreshed(store, root, stat_walk(root), now_ns=now_ns) as fresh:
            return fresh
    finally:
        store.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "notes.md", "first line\nthe Needle is here\n")
    write(ws / "plans/plan.md", "바늘을 찾았다\nno match\n")
    write(ws / "tasks/t1/out.md", "nothing\n")
    return ws


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return tmp_path / "home" / "index"


# -- where the index lives ---------------------------------------------------------------


def test_the_index_file_is_in_the_cache_folder_named_after_the_resolved_workspace(
    root: Path, index: Path, tmp_path: Path
) -> None:
    both(root, index, "needle")
    (only,) = index.glob("*.sqlite3")
    assert only == index_path(index, root)
    (tmp_path / "alias").symlink_to(root, target_is_directory=True)
    assert index_path(index, tmp_path / "alias") == only  # one folder, one index
    assert index_path(index, tmp_path) != only
    assert not list(root.rglob("*.sqlite3*"))  # nothing of it in the workspace


def test_an_index_folder_inside_the_workspace_is_not_used(root: Path) -> None:
    inside = root / ".cache" / "index"
    assert found(both(root, inside, "needle")) == [("notes.md", 2)]
    assert not inside.exists()


def test_an_index_folder_that_cannot_be_created_falls_back_to_the_scan(
    root: Path, tmp_path: Path
) -> None:
    blocker = write(tmp_path / "not-a-folder", "x")
    assert found(both(root, blocker / "index", "needle")) == [("notes.md", 2)]


# -- following changes -------------------------------------------------------------------


def test_a_second_search_reads_no_file_again(root: Path, index: Path) -> None:
    first = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert sorted(first.reread) == ["notes.md", "plans/plan.md", "tasks/t1/out.md"]
    second = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert (second.reread, second.dropped) == ((), ())
    assert second.vouched == {"notes.md", "plans/plan.md", "tasks/t1/out.md"}


def test_new_changed_and_deleted_files_are_followed(root: Path, index: Path) -> None:
    both(root, index, "needle")
    write(root / "notes.md", "no longer\n")
    write(root / "tasks/t2/new.md", "a new NEEDLE\n")
    (root / "plans/plan.md").unlink()
    assert found(both(root, index, "needle")) == [("tasks/t2/new.md", 1)]
    assert found(both(root, index, "바늘")) == []
    fresh = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert "plans/plan.md" not in fresh.vouched


def test_a_vanished_file_is_dropped_from_the_index(root: Path, index: Path) -> None:
    refresh(root, index, now_ns=time.time_ns() + LATER)
    (root / "notes.md").unlink()
    fresh = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert fresh.dropped == ("notes.md",)
    store = IndexStore.open(index, root)
    try:
        assert "notes.md" not in store.stamps()
    finally:
        store.close()


def test_a_change_keeping_size_and_mtime_is_caught_by_the_ctime(root: Path, index: Path) -> None:
    path = root / "notes.md"
    refresh(root, index, now_ns=time.time_ns() + LATER)  # recorded as trusted, not racy
    before = path.stat()
    write(path, "first line\nthe Thread is here\n")  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    fresh = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert fresh.reread == ("notes.md",)
    assert found(both(root, index, "thread")) == [("notes.md", 2)]


def test_a_file_read_within_the_racy_window_is_read_again_even_with_the_same_stamp(
    root: Path, index: Path
) -> None:
    """A change in the same timestamp tick as the read leaves the stamp as it was: the same
    lstat is given twice here, as a filesystem with coarse timestamps would report it."""
    path = root / "notes.md"
    st = path.lstat()
    store = IndexStore.open(index, root)
    try:
        walk = [(rel, s) for rel, s in stat_walk(root) if rel != "notes.md"] + [("notes.md", st)]
        walk.sort()
        with refreshed(store, root, walk, now_ns=st.st_mtime_ns + RACY_NS // 2):
            pass
        write(path, "first line\nthe Thread is here\n")
        with refreshed(store, root, walk, now_ns=st.st_mtime_ns + RACY_NS // 2) as fresh:
            assert "notes.md" in fresh.reread
            assert "Thread" in store.text("notes.md")
    finally:
        store.close()


def test_a_file_read_long_after_its_change_is_trusted_by_its_stamp(root: Path, index: Path) -> None:
    """The other side of the racy rule: past the window, the stamp alone vouches."""
    st = (root / "notes.md").lstat()
    store = IndexStore.open(index, root)
    try:
        walk = stat_walk(root)
        with refreshed(store, root, walk, now_ns=max(st.st_mtime_ns, st.st_ctime_ns) + LATER):
            pass
        with refreshed(store, root, walk, now_ns=time.time_ns()) as fresh:
            assert fresh.reread == ()
    finally:
        store.close()


@pytest.mark.slow
def test_a_same_size_same_mtime_change_is_caught_after_the_racy_window_passed(
    root: Path, index: Path
) -> None:
    """End to end on the wall clock: indexed once the files are older than the window, so
    their stamps are trusted; a change then keeps size and mtime but not ctime."""
    path = root / "notes.md"
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))
    time.sleep(RACY_NS / 1e9 + 0.2)
    both(root, index, "needle")
    both(root, index, "needle")
    write(path, "first line\nthe Thread is here\n")
    os.utime(path, ns=(old, old))
    assert found(both(root, index, "thread")) == [("notes.md", 2)]
    assert found(both(root, index, "needle")) == []


def test_files_that_stop_being_regular_files_are_dropped(root: Path, index: Path) -> None:
    both(root, index, "needle")
    (root / "notes.md").unlink()
    (root / "notes.md").symlink_to(root / "plans/plan.md")
    (root / "plans/plan.md").unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "plans/plan.md")
    result = both(root, index, "needle")
    assert found(result) == []
    assert result["files_skipped"] == {
        "link": 1,
        **({"special": 1} if hasattr(os, "mkfifo") else {}),
    }


def test_binary_and_oversized_files_are_skipped_as_the_scan_skips_them(
    root: Path, index: Path
) -> None:
    write(root / "blob.bin", b"\x00needle")
    write(root / "latin1.txt", "needle café".encode("latin-1"))
    write(root / "big.log", "needle\n" * 20)
    result = both(root, index, "needle", max_file_bytes=100)
    assert result["files_skipped"] == {"binary": 2, "too_large": 1}
    write(root / "blob.bin", "now text: needle\n")  # binary becomes text
    assert ("blob.bin", 1) in found(both(root, index, "needle", max_file_bytes=100))


def test_a_file_larger_than_the_index_keeps_is_read_from_disk(root: Path, index: Path) -> None:
    write(root / "huge.log", "x" * (INDEX_MAX_BYTES + 10) + "\nneedle at the end\n")
    result = both(root, index, "needle", max_file_bytes=2 * INDEX_MAX_BYTES)
    assert ("huge.log", 2) in found(result)
    assert both(root, index, "needle")["files_skipped"] == {"too_large": 1}


def test_text_after_a_nul_past_the_binary_sniff_is_found(root: Path, index: Path) -> None:
    write(root / "late-nul.md", "a" * 9000 + "\x00 then the needle\n")
    assert ("late-nul.md", 1) in found(both(root, index, "needle"))
    write(root / "late-nul.md", "b" * 9000 + "\x00 nothing\n")  # and it leaves the index
    assert ("late-nul.md", 1) not in found(both(root, index, "needle"))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads all")
def test_an_unreadable_file_is_tried_again_on_every_search(root: Path, index: Path) -> None:
    path = root / "notes.md"
    path.chmod(0)
    try:
        assert both(root, index, "needle")["files_skipped"] == {"unreadable": 1}
    finally:
        path.chmod(0o644)
    assert found(both(root, index, "needle")) == [("notes.md", 2)]


def test_a_file_whose_name_is_not_utf8_is_read_from_disk_each_time(root: Path, index: Path) -> None:
    try:
        fd = os.open(os.fsencode(root) + b"/caf\xe9.md", os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError:
        pytest.skip("this filesystem takes only UTF-8 names")
    os.write(fd, b"a needle\n")
    os.close(fd)
    for _ in range(2):
        assert ("caf\udce9.md", 1) in found(both(root, index, "needle"))
    fresh = refresh(root, index, now_ns=time.time_ns() + LATER)
    assert "caf\udce9.md" not in fresh.vouched


# -- answering -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("İSTANBUL\n", "istanbul"),  # regex: i matches İ; SQLite does not fold İ to i
        ("DIKKAT\n", "dıkkat"),  # I matches ı
        ("ſtraße\n", "STRAßE"),  # long s
        ("\u212aelvin\n", "kelvin"),  # Kelvin sign
        ("ΣΊΣΥΦΟΣ\n", "σίσυφος"),  # final sigma
        ("ᏣᎳᎩ\n", "ꮳꮃꭹ"),  # Cherokee, which SQLite folds one way only
        ("Straße\n", "STRASSE"),  # no full case folding: ß is not ss (no match either way)
    ],
)
def test_case_insensitive_queries_find_what_sqlite_folds_differently(
    tmp_path: Path, index: Path, text: str, query: str
) -> None:
    root = tmp_path / "ws"
    write(root / "a.md", text)
    write(root / "b.md", "other\n")
    result = both(root, index, query)
    assert bool(found(result)) == (query != "STRASSE")


def test_a_case_sensitive_query_checks_the_case_the_index_folded(root: Path, index: Path) -> None:
    write(root / "more.md", "NEEDLE\nneedle\nNeedle\n")
    assert found(both(root, index, "Needle", case_sensitive=True)) == [
        ("more.md", 3),
        ("notes.md", 2),
    ]


@pytest.mark.parametrize("query", ["Ne", "e", "needle\n", "le is\r", "nee\x00dle"])
def test_short_queries_and_line_breaks_in_queries_answer_as_the_scan(
    root: Path, index: Path, query: str
) -> None:
    write(root / "crlf.md", "a needle\r\nle is\r\nnee\x00dle\n")
    both(root, index, query)


def test_regex_queries_answer_from_the_stored_texts_as_the_scan(root: Path, index: Path) -> None:
    assert found(both(root, index, r"^the \w+", regex=True)) == [("notes.md", 2)]
    assert found(both(root, index, r"찾았다$", regex=True, context=1)) == [("plans/plan.md", 1)]


def test_a_pattern_that_takes_too_long_stops_the_indexed_search_as_the_scan(
    root: Path, index: Path
) -> None:
    write(root / "slow.md", "fine\n" + "a" * 40 + "b\n")
    for index_dir in (None, index):
        with pytest.raises(UsageError, match=r"took longer than 0.05s on slow.md:2"):
            search(root, "(a|aa)+$", regex=True, timeout_s=0.05, index_dir=index_dir)
    assert found(both(root, index, "needle")) == [("notes.md", 2)]  # the index is fine


def test_the_match_limit_cuts_where_the_scan_cuts(root: Path, index: Path) -> None:
    for i in range(5):
        write(root / f"hits/{i}.md", "needle\nneedle\n")
    for limit in (1, 2, 3, 10, 11, 12):
        result = both(root, index, "needle", max_matches=limit, context=1)
        assert result["match_count"] == min(limit, 11)


# -- the trigram query ---------------------------------------------------------------------


def expression(query: str, *, case_sensitive: bool = True) -> str | None:
    probe = FoldProbe()
    try:
        pattern = compile_query(query, regex=False, case_sensitive=case_sensitive)
        return match_expression(query, pattern, case_sensitive=case_sensitive, probe=probe)
    finally:
        probe.close()


def test_a_query_under_three_characters_asks_no_trigram() -> None:
    assert expression("ab") is None


def test_each_trigram_is_quoted_and_nul_trigrams_are_left_out() -> None:
    assert expression('a"bc') == '"a""b" AND """bc"'
    assert expression("ab\x00cde") == '"cde"'
    assert expression("a\x00b") is None


def test_a_trigram_lists_one_variant_per_fold_sqlite_gives() -> None:
    folded = expression("dig", case_sensitive=False)
    assert folded is not None and folded.startswith('("dig" OR "dİg"')
    assert expression("abc", case_sensitive=False) == '"abc"'


def test_the_regex_module_still_tells_which_characters_a_letter_matches() -> None:
    """The index relies on ``regex``'s own case tables; a release without them would make
    every case-insensitive query scan (correct, but slow): this says so first."""
    cases = trigram_index._all_cases()
    assert cases is not None
    flags = compile_query("x", regex=False, case_sensitive=False).flags
    assert not flags & rx.FULLCASE
    for char in "iIſk\u212aςΣĞ":
        for other in cases(flags, ord(char)):
            assert rx.fullmatch(rx.escape(char), chr(other), rx.IGNORECASE)


# -- the walk ------------------------------------------------------------------------------


def test_stat_walk_lists_what_the_inspect_walk_lists(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "outside/secret.md", "x")
    (root / "link.md").symlink_to(root / "notes.md")
    (root / "plans/escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "dangling").symlink_to(root / "nowhere")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "tasks/pipe")
    (root / "empty/deeper").mkdir(parents=True)
    expected = sorted((n.rel, n.st) for n in _walk(root) if n.kind != "dir")
    walked = stat_walk(root)
    assert [rel for rel, _ in walked] == [rel for rel, _ in expected]
    assert [(s.st_ino, s.st_mode, s.st_size) for _, s in walked] == [
        (s.st_ino, s.st_mode, s.st_size) for _, s in expected
    ]


# -- damage and concurrency ----------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_replaced_by_a_new_index(root: Path, index: Path) -> None:
    write(index_path(index, root), b"this is no database " * 500)
    assert found(both(root, index, "needle")) == [("notes.md", 2)]
    assert _format(index_path(index, root)) == str(FORMAT)


def test_a_truncated_index_file_is_rebuilt(root: Path, index: Path) -> None:
    for i in range(200):
        write(root / f"bulk/{i}.md", f"line {i}\n" * 50)
    both(root, index, "needle")
    path = index_path(index, root)
    _checkpoint(path)
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 3)
    assert found(both(root, index, "needle")) == [("notes.md", 2)]
    assert found(both(root, index, "needle")) == [("notes.md", 2)]
    assert _format(path) == str(FORMAT)


def test_an_index_of_another_format_is_rebuilt_and_never_read(root: Path, index: Path) -> None:
    both(root, index, "needle")
    path = index_path(index, root)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'format'")
        conn.execute("UPDATE texts SET body = replace(body, 'Needle', 'Nxxdle')")
        conn.execute("UPDATE files SET crc = NULL")  # even a consistent-looking old file
    assert found(both(root, index, "needle")) == [("notes.md", 2)]
    assert _format(path) == str(FORMAT)


def test_a_stored_text_that_fails_its_checksum_is_not_used(root: Path, index: Path) -> None:
    both(root, index, "needle")
    path = index_path(index, root)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE texts SET body = replace(body, 'is here', 'is gone')")
    assert found(both(root, index, "here")) == [("notes.md", 2)]
    assert found(both(root, index, "here")) == [("notes.md", 2)]  # rebuilt meanwhile


_SEARCHER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from squad.workspace.search import search
    root, index, query = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    print(json.dumps([search(root, query, index_dir=index).to_dict() for _ in range(3)]))
    """
)


@pytest.mark.slow
def test_two_processes_searching_one_workspace_at_once_both_answer_right(
    root: Path, index: Path
) -> None:
    for i in range(300):
        write(root / f"bulk/{i % 7}/{i}.md", f"line {i}\n" * 40 + ("Needle\n" if i % 9 else ""))
    expected = search(root, "needle").to_dict()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SEARCHER, str(root), str(index), "needle"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out) == [expected] * 3
    assert _format(index_path(index, root)) == str(FORMAT)


def _format(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        (value,) = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    return str(value)


def _checkpoint(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


@pytest.mark.slow
def test_squad_ws_search_keeps_its_index_in_the_squad_home(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
        "SQUAD_HOME": str(tmp_path / "home"),
        "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
        "SQUAD_CONFIGS": str(tmp_path / "configs"),
    }
    squad = [str(Path(sys.executable).parent / "squad")]
    definition = next(p for p in EXAMPLES if p.stem == "docs-site")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*squad, *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    run("create", str(definition))
    workspace = tmp_path / "workspaces" / "docs-site"
    write(workspace / "tasks/notes.md", "first line\nThe Getting Started guide\n")
    first = json.loads(run("ws", "search", "docs-site", "getting started", "--json").stdout)
    assert [f["path"] for f in first["files"]] == ["tasks/notes.md"]
    assert index_path(tmp_path / "home" / "index", workspace).is_file()
    write(workspace / "tasks/notes.md", "first line\nnothing to see\n")
    again = json.loads(run("ws", "search", "docs-site", "getting started", "--json").stdout)
    assert again["files"] == []
    assert not list(workspace.rglob("*.sqlite3"))
