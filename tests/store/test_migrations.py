"""Opening a database: URLs and engines, migrations to head, refusal of newer schemas, locking."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from squad.errors import StoreError
from squad.store import RunStatus, Store
from squad.store.engine import make_engine, parse_url
from squad.store.migrate import (
    MIGRATIONS,
    alembic_config,
    current_revisions,
    head_revisions,
    upgrade,
)
from squad.store.tables import metadata

SHA = "0" * 64
HEAD = "0012"
"""The newest shipped revision."""
NEXT = "0013"
"""The revision a newer squad would add."""

REBUILD_SQUADS = f"""
    import sqlalchemy as sa
    from alembic import op

    revision = "{NEXT}"
    down_revision = "{HEAD}"
    branch_labels = None
    depends_on = None


    def upgrade():
        # Changing nullability makes SQLite rebuild the table: copy, drop, rename.
        with op.batch_alter_table("squads") as batch:
            batch.add_column(sa.Column("description", sa.Text(), nullable=True))
            batch.alter_column("workspace", existing_type=sa.String(), nullable=True)


    def downgrade():
        pass
"""

BROKEN = f"""
    import sqlalchemy as sa
    from alembic import op

    revision = "{NEXT}"
    down_revision = "{HEAD}"
    branch_labels = None
    depends_on = None


    def upgrade():
        op.add_column("squads", sa.Column("description", sa.Text(), nullable=True))
        op.execute("UPDATE no_such_table SET x = 1")


    def downgrade():
        pass
"""


@contextlib.contextmanager
def _connect(url: str) -> Iterator[Connection]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            yield connection
    finally:
        engine.dispose()


def _migrations_plus(tmp_path: Path, source: str) -> Path:
    """A copy of the shipped migrations with one more revision, as a newer squad would have."""
    location = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, location, ignore=shutil.ignore_patterns("__pycache__"))
    (location / "versions" / f"{NEXT}_next.py").write_text(textwrap.dedent(source))
    return location


def _migrations_up_to(tmp_path: Path, revision: str) -> Path:
    """A copy of the shipped migrations without those after ``revision``, as an older squad had."""
    location = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, location, ignore=shutil.ignore_patterns("__pycache__"))
    for script in (location / "versions").glob("*.py"):
        if script.name.split("_", 1)[0] > revision:
            script.unlink()
    return location


def _upgrade_with(url: str, location: Path) -> None:
    engine = make_engine(url)
    try:
        upgrade(engine, script_location=location)
    finally:
        engine.dispose()


def _seed(url: str) -> str:
    with Store.open(url) as store:
        store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256=SHA)
        return store.create_run("docs").id


# migrations


def test_fresh_database_ends_at_head(empty_store_url: str) -> None:
    Store.open(empty_store_url).close()
    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == head_revisions() == {HEAD}
        tables = set(inspect(connection).get_table_names())
    assert {"squads", "runs", "alembic_version"} <= tables
    assert {"memory_namespaces", "memory_facts", "memory_terms", "memory_postings"} <= tables
    assert "memory_vectors" in tables
    assert "decisions" in tables
    assert {
        "conversation_messages",
        "message_counters",
        "extraction_watermarks",
        "run_tasks",
        "spend_ledger",
    } <= tables


def test_database_stamped_with_unknown_revision_is_refused(empty_store_url: str) -> None:
    Store.open(empty_store_url).close()
    with _connect(empty_store_url) as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'f00d'"))
        connection.commit()

    with pytest.raises(
        StoreError, match="database at revision f00d is newer than this squad; upgrade squad"
    ):
        Store.open(empty_store_url)


def test_database_migrated_by_a_newer_squad_is_refused_and_left_alone(
    empty_store_url: str, tmp_path: Path
) -> None:
    run_id = _seed(empty_store_url)
    _upgrade_with(empty_store_url, _migrations_plus(tmp_path, REBUILD_SQUADS))

    with pytest.raises(StoreError, match=f"revision {NEXT} is newer than this squad"):
        Store.open(empty_store_url)
    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {NEXT}
        assert connection.execute(text("SELECT id FROM runs")).scalars().all() == [run_id]


def test_tables_and_migrations_do_not_drift(empty_store_url: str) -> None:
    Store.open(empty_store_url).close()
    with _connect(empty_store_url) as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "compare_server_default": True}
        )
        assert compare_metadata(context, metadata) == []
        connection.rollback()
        # The same comparison through env.py, as `alembic check` would run it.
        command.check(alembic_config(connection))


def test_later_migration_rebuilding_squads_keeps_runs_and_foreign_keys(
    empty_store_url: str, tmp_path: Path
) -> None:
    run_id = _seed(empty_store_url)
    _upgrade_with(empty_store_url, _migrations_plus(tmp_path, REBUILD_SQUADS))

    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {NEXT}
        assert connection.execute(text("SELECT id FROM runs")).scalars().all() == [run_id]
        assert connection.execute(text("SELECT name FROM squads")).scalars().all() == ["docs"]
        connection.execute(text("DELETE FROM squads WHERE name = 'docs'"))
        assert connection.execute(text("SELECT count(*) FROM runs")).scalar() == 0, (
            "the rebuilt squads table lost its cascade"
        )
        connection.rollback()


def test_failed_migration_leaves_database_unchanged(empty_store_url: str, tmp_path: Path) -> None:
    run_id = _seed(empty_store_url)

    with pytest.raises(StoreError, match="no_such_table"):
        _upgrade_with(empty_store_url, _migrations_plus(tmp_path, BROKEN))

    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {HEAD}
        columns = {c["name"] for c in inspect(connection).get_columns("squads")}
        assert "description" not in columns
        assert connection.execute(text("SELECT id FROM runs")).scalars().all() == [run_id]


def test_upgrading_from_0001_to_head_keeps_squads_and_runs(
    empty_store_url: str, tmp_path: Path
) -> None:
    _upgrade_with(empty_store_url, _migrations_up_to(tmp_path, "0001"))
    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {"0001"}
        connection.execute(
            text(
                "INSERT INTO squads (name, workspace, source, definition_sha256, created_at, "
                "updated_at) VALUES ('docs', '/ws/docs', 'docs.yaml', :sha, :at, :at)"
            ),
            {"sha": SHA, "at": "2030-01-02 03:04:05"},
        )
        connection.execute(
            text(
                "INSERT INTO runs (id, squad, status, trigger, created_at, tokens_in) "
                "VALUES ('run-1', 'docs', 'succeeded', 'manual', :at, 42)"
            ),
            {"at": "2030-01-02 03:04:06"},
        )
        connection.commit()

    with Store.open(empty_store_url) as store:
        squads = store.list_squads()
        runs = store.list_runs()
        namespace = store.memory.ensure_namespace("profile:p1", "Agent Experience: Planner")
        store.memory.add_fact(namespace.id, "kept after the upgrade", squad="docs", agent="a")

    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {HEAD}
    assert [(s.name, s.workspace, s.source) for s in squads] == [("docs", "/ws/docs", "docs.yaml")]
    assert [(r.id, r.squad, r.status, r.tokens_in) for r in runs] == [
        ("run-1", "docs", RunStatus.SUCCEEDED, 42)
    ]


def test_upgrading_from_0002_keeps_facts_and_their_index_and_adds_vectors(
    empty_store_url: str, tmp_path: Path
) -> None:
    _upgrade_with(empty_store_url, _migrations_up_to(tmp_path, "0002"))
    engine = make_engine(empty_store_url)
    try:  # a squad of revision 0002 wrote these facts
        old = Store(engine).memory
        namespace = old.ensure_namespace("profile:p1", "Agent Experience: Planner")
        kept = old.add_fact(
            namespace.id, "zebra crossings need a second look", squad="d", agent="a"
        )
        other = old.add_fact(namespace.id, "the logo is blue", squad="d", agent="a")
        with engine.connect() as connection:
            assert current_revisions(connection) == {"0002"}
            assert "memory_vectors" not in inspect(connection).get_table_names()
    finally:
        engine.dispose()

    with Store.open(empty_store_url) as store:
        assert [f.id for f in store.memory.relevant_facts(namespace.id, "zebra")] == [
            kept.id,
            other.id,
        ]
        assert store.memory.get_fact(kept.id) == kept
        missing = store.memory.facts_missing_vectors(namespace.id, "m")
        assert [f.id for f in missing] == [other.id, kept.id]
        assert store.memory.set_vectors([(kept.id, "m", b"\x00\x00\x80\x3f", 1)]) == 1
        assert store.memory.vectors([kept.id, other.id], "m") == {kept.id: b"\x00\x00\x80\x3f"}

    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {HEAD}


def test_upgrading_from_0003_keeps_squads_runs_and_facts_and_adds_the_runtime_tables(
    empty_store_url: str, tmp_path: Path
) -> None:
    _upgrade_with(empty_store_url, _migrations_up_to(tmp_path, "0003"))
    engine = make_engine(empty_store_url)
    try:  # a squad of revision 0003 wrote these (its runs table has no goal, model, summary)
        with engine.begin() as connection:
            assert current_revisions(connection) == {"0003"}
            connection.execute(
                text(
                    "INSERT INTO squads (name, workspace, source, definition_sha256, created_at, "
                    "updated_at) VALUES ('docs', '/ws/docs', 'docs.yaml', :sha, :at, :at)"
                ),
                {"sha": SHA, "at": "2030-01-02 03:04:05"},
            )
            for run_id, status in [("run-1", "succeeded"), ("run-2", "running")]:
                connection.execute(
                    text(
                        "INSERT INTO runs (id, squad, status, trigger, created_at, tokens_in, "
                        "cost_usd) VALUES (:id, 'docs', :status, 'manual', :at, 42, 0.5)"
                    ),
                    {"id": run_id, "status": status, "at": f"2030-01-02 03:04:0{run_id[-1]}"},
                )
        memory = Store(engine).memory
        namespace = memory.ensure_namespace("profile:p1", "Agent Experience: Planner")
        fact = memory.add_fact(
            namespace.id, "zebra crossings need a second look", squad="docs", agent="a"
        )
    finally:
        engine.dispose()

    with Store.open(empty_store_url) as store:
        runs = {run.id: run for run in store.list_runs()}
        assert [s.name for s in store.list_squads()] == ["docs"]
        assert store.memory.get_fact(fact.id) == fact
        assert [f.id for f in store.memory.relevant_facts(namespace.id, "zebra")] == [fact.id]
        assert [r.id for r in store.interrupted_runs()] == ["run-2"]
        # The old runs take the new columns (NULL) and the new tables at once.
        task = store.run_state.set_task("run-2", "t1", squad="docs", agent="a", status="running")
        message = store.conversation.record_message("docs", "a", "user", "hello", run_id="run-2")
        store.spend.record("docs", model="m", cost_usd=0.25, run_id="run-2")

    assert {(r.id, r.status, r.tokens_in, r.cost_usd) for r in runs.values()} == {
        ("run-1", RunStatus.SUCCEEDED, 42, 0.5),
        ("run-2", RunStatus.RUNNING, 42, 0.5),
    }
    assert {(r.goal, r.model, r.summary) for r in runs.values()} == {(None, None, None)}
    assert (task.run_id, message.seq) == ("run-2", 1)
    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {HEAD}


def test_upgrading_from_0005_redacts_credentials_already_in_conversation_history(
    empty_store_url: str, tmp_path: Path
) -> None:
    _upgrade_with(empty_store_url, _migrations_up_to(tmp_path, "0005"))
    engine = make_engine(empty_store_url)
    said = [
        ("chat", "user", "deploy with key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12"),
        ("chat", "assistant", "Noted. What is the database password?"),
        ("chat", "user", "hunter2x9"),
        ("chat", "assistant", "Thanks, the password field needs 12 characters though."),
        ("other", "user", "hunter2x9"),  # another session: no question before it
    ]
    try:  # a squad of revision 0005 stored these verbatim
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO squads (name, workspace, source, definition_sha256, created_at, "
                    "updated_at) VALUES ('docs', '/ws/docs', 'docs.yaml', :sha, :at, :at)"
                ),
                {"sha": SHA, "at": "2030-01-02 03:04:05"},
            )
            for seq, (session, role, content) in enumerate(said, start=1):
                connection.execute(
                    text(
                        "INSERT INTO conversation_messages (message_id, squad, agent, "
                        "session_id, role, content, created_at, seq, turn) VALUES (:mid, "
                        "'docs', 'writer', :session, :role, :content, :at, :seq, 1)"
                    ),
                    {
                        "mid": f"m{seq}",
                        "session": session,
                        "role": role,
                        "content": content,
                        "at": "2030-01-02 03:04:05",
                        "seq": seq,
                    },
                )
    finally:
        engine.dispose()

    with Store.open(empty_store_url) as store:
        stored = [m.content for m in store.conversation.messages("docs", "writer")]

    assert "sk-proj-" not in stored[0] and "[REDACTED:" in stored[0]
    assert stored[1] == said[1][2] and stored[3] == said[3][2]  # nothing else changed
    assert "hunter2x9" not in stored[2] and "[REDACTED:" in stored[2]
    assert stored[4] == "hunter2x9"  # a bare word with no cue before it stays


def test_pooled_connection_has_foreign_keys_back_on_after_migrating() -> None:
    # In-memory SQLite keeps one connection: the very one that migrated with foreign keys off.
    with Store.open("sqlite://") as store, pytest.raises(StoreError, match="no squad named"):
        store.create_run("ghost")


CONCURRENT_OPEN = """
import sys, time
from pathlib import Path
from squad.store import Store

url, folder, name = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
(folder / f"ready-{name}").touch()
while not (folder / "go").exists():
    time.sleep(0.001)
with Store.open(url) as store:
    store.upsert_squad(name, workspace="/w", source=None, definition_sha256="0" * 64)
"""


@pytest.mark.slow
def test_processes_opening_a_new_sqlite_file_at_once_all_succeed(tmp_path: Path) -> None:
    db = tmp_path / "state" / "squad.db"
    url = f"sqlite:///{db}"
    names = [f"squad{i}" for i in range(4)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_OPEN, url, str(tmp_path), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready-{n}").exists() for n in names):
            assert time.monotonic() < deadline, "the child processes never got ready"
            time.sleep(0.01)
        (tmp_path / "go").touch()
        outcomes = [p.communicate(timeout=60) for p in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()

    assert [p.returncode for p in processes] == [0] * len(names), outcomes
    with contextlib.closing(sqlite3.connect(db)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        assert sorted(r[0] for r in connection.execute("SELECT name FROM squads")) == names


# engines and URLs


def test_sqlite_gets_its_folder_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    db = tmp_path / "not" / "yet" / "there.db"
    Store.open(f"sqlite:///{db}").close()
    assert db.is_file()
    with _connect(f"sqlite:///{db}") as connection:
        values = [
            connection.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "busy_timeout", "foreign_keys")
        ]
    assert values == ["wal", 5000, 1]


@pytest.mark.parametrize("url", ["postgres://u@h/db", "postgresql://u@h/db"])
def test_bare_postgres_urls_get_the_psycopg_driver(url: str) -> None:
    assert parse_url(url).drivername == "postgresql+psycopg"


def test_explicit_driver_is_kept() -> None:
    assert parse_url("postgresql+psycopg2://u@h/db").drivername == "postgresql+psycopg2"


def test_unreachable_database_error_names_url_without_password() -> None:
    url = "postgresql://squad:s3cret@127.0.0.1:1/state?connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        Store.open(url)
    message = str(caught.value)
    assert "s3cret" not in message
    assert "squad:***@127.0.0.1:1/state" in message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("not a url", "invalid database URL 'not a url'"),
        (
            "nosuchdb://user:pw@host/db",
            "cannot use database URL 'nosuchdb://user:\\*\\*\\*@host/db'",
        ),
    ],
)
def test_bad_url_is_a_store_error(url: str, expected: str) -> None:
    with pytest.raises(StoreError, match=expected):
        Store.open(url)


def test_in_memory_sqlite_is_one_shared_database() -> None:
    with Store.open("sqlite://") as store:
        store.upsert_squad("docs", workspace="/w", source=None, definition_sha256=SHA)
        run = store.update_run(store.create_run("docs").id, status=RunStatus.RUNNING)
        assert store.list_runs() == [run]


def test_upgrading_from_0008_indexes_facts_by_stem_and_gives_messages_an_author(
    empty_store_url: str, tmp_path: Path
) -> None:
    _upgrade_with(empty_store_url, _migrations_up_to(tmp_path, "0008"))
    engine = make_engine(empty_store_url)
    try:  # facts indexed the way revision 0008's squad did: whole words, no stems
        old = Store(engine).memory
        namespace = old.ensure_namespace("profile:p1", "Agent Experience: Planner")
        painted = old.add_fact(namespace.id, "Caroline painted a sunrise", squad="d", agent="a")
        old.add_fact(namespace.id, "the logo is blue", squad="d", agent="a")
        with engine.begin() as connection:
            for table in ("memory_postings", "memory_terms"):
                connection.execute(
                    text(f"UPDATE {table} SET term = 'painted' WHERE term = 'paint'")
                )
            connection.execute(
                text("UPDATE memory_postings SET term = 'sunrise' WHERE term = 'sunris'")
            )
            connection.execute(
                text("UPDATE memory_terms SET term = 'sunrise' WHERE term = 'sunris'")
            )
            columns = {c["name"] for c in inspect(connection).get_columns("conversation_messages")}
            assert "author" not in columns
    finally:
        engine.dispose()

    with Store.open(empty_store_url) as store:
        hits = store.memory.scored_facts(namespace.id, "what did she paint?")
        assert [f.id for f, _ in hits] == [painted.id]
        record = store.conversation.record_message("d", "a", "user", "hello", author="Caroline")
        assert store.conversation.messages_at("d", "a", [record.seq])[0].author == "Caroline"
    with _connect(empty_store_url) as connection:
        assert current_revisions(connection) == {HEAD}
        postings = connection.execute(text("SELECT count(*) FROM memory_postings")).scalar()
        assert postings == 5  # caroline, paint, sunris; logo, blue


def test_the_shipped_heads_read_from_the_scripts_are_alembics() -> None:
    from squad.store.migrate import shipped_heads

    assert shipped_heads() == head_revisions() == frozenset({HEAD})


@pytest.mark.slow
def test_opening_a_database_already_at_head_does_not_import_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'squad.db'}"
    Store.open(url).close()
    probe = (
        "import sys\n"
        "from squad.store import Store\n"
        f"Store.open({url!r}).close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


ALEMBIC_IMPORTED_UNDER_A_CLOSED_STREAM = """
import io, sys
captured = io.StringIO()
real, sys.stdout = sys.stdout, captured
import alembic.config  # its Config's default stdout is this stream from now on
sys.stdout = real
captured.close()
from squad.store.migrate import alembic_config
alembic_config().print_stdout("No new upgrade operations detected.")
print("ok")
"""


@pytest.mark.slow
def test_alembic_messages_survive_a_stdout_closed_since_alembic_was_imported() -> None:
    # A test's output capture or a redirected CLI closes the stream alembic bound at import;
    # alembic's chatter must neither crash on it nor reach squad's own stdout.
    done = subprocess.run(
        [sys.executable, "-c", ALEMBIC_IMPORTED_UNDER_A_CLOSED_STREAM],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
