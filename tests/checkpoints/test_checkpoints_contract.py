"""The checkpoint seam's contract, run over every backend: SQLite beside the store and the
Postgres store's own database (as langgraph's ``checkpoint-conformance`` runs over savers).

What squad relies on: a durably checkpointed graph resumes where it stopped without redoing a
finished step; an interrupt waits and a resume command continues it; concurrent runs
checkpoint side by side; tables are made once, however many set up at once; and retention can
list threads, read their last write and delete whole threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict

import pytest

from squad.checkpoints import Checkpoints, LeftBehind, left_behind, open_checkpoints
from squad.checkpoints.postgres import PostgresCheckpoints
from squad.checkpoints.sqlite import SqliteCheckpoints
from squad.errors import StoreError
from squad.settings import Settings


class State(TypedDict, total=False):
    done: list[str]


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """(kind, a factory of fresh Checkpoints over one and the same database)."""
    made: list[Checkpoints] = []
    if request.param == "sqlite":
        path = tmp_path / "home" / "checkpoints.sqlite"

        def fresh() -> Checkpoints:
            made.append(SqliteCheckpoints(path))
            return made[-1]
    else:
        url = request.getfixturevalue("fresh_schema")

        def fresh() -> Checkpoints:
            made.append(PostgresCheckpoints(url))
            return made[-1]

    yield request.param, fresh
    for checkpoints in made:
        checkpoints.close()


@pytest.fixture
def checkpoints(backend: tuple[str, Any]) -> Checkpoints:
    return backend[1]()  # type: ignore[no-any-return]


def _two_steps(checkpoints: Checkpoints, effects: list[str], *, fail_second: bool) -> Any:
    """A graph of two steps; each records a side effect; the second may fail."""
    from langgraph.graph import END, START, StateGraph

    def first(state: State) -> State:
        effects.append("first")
        return {"done": [*state.get("done", []), "first"]}

    def second(state: State) -> State:
        if fail_second:
            raise RuntimeError("killed mid-step")
        effects.append("second")
        return {"done": [*state.get("done", []), "second"]}

    graph = StateGraph(State)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    return graph


def test_a_new_database_has_no_threads_and_reading_it_creates_nothing(
    backend: tuple[str, Any], tmp_path: Path
) -> None:
    kind, fresh = backend
    checkpoints = fresh()
    assert checkpoints.threads() == []
    assert checkpoints.last_written(["r1"]) == {}
    assert checkpoints.delete(["r1"]) == []
    if kind == "sqlite":
        assert not (tmp_path / "home").exists()


def test_a_durable_run_resumes_after_its_failed_step_without_redoing_the_finished_one(
    backend: tuple[str, Any],
) -> None:
    _, fresh = backend
    effects: list[str] = []
    with fresh().saver() as saver:
        app = _two_steps(fresh(), effects, fail_second=True).compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="killed mid-step"):
            app.invoke({"done": []}, _config("r1"), durability="sync")
    assert effects == ["first"]

    # Another process, another instance: the finished step is in the checkpoint.
    with fresh().saver() as saver:
        app = _two_steps(fresh(), effects, fail_second=False).compile(checkpointer=saver)
        assert app.get_state(_config("r1")).values == {"done": ["first"]}
        result = app.invoke(None, _config("r1"), durability="sync")
    assert result == {"done": ["first", "second"]}
    assert effects == ["first", "second"]


def test_an_interrupt_waits_in_the_checkpoint_and_a_resume_command_continues(
    backend: tuple[str, Any],
) -> None:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    def gate(state: State) -> State:
        decision = interrupt({"task": "publish"})
        return {"done": [f"publish:{decision['approved']}"]}

    graph = StateGraph(State)
    graph.add_node("gate", gate)
    graph.add_edge(START, "gate")
    graph.add_edge("gate", END)
    _, fresh = backend
    with fresh().saver() as saver:
        paused = graph.compile(checkpointer=saver).invoke({}, _config("r2"), durability="sync")
    assert paused["__interrupt__"][0].value == {"task": "publish"}
    with fresh().saver() as saver:
        app = graph.compile(checkpointer=saver)
        assert [i.value for i in app.get_state(_config("r2")).interrupts] == [{"task": "publish"}]
        done = app.invoke(Command(resume={"approved": True}), _config("r2"), durability="sync")
    assert done == {"done": ["publish:True"]}


def test_runs_on_threads_of_their_own_checkpoint_side_by_side(checkpoints: Checkpoints) -> None:
    errors: list[BaseException] = []

    def run(thread: str) -> None:
        try:
            with checkpoints.saver() as saver:
                app = _two_steps(checkpoints, [], fail_second=False).compile(checkpointer=saver)
                app.invoke({"done": []}, _config(thread), durability="sync")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(f"run-{i}",)) for i in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert checkpoints.threads() == [f"run-{i}" for i in range(6)]


def test_setting_up_from_many_instances_at_once_makes_the_tables_once(
    backend: tuple[str, Any],
) -> None:
    _, fresh = backend
    instances = [fresh() for _ in range(6)]
    errors: list[BaseException] = []

    def setup(checkpoints: Checkpoints) -> None:
        try:
            checkpoints.setup()
            checkpoints.setup()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=setup, args=(c,)) for c in instances]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert instances[0].threads() == []


def _put(checkpoints: Checkpoints, thread: str, written: datetime) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["ts"] = written.isoformat()
    with checkpoints.saver() as saver:
        saver.put({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, checkpoint, {}, {})


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_threads_are_listed_once_each_with_their_newest_write(checkpoints: Checkpoints) -> None:
    _put(checkpoints, "b", NOW - timedelta(days=9))
    _put(checkpoints, "b", NOW - timedelta(days=2))
    _put(checkpoints, "a", NOW - timedelta(days=5))
    assert checkpoints.threads() == ["a", "b"]
    assert checkpoints.last_written(["a", "b", "none"]) == {
        "a": NOW - timedelta(days=5),
        "b": NOW - timedelta(days=2),
    }


def test_delete_removes_whole_threads_and_only_those_named(checkpoints: Checkpoints) -> None:
    for thread in ("a", "b", "c"):
        _put(checkpoints, thread, NOW)
    _put(checkpoints, "a", NOW + timedelta(seconds=1))
    assert checkpoints.delete(["a", "c", "never-written"]) == ["a", "c"]
    assert checkpoints.threads() == ["b"]
    with checkpoints.saver() as saver:
        assert saver.get_tuple(_config("a")) is None
        assert saver.get_tuple(_config("b")) is not None


# -- which backend a home gets -------------------------------------------------------------------


def _settings(tmp_path: Path, url: str | None = None) -> Settings:
    env = {"SQUAD_HOME": str(tmp_path / "home"), "SQUAD_CONFIGS": str(tmp_path / "configs")}
    if url is not None:
        env["SQUAD_DATABASE_URL"] = url
    return Settings.load(env, cwd=tmp_path)


def test_a_sqlite_store_keeps_checkpoints_in_the_home_beside_it(tmp_path: Path) -> None:
    checkpoints = open_checkpoints(_settings(tmp_path))
    assert isinstance(checkpoints, SqliteCheckpoints)
    assert checkpoints.path == tmp_path / "home" / "checkpoints.sqlite"
    assert left_behind(tmp_path / "home", checkpoints) is None


@pytest.mark.postgres
def test_a_postgres_store_keeps_checkpoints_in_its_database_and_says_what_sqlite_kept(
    tmp_path: Path, fresh_schema: str
) -> None:
    home = tmp_path / "home"
    old = SqliteCheckpoints(home / "checkpoints.sqlite")
    _put(old, "before-the-move", NOW)
    checkpoints = open_checkpoints(_settings(tmp_path, fresh_schema))
    try:
        assert isinstance(checkpoints, PostgresCheckpoints)
        assert "***" not in checkpoints.where and "postgres" in checkpoints.where
        assert checkpoints.threads() == []  # nothing was migrated
        kept = left_behind(home, checkpoints)
        assert kept == LeftBehind(home / "checkpoints.sqlite", ("before-the-move",))
        assert "not used (nothing was migrated)" in kept.describe()
        assert old.threads() == ["before-the-move"]  # and nothing was touched
    finally:
        checkpoints.close()


def test_an_unreachable_postgres_is_a_store_error_naming_it() -> None:
    checkpoints = PostgresCheckpoints("postgresql://squad:secret@127.0.0.1:1/none", reach_s=0.5)
    with pytest.raises(StoreError, match=r"cannot reach the checkpoint database") as caught:
        checkpoints.threads()
    assert "secret" not in str(caught.value)
    checkpoints.close()
