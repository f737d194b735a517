"""Store writes of tasks that end together share one transaction (a group commit)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import pytest

from squad.errors import StoreError
from squad.runtime.step_journal import GroupCommits
from squad.store import Store


class Ledger:
    """A store double that keeps each transaction's writes, in commit order."""

    def __init__(self) -> None:
        self.transactions: list[list[str]] = []
        self._open: list[str] | None = None
        self.fail_on: str | None = None

    @contextmanager
    def batch(self, action: str) -> Iterator[None]:
        self._open = []
        try:
            yield
            if self.fail_on in self._open:
                raise StoreError(f"cannot {action}: the disk is full")
            self.transactions.append(self._open)
        finally:
            self._open = None

    def record(self, name: str) -> None:
        assert self._open is not None, "a write outside a transaction"
        self._open.append(name)


def writer(name: str) -> Any:
    return lambda store: store.record(name)


def queued(commits: GroupCommits, count: int) -> None:
    """Wait until ``count`` writers wait for the commit under way."""
    deadline = time.monotonic() + 10
    while len(commits._waiting) < count:
        assert time.monotonic() < deadline, "the writers never came"
        time.sleep(0.001)


def run_group(ledger: Ledger, followers: list[str]) -> dict[str, BaseException | None]:
    """One writer commits while ``followers`` come; what each writer raised."""
    commits = GroupCommits(cast(Store, ledger))
    let_go = threading.Event()
    ended: dict[str, BaseException | None] = {}

    def held(store: Any) -> None:
        store.record("first")
        let_go.wait(10)

    def write(name: str, writes: list[Any]) -> None:
        try:
            commits.write(writes, f"record {name}")
            ended[name] = None
        except StoreError as exc:
            ended[name] = exc

    first = threading.Thread(target=write, args=("first", [held]))
    first.start()
    while not ledger._open:  # the first commit is under way
        time.sleep(0.001)
    threads = [threading.Thread(target=write, args=(n, [writer(n)])) for n in followers]
    for thread in threads:
        thread.start()
    queued(commits, len(followers))
    let_go.set()
    for thread in [first, *threads]:
        thread.join(10)
    return ended


def test_writers_that_come_during_a_commit_share_the_next_one() -> None:
    ledger = Ledger()
    ended = run_group(ledger, ["b2", "b3", "b4"])
    assert ended == dict.fromkeys(["first", "b2", "b3", "b4"])
    assert ledger.transactions[0] == ["first"]
    assert sorted(ledger.transactions[1]) == ["b2", "b3", "b4"]
    assert len(ledger.transactions) == 2


def test_a_failed_group_commit_fails_every_writer_in_it_and_no_other() -> None:
    ledger = Ledger()
    ledger.fail_on = "b3"
    ended = run_group(ledger, ["b2", "b3"])
    assert ended["first"] is None
    assert isinstance(ended["b2"], StoreError)
    assert ended["b3"] is ended["b2"]
    assert ledger.transactions == [["first"]]  # nothing of the failed group landed


def test_a_lone_writer_commits_its_writes_in_order() -> None:
    ledger = Ledger()
    GroupCommits(cast(Store, ledger)).write([writer("a"), writer("b")], "record a step")
    assert ledger.transactions == [["a", "b"]]
    with pytest.raises(StoreError):
        ledger.fail_on = "c"
        GroupCommits(cast(Store, ledger)).write([writer("c")], "record a step")
