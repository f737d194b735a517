"""A run step's writes in plain sqlite3 on a SQLite file store the rows SQLAlchemy's path
stores (on SQLite and on Postgres), stay one all-or-nothing transaction with the rest of the
batch, and are all there after a kill once the batch has committed."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from squad.clock import FrozenClock
from squad.errors import RunFenced, StoreError
from squad.store import Store
from squad.store.conversation import COUNTERS, MESSAGES, ConversationStore
from squad.store.run_state import TASKS, RunStateStore
from squad.store.spend import LEDGER, SpendStore
from tests.store.conftest import START
from tests.support.databases import copy_sqlite

Stores = tuple[ConversationStore, RunStateStore, SpendStore]


def _ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"id{next(counter):04d}"


def _sqlite_file(template: Path, folder: Path, clock: FrozenClock) -> Store:
    path = folder / "squad.db"
    copy_sqlite(template, path)
    return Store.open(f"sqlite:///{path}", clock=clock, new_id=_ids())


def _own(store: Store) -> Stores:
    return store.conversation, store.run_state, store.spend


def _through_sqlalchemy(store: Store) -> Stores:
    """The store's writers as they are on Postgres: every statement through SQLAlchemy."""
    engine, now = store._engine, store._now
    return (
        ConversationStore(engine, now=now, new_id=store._new_id),
        RunStateStore(engine, now=now),
        SpendStore(engine, now=now),
    )


def _run(store: Store) -> tuple[str, int]:
    """A run of squad ``sq`` claimed by a node: its id and epoch."""
    store.upsert_squad("sq", workspace="/w/sq", source=None, definition_sha256="0" * 64)
    run_id = store.create_run("sq", goal="ship it").id
    return run_id, store.run_state.claim(run_id, "node-1")


def _steps(store: Store, writers: Stores, run_id: str, epoch: int, clock: FrozenClock) -> list[Any]:
    """Two steps of a run as the step journal writes them, each one batch; what each write
    returned. The second's first message is a bare value whose cue the first step stored."""
    conversation, run_state, spend = writers
    returned: list[Any] = []
    with store.batch("record step t1"):
        run_state.check_fence(run_id, epoch)
        returned.append(
            conversation.record_messages(
                "sq",
                "worker",
                [
                    ("user", "Task: deploy the site.\n\nGoal: ship it", None),
                    ("assistant", "", None),
                    ("tool", "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "read_file"),
                    ("assistant", "Deployed.", None),
                    ("user", "what's the db password?", None),
                ],
                run_id=run_id,
            )
        )
        for status, output in (("running", None), ("done", "tasks/t1/output.md")):
            returned.append(
                run_state.set_task(
                    run_id, "t1", squad="sq", agent="worker", status=status, output=output
                )
            )
        returned.append(
            spend.record(
                "sq",
                model="stub/m",
                prompt_tokens=120,
                completion_tokens=7,
                cost_usd=0.000123,
                latency_s=0.25,
                run_id=run_id,
                agent="worker",
            )
        )
    clock.advance()
    with store.batch("record step t2"):
        run_state.check_fence(run_id, epoch)
        returned.append(
            conversation.record_messages(
                "sq",
                "worker",
                [("user", "hunter2x", None), ("assistant", "ok", None)],
                run_id=run_id,
            )
        )
        returned.append(
            run_state.set_task(
                run_id, "t2", squad="sq", agent="worker", status="failed", error="boom", rounds=2
            )
        )
    return returned


def _rows(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every row of the tables a step writes, as SQLAlchemy reads them."""
    order = {
        "messages": (MESSAGES, MESSAGES.c.id),
        "counters": (COUNTERS, COUNTERS.c.agent),
        "tasks": (TASKS, TASKS.c.task_id),
        "spend": (LEDGER, LEDGER.c.id),
    }
    with store._engine.connect() as conn:
        return {
            name: [dict(row._mapping) for row in conn.execute(select(table).order_by(key))]
            for name, (table, key) in order.items()
        }


def _statements(engine: Engine) -> list[str]:
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    return seen


@pytest.fixture
def plain(sqlite_template: Path, tmp_path: Path, clock: FrozenClock) -> Iterator[Store]:
    with _sqlite_file(sqlite_template, tmp_path / "plain", clock) as store:
        yield store


def test_a_steps_rows_are_the_ones_sqlalchemy_stores_on_sqlite_and_postgres(
    request: pytest.FixtureRequest,
    store_url: str,
    sqlite_template: Path,
    tmp_path: Path,
    plain: Store,
    clock: FrozenClock,
) -> None:
    run_id, epoch = _run(plain)
    through_sqlalchemy = _statements(plain._engine)
    returned = _steps(plain, _own(plain), run_id, epoch, clock)
    # Only the read of the cue's messages (rare: a bare value) goes through SQLAlchemy.
    assert len(through_sqlalchemy) == 1
    assert through_sqlalchemy[0].startswith("SELECT conversation_messages.content")

    other_clock = FrozenClock(START)
    if store_url.startswith("sqlite"):
        other = _sqlite_file(sqlite_template, tmp_path / "other", other_clock)
        writers = _through_sqlalchemy(other)
    else:
        other = Store.open(store_url, clock=other_clock, new_id=_ids())
        writers = _own(other)
    with other:
        other_run, other_epoch = _run(other)
        assert (other_run, other_epoch) == (run_id, epoch)
        assert _steps(other, writers, other_run, other_epoch, other_clock) == returned
        assert _rows(other) == _rows(plain)
    rows = _rows(plain)
    assert [m["seq"] for m in rows["messages"]] == list(range(1, 8))
    assert [m["turn"] for m in rows["messages"]] == [0, 1, 1, 2, 2, 2, 3]
    assert "ghp_" not in rows["messages"][2]["content"]
    assert "hunter2x" not in rows["messages"][5]["content"]  # its cue was in the first step
    assert [(t["task_id"], t["status"]) for t in rows["tasks"]] == [
        ("t1", "done"),
        ("t2", "failed"),
    ]


def test_a_failed_write_after_plain_ones_leaves_nothing_of_the_batch(
    plain: Store, clock: FrozenClock
) -> None:
    run_id, epoch = _run(plain)
    before = _rows(plain)
    with pytest.raises(StoreError, match="no run with id 'gone'"), plain.batch("record a step"):
        plain.conversation.record_messages("sq", "worker", [("user", "hi", None)], run_id=run_id)
        plain.run_state.set_task(run_id, "t1", squad="sq", agent="worker", status="done")
        plain.spend.record("sq", model="stub/m", run_id=run_id)
        # The run is unknown: SQLite refuses the row, SQLAlchemy does it again and says why.
        plain.run_state.set_task("gone", "t1", squad="sq", agent="worker", status="done")
    assert _rows(plain) == before
    with pytest.raises(RunFenced), plain.batch("record a step"):
        plain.conversation.record_messages("sq", "worker", [("user", "hi", None)], run_id=run_id)
        plain.run_state.check_fence(run_id, epoch - 1)
    assert _rows(plain) == before
    # The connection is fit for the next batch, which takes the first seq again.
    with plain.batch("record a step"):
        plain.conversation.record_messages("sq", "worker", [("user", "hi", None)], run_id=run_id)
    assert [m["seq"] for m in _rows(plain)["messages"]] == [1]


_CHILD = """
import os, signal, sys, threading
from squad.runtime.step_journal import GroupCommits
from squad.store import Store

store = Store.open(sys.argv[1])
run_id = sys.argv[2]
commits = GroupCommits(store)

def step(n):
    agent = f"agent{n % 3}"
    commits.write(
        [
            lambda s: s.conversation.record_messages(
                "sq", agent, [("user", f"task {n}", None), ("assistant", f"done {n}", None)],
                run_id=run_id,
            ),
            lambda s: s.run_state.set_task(
                run_id, f"t{n}", squad="sq", agent=agent, status="running"
            ),
            lambda s: s.spend.record("sq", model="stub/m", run_id=run_id, agent=agent),
            lambda s: s.run_state.set_task(
                run_id, f"t{n}", squad="sq", agent=agent, status="done", output=f"out/t{n}"
            ),
        ],
        f"record step {n}",
    )

threads = [threading.Thread(target=step, args=(n,)) for n in range(12)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("committed", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_every_write_of_committed_steps_is_there_after_a_kill(plain: Store) -> None:
    run_id, _ = _run(plain)
    url = plain._engine.url.render_as_string(hide_password=False)
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD), url, run_id],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert child.stdout == "committed\n"
    rows = _rows(plain)
    assert len(rows["messages"]) == 24
    for agent in ("agent0", "agent1", "agent2"):
        seqs = [m["seq"] for m in rows["messages"] if m["agent"] == agent]
        assert sorted(seqs) == list(range(1, 9))
    assert sorted((c["agent"], c["last_seq"], c["turns"]) for c in rows["counters"]) == [
        ("agent0", 8, 4),
        ("agent1", 8, 4),
        ("agent2", 8, 4),
    ]
    assert sorted(t["task_id"] for t in rows["tasks"]) == sorted(f"t{n}" for n in range(12))
    assert {t["status"] for t in rows["tasks"]} == {"done"}
    assert all(t["started_at"] is not None and t["ended_at"] is not None for t in rows["tasks"])
    assert len(rows["spend"]) == 12
