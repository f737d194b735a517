"""What retention forgets in the store: old ended runs with their task rows, spend detail
(rolled up, never lost from totals), messages nobody needs, old extraction passes; and what it
never touches. Every test runs against SQLite and (when reachable) Postgres."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from squad.clock import FrozenClock
from squad.store import RunStatus, SpendTotals, Store

SHA = "0" * 64


def _squad(store: Store, name: str = "docs") -> None:
    store.upsert_squad(name, workspace=f"/ws/{name}", source=None, definition_sha256=SHA)


def _ended_run(store: Store, squad: str = "docs", *, cost: float = 0.1) -> str:
    run = store.create_run(squad, trigger="schedule")
    store.update_run(run.id, status=RunStatus.RUNNING)
    store.run_state.set_task(run.id, "t1", squad=squad, agent="writer", status="done")
    store.conversation.record_messages(
        squad,
        "writer",
        [("user", f"work of {run.id}", None), ("assistant", "done", None)],
        run_id=run.id,
    )
    store.spend.record(
        squad, model="m", prompt_tokens=10, completion_tokens=5, cost_usd=cost, run_id=run.id
    )
    store.update_run(run.id, status=RunStatus.SUCCEEDED)
    return run.id


def _count(store: Store, table: str) -> int:
    from squad.store.tables import metadata

    with store._engine.connect() as conn:
        return int(
            conn.execute(select(func.count()).select_from(metadata.tables[table])).scalar_one()
        )


def test_runs_that_ended_before_the_cutoff_go_with_their_tasks(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store)
    old = [_ended_run(store) for _ in range(3)]
    cutoff = clock.advance(3600)
    new = _ended_run(store)

    report = store.retention.forget_runs(cutoff)

    assert sorted(report.runs) == sorted(old) and report.tasks == 3
    assert [store.get_run(r) for r in old] == [None, None, None]
    assert store.get_run(new) is not None and len(store.run_state.tasks(new)) == 1
    assert store.retention.forget_runs(cutoff).runs == []


def test_runs_not_ended_or_kept_are_never_forgotten(store: Store, clock: FrozenClock) -> None:
    _squad(store)
    paused = store.create_run("docs")
    store.update_run(paused.id, status=RunStatus.AWAITING_APPROVAL)
    interrupted = store.create_run("docs")
    store.update_run(interrupted.id, status=RunStatus.INTERRUPTED)
    running = store.create_run("docs")
    store.update_run(running.id, status=RunStatus.RUNNING)
    kept = _ended_run(store)
    clock.advance(3600)

    report = store.retention.forget_runs(clock(), keep={kept})

    assert report.runs == []
    assert all(store.get_run(r) for r in (paused.id, interrupted.id, running.id, kept))


def test_forgotten_spend_still_counts_toward_the_squads_totals(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store)
    for _ in range(4):
        _ended_run(store, cost=0.25)
    store.spend.record("docs", model="m", prompt_tokens=1, cost_usd=0.5)  # a chat
    before = store.spend.of_squad("docs")
    clock.advance(86_400 * 2)

    report = store.retention.forget_runs(clock())

    assert report.spend_rows == 5 and _count(store, "spend_ledger") == 0
    assert store.spend.of_squad("docs") == SpendTotals(
        pytest.approx(1.5),  # type: ignore[arg-type]
        41,
        20,
        5,
    )
    assert before.calls == 5
    assert store.spend.by_squad()["docs"].calls == 5
    days = store.retention.spend_by_day(clock() - timedelta(days=10))
    assert [(s, round(cost, 6), calls) for s, _, cost, calls in days] == [("docs", 1.5, 5)]


def test_rolling_up_twice_into_one_day_adds_to_it(store: Store, clock: FrozenClock) -> None:
    _squad(store)
    _ended_run(store, cost=0.25)
    clock.advance(60)
    store.retention.forget_runs(clock())
    _ended_run(store, cost=0.5)
    clock.advance(60)
    store.retention.forget_runs(clock())

    assert store.spend.of_squad("docs").calls == 2
    assert store.spend.of_squad("docs").cost_usd == pytest.approx(0.75)
    assert _count(store, "spend_days") == 1


def test_messages_go_only_once_read_or_when_nothing_will_read_them(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store)
    _squad(store, "quiet")
    read, unread = _ended_run(store), _ended_run(store)
    off = _ended_run(store, "quiet")
    store.conversation.claim_extraction("docs", "writer")
    store.conversation.finish_extraction("docs", "writer", 2)  # the first run's two messages
    store.conversation.record_message("docs", "writer", "user", "a chat", session_id="s1")
    clock.advance(3600)

    report = store.retention.forget_runs(clock(), unread_agents=[("quiet", "writer")])

    assert sorted(report.runs) == sorted([read, unread, off]) and report.messages == 4
    left = store.conversation.messages("docs", "writer")
    assert [(m.run_id, m.content) for m in left] == [
        (unread, f"work of {unread}"),
        (unread, "done"),
        (None, "a chat"),
    ]
    assert store.conversation.messages("quiet", "writer") == []


def test_messages_read_after_their_run_was_forgotten_go_at_the_next_pass(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store)
    run = _ended_run(store)
    clock.advance(3600)
    first = store.retention.forget_runs(clock())
    assert first.runs == [run] and first.messages == 0  # unread: the extractor needs them
    store.conversation.claim_extraction("docs", "writer")
    store.conversation.finish_extraction("docs", "writer", 2)

    assert store.retention.forget_runs(clock()).messages == 2

    assert store.conversation.messages("docs", "writer") == []


def test_extraction_passes_before_the_cutoff_go(store: Store, clock: FrozenClock) -> None:
    def record(reason: str) -> None:
        store.extraction.record(
            "docs",
            "writer",
            started_at=clock(),
            status="skipped",
            extractor="offline",
            from_seq=0,
            to_seq=0,
            reason=reason,
        )

    record("old")
    cutoff = clock.advance(3600)
    record("new")

    assert store.retention.forget_runs(cutoff).passes == 1
    assert [p.reason for p in store.extraction.runs()] == ["new"]


def test_skipping_unread_messages_empties_the_backlog(store: Store) -> None:
    _squad(store)
    _ended_run(store)
    _ended_run(store)
    assert store.conversation.extraction_backlog() == [("docs", "writer", 4)]

    assert store.retention.skip_unread([("docs", "writer")]) == 4

    assert store.conversation.extraction_backlog() == []
    assert store.retention.skip_unread([("docs", "writer"), ("none", "nobody")]) == 0


def test_sqlite_gives_freed_space_back(tmp_path: Path, clock: FrozenClock) -> None:
    url = f"sqlite:///{tmp_path / 'squad.db'}"
    with Store.open(url, clock=clock) as store:
        _squad(store)
        for _ in range(300):
            run = store.create_run("docs")
            store.conversation.record_message("docs", "writer", "user", "x" * 4000, run_id=run.id)
            store.update_run(run.id, status=RunStatus.SUCCEEDED)
        store.conversation.claim_extraction("docs", "writer")
        store.conversation.finish_extraction("docs", "writer", 300)
        store.retention.give_back_space()  # the first time converts the file
        full = (tmp_path / "squad.db").stat().st_size
        clock.advance(3600)
        store.retention.forget_runs(clock())

        freed = store.retention.give_back_space()

        assert freed > 1_000_000
        assert (tmp_path / "squad.db").stat().st_size < full - 1_000_000
