"""The "raw value is nowhere on disk" check finds a value wherever squad could leave one: in a
file, JSON-escaped, in a SQLite row still in the write-ahead log, in a compressed git object.
A check that could not fail would pass every leak test."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from squad.history.engine import git
from tests.support.leaks import assert_nowhere_on_disk, places_holding

VALUE = "Blu3Whale$2024"


def test_a_value_in_a_file_or_escaped_in_json_is_found(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "notes.md").write_text(f"the value {VALUE}")
    (tmp_path / "log.jsonl").write_text(json.dumps({"k": f"한 {VALUE}"}, ensure_ascii=True))
    (tmp_path / "clean.txt").write_text("nothing here")
    found = places_holding(VALUE, tmp_path)
    assert sorted(found) == sorted(
        [str(tmp_path / "a" / "b" / "notes.md"), str(tmp_path / "log.jsonl")]
    )
    with pytest.raises(AssertionError, match=r"notes\.md"):
        assert_nowhere_on_disk(VALUE, tmp_path)


def test_a_value_in_a_sqlite_row_is_found_while_still_in_the_write_ahead_log(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE t (id INTEGER, body BLOB)")
    connection.commit()
    connection.execute("INSERT INTO t VALUES (1, ?)", (f"x{VALUE}x".encode(),))
    connection.commit()
    try:
        found = places_holding(VALUE, tmp_path)
    finally:
        connection.close()
    assert f"{db} table t.body (1 rows)" in found


def test_a_value_in_a_git_object_is_found_though_it_is_compressed(tmp_path: Path) -> None:
    repository = git().init_repository(str(tmp_path / "ws"))
    repository.create_blob(f"the value {VALUE}\n".encode())
    found = places_holding(VALUE, tmp_path)
    assert len(found) == 1 and " object " in found[0]


def test_nothing_is_found_where_the_value_is_not(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("Blu3Whale$2023")
    assert_nowhere_on_disk(VALUE, tmp_path)
    with pytest.raises(AssertionError, match="nothing was searched"):
        assert_nowhere_on_disk(VALUE, tmp_path / "missing")
