"""The reading commands' sqlite3 path gives the full store's answers on the same database,
hands on what it does not answer, and is not used where only the full store can answer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from squad.clock import FrozenClock
from squad.errors import UsageError
from squad.store import FactStatus, Store
from squad.store.sqlite_reader import StoreReader, open_reader, sqlite_path

from .conftest import START

PLANNER = ("profile:planner-v1", "Agent Experience: Planner")
WRITER = ("squad:docs/writer", "Agent Experience: Writer")


@pytest.fixture
def sqlite_url(tmp_path: Path, sqlite_template: Path) -> str:
    from tests.support.databases import copy_sqlite

    path = tmp_path / "state" / "squad.db"
    copy_sqlite(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.fixture
def full(sqlite_url: str, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(sqlite_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def reader(sqlite_url: str, clock: FrozenClock, full: Store) -> Iterator[StoreReader]:
    opened = open_reader(sqlite_url, clock=clock, full=lambda: full)
    assert opened is not None
    yield opened
    opened.close()


def _memories(store: Store, clock: FrozenClock) -> tuple[int, int]:
    """Two namespaces (one enabled) holding live, expired, forgotten and superseded facts
    written at different times; their ids."""
    planner = store.memory.ensure_namespace(*PLANNER)
    writer = store.memory.ensure_namespace(*WRITER)
    store.memory.set_namespace_enabled(writer.id, True)
    for i in range(5):
        clock.advance(1.000007)
        store.memory.add_fact(
            planner.id, f"fact {i} about deploys", squad="docs", agent="planner", turns=[i, i + 1]
        )
    store.memory.add_fact(
        planner.id,
        "a fact that expires",
        squad="docs",
        agent="planner",
        transient=True,
        expires_at=START + timedelta(seconds=30),
    )
    forgotten = store.memory.add_fact(planner.id, "a fact forgotten", squad="docs", agent="x")
    store.memory.forget(forgotten.id)
    old = store.memory.add_fact(writer.id, "the writer's old fact", squad="docs", agent="w")
    new = store.memory.add_fact(writer.id, "the writer's new fact", squad="docs", agent="w")
    store.memory.supersede(old.id, new.id)
    return planner.id, writer.id


def test_the_reader_answers_as_the_full_store_on_the_same_database(
    full: Store, reader: StoreReader, clock: FrozenClock
) -> None:
    planner, writer = _memories(full, clock)
    for moment in (clock(), START + timedelta(minutes=5)):  # before and after the expiry
        clock.now = moment
        for namespace in (planner, writer):
            for limit in (1, 3, 200):
                expected = full.memory.relevant_facts(namespace, "", limit=limit)
                assert reader.memory.relevant_facts(namespace, "", limit=limit) == expected
        assert reader.memory.enabled_namespaces() == full.memory.enabled_namespaces()
        for identity, name in (PLANNER, WRITER):
            assert reader.memory.ensure_namespace(identity, name) == (
                full.memory.ensure_namespace(identity, name)
            )
    expired = full.memory.relevant_facts(planner, "", limit=200)
    assert "a fact that expires" not in [fact.text for fact in expired]
    assert {fact.status for fact in expired} == {FactStatus.ACTIVE}


def test_what_the_reader_does_not_answer_goes_to_the_full_store(
    full: Store, reader: StoreReader, clock: FrozenClock
) -> None:
    planner, _ = _memories(full, clock)
    ranked = reader.memory.relevant_facts(planner, "expires", limit=2)
    assert ranked == full.memory.relevant_facts(planner, "expires", limit=2)
    assert ranked[0].text == "a fact that expires"
    created = reader.memory.ensure_namespace("profile:new", "Agent Experience: New")
    assert full.memory.get_namespace("profile:new") == created
    renamed = reader.memory.ensure_namespace(PLANNER[0], "Agent Experience: Planner 2")
    assert renamed.name == "Agent Experience: Planner 2" and renamed.id == planner
    assert reader.list_squads() == full.list_squads()  # the store's other reads


def test_the_reader_refuses_what_the_full_store_refuses(full: Store, reader: StoreReader) -> None:
    for store in (full, reader):
        with pytest.raises(UsageError, match="no memory namespace with id 999"):
            store.memory.relevant_facts(999, "")
        with pytest.raises(UsageError, match="identity '42' is invalid"):
            store.memory.ensure_namespace("42", "A name")
        with pytest.raises(UsageError, match="non-empty name"):
            store.memory.ensure_namespace("profile:x", " ")
        with pytest.raises(ValueError, match="limit must be at least 1"):
            store.memory.relevant_facts(1, "", limit=0)


def test_only_a_current_sqlite_file_gets_a_reader(
    sqlite_url: str, tmp_path: Path, clock: FrozenClock
) -> None:
    def unused() -> Store:
        raise AssertionError("the full store was opened")

    path = sqlite_path(sqlite_url)
    assert path is not None and path.is_file()
    for url in (
        "postgresql://user@host/db",
        "sqlite://",
        "sqlite:///:memory:",
        f"sqlite:///{path}?mode=ro",
        f"sqlite:///{tmp_path / 'missing.db'}",
    ):
        assert open_reader(url, clock=clock, full=unused) is None, url
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'an-older-one'")
    conn.close()
    assert open_reader(sqlite_url, clock=clock, full=unused) is None
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE alembic_version")
    conn.close()
    assert open_reader(sqlite_url, clock=clock, full=unused) is None


def _runs(store: Store, clock: FrozenClock) -> list[str]:
    """Three squads (one with a definition, one with no run), runs in every resumable state
    and ended ones (two sharing an instant), tasks, spend, a heartbeat and a backlog; the
    run ids."""
    from squad.store import MessageRole, RunStatus, TaskStatus

    store.upsert_squad(
        "alpha",
        workspace="/w/alpha",
        source="/c/a.yaml",
        definition_sha256="1",
        definition={"name": "alpha", "tasks": [{"id": "t"}]},
    )
    for name in ("beta", "gamma"):
        store.upsert_squad(name, workspace=f"/w/{name}", source=None, definition_sha256="0")
    ids = []
    statuses = [
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.RUNNING,
        RunStatus.AWAITING_APPROVAL,
        RunStatus.INTERRUPTED,
        RunStatus.PENDING,
        RunStatus.STOPPED,
    ]
    for i, status in enumerate(statuses):
        clock.advance(0 if i == 3 else 1.5)  # two runs share an instant
        run = store.create_run(("alpha", "beta")[i % 2], trigger="schedule", goal=f"goal {i}")
        store.update_run(run.id, status=RunStatus.RUNNING)
        if status is not RunStatus.RUNNING:
            store.update_run(run.id, status=status, error="boom" if i == 1 else None)
        store.run_state.set_task(
            run.id, "draft", squad="alpha", agent="writer", status=TaskStatus.DONE
        )
        store.run_state.set_task(
            run.id,
            "review",
            squad="alpha",
            agent="reviewer",
            status=TaskStatus.AWAITING_APPROVAL,
            output="ok",
        )
        store.spend.record(
            "alpha",
            model="m",
            prompt_tokens=i,
            completion_tokens=2 * i,
            cost_usd=0.25 * i,
            run_id=run.id,
        )
        ids.append(run.id)
    store.daemon.beat("/home", pid=42, host="h", started_at=clock(), state={"phase": "running"})
    for squad, agent, count in (("docs", "writer", 3), ("code", "dev", 1)):
        for _ in range(count):
            store.conversation.record_message(squad, agent, MessageRole.USER, "hi")
    store.conversation.finish_extraction("docs", "writer", 1)
    return ids


def test_the_reader_answers_squad_status_as_the_full_store(
    full: Store, reader: StoreReader, clock: FrozenClock
) -> None:
    ids = _runs(full, clock)
    assert reader.list_squads() == full.list_squads()
    assert reader.latest_runs() == full.latest_runs()
    assert list(reader.latest_runs()) and reader.latest_runs()["alpha"].squad == "alpha"
    for squad in (None, "alpha", "beta", "gamma"):
        assert reader.interrupted_runs(squad) == full.interrupted_runs(squad)
    for run_id in (*ids, "no-such-run"):
        assert reader.run_state.tasks(run_id) == full.run_state.tasks(run_id)
    for wanted in (ids, ids[:2], [], ["no-such-run"]):
        assert reader.spend.of_runs(wanted) == full.spend.of_runs(wanted)
    for home in ("/home", "/elsewhere"):
        assert reader.daemon.get(home) == full.daemon.get(home)
    backlog = reader.conversation.extraction_backlog()
    assert (
        backlog
        == full.conversation.extraction_backlog()
        == [
            ("code", "dev", 1),
            ("docs", "writer", 2),
        ]
    )


def test_the_newest_run_of_a_squad_whose_runs_share_an_instant_is_the_store_s(
    full: Store, reader: StoreReader, clock: FrozenClock
) -> None:
    full.upsert_squad("alpha", workspace="/w/alpha", source=None, definition_sha256="0")
    full.upsert_squad("beta", workspace="/w/beta", source=None, definition_sha256="0")
    made = [full.create_run("alpha") for _ in range(4)]  # one instant: the highest id wins
    clock.advance(1)
    full.create_run("beta")
    latest = reader.latest_runs()
    assert latest == full.latest_runs()
    assert latest["alpha"].id == max(run.id for run in made)
    assert sorted(latest) == ["alpha", "beta"]
