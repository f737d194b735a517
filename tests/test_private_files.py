"""What squad keeps in its home (chat history, facts, run state) is readable by its user only:
a home squad creates is 0700, its databases and their WAL and shared-memory files are 0600, as
the API token is. Checked with real files under the umask most systems use (022)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from squad.checkpoints.sqlite import SqliteCheckpoints
from squad.store import Store


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_and_its_state_database_with_wal_and_shm_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = Store.open(f"sqlite:///{home / 'squad.db'}")
    try:
        with store._engine.begin() as conn:  # a write: the WAL and its index exist while open
            conn.execute(text("CREATE TABLE probe (x INTEGER)"))
        companions = [home / "squad.db-wal", home / "squad.db-shm"]
        assert all(p.exists() for p in companions)
        assert mode(home) == 0o700
        assert {p.name: mode(p) for p in [home / "squad.db", *companions]} == {
            "squad.db": 0o600,
            "squad.db-wal": 0o600,
            "squad.db-shm": 0o600,
        }
    finally:
        store.close()


def test_a_new_checkpoint_file_with_wal_and_shm_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    checkpoints = SqliteCheckpoints(home / "checkpoints.sqlite")
    try:
        checkpoints.setup()
        with checkpoints.saver() as saver:
            saver.conn.execute("CREATE TABLE probe (x INTEGER)")  # type: ignore[attr-defined]
            saver.conn.commit()  # type: ignore[attr-defined]
            files = sorted(home.glob("checkpoints.sqlite*"))
            assert [f.name for f in files] == [
                "checkpoints.sqlite",
                "checkpoints.sqlite-shm",
                "checkpoints.sqlite-wal",
            ]
            assert {f.name: mode(f) for f in files} == dict.fromkeys((f.name for f in files), 0o600)
        assert mode(home) == 0o700
    finally:
        checkpoints.close()


def test_databases_an_older_squad_left_readable_by_others_are_tightened_on_open(
    tmp_path: Path,
) -> None:
    """Made 0644 by an earlier version: opening them again makes them 0600. The home itself is
    left as its owner set it (it may be shared on purpose); what is in it is private."""
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    Store.open(f"sqlite:///{home / 'squad.db'}").close()
    SqliteCheckpoints(home / "checkpoints.sqlite").setup()
    for name in ("squad.db", "checkpoints.sqlite"):
        (home / name).chmod(0o644)
        (home / f"{name}-wal").write_bytes(b"")
        (home / f"{name}-wal").chmod(0o644)
    home.chmod(0o755)
    store = Store.open(f"sqlite:///{home / 'squad.db'}")
    checkpoints = SqliteCheckpoints(home / "checkpoints.sqlite")
    try:
        with checkpoints.saver() as saver:  # open: SQLite removes the WAL at the last close
            saver.conn.execute("SELECT count(*) FROM sqlite_master")  # type: ignore[attr-defined]
            for name in (
                "squad.db",
                "squad.db-wal",
                "checkpoints.sqlite",
                "checkpoints.sqlite-wal",
            ):
                assert mode(home / name) == 0o600, name
    finally:
        checkpoints.close()
        store.close()
    assert mode(home) == 0o755


def test_a_home_made_first_by_the_token_the_default_soul_or_a_lock_is_private(
    tmp_path: Path,
) -> None:
    from squad.flock import acquire
    from squad.memory.boot import ensure_default_soul
    from squad.web.tokens import load_or_create_token

    load_or_create_token(tmp_path / "a" / "home")
    ensure_default_soul(tmp_path / "b" / "home")
    acquire(tmp_path / "c" / "home" / "locks" / "squad.lock", "test").release()
    for made in ("a", "b", "c"):
        assert mode(tmp_path / made / "home") == 0o700, made
        assert mode(tmp_path / made) == 0o700, made  # a missing folder above it too
    assert mode(tmp_path / "a" / "home" / "api-token") == 0o600
