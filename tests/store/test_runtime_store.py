"""What the runtime keeps in the store: messages and turns, extraction watermarks, task states,
spend, resumable runs. Every test runs against SQLite and (when reachable) Postgres."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from squad.clock import FrozenClock
from squad.errors import StoreError
from squad.store import (
    MessageRole,
    RunStatus,
    SpendTotals,
    Store,
    TaskStatus,
    WatermarkRecord,
)
from squad.store.engine import make_engine

from .conftest import START

SHA = "0" * 64


def _squad(store: Store, name: str = "docs") -> None:
    store.upsert_squad(name, workspace=f"/ws/{name}", source=None, definition_sha256=SHA)


def _in_threads(count: int, work: Callable[[int], None]) -> None:
    """Run ``work(0..count-1)`` in threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait()
            work(index)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


# messages and turns


def test_concurrent_writers_of_one_agent_get_gap_free_increasing_seqs(store: Store) -> None:
    seqs: dict[int, list[int]] = {}

    def write(thread: int) -> None:
        seqs[thread] = [
            store.conversation.record_message(
                "docs",
                "writer",
                "assistant" if (thread + n) % 2 else "user",
                f"message {n} of thread {thread}",
            ).seq
            for n in range(25)
        ]

    _in_threads(4, write)

    for mine in seqs.values():
        assert mine == sorted(mine), "one thread's messages must get increasing seqs"
    assert sorted(s for mine in seqs.values() for s in mine) == list(range(1, 101))
    history = store.conversation.messages("docs", "writer")
    assert [m.seq for m in history] == list(range(1, 101))
    assert len({m.message_id for m in history}) == 100
    replies = 0
    for message in history:
        replies += message.role is MessageRole.ASSISTANT
        assert message.turn == replies, f"wrong turn at seq {message.seq}"
    assert store.conversation.turn_count("docs", "writer") == replies == 50


def test_each_agent_of_each_squad_counts_on_its_own(store: Store) -> None:
    record = store.conversation.record_message
    firsts = [record(squad, agent, "user", "hi").seq for squad, agent in [("s1", "a")] * 2]
    others = [record("s1", "b", "user", "hi").seq, record("s2", "a", "user", "hi").seq]
    assert (firsts, others) == ([1, 2], [1, 1])


def test_turn_counts_assistant_replies_including_the_one_recorded(store: Store) -> None:
    roles = ["system", "user", "assistant", "tool", "assistant", "user"]
    turns = [store.conversation.record_message("d", "a", r, "x").turn for r in roles]
    assert turns == [0, 0, 1, 1, 2, 2]
    assert store.conversation.turn_count("d", "a") == 2
    assert store.conversation.turn_count("d", "nobody") == 0


def test_recorded_message_is_what_is_read_back(store_url: str, clock: FrozenClock) -> None:
    ids = iter(["m1", "m2"])
    with Store.open(store_url, clock=clock, new_id=lambda: next(ids)) as store:
        first = store.conversation.record_message(
            "docs", "writer", MessageRole.USER, "write the intro", session_id="chat-1"
        )
        clock.advance()
        second = store.conversation.record_message(
            "docs", "writer", "tool", "file saved", run_id="r1", tool_name="write_file"
        )
        assert store.conversation.messages("docs", "writer") == [first, second]
    assert (first.message_id, first.role, first.created_at) == ("m1", MessageRole.USER, START)
    assert (first.session_id, first.run_id, first.tool_name) == ("chat-1", None, None)
    assert (second.message_id, second.run_id, second.tool_name) == ("m2", "r1", "write_file")
    assert second.created_at == START + timedelta(seconds=1)


def test_messages_filter_by_seq_limit_session_and_run(store: Store) -> None:
    record = store.conversation.record_message
    record("d", "a", "user", "1", session_id="s1")
    record("d", "a", "assistant", "2", session_id="s1")
    record("d", "a", "user", "3", run_id="r1")
    record("d", "a", "assistant", "4", run_id="r1")
    record("d", "a", "user", "5", session_id="s2")
    record("d", "other", "user", "not a's")

    def contents(**kwargs: object) -> list[str]:
        return [m.content for m in store.conversation.messages("d", "a", **kwargs)]  # type: ignore[arg-type]

    assert contents() == ["1", "2", "3", "4", "5"]
    assert contents(after_seq=3) == ["4", "5"]
    assert contents(after_seq=1, limit=2) == ["2", "3"]
    assert contents(session_id="s1") == ["1", "2"]
    assert contents(run_id="r1", after_seq=3) == ["4"]
    assert contents(after_seq=5) == []
    with pytest.raises(ValueError, match="limit"):
        store.conversation.messages("d", "a", limit=0)
    with pytest.raises(ValueError, match="after_seq"):
        store.conversation.messages("d", "a", after_seq=-1)


def test_unknown_role_is_refused_and_nothing_is_recorded(store: Store) -> None:
    with pytest.raises(ValueError, match="message role 'robot' is not one of 'system'"):
        store.conversation.record_message("d", "a", "robot", "beep")
    assert store.conversation.messages("d", "a") == []


# extraction watermark


def test_watermark_of_an_agent_never_extracted_is_zero(store: Store) -> None:
    assert store.conversation.watermark("d", "a") == WatermarkRecord(
        "d", "a", 0, None, False, False, None, None
    )


def test_triggers_during_an_extraction_coalesce_into_one_more_pass(
    store: Store, clock: FrozenClock
) -> None:
    conversation = store.conversation
    assert conversation.claim_extraction("d", "a") is True
    claimed = conversation.watermark("d", "a")
    assert (claimed.in_flight, claimed.pending, claimed.claimed_at) == (True, False, START)

    clock.advance()
    assert [conversation.claim_extraction("d", "a") for _ in range(3)] == [False] * 3
    assert conversation.watermark("d", "a").pending is True

    finished_at = clock.advance()
    assert conversation.finish_extraction("d", "a", 7) is True
    assert conversation.watermark("d", "a") == WatermarkRecord(
        "d", "a", 7, finished_at, False, False, None, finished_at
    )
    assert conversation.claim_extraction("d", "a") is True
    assert conversation.finish_extraction("d", "a", 9) is False
    assert conversation.watermark("d", "a").last_processed_seq == 9


def test_watermark_never_moves_back(store: Store) -> None:
    store.conversation.claim_extraction("d", "a")
    store.conversation.finish_extraction("d", "a", 12)
    store.conversation.claim_extraction("d", "a")
    store.conversation.finish_extraction("d", "a", 5)
    assert store.conversation.watermark("d", "a").last_processed_seq == 12
    with pytest.raises(ValueError, match="processed_seq"):
        store.conversation.finish_extraction("d", "a", -1)


def test_exactly_one_of_concurrent_claims_wins(store: Store) -> None:
    won: list[bool] = []
    _in_threads(8, lambda _: won.append(store.conversation.claim_extraction("d", "a")))
    assert sorted(won) == [False] * 7 + [True]
    assert store.conversation.watermark("d", "a").pending is True


def test_a_trigger_while_an_extraction_finishes_is_never_lost(store: Store) -> None:
    """A claim that finds one in flight, and a finish between its two statements: the finish
    must wait for the claim and see its trigger, or the message behind it stays unread."""
    conversation = store.conversation
    assert conversation.claim_extraction("d", "a")
    checked, finished = threading.Event(), threading.Event()

    def pause_the_losing_claim(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        losing = statement.lstrip().upper().startswith("UPDATE") and cursor.rowcount == 0
        if threading.current_thread().name == "claimer" and losing and not checked.is_set():
            checked.set()
            finished.wait(1.0)  # a finisher that is not held back finishes now

    results: dict[str, bool] = {}
    claimer = threading.Thread(
        target=lambda: results.update(claimed=conversation.claim_extraction("d", "a")),
        name="claimer",
    )
    event.listen(Engine, "after_cursor_execute", pause_the_losing_claim)
    try:
        claimer.start()
        assert checked.wait(10)
        results["again"] = conversation.finish_extraction("d", "a", 1)
        finished.set()
        claimer.join(10)
    finally:
        event.remove(Engine, "after_cursor_execute", pause_the_losing_claim)
    assert results == {"claimed": False, "again": True}
    assert conversation.watermark("d", "a").pending is False


def test_no_message_is_left_unextracted_and_extractions_never_overlap(store: Store) -> None:
    """Writers record a message and trigger extraction, as the runtime will after each turn."""
    conversation = store.conversation
    running, overlaps, passes = [0], [0], [0]
    lock = threading.Lock()

    def extract() -> None:
        while True:
            with lock:
                running[0] += 1
                overlaps[0] += running[0] > 1
                passes[0] += 1
            start = conversation.watermark("d", "a").last_processed_seq
            seen = conversation.messages("d", "a", after_seq=start)
            with lock:
                running[0] -= 1
            last = seen[-1].seq if seen else start
            if not conversation.finish_extraction("d", "a", last):
                return
            if not conversation.claim_extraction("d", "a"):
                return  # whoever claimed it now does the extra pass

    def write_and_trigger(thread: int) -> None:
        for n in range(10):
            conversation.record_message("d", "a", "user", f"{thread}/{n}")
            if conversation.claim_extraction("d", "a"):
                extract()

    _in_threads(4, write_and_trigger)

    final = conversation.watermark("d", "a")
    assert (final.last_processed_seq, final.in_flight, final.pending) == (40, False, False)
    assert overlaps == [0]
    assert passes[0] <= 40


def test_stale_claim_is_taken_over_only_after_the_given_age(
    store: Store, clock: FrozenClock
) -> None:
    conversation = store.conversation
    assert conversation.claim_extraction("d", "a") is True
    clock.advance(59)
    assert conversation.claim_extraction("d", "a", stale_after=timedelta(minutes=1)) is False
    taken_over_at = clock.advance(2)
    assert conversation.claim_extraction("d", "a", stale_after=timedelta(minutes=1)) is True
    after = conversation.watermark("d", "a")
    assert (after.in_flight, after.pending, after.claimed_at) == (True, False, taken_over_at)


# task states


def _run(store: Store, squad: str = "docs") -> str:
    _squad(store, squad)
    return store.create_run(squad).id


def test_task_state_stamps_start_once_and_end_when_finished(
    store: Store, clock: FrozenClock
) -> None:
    run_id = _run(store)
    runs = store.run_state
    pending = runs.set_task(run_id, "t1", squad="docs", agent="w", status="pending")
    assert (pending.status, pending.attempts, pending.rounds) == (TaskStatus.PENDING, 0, 0)
    assert (pending.started_at, pending.ended_at, pending.updated_at) == (None, None, START)

    started = clock.advance()
    runs.set_task(run_id, "t1", squad="docs", agent="w", status="running", attempts=1)
    clock.advance()
    again = runs.set_task(run_id, "t1", squad="docs", agent="w", status=TaskStatus.RUNNING)
    ended = clock.advance()
    done = runs.set_task(
        run_id, "t1", squad="docs", agent="w", status="done", output="tasks/t1/output.md"
    )

    assert (again.started_at, again.attempts) == (started, 1)
    assert (done.status, done.started_at, done.ended_at, done.updated_at) == (
        TaskStatus.DONE,
        started,
        ended,
        ended,
    )
    assert (done.output, done.attempts, done.error) == ("tasks/t1/output.md", 1, None)
    assert runs.get_task(run_id, "t1") == done


def test_task_sent_back_is_unfinished_until_it_finishes_again(
    store: Store, clock: FrozenClock
) -> None:
    run_id = _run(store)

    def status(value: str, **kwargs: object) -> object:
        record = store.run_state.set_task(
            run_id,
            "t1",
            squad="docs",
            agent="w",
            status=value,
            **kwargs,  # type: ignore[arg-type]
        )
        return record.ended_at, record.error, record.rounds

    assert status("failed", error="model gave up") == (START, "model gave up", 0)
    assert status("blocked", error="still") == (START, "still", 0), "first end is kept"
    clock.advance()
    assert status("running", rounds=1) == (None, None, 1)
    second_end = clock.advance()
    assert status("done") == (second_end, None, 1)


def test_tasks_are_listed_in_the_order_first_set(store: Store) -> None:
    run_id = _run(store)
    other = store.create_run("docs").id
    for task in ["zeta", "alpha", "mid"]:
        store.run_state.set_task(run_id, task, squad="docs", agent="w", status="pending")
    store.run_state.set_task(other, "beta", squad="docs", agent="w", status="pending")
    store.run_state.set_task(run_id, "alpha", squad="docs", agent="w", status="running")

    assert [t.task_id for t in store.run_state.tasks(run_id)] == ["zeta", "alpha", "mid"]
    assert [t.task_id for t in store.run_state.tasks(other)] == ["beta"]
    assert store.run_state.tasks("no-such-run") == []
    assert store.run_state.get_task(run_id, "nope") is None


def test_task_of_unknown_run_or_with_unknown_status_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="no run with id 'ghost'"):
        store.run_state.set_task("ghost", "t1", squad="docs", agent="w", status="pending")
    run_id = _run(store)
    with pytest.raises(ValueError, match="task status 'stuck' is not one of"):
        store.run_state.set_task(run_id, "t1", squad="docs", agent="w", status="stuck")
    with pytest.raises(ValueError, match="attempts"):
        store.run_state.set_task(run_id, "t1", squad="docs", agent="w", status="done", attempts=-1)
    assert store.run_state.tasks(run_id) == []


def test_deleting_a_run_or_its_squad_deletes_its_tasks(store: Store, store_url: str) -> None:
    doomed = _run(store)
    kept = _run(store, "other")
    for run_id, squad in [(doomed, "docs"), (kept, "other")]:
        store.run_state.set_task(run_id, "t1", squad=squad, agent="w", status="done")

    engine = make_engine(store_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("DELETE FROM runs WHERE id = :id"), {"id": doomed})
    finally:
        engine.dispose()
    assert store.run_state.tasks(doomed) == []
    assert [t.task_id for t in store.run_state.tasks(kept)] == ["t1"]

    store.delete_squad("other")
    assert store.run_state.tasks(kept) == []


# spend ledger


def test_spend_adds_up_per_squad_across_runs_and_since_a_time(
    store: Store, clock: FrozenClock
) -> None:
    first, second = _run(store), store.create_run("docs").id
    ledger = store.spend
    call = ledger.record(
        "docs",
        model="openai/gpt-x",
        prompt_tokens=100,
        completion_tokens=20,
        cost_usd=0.1,
        latency_s=1.5,
        run_id=first,
        agent="writer",
    )
    later = clock.advance(60)
    ledger.record("docs", model="m", prompt_tokens=10, cost_usd=0.2, run_id=second)
    clock.advance(60)
    ledger.record("docs", model="m", completion_tokens=5, cost_usd=0.3)  # a chat
    ledger.record("other", model="m", prompt_tokens=999, cost_usd=9.0)

    assert (call.id, call.at, call.agent, call.latency_s) == (call.id, START, "writer", 1.5)
    everything = ledger.of_squad("docs")
    assert everything == SpendTotals(pytest.approx(0.6), 110, 25, 3)  # type: ignore[arg-type]
    assert ledger.of_squad("docs", since=later) == SpendTotals(
        pytest.approx(0.5),  # type: ignore[arg-type]
        10,
        5,
        2,
    )
    assert ledger.of_run(first) == SpendTotals(0.1, 100, 20, 1)
    assert ledger.of_run(second) == SpendTotals(0.2, 10, 0, 1)
    assert ledger.of_squad("nobody") == ledger.of_run("none") == SpendTotals(0.0, 0, 0, 0)


def test_spend_outlives_the_squad_and_its_runs(store: Store) -> None:
    run_id = _run(store)
    store.spend.record("docs", model="m", cost_usd=0.25, run_id=run_id)
    store.delete_squad("docs")
    assert store.spend.of_squad("docs") == SpendTotals(0.25, 0, 0, 1)
    assert store.spend.of_run(run_id).calls == 1


@pytest.mark.parametrize("field", ["prompt_tokens", "cost_usd", "latency_s"])
def test_negative_spend_is_refused(store: Store, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        store.spend.record("docs", model="m", **{field: -1})  # type: ignore[arg-type]
    assert store.spend.of_squad("docs").calls == 0


# runs


def test_run_keeps_goal_model_and_summary(store: Store) -> None:
    _squad(store)
    run = store.create_run("docs", goal="write the release notes", model="ollama/llama3")
    summary = {"tasks": {"done": 2, "failed": 0}, "turns": 5, "cost_usd": 0.0}
    done = store.update_run(run.id, status=RunStatus.SUCCEEDED, summary=summary)

    assert (run.goal, run.model, run.summary) == ("write the release notes", "ollama/llama3", None)
    assert done.summary == summary
    assert store.get_run(run.id) == done
    assert store.update_run(run.id, error="later note").summary == summary


def test_interrupted_runs_are_the_resumable_ones_newest_first(
    store: Store, clock: FrozenClock
) -> None:
    _squad(store, "docs")
    _squad(store, "other")
    made: dict[str, str] = {}
    for squad_name, status in [
        ("docs", RunStatus.RUNNING),
        ("docs", RunStatus.SUCCEEDED),
        ("other", RunStatus.AWAITING_APPROVAL),
        ("docs", RunStatus.INTERRUPTED),
        ("docs", RunStatus.PENDING),
        ("docs", RunStatus.FAILED),
        ("other", RunStatus.STOPPED),
    ]:
        clock.advance()
        run_id = store.create_run(squad_name).id
        store.update_run(run_id, status=status)
        made[f"{squad_name}:{status.value}"] = run_id

    assert [r.id for r in store.interrupted_runs()] == [
        made["docs:interrupted"],
        made["other:awaiting_approval"],
        made["docs:running"],
    ]
    assert [r.id for r in store.interrupted_runs("docs")] == [
        made["docs:interrupted"],
        made["docs:running"],
    ]
    assert store.interrupted_runs("nobody") == []


def test_reads_inside_a_batch_see_its_writes_and_after_it_what_it_committed(
    store: Store,
) -> None:
    run_id = _run(store)
    with store.batch("record step t1"):
        store.run_state.set_task(run_id, "t1", squad="docs", agent="w", status="running")
        inside = store.run_state.get_task(run_id, "t1")
        listed = store.run_state.tasks(run_id)
    assert inside is not None and inside.status is TaskStatus.RUNNING
    assert [task.task_id for task in listed] == ["t1"]
    after = store.run_state.get_task(run_id, "t1")
    assert after is not None and after.status is TaskStatus.RUNNING
    assert store.get_run(run_id) is not None
