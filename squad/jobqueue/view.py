"""What ``squad cluster nodes``, ``squad status`` and the dashboard show of a cluster: its
nodes with their last heartbeat, the queue's depth, the jobs running and on which node, and
the stalled ones (their node stopped beating; the next sweep puts them back in the queue)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from squad.views import ClusterJob, ClusterNode, ClusterQueue, ClusterView, NodeRun

if TYPE_CHECKING:
    from squad.jobqueue.client import ClusterClient
    from squad.jobqueue.queue import JobInfo
    from squad.store import Store

__all__ = ["cluster_view", "node_state"]


def node_state(
    beat_age_s: float, stopped: bool, stall_timeout_s: float
) -> Literal["up", "stopped", "lost"]:
    """``up``, ``stopped`` (it said so) or ``lost`` (no beat for the stall timeout)."""
    if stopped:
        return "stopped"
    return "lost" if beat_age_s > stall_timeout_s else "up"


def cluster_view(client: ClusterClient, store: Store, *, now: datetime) -> ClusterView:
    """The cluster as the store and the queue see it now (opens the queue's connection)."""
    queue = client.open()
    timeout = client.settings.cluster.stall_timeout_s
    records = store.cluster.list()
    by_worker = {r.worker_id: r.name for r in records if r.worker_id is not None}
    doing: list[JobInfo] = client.call(queue.jobs("doing"))
    stalled: list[JobInfo] = client.call(queue.stalled())
    depth: dict[str, int] = client.call(queue.depth())
    stalled_ids = {job.id for job in stalled}
    nodes = []
    for record in records:
        age = max(0.0, (now - record.beat_at).total_seconds())
        state = node_state(age, record.stopped_at is not None, timeout)
        beat = record.state or {}
        nodes.append(
            ClusterNode(
                name=record.name,
                host=record.host,
                pid=record.pid,
                role=record.role,
                state=state,
                beat_age_s=round(age, 1),
                started_at=record.started_at.isoformat(),
                worker_id=record.worker_id,
                concurrency=beat.get("concurrency"),
                running=[
                    NodeRun.model_validate(run)
                    for run in (beat.get("running", []) if state == "up" else [])
                ],
            )
        )
    return ClusterView(
        stall_timeout_s=timeout,
        nodes=nodes,
        queue=ClusterQueue(waiting=sum(depth.values()), by_queue=depth),
        running=[_job(job, by_worker, job.id in stalled_ids) for job in doing],
        stalled=[_job(job, by_worker, True) for job in stalled],
    )


def _job(job: JobInfo, by_worker: dict[int, str], stalled: bool) -> ClusterJob:
    args = job.args
    what = args.get("squad") if "agent" not in args else f"{args.get('squad')}/{args['agent']}"
    return ClusterJob(
        job=job.id,
        task=job.task,
        what=what or args.get("name"),
        run_id=args.get("run_id"),
        attempts=job.attempts,
        node=None if job.worker_id is None else by_worker.get(job.worker_id),
        worker_id=job.worker_id,
        stalled=stalled,
    )
