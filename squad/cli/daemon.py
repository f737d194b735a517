"""``squad daemon`` (alias ``squad up``), ``squad status`` and ``squad stop``."""

from __future__ import annotations

import contextlib
import signal
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from squad.cli.context import open_app
from squad.cli.output import Output
from squad.cli.signals import on_signals

if TYPE_CHECKING:
    from squad.daemon.service import Daemon

__all__ = ["register"]

PortOption = Annotated[
    int | None,
    typer.Option(
        "--port",
        min=0,
        max=65535,
        help="TCP port of the dashboard (default: daemon.http.port, 8765; 0: any free port).",
        show_default=False,
    ),
]

ConfigsOption = Annotated[
    Path | None,
    typer.Option(
        "--configs",
        help="The folder of squad YAML files (default: configs/squads, or SQUAD_CONFIGS/squads).",
        show_default=False,
    ),
]


def _echo(err: Output, home: Path | None = None) -> Any:
    """Each daemon event as one line on stderr: time, event, then its fields; when the
    dashboard is up, its login link (on the terminal only, never in the log)."""

    def show(event: dict[str, Any]) -> None:
        _show(event)
        if event.get("event") == "http_ready" and home is not None:
            _print_login(err, str(event.get("url")), home)

    def _show(event: dict[str, Any]) -> None:
        stamp = str(event.get("time", ""))[11:19]
        name = str(event.get("event"))
        blocks = ("error", "warnings")  # multi-line: printed indented below the event
        fields = " ".join(
            f"{k}={v}" for k, v in event.items() if k not in ("time", "event", *blocks)
        )
        style = "red" if name.endswith("error") else "cyan" if err.rich else None
        _say(err, f"{stamp}  {name}  {fields}".rstrip(), style=style)
        for key, colour in (("error", "red"), ("warnings", "yellow")):
            value = event.get(key)
            lines = value if isinstance(value, list) else str(value or "").splitlines()
            for line in lines:
                _say(err, f"    {line}", style=colour if err.rich else None)

    return show


def _stop_on_signal(daemon: Daemon, err: Output) -> AbstractContextManager[None]:
    """SIGINT/SIGTERM: stop gracefully; a second one: stop without waiting for runs.
    SIGHUP: reload the settings and the squads folder (the daemon goes on)."""
    received: list[signal.Signals] = []

    def handle(sig: signal.Signals) -> None:
        if sig is signal.SIGHUP:
            daemon.request_reload(sig.name)
            return
        received.append(sig)
        daemon.request_stop(sig.name)
        if len(received) == 1:
            _say(
                err,
                f"{sig.name}: stopping; running steps finish first (again to stop at once)",
                style="yellow" if err.rich else None,
            )

    return on_signals(handle, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))


def _print_login(err: Output, url: str, home: Path) -> None:
    from squad.web.server import login_url
    from squad.web.tokens import read_token

    token = read_token(home)
    _say(err, f"dashboard: {url}", style="bold" if err.rich else None)
    if token:
        _say(err, f"  log in:  {login_url(url, token)}")


def _say(err: Output, text: str, *, style: str | None = None) -> None:
    """A line on the terminal, if there still is one: after SIGHUP (the terminal closed) the
    daemon goes on, and writing there fails with EIO; its log file keeps every event."""
    with contextlib.suppress(OSError):
        err.line(text, style=style)


def daemon(
    configs: ConfigsOption = None,
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            "--exit-when-idle",
            help="Run the start-up work (resumes, run_on_start squads), then exit when no run "
            "is left: 0 if none failed, else 1. Schedules and the watcher are not started.",
        ),
    ] = False,
    auto_approve: Annotated[
        bool,
        typer.Option("--auto-approve", help="Approve every approval gate (unattended demos)."),
    ] = False,
    http: Annotated[
        bool | None,
        typer.Option(
            "--http/--no-http",
            help="Serve the dashboard and API (default: daemon.http.enabled; never with --once).",
            show_default=False,
        ),
    ] = None,
    port: PortOption = None,
) -> None:
    """Schedule every squad in the configs folder and run them; reload files as they change.

    One daemon per squad home. SIGTERM or Ctrl-C stops it after the running steps reach
    their checkpoint; the next start resumes them. Events go to $SQUAD_HOME/daemon.jsonl.
    It also serves the dashboard and the HTTP API (daemon.http in settings.yaml) and prints
    the login link.
    """
    from squad.app import App
    from squad.daemon.malloc import limit_arenas
    from squad.daemon.service import Daemon
    from squad.settings import Settings

    limit_arenas()  # before any thread: weeks of runs must not fragment a dozen arenas
    err = Output(stream=sys.stderr)
    settings = Settings.load()
    web = settings.daemon.http
    serve = (web.enabled and not once) if http is None else http
    if serve:
        _warn_if_exposed(err, web.host)
    with App.open(settings) as app:
        attachments = []
        if serve:
            from squad.web.server import WebAttachment

            attachments.append(
                WebAttachment(
                    app,
                    host=web.host,
                    port=web.port if port is None else port,
                    allowed_hosts=web.allowed_hosts,
                    extensions=_mcp_endpoint(web.mcp),
                )
            )
        service = Daemon(
            app,
            squads_dir=configs.resolve() if configs is not None else None,
            exit_when_idle=once,
            auto_approve=auto_approve,
            echo=_echo(err, settings.home),
            reload_settings=Settings.load,
            attachments=attachments,
            layout=_cluster_layout() if settings.clustered else None,
        )
        with _stop_on_signal(service, err):
            code = service.run()
    raise typer.Exit(code)


def _cluster_layout() -> Any:
    """In a cluster, runs go to the shared queue and this daemon is one of its nodes."""
    from squad.cluster.daemon import cluster_components

    return cluster_components


def _mcp_endpoint(enabled: bool) -> list[Any]:
    """``/mcp`` on the web server unless ``daemon.http.mcp`` turns it off."""
    if not enabled:
        return []
    from squad.mcp.http import mcp_endpoint

    return [mcp_endpoint()]


def _warn_if_exposed(err: Output, host: str) -> None:
    from squad.settings import LOOPBACK_HOSTS

    if host not in LOOPBACK_HOSTS and not host.startswith("127."):
        _say(
            err,
            f"warning: the dashboard listens on {host}, not only on this machine: anyone who "
            "can reach it and has the token can drive every squad",
            style="yellow" if err.rich else None,
        )


def dashboard(
    port: PortOption = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the dashboard in a web browser.")
    ] = False,
) -> None:
    """Serve the dashboard and HTTP API without the daemon (no schedules: "run now" runs
    in this process). Ctrl-C stops it; running runs stop at their next checkpoint."""
    import signal
    import threading

    from squad.app import App
    from squad.settings import Settings
    from squad.web.control import LocalControl
    from squad.web.server import WebServer, login_url
    from squad.web.tokens import load_or_create_token

    err = Output(stream=sys.stderr)
    settings = Settings.load()
    web = settings.daemon.http
    _warn_if_exposed(err, web.host)
    stop = threading.Event()
    with App.open(settings) as app:
        control = LocalControl(app)
        server = WebServer(
            app,
            control,
            host=web.host,
            port=web.port if port is None else port,
            allowed_hosts=web.allowed_hosts,
            extensions=_mcp_endpoint(web.mcp),
        )
        try:
            bound = server.start()
            link = login_url(bound.url, load_or_create_token(settings.home))
            _say(err, f"dashboard: {bound.url}", style="bold" if err.rich else None)
            _say(err, f"  log in:  {link}")
            if web.mcp:
                _say(err, f"  MCP:     {bound.url}mcp (Authorization: Bearer <api-token>)")
            _say(err, "  Ctrl-C stops it")
            if open_browser:
                import webbrowser

                webbrowser.open(link)
            with on_signals(lambda _sig: stop.set(), (signal.SIGINT, signal.SIGTERM)):
                while not stop.wait(0.5):
                    pass
        finally:
            server.stop()
            control.close(settings.daemon.shutdown_grace_s)


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    whole = int(seconds)
    if whole < 120:
        return f"{whole}s"
    if whole < 7200:
        return f"{whole // 60}m {whole % 60}s"
    return f"{whole // 3600}h {whole % 3600 // 60}m"


def _warning_line(problem: dict[str, Any]) -> str:
    """A warning of the status JSON as ``file:line:col: warning: key.path: message; hint``."""
    where = str(problem.get("source") or "<input>")
    if problem.get("line") is not None:
        where += f":{problem['line']}"
        if problem.get("column") is not None:
            where += f":{problem['column']}"
    text = f"{where}: warning: "
    if problem.get("path"):
        text += f"{problem['path']}: "
    text += str(problem.get("message"))
    return text + (f"; {problem['hint']}" if problem.get("hint") else "")


FULL_LIST_UP_TO = 20
"""Up to this many squads, ``squad status`` lists them all; past it only those with
something to say (``--all`` lists every one)."""


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _summary_line(summary: dict[str, Any]) -> str:
    """``100 squads, 2 running, 1 queued, 4 waiting for approval, ...``."""
    parts = [
        _plural(summary["squads"], "squad"),
        f"{summary['running']} running",
        f"{summary['queued']} queued",
        f"{summary['waiting_approvals']} waiting for approval",
        _plural(summary["failed_files"], "failed file"),
        _plural(summary["failed_runs"], "failed run"),
    ]
    if summary.get("history_paused"):
        parts.append(_plural(summary["history_paused"], "paused history", "paused histories"))
    if summary["backlog_messages"]:
        parts.append(
            f"extraction backlog {summary['backlog_messages']:,} messages "
            f"({_plural(summary['backlog_agents'], 'agent')})"
        )
    else:
        parts.append("extraction backlog none")
    return ", ".join(parts)


def _noteworthy(squad: dict[str, Any]) -> bool:
    """A squad with something to say: busy, waiting, its last run not a success, a warning,
    or a broken file it runs the last good definition of."""
    last = squad.get("last_run") or {}
    return bool(
        squad["running"]
        or squad["queued"]
        or squad.get("warnings")
        or squad.get("file_error")
        or last.get("status") in ("failed", "awaiting_approval", "interrupted", "stopped")
    )


def _render_problems(out: Output, status: dict[str, Any]) -> None:
    """What needs a person, first: broken files, failed runs, paused histories, approvals."""
    red = "red" if out.rich else None
    yellow = "yellow" if out.rich else None
    if status["failed_files"]:
        out.line(f"files that failed to load ({len(status['failed_files'])}):", style=red)
        for failed in status["failed_files"]:
            kept = failed.get("running_last_good")
            note = f"  (squad {kept} runs its last good definition)" if kept else ""
            out.line(f"  {failed['file']}{note}")
            for line in str(failed["error"]).splitlines():
                out.line(f"    {line}")
    broken = [s for s in status["squads"] if s.get("file_error")]
    if broken:
        out.line(f"squads running their last good definition ({len(broken)}):", style=yellow)
        for squad in broken:
            since = squad.get("invalid_since")
            when = f" since {str(since)[:16].replace('T', ' ')} UTC" if since else ""
            out.line(f"  {squad['name']}: {squad['file']} is invalid{when}; fix or remove it")
    failed_runs = [
        s for s in status["squads"] if (s.get("last_run") or {}).get("status") == "failed"
    ]
    if failed_runs:
        out.line(f"failed runs ({len(failed_runs)}, each squad's last):", style=red)
        for squad in failed_runs:
            last = squad["last_run"]
            error = str(last.get("error") or "").splitlines()
            out.line(
                f"  {squad['name']} run {last['id']}: {error[0] if error else 'failed'}"
                f"  (squad logs {squad['name']} --run {last['id']})"
            )
    for paused in status.get("history_paused") or []:
        out.line(
            f"history paused for {paused['squad']} ({paused['state']}): {paused['reason']}",
            style=red,
        )
    approvals = status.get("waiting_approvals") or []
    if approvals:
        out.line(f"waiting for approval ({len(approvals)}):", style=yellow)
        for waiting in approvals:
            since = str(waiting.get("since") or "")[:16].replace("T", " ")
            task = waiting.get("task") or "TASK"
            agent = f" ({waiting['agent']})" if waiting.get("agent") else ""
            out.line(
                f"  {waiting['squad']} run {waiting['run_id']} task {task}{agent}, since "
                f"{since} UTC: squad approve {waiting['run_id']} {task}  (--reject to refuse)"
            )
    restart = status.get("settings_restart_needed") or []
    if restart:
        out.line(
            f"settings.yaml changed {', '.join(restart)}: restart the daemon to apply",
            style=yellow,
        )
    kept = (status.get("checkpoints") or {}).get("left_behind")
    if kept:
        out.line(f"checkpoints: {kept['note']}", style=yellow)


def _render_squad(out: Output, squad: dict[str, Any], width: int) -> None:
    flags = " [running]" if squad["running"] else " [queued]" if squad["queued"] else ""
    if squad.get("file_error"):
        flags += " [file invalid: last good definition]"
    nxt = f"  next {squad['next_fire'][:16].replace('T', ' ')} UTC" if squad["next_fire"] else ""
    out.line(f"  {squad['name']:<{width}}  {squad['schedule']}{nxt}{flags}")
    last = squad["last_run"]
    if last is not None:
        took = f" in {last['duration_s']}s" if last["duration_s"] is not None else ""
        tokens = last["tokens_in"] + last["tokens_out"]
        out.line(
            f"  {'':<{width}}  last run {last['id']}: {last['status']}{took}, "
            f"{tokens:,} tokens, ${last['cost_usd']:.4f}"
        )
    for warning in squad.get("warnings") or []:
        out.line(f"  {'':<{width}}  {_warning_line(warning)}", style="yellow")


def _render(
    out: Output, status: dict[str, Any], *, login: str | None = None, every: bool = False
) -> None:
    """A summary line, then what needs a person, then the squads: past
    :data:`FULL_LIST_UP_TO` squads only those with something to say unless ``every``."""
    info = status["daemon"]
    if info["state"] == "up":
        out.line(
            f"daemon: up (pid {info['pid']} on {info['host']}, up {_ago(info['uptime_s'])}, "
            f"heartbeat {_ago(info['heartbeat_age_s'])} ago)",
            style="green",
        )
    else:
        out.line(f"daemon: down ({info['reason']})", style="yellow")
    out.line(f"  {_summary_line(status['summary'])}")
    out.line(f"  squads folder: {info['configs']}")
    http = status.get("http")
    if http and http.get("url"):
        out.line(f"  dashboard: {http['url']}")
        if login:
            out.line(f"    log in: {login}")
    if info.get("configs_missing"):
        out.line(
            "  the squads folder is missing: no squad is scheduled until it is back",
            style="red" if out.rich else None,
        )
    jobs = [
        f"{name} {job['next_fire'][:16].replace('T', ' ')} UTC"
        for name, job in status.get("jobs", {}).items()
        if job.get("next_fire")
    ]
    if jobs:
        out.line(f"  next jobs: {', '.join(jobs)}")
    _render_problems(out, status)
    cluster = status.get("cluster")
    if cluster is not None:
        from squad.cli.cluster import render_cluster

        if "error" in cluster:
            out.line(f"cluster: unreachable ({cluster['error']})", style="red")
        else:
            render_cluster(out, cluster)
    squads = status["squads"]
    shown = squads if every or len(squads) <= FULL_LIST_UP_TO else list(filter(_noteworthy, squads))
    if not squads:
        out.line("squads: none")
    elif len(shown) == len(squads):
        out.line(f"squads ({len(squads)}):")
    else:
        out.line(f"squads ({len(squads)}; {len(shown)} with something to say):")
    width = max((len(s["name"]) for s in shown), default=0)
    for squad in shown:
        _render_squad(out, squad, width)
    hidden = len(squads) - len(shown)
    if hidden:
        out.line(
            f"  and {_plural(hidden, 'more squad')} with nothing to report "
            "(`squad status --all` lists every squad)"
        )
    backlog = status["extraction_backlog"]
    if backlog:
        out.line(f"extraction backlog: {len(backlog)} agents (--json lists them)")


def status(
    configs: ConfigsOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of text (every squad).")
    ] = False,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help=f"List every squad (past {FULL_LIST_UP_TO}, only those with something to say).",
        ),
    ] = False,
) -> None:
    """A summary, then what needs a person (failed files and runs, paused histories,
    approvals waiting), then each squad's schedule and last run.

    With the daemon up it answers from what the daemon published; down, from the configs
    folder and the store.
    """
    from squad.daemon.status import published_status
    from squad.settings import Settings

    out = Output(json_mode=json_output)
    settings = Settings.load()
    folder = configs.resolve() if configs is not None else None
    # A running daemon published what it knows: no store to open, no file to validate.
    report = None if settings.clustered else published_status(settings.home, squads_dir=folder)
    if report is None:
        from squad.daemon.status import collect_status

        with open_app() as app:
            report = collect_status(app, squads_dir=folder)
    if json_output:
        out.json(report)
        return
    login = None
    http = report.http
    if http and http.get("url"):
        from squad.web.server import login_url
        from squad.web.tokens import read_token

        token = read_token(settings.home)
        login = login_url(str(http["url"]), token) if token else None
    _render(out, report.model_dump(mode="json"), login=login, every=every)


def stop(
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0,
            max=86_400,
            help="Seconds to wait for the daemon to exit (default: its shutdown grace + 15).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Ask the running daemon to stop gracefully (SIGTERM) and wait until it has exited.

    Exits 1 when no daemon is running for this home, or it is still stopping at the timeout.
    """
    import os
    import time

    from squad.daemon.lock import pid_alive, probe_lock
    from squad.errors import SquadError, UsageError
    from squad.settings import Settings

    settings = Settings.load()
    if timeout is not None and timeout < 0:
        raise UsageError(f"--timeout must be 0 or more, got {timeout!r}")
    lock = probe_lock(settings.home)
    if not lock.held or lock.pid is None:
        raise SquadError(f"no daemon is running for {settings.home}; nothing to stop")
    wait = timeout if timeout is not None else settings.daemon.shutdown_grace_s + 15
    try:
        os.kill(lock.pid, signal.SIGTERM)
    except ProcessLookupError:
        raise SquadError(f"no daemon is running for {settings.home}; nothing to stop") from None
    deadline = time.monotonic() + wait
    err = Output(stream=sys.stderr)
    err.line(f"asked daemon pid {lock.pid} to stop; waiting up to {wait:.0f}s")
    while probe_lock(settings.home).held:
        if time.monotonic() >= deadline:
            raise SquadError(
                f"daemon pid {lock.pid} is still stopping after {wait:.0f}s (runs finish their "
                "current step first); wait, or run `squad stop` again"
            )
        time.sleep(0.1)
    # The lock goes first; the process then closes the store and exits: wait for that too.
    while pid_alive(lock.pid):
        if time.monotonic() >= deadline:
            raise SquadError(
                f"daemon pid {lock.pid} let go of {settings.home} but has not exited after "
                f"{wait:.0f}s; see {settings.home / 'daemon.jsonl'}, or end it with "
                f"`kill {lock.pid}`"
            )
        time.sleep(0.05)
    Output().line(f"daemon pid {lock.pid} stopped")


def register(app: typer.Typer) -> None:
    app.command()(daemon)
    app.command("up", help="Same as `squad daemon`.")(daemon)
    app.command()(status)
    app.command()(dashboard)
    app.command()(stop)
