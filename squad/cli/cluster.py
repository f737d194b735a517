"""``squad worker`` (a cluster node that only works) and ``squad cluster nodes``."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from squad.cli.output import Output
from squad.cli.signals import on_signals

__all__ = ["register"]

cluster_app = typer.Typer(
    help="A cluster of daemons and workers on one PostgreSQL (cluster.enabled).",
    no_args_is_help=True,
)


def worker(
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            max=64,
            help="Runs at once on this node (default: daemon.max_concurrent_runs).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Work on the cluster's jobs (runs, extraction passes, maintenance) until stopped.

    Needs cluster.enabled and the Postgres every node shares; schedules nothing and never
    reads the squads folder (the daemons register the squads in the store). SIGTERM or
    Ctrl-C: running runs stop at their next checkpoint and go back to the queue, where
    another node resumes them (a second signal hands them back at once). Events go to
    $SQUAD_HOME/worker.jsonl.
    """
    from squad.app import App
    from squad.cli.daemon import _echo
    from squad.cluster.node import ClusterNode
    from squad.daemon.eventlog import DaemonLog
    from squad.daemon.fatal import report_fatal_signals
    from squad.daemon.malloc import limit_arenas
    from squad.errors import UsageError
    from squad.settings import Settings

    limit_arenas()  # as `squad daemon`: a node runs for weeks
    report_fatal_signals()  # a crash says where, in the node's own stderr
    err = Output(stream=sys.stderr)
    settings = Settings.load()
    if not settings.clustered:
        raise UsageError(
            "squad worker works for a cluster: set cluster: {enabled: true} and a PostgreSQL "
            f"database_url in {settings.configs / 'settings.yaml'} (see docs/cluster.md, "
            '"Running on many machines")'
        )
    retention = settings.daemon.retention
    log = DaemonLog(
        settings.home / "worker.jsonl",
        echo=_echo(err),
        max_bytes=retention.daemon_log_mb * 1024 * 1024,
        keep=retention.daemon_log_files,
    )
    stop, force = threading.Event(), threading.Event()

    def handle(sig: signal.Signals) -> None:
        if stop.is_set():
            force.set()
        stop.set()

    left: list[int] = []
    with App.open(settings) as app:
        _preload_registered(app)
        app.checkpoints.setup()
        node = ClusterNode(
            app,
            log.emit,
            role="worker",
            concurrency=concurrency or settings.daemon.max_concurrent_runs,
        )
        with on_signals(handle, (signal.SIGINT, signal.SIGTERM)):
            node.start()
            while not stop.wait(1.0):
                pass
            log.emit("stopping", running=node.work.running() or None)
            left = node.stop(settings.daemon.shutdown_grace_s, force=force)
        if left:
            # Their jobs are back in the queue; the threads still in a model call must not
            # keep this process (nor write anything more).
            log.emit("exit", handed_back=left)
            os._exit(1)


def _preload_registered(app: Any) -> None:
    """Start litellm's import in the background when a squad registered in the store (what
    this worker may be handed) calls a real model; a definition that no longer validates is
    left for the job that runs it to report."""
    from squad.errors import SquadError
    from squad.model.factory import preload_client, squad_models
    from squad.spec.loader import squad_from_dict

    names: list[str] = []
    for record in app.store.list_squads():
        if record.definition is None:
            continue
        try:
            spec = squad_from_dict(record.definition, source=f"squad {record.name!r} in the store")
        except SquadError:
            continue
        names += squad_models(spec)
    preload_client(names, factory=app.model_factory)


def nodes(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of text.")
    ] = False,
) -> None:
    """The cluster's nodes with their last heartbeat and what each runs; the queue's depth,
    running and stalled jobs."""
    from squad.cli.context import open_app
    from squad.jobqueue.view import cluster_view

    out = Output(json_mode=json_output)
    with open_app() as app:
        view = cluster_view(app.cluster, app.store, now=app.clock())
    if json_output:
        out.json(view)
        return
    render_cluster(out, view.model_dump(mode="json"))


def render_cluster(out: Output, view: Mapping[str, Any]) -> None:
    from squad.cli.status import ago

    live = [n for n in view["nodes"] if n["state"] == "up"]
    out.line(
        f"cluster: {len(live)} of {len(view['nodes'])} nodes up; "
        f"{view['queue']['waiting']} jobs waiting, {len(view['running'])} running, "
        f"{len(view['stalled'])} stalled (stall timeout {view['stall_timeout_s']:g}s)"
    )
    width = max((len(n["name"]) for n in view["nodes"]), default=0)
    for node in view["nodes"]:
        style = {"up": "green", "lost": "red"}.get(node["state"])
        runs = ", ".join(
            f"{r['squad']} (run {r['run_id'] or 'starting'}, job {r['job']})"
            for r in node["running"]
        )
        out.line(
            f"  {node['name']:<{width}}  {node['state']:<7} {node['role']:<9} "
            f"{node['host']} pid {node['pid']}, beat {ago(node['beat_age_s'])} ago"
            + (f"; runs {runs}" if runs else ""),
            style=style if out.rich else None,
        )
    for job in view["stalled"]:
        out.line(
            f"  stalled: job {job['job']} {job['task']} {job['what']} on "
            f"{job['node'] or 'a lost worker'} (attempt {job['attempts'] + 1})",
            style="red" if out.rich else None,
        )


def register(app: typer.Typer) -> None:
    app.command()(worker)
    cluster_app.command()(nodes)
    app.add_typer(cluster_app, name="cluster")
