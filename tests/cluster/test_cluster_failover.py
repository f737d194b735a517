"""A run survives losing the node that runs it: killed with SIGKILL, it is found stalled and
resumes on another worker from its last checkpoint; stopped with SIGTERM, it stops at its next
checkpoint and is handed over. Either way no finished task is redone (counted at the stub
model server) and the run ends once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from squad.store.records import RunRecord
from tests.support.cluster import Cluster, Node, cluster_on

pytestmark = pytest.mark.postgres

LATENCY_S = 0.8
TASKS = 4


def _start_two_workers(cluster: Cluster) -> list[Node]:
    cluster.add_squad("relay", tasks=TASKS)
    cluster.register("relay")
    workers = [cluster.start("worker", f"w{n}", "--concurrency", "1") for n in range(2)]
    cluster.wait_for(lambda: all(w.events("node_start") for w in workers), "the workers")
    return workers


def _ended(cluster: Cluster, label: str) -> RunRecord:
    """The run once it has ended: its row says so, and so does the log of the node that ended
    it (the node writes the row first, then logs ``run_end``: reading the logs as soon as the
    row changed could miss it)."""
    found: RunRecord = cluster.wait_for(
        lambda: (run := cluster.run_of(label)) is not None and run.ended_at and run,
        "the run to end on the other worker",
    )
    cluster.wait_for(
        lambda: found.id in [e["run_id"] for e in cluster.events("run_end")],
        "the run's end in a node's log",
    )
    return found


def _running(workers: list[Node], job: int) -> Node:
    for worker in workers:
        if any(e.get("job") == job for e in worker.events("run_start")):
            return worker
    raise AssertionError(f"no worker started job {job}")


def test_a_run_whose_worker_is_killed_resumes_on_another_without_redoing_finished_tasks(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=LATENCY_S) as cluster:
        workers = _start_two_workers(cluster)
        job = cluster.defer("relay", "k1")
        cluster.wait_for(lambda: cluster.model.seen("k1", "relay/t2"), "task t2 to be in flight")
        victim = _running(workers, job)
        survivor = next(w for w in workers if w is not victim)
        victim.kill()
        killed = time.monotonic()

        run = _ended(cluster, "k1")
        took = time.monotonic() - killed
        assert run.status.value == "succeeded"
        calls = cluster.model.counts()
        assert calls[("k1", "relay/t1")] == 1  # finished before the kill: not redone
        assert calls[("k1", "relay/t2")] in (1, 2)  # in flight at the kill: done again
        assert calls[("k1", "relay/t3")] == calls[("k1", "relay/t4")] == 1
        assert [e["run_id"] for e in survivor.events("run_end")] == [run.id]
        assert any(e.get("queue_job") == job for e in survivor.events("job_recovered"))
        assert [e["run_id"] for e in survivor.events("run_resumed")] == [run.id]
        # Found within the stall timeout, then one run's worth of work (and a slack for
        # the survivor's first model call, which loads litellm).
        one_run = TASKS * LATENCY_S
        assert took < cluster.stall_timeout_s + one_run + 15, took


def test_a_run_whose_worker_stops_gracefully_is_handed_over_at_its_next_checkpoint(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=LATENCY_S) as cluster:
        workers = _start_two_workers(cluster)
        job = cluster.defer("relay", "g1")
        cluster.wait_for(lambda: cluster.model.seen("g1", "relay/t2"), "task t2 to be in flight")
        leaving = _running(workers, job)
        staying = next(w for w in workers if w is not leaving)
        assert leaving.stop() == 0

        run = _ended(cluster, "g1")
        assert run.status.value == "succeeded"
        calls = cluster.model.counts()
        assert [calls[("g1", f"relay/t{n}")] for n in range(1, TASKS + 1)] == [1] * TASKS
        assert [e["run_id"] for e in leaving.events("run_handed_over")] == [run.id]
        assert [e["run_id"] for e in staying.events("run_end")] == [run.id]
        assert not staying.events("job_recovered")  # handed over, not found stalled
