"""A node frozen (SIGSTOP: a long GC pause, a frozen VM) past the stall timeout loses its run
to the cluster, and the database, not the node, makes that stick.

* The other nodes wait for the squad's run lock the frozen process still holds without using
  up the job's attempts, and their claim of the run raises its fencing epoch.
* When the frozen node wakes, its late writes carry the old epoch and the database refuses
  them: it stops its run without marking anything, and leaves the job alone.
* The run ends once, on the node that took it over, and its job ends as the run did.
* A frozen node that dies instead is resumed elsewhere; a run whose job ended before it
  did (what the old bug left behind) is resumed by the next node to start.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Engine

from squad.store.records import RunRecord
from tests.support.cluster import Cluster, Node, cluster_on

pytestmark = pytest.mark.postgres

LATENCY_S = 0.8
TASKS = 4
ATTEMPTS = 3
"""A small ``cluster.max_attempts``: waiting on a frozen node must not use them up."""
SETTLE_S = 60.0


def _two_workers(cluster: Cluster) -> list[Node]:
    cluster.write_settings(max_attempts=ATTEMPTS)
    cluster.add_squad("relay", tasks=TASKS)
    cluster.register("relay")
    workers = [cluster.start("worker", f"w{n}", "--concurrency", "1") for n in range(2)]
    cluster.wait_for(lambda: all(w.events("node_start") for w in workers), "the workers")
    return workers


def _runner_of(workers: list[Node], job: int) -> Node:
    for worker in workers:
        if any(e.get("job") == job for e in worker.events("run_start")):
            return worker
    raise AssertionError(f"no worker started job {job}")


def _freeze_past_the_attempts(cluster: Cluster, victim: Node, survivor: Node, job: int) -> None:
    """Freeze the node running ``job`` until the survivor has tried the job more times than
    it has attempts (or the queue gave the job up, as it used to)."""
    victim.freeze()
    cluster.wait_for(
        lambda: (
            len([e for e in survivor.events("run_start") if e.get("job") == job]) > ATTEMPTS + 1
            or cluster.job_status(job) == "failed"
        ),
        "the survivor to try the frozen node's run again and again",
        timeout=SETTLE_S,
    )


def _ended(cluster: Cluster, label: str) -> RunRecord:
    found: RunRecord = cluster.wait_for(
        lambda: (run := cluster.run_of(label)) is not None and run.ended_at and run,
        f"run {label} to end",
        timeout=SETTLE_S,
    )
    return found


def _job_ended(cluster: Cluster, job: int) -> str:
    status: str = cluster.wait_for(
        lambda: (s := cluster.job_status(job)) not in ("todo", "doing") and s,
        f"job {job} to end",
        timeout=SETTLE_S,
    )
    return status


def _no_queue_errors(*nodes: Node) -> None:
    for node in nodes:
        assert "Job was not found" not in node.stderr(), node.stderr()[-3000:]
        assert "invalid status" not in node.stderr(), node.stderr()[-3000:]


def _run_row(cluster: Cluster, run_id: str) -> tuple[int, str | None]:
    with cluster.admin.begin() as connection:
        row = connection.execute(
            text(f'SELECT epoch, owner FROM "{cluster.schema}".runs WHERE id = :id'),
            {"id": run_id},
        ).one()
    return int(row.epoch), row.owner


def test_a_frozen_node_that_wakes_is_fenced_by_the_database_and_the_run_ends_once_elsewhere(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=LATENCY_S) as cluster:
        workers = _two_workers(cluster)
        job = cluster.defer("relay", "f1")
        cluster.wait_for(lambda: cluster.model.seen("f1", "relay/t2"), "task t2 to be in flight")
        victim = _runner_of(workers, job)
        survivor = next(w for w in workers if w is not victim)
        _freeze_past_the_attempts(cluster, victim, survivor, job)
        victim.thaw()

        run = _ended(cluster, "f1")
        assert _job_ended(cluster, job) == "succeeded"  # as the run ended
        assert run.status.value == "succeeded"
        # The woken node's first write (t2's end, at its old epoch) was refused: it stopped
        # without marking the run, and the run ended once, on the node of the last claim
        # (the survivor, or the woken node taking the job again with a claim of its own).
        fenced = victim.events("run_fenced")
        assert [e["run_id"] for e in fenced] == [run.id]
        ends = [e for e in cluster.events("run_end") if e.get("run_id") == run.id]
        assert len(ends) == 1
        epoch, owner = _run_row(cluster, run.id)
        assert owner == ends[0]["node"]
        assert epoch > fenced[0]["epoch"]
        # Waiting for the frozen node's lock used no attempt: only the sweep's hand-over.
        assert not [e for e in cluster.events("run_error") if e.get("job") == job]
        calls = cluster.model.counts()
        assert calls[("f1", "relay/t1")] == 1
        assert calls[("f1", "relay/t2")] == 2  # the frozen node's call, then the survivor's
        assert calls[("f1", "relay/t3")] == calls[("f1", "relay/t4")] == 1
        # Both nodes are still up and neither failed to mark a job.
        assert victim.alive() and survivor.alive()
        _no_queue_errors(victim, survivor)


def test_a_frozen_node_that_dies_has_its_run_resumed_by_another(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=LATENCY_S) as cluster:
        workers = _two_workers(cluster)
        job = cluster.defer("relay", "d1")
        cluster.wait_for(lambda: cluster.model.seen("d1", "relay/t2"), "task t2 to be in flight")
        victim = _runner_of(workers, job)
        survivor = next(w for w in workers if w is not victim)
        _freeze_past_the_attempts(cluster, victim, survivor, job)
        victim.kill()

        run = _ended(cluster, "d1")
        assert run.status.value == "succeeded"
        assert _job_ended(cluster, job) == "succeeded"
        assert [e["run_id"] for e in survivor.events("run_end")] == [run.id]
        calls = cluster.model.counts()
        assert calls[("d1", "relay/t1")] == 1
        assert calls[("d1", "relay/t3")] == calls[("d1", "relay/t4")] == 1
        _no_queue_errors(survivor)


def test_a_run_left_running_by_a_job_that_ended_is_resumed_when_a_node_starts(
    tmp_path: Path, postgres_admin: Engine
) -> None:
    with cluster_on(tmp_path, postgres_admin, latency_s=LATENCY_S) as cluster:
        cluster.add_squad("relay", tasks=TASKS)
        cluster.register("relay")
        first = cluster.start("worker", "w0", "--concurrency", "1")
        job = cluster.defer("relay", "o1")
        cluster.wait_for(lambda: cluster.model.seen("o1", "relay/t2"), "task t2 to be in flight")
        first.freeze()
        # What the old bug left behind: the job given up (failed) while its run went on,
        # then the node that ran it dies.
        client = cluster.app.cluster
        client.call(client.open().fail(job))
        first.kill()
        stuck = cluster.run_of("o1")
        assert stuck is not None and stuck.status.value == "running"

        again = cluster.start("worker", "w1", "--concurrency", "1")
        run = _ended(cluster, "o1")
        assert run.id == stuck.id and run.status.value == "succeeded"
        # the node writes the run's row, then its workspace commit, then logs run_end
        cluster.wait_for(lambda: again.events("run_end"), "the run's end in w1's log")
        assert [e["run_id"] for e in again.events("run_end")] == [run.id]
        calls = cluster.model.counts()
        assert calls[("o1", "relay/t1")] == 1  # resumed from its checkpoint
        assert calls[("o1", "relay/t3")] == calls[("o1", "relay/t4")] == 1
        _no_queue_errors(again)
