"""The store's contract; every test runs against SQLite and (when reachable) Postgres."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from squad.clock import FrozenClock
from squad.errors import StoreError
from squad.settings import Settings
from squad.store import RunStatus, Store, open_store
from squad.store.engine import make_engine

from .conftest import START

SHA_A = "a" * 64
SHA_B = "b" * 64


def _squad(store: Store, name: str = "docs", sha: str = SHA_A) -> None:
    store.upsert_squad(name, workspace=f"/ws/{name}", source=f"{name}.yaml", definition_sha256=sha)


def test_upsert_keeps_created_at_and_bumps_updated_at_only_on_change(
    store: Store, clock: FrozenClock
) -> None:
    created = store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256=SHA_A)
    clock.advance()
    unchanged = store.upsert_squad(
        "docs", workspace="/ws/docs", source=None, definition_sha256=SHA_A
    )
    clock.advance()
    changed = store.upsert_squad(
        "docs", workspace="/ws/docs", source="d.yaml", definition_sha256=SHA_B
    )

    assert unchanged == created
    assert changed.created_at == created.created_at == START
    assert changed.updated_at == START + timedelta(seconds=2)
    assert (changed.source, changed.definition_sha256) == ("d.yaml", SHA_B)
    assert store.get_squad("docs") == changed


def test_get_squad_of_unknown_name_is_none(store: Store) -> None:
    assert store.get_squad("nobody") is None


def test_list_squads_is_sorted_by_name(store: Store) -> None:
    for name in ["mid", "zeta", "alpha"]:
        _squad(store, name)
    assert [s.name for s in store.list_squads()] == ["alpha", "mid", "zeta"]


def test_frozen_clock_gives_exact_utc_timestamps(store_url: str) -> None:
    plus_two = timezone(timedelta(hours=2))
    local = datetime(2031, 6, 7, 10, 11, 12, 123456, tzinfo=plus_two)
    with Store.open(store_url, clock=lambda: local) as store:
        squad_record = store.upsert_squad(
            "docs", workspace="/w", source=None, definition_sha256=SHA_A
        )
        run = store.create_run("docs")
        read_back = store.get_run(run.id)

    expected = datetime(2031, 6, 7, 8, 11, 12, 123456, tzinfo=UTC)
    assert read_back is not None
    for stamp in (squad_record.created_at, run.created_at, read_back.created_at):
        assert stamp == expected
        assert stamp.tzinfo is UTC


def test_naive_clock_is_refused(store_url: str) -> None:
    with (
        Store.open(store_url, clock=lambda: datetime(2030, 1, 1)) as store,
        pytest.raises(ValueError, match="timezone-aware"),
    ):
        _squad(store)


def test_run_lifecycle_stamps_start_once_and_end_on_terminal_status(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store)
    run = store.create_run("docs", trigger="schedule")
    assert (run.status, run.trigger, run.created_at) == (RunStatus.PENDING, "schedule", START)
    assert (run.started_at, run.ended_at, run.tokens_in, run.cost_usd) == (None, None, 0, 0.0)

    started = clock.advance()
    store.update_run(run.id, status=RunStatus.RUNNING)
    clock.advance()
    paused = store.update_run(run.id, status=RunStatus.AWAITING_APPROVAL)
    clock.advance()
    resumed = store.update_run(run.id, status=RunStatus.RUNNING)
    ended = clock.advance()
    done = store.update_run(
        run.id, status=RunStatus.FAILED, error="boom", tokens_in=10, tokens_out=3, cost_usd=0.25
    )

    assert paused.ended_at is None
    assert resumed.started_at == started
    assert (done.status, done.started_at, done.ended_at) == (RunStatus.FAILED, started, ended)
    assert (done.error, done.tokens_in, done.tokens_out, done.cost_usd) == ("boom", 10, 3, 0.25)
    assert store.get_run(run.id) == done


@pytest.mark.parametrize("status", [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.STOPPED])
def test_every_terminal_status_sets_ended_at(store: Store, status: RunStatus) -> None:
    _squad(store)
    run = store.create_run("docs")
    assert store.update_run(run.id, status=status).ended_at == START


@pytest.mark.parametrize("status", [RunStatus.INTERRUPTED, RunStatus.AWAITING_APPROVAL])
def test_non_terminal_status_leaves_ended_at_unset(store: Store, status: RunStatus) -> None:
    _squad(store)
    run = store.create_run("docs")
    assert store.update_run(run.id, status=status).ended_at is None


def test_update_without_fields_returns_the_run_unchanged(store: Store) -> None:
    _squad(store)
    run = store.create_run("docs")
    assert store.update_run(run.id) == run


def test_update_of_unknown_run_raises_store_error(store: Store) -> None:
    with pytest.raises(StoreError, match="no run with id 'missing'"):
        store.update_run("missing", status=RunStatus.RUNNING)
    assert store.get_run("missing") is None


def test_run_for_unknown_squad_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="no squad named 'ghost'"):
        store.create_run("ghost")
    assert store.list_runs() == []


def test_foreign_key_is_enforced_by_the_database_itself(store_url: str) -> None:
    Store.open(store_url).close()
    engine = make_engine(store_url)
    try:
        with engine.begin() as connection, pytest.raises(IntegrityError):
            connection.execute(
                text(
                    "INSERT INTO runs (id, squad, status, trigger, created_at) "
                    "VALUES ('r1', 'ghost', 'pending', 'manual', CURRENT_TIMESTAMP)"
                )
            )
    finally:
        engine.dispose()


def test_deleting_a_squad_deletes_its_runs(store: Store) -> None:
    _squad(store, "docs")
    _squad(store, "other")
    doomed = store.create_run("docs")
    kept = store.create_run("other")

    assert store.delete_squad("docs") is True
    assert store.get_squad("docs") is None
    assert store.get_run(doomed.id) is None
    assert store.list_runs() == [kept]


def test_deleting_an_unknown_squad_returns_false(store: Store) -> None:
    assert store.delete_squad("nobody") is False


def test_list_runs_is_newest_first_with_limit_and_squad_filter(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store, "docs")
    _squad(store, "other")
    ids = []
    for squad_name in ["docs", "other", "docs", "docs", "other"]:
        clock.advance()
        ids.append((squad_name, store.create_run(squad_name).id))

    newest_first = [run_id for _, run_id in reversed(ids)]
    assert [r.id for r in store.list_runs()] == newest_first
    assert [r.id for r in store.list_runs(limit=2)] == newest_first[:2]
    docs = [run_id for name, run_id in reversed(ids) if name == "docs"]
    assert [r.id for r in store.list_runs("docs")] == docs
    assert [r.id for r in store.list_runs("docs", limit=1)] == docs[:1]
    with pytest.raises(ValueError, match="limit"):
        store.list_runs(limit=0)


def test_ids_come_from_the_injected_factory(store_url: str) -> None:
    ids = iter(["run-1", "run-2"])
    with Store.open(store_url, new_id=lambda: next(ids)) as store:
        _squad(store)
        assert [store.create_run("docs").id, store.create_run("docs").id] == ["run-1", "run-2"]


def test_data_survives_close_and_reopen(store_url: str, clock: FrozenClock) -> None:
    with Store.open(store_url, clock=clock) as store:
        _squad(store)
        run = store.update_run(store.create_run("docs").id, status=RunStatus.RUNNING, tokens_in=7)
        squads = store.list_squads()

    with Store.open(store_url, clock=clock) as reopened:
        assert reopened.list_squads() == squads
        assert reopened.get_run(run.id) == run


def test_reopening_an_up_to_date_database_writes_nothing(store_url: str) -> None:
    Store.open(store_url).close()
    statements: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        Store.open(store_url).close()
    finally:
        event.remove(Engine, "before_cursor_execute", record)

    verbs = {s.split(None, 1)[0].upper() for s in statements}
    assert statements, "the version check should have run"
    assert verbs.isdisjoint({"CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE", "BEGIN"})
    assert not any("advisory" in s for s in statements), "took the migration lock needlessly"


def test_store_is_usable_from_other_threads(store: Store) -> None:
    _squad(store)
    errors: list[BaseException] = []

    def create() -> None:
        try:
            store.create_run("docs")
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list_runs()) == 4


def test_open_store_uses_the_settings_database_url(store_url: str, tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path, workspaces=tmp_path, configs=tmp_path, database_url=store_url
    )
    with open_store(settings) as store:
        _squad(store)
    with Store.open(store_url) as store:
        assert [s.name for s in store.list_squads()] == ["docs"]


def test_concurrent_upserts_of_one_new_squad_all_succeed(store: Store) -> None:
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def upsert() -> None:
        barrier.wait()
        try:
            _squad(store, "raced")
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=upsert) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [s.name for s in store.list_squads()] == ["raced"]
