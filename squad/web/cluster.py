"""The cluster on the dashboard: ``/api/v1/cluster`` answers
:func:`squad.jobqueue.view.cluster_view` as it is, and the overview's Cluster section shows the
same view, taken from the status it already holds (``squad status`` reads the cluster once
per poll, and says why when its queue is out of reach)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from squad.errors import NotFound, SquadError, StoreError
from squad.views import ClusterView

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["NOT_CLUSTERED", "cluster", "cluster_panel"]

NOT_CLUSTERED = (
    "this home is not part of a cluster: to turn cluster mode on, set "
    "cluster: {enabled: true} in settings.yaml (with a PostgreSQL database_url every node "
    "shares) and restart the daemon"
)
NODE_STATES = ("up", "lost", "stopped")


def cluster(app: App, *, now: datetime) -> ClusterView:
    """The cluster's nodes, queue and jobs; NotFound when the home is not in a cluster, a
    StoreError (503) when its queue cannot be read."""
    if not app.settings.clustered:
        raise NotFound(NOT_CLUSTERED)
    from squad.jobqueue.view import cluster_view

    try:
        return cluster_view(app.cluster, app.store, now=now)
    except StoreError:
        raise
    except SquadError as exc:
        raise StoreError(str(exc)) from exc


def cluster_panel(status: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the overview's Cluster section shows, from the status's ``cluster`` entry: None
    when the home is not in a cluster, ``{"error": ...}`` when its queue was out of reach,
    else the view with the nodes counted by state and every job once (running or stalled),
    each with the run its node says it works on."""
    view = status.get("cluster")
    if view is None:
        return None
    if "error" in view:
        return {"error": str(view["error"])}
    counts = Counter(node["state"] for node in view["nodes"])
    runs = {r["job"]: r.get("run_id") for node in view["nodes"] for r in node["running"]}
    jobs = list(view["running"])
    seen = {job["job"] for job in jobs}
    jobs += [job for job in view["stalled"] if job["job"] not in seen]
    return {
        **view,
        "counts": {state: counts.get(state, 0) for state in NODE_STATES},
        "jobs": [{**job, "run_id": job["run_id"] or runs.get(job["job"])} for job in jobs],
    }
