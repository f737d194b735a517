"""The daemon's corner of the store: heartbeats, ended runs (retention) and the extraction
backlog (``squad status``). Every test runs against SQLite and (when reachable) Postgres."""

from __future__ import annotations

from datetime import timedelta

import pytest

from squad.clock import FrozenClock
from squad.store import MessageRole, RunStatus, Store

from .conftest import START

SHA = "0" * 64
HOME = "/home/me/.squad"


def test_first_beat_creates_the_row_and_later_ones_replace_the_state(
    store: Store, clock: FrozenClock
) -> None:
    assert store.daemon.get(HOME) is None
    first = store.daemon.beat(HOME, pid=10, host="box", started_at=START, state={"squads": []})
    assert (first.pid, first.host, first.beat_at, first.stopped_at) == (10, "box", START, None)
    clock.advance(5)
    later = store.daemon.beat(HOME, pid=10, host="box", started_at=START, state={"queue": 2})
    assert later.beat_at == START + timedelta(seconds=5)
    assert later.started_at == START
    assert store.daemon.get(HOME) == later
    assert later.state == {"queue": 2}


def test_touch_moves_the_beat_and_keeps_the_state(store: Store, clock: FrozenClock) -> None:
    assert not store.daemon.touch(HOME, pid=10)  # nothing to touch yet
    store.daemon.beat(HOME, pid=10, host="box", started_at=START, state={"queue": 1})
    clock.advance(7)
    assert store.daemon.touch(HOME, pid=10)
    assert not store.daemon.touch(HOME, pid=11)  # another daemon's row is not ours
    record = store.daemon.get(HOME)
    assert record is not None
    assert record.beat_at == START + timedelta(seconds=7) and record.state == {"queue": 1}


def test_clean_stop_is_recorded_only_for_the_daemon_that_beat_last(
    store: Store, clock: FrozenClock
) -> None:
    store.daemon.beat(HOME, pid=10, host="box", started_at=START)
    assert not store.daemon.mark_stopped(HOME, pid=99)
    clock.advance(1)
    assert store.daemon.mark_stopped(HOME, pid=10)
    record = store.daemon.get(HOME)
    assert record is not None and record.stopped_at == START + timedelta(seconds=1)
    assert not store.daemon.touch(HOME, pid=10)  # a stopped daemon does not beat
    store.daemon.beat(HOME, pid=12, host="box", started_at=clock())
    again = store.daemon.get(HOME)
    assert again is not None and again.stopped_at is None and again.pid == 12


def test_homes_have_a_heartbeat_each(store: Store) -> None:
    store.daemon.beat("/a", pid=1, host="box", started_at=START)
    store.daemon.beat("/b", pid=2, host="box", started_at=START)
    a, b = store.daemon.get("/a"), store.daemon.get("/b")
    assert a is not None and b is not None and (a.pid, b.pid) == (1, 2)


def test_naive_start_time_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="naive"):
        store.daemon.beat(HOME, pid=1, host="box", started_at=START.replace(tzinfo=None))


def test_ended_runs_are_terminal_runs_that_ended_before_the_cutoff(
    store: Store, clock: FrozenClock
) -> None:
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256=SHA)
    runs = {}
    for status in (
        RunStatus.SUCCEEDED,
        RunStatus.FAILED,
        RunStatus.STOPPED,
        RunStatus.INTERRUPTED,
        RunStatus.AWAITING_APPROVAL,
    ):
        run = store.create_run("docs")
        store.update_run(run.id, status=RunStatus.RUNNING)
        store.update_run(run.id, status=status)
        runs[status] = run.id
        clock.advance(60)
    late = store.create_run("docs")
    store.update_run(late.id, status=RunStatus.SUCCEEDED)
    ended = store.ended_runs(before=START + timedelta(minutes=4))
    assert [r.id for r in ended] == [
        runs[RunStatus.SUCCEEDED],
        runs[RunStatus.FAILED],
        runs[RunStatus.STOPPED],
    ]
    with pytest.raises(ValueError, match="naive"):
        store.ended_runs(before=START.replace(tzinfo=None))


def test_known_runs_are_the_given_ids_the_store_holds(store: Store) -> None:
    store.upsert_squad("docs", workspace="/ws/docs", source=None, definition_sha256=SHA)
    kept = [store.create_run("docs").id for _ in range(3)]
    store.upsert_squad("gone", workspace="/ws/gone", source=None, definition_sha256=SHA)
    deleted = store.create_run("gone").id
    assert store.delete_squad("gone")
    strangers = [f"stranger-{i}" for i in range(1200)]  # more than one IN list's worth
    assert store.known_runs([*strangers, deleted, *kept, kept[0]]) == set(kept)
    assert store.known_runs([]) == set()


def test_extraction_backlog_counts_messages_after_each_agents_watermark(store: Store) -> None:
    assert store.conversation.extraction_backlog() == []
    for _ in range(3):
        store.conversation.record_message("docs", "writer", MessageRole.USER, "hi")
    for _ in range(2):
        store.conversation.record_message("docs", "planner", MessageRole.USER, "hi")
    store.conversation.record_message("code", "dev", MessageRole.ASSISTANT, "done")
    assert store.conversation.extraction_backlog() == [
        ("code", "dev", 1),
        ("docs", "planner", 2),
        ("docs", "writer", 3),
    ]
    store.conversation.finish_extraction("docs", "writer", 2)
    store.conversation.finish_extraction("docs", "planner", 2)
    assert store.conversation.extraction_backlog() == [
        ("code", "dev", 1),
        ("docs", "writer", 1),
    ]
