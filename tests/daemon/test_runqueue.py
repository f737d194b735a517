"""The run queue: at most N runs at once, never two of one squad, one waiting request per
squad, FIFO otherwise; closing drops what waits and lets running work finish."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from squad.daemon.runqueue import RunQueue, RunRequest
from tests.support.waiting import wait_for

WAIT = 30.0


class Gate:
    """Work that records what runs at once and blocks until the test releases it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.peak = 0
        self.order: list[str] = []
        self.release: dict[str, threading.Event] = {}
        self.started = threading.Condition(self.lock)
        self.opened = False
        """Set at a test's end: every run, however late it starts, goes through."""

    def event(self, squad: str) -> threading.Event:
        with self.lock:
            event = self.release.setdefault(squad, threading.Event())
            if self.opened:
                event.set()
            return event

    def open(self) -> None:
        """Let every run through from now on: one a worker took before the queue closed
        (the next of a squad, started as its gated run ends) must not wait for a release."""
        with self.lock:
            self.opened = True
            for event in self.release.values():
                event.set()

    def __call__(self, request: RunRequest) -> None:
        gate = self.event(request.squad)
        with self.lock:
            assert request.squad not in self.running, "two runs of one squad at once"
            self.running.add(request.squad)
            self.peak = max(self.peak, len(self.running))
            self.order.append(f"{request.squad}:{request.trigger}")
            self.started.notify_all()
        assert gate.wait(WAIT)
        with self.lock:
            self.running.discard(request.squad)
            if not self.opened:
                gate.clear()

    def wait_started(self, count: int) -> None:
        with self.started:
            assert self.started.wait_for(lambda: len(self.order) >= count, WAIT)


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def queue(gate: Gate) -> Iterator[RunQueue]:
    runs = RunQueue(2, gate)
    runs.start()
    yield runs
    gate.open()
    runs.close()
    assert runs.join(WAIT)


def test_no_more_than_the_limit_run_at_once_and_the_rest_wait_in_order(
    queue: RunQueue, gate: Gate
) -> None:
    for name in ("a", "b", "c", "d"):
        assert queue.submit(RunRequest(name, "schedule"))
    gate.wait_started(2)
    running, waiting = queue.snapshot()
    assert {r.squad for r in running} == {"a", "b"}
    assert [r.squad for r in waiting] == ["c", "d"]
    gate.event("a").set()
    gate.wait_started(3)
    assert gate.order[2] == "c:schedule"
    for name in ("b", "c", "d"):
        gate.event(name).set()
    gate.wait_started(4)
    assert gate.peak == 2


def test_a_squad_never_runs_twice_at_once_and_its_next_run_waits_for_it(
    queue: RunQueue, gate: Gate
) -> None:
    assert queue.submit(RunRequest("a", "on_start"))
    gate.wait_started(1)
    assert queue.submit(RunRequest("a", "schedule"))  # waits behind the running one
    assert queue.submit(RunRequest("b", "schedule"))  # overtakes it: another squad
    gate.wait_started(2)
    assert gate.order == ["a:on_start", "b:schedule"]
    gate.event("a").set()
    gate.wait_started(3)
    assert gate.order[2] == "a:schedule"


def test_asking_again_while_a_request_waits_is_coalesced(queue: RunQueue, gate: Gate) -> None:
    assert queue.submit(RunRequest("a", "on_start"))
    gate.wait_started(1)
    assert queue.submit(RunRequest("a", "schedule"))
    assert not queue.submit(RunRequest("a", "schedule"))
    assert len(queue.snapshot()[1]) == 1


def test_an_answer_to_an_approval_gate_is_never_merged_into_a_waiting_request(
    queue: RunQueue, gate: Gate
) -> None:
    assert queue.submit(RunRequest("a", "on_start"))
    gate.wait_started(1)
    assert queue.submit(RunRequest("a", "schedule"))
    answer = RunRequest("a", "approval", "run-1", decision=("publish", True, ""))
    assert queue.submit(answer)
    assert not queue.submit(RunRequest("a", "web", goal="again"))
    assert queue.snapshot()[1] == [RunRequest("a", "schedule"), answer]


def test_a_resume_can_jump_the_queue(gate: Gate) -> None:
    runs = RunQueue(1, gate)
    runs.submit(RunRequest("a", "schedule"))
    runs.submit(RunRequest("b", "resume", "run-1"), first=True)
    runs.start()
    gate.wait_started(1)
    assert gate.order == ["b:resume"]
    for event in ("a", "b"):
        gate.event(event).set()
    gate.wait_started(2)
    runs.close()
    assert runs.join(WAIT)


def test_closing_drops_waiting_requests_and_lets_running_ones_finish(
    queue: RunQueue, gate: Gate
) -> None:
    for name in ("a", "b", "c"):
        queue.submit(RunRequest(name, "schedule"))
    gate.wait_started(2)
    dropped = queue.close()
    assert [r.squad for r in dropped] == ["c"]
    assert not queue.submit(RunRequest("d", "schedule"))
    assert not queue.join(timeout=0.05)  # a and b still run
    gate.event("a").set()
    gate.event("b").set()
    assert queue.join(WAIT)
    assert queue.idle()


def test_zero_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RunQueue(0, lambda _: None)


def test_a_run_asked_to_start_now_is_queued_only_when_it_starts_at_once(
    queue: RunQueue, gate: Gate
) -> None:
    assert queue.submit_now(RunRequest("a", "manual"))
    gate.wait_started(1)
    assert not queue.submit_now(RunRequest("a", "manual"))  # its squad is running
    assert queue.submit(RunRequest("b", "schedule"))
    gate.wait_started(2)
    assert not queue.submit_now(RunRequest("c", "manual"))  # both slots are taken
    gate.event("b").set()
    assert queue.submit(RunRequest("a", "schedule"))  # waits behind a's run
    # b's slot frees once its work has returned.
    wait_for(lambda: len(queue.snapshot()[0]) == 1, "b's run to end", timeout=WAIT)
    assert not queue.submit_now(RunRequest("a", "manual"))  # a request of a waits
    _, waiting = queue.snapshot()
    assert [r.squad for r in waiting] == ["a"]
    assert queue.submit_now(RunRequest("c", "manual"))
    gate.wait_started(3)
    assert gate.order[2] == "c:manual"


def test_a_queue_not_started_or_closed_starts_nothing_now(gate: Gate) -> None:
    runs = RunQueue(1, gate)
    assert not runs.submit_now(RunRequest("a", "manual"))
    runs.start()
    runs.close()
    assert not runs.submit_now(RunRequest("a", "manual"))
    assert runs.join(WAIT)
