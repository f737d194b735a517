"""``squad daemon`` (alias ``squad up``), ``squad dashboard`` and ``squad stop``
(``squad status`` is :mod:`squad.cli.status`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from squad.cli.options import ConfigsOption
from squad.cli.output import Output
from squad.cli.signals import on_signals
from squad.cli.status import status

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


def _echo(err: Output, home: Path | None = None, out: Output | None = None) -> Any:
    """Each daemon event as one line on stderr: time, event, then its fields; when the
    dashboard is up, its login link on stdout (the command's output; never in the log)."""

    def show(event: dict[str, Any]) -> None:
        _show(event)
        if event.get("event") == "http_ready" and home is not None:
            _print_login(out or Output(stream=sys.stdout), str(event.get("url")), home)

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


def _print_login(out: Output, url: str, home: Path) -> None:
    """The dashboard's address and login link, on stdout: what the command gives its user
    (a script reads it from there); its logs are on stderr."""
    from squad.web.server import login_url
    from squad.web.tokens import read_token

    token = read_token(home)
    _say(out, f"dashboard: {url}", style="bold" if out.rich else None)
    if token:
        _say(out, f"  log in:  {login_url(url, token)}")


def _say(err: Output, text: str, *, style: str | None = None) -> None:
    """A line on the terminal, if there still is one: after SIGHUP (the terminal closed) the
    daemon goes on, and writing there fails with EIO; its log file keeps every event. Sent
    at once: a long-lived process's piped stdout would otherwise hold it in its buffer."""
    with contextlib.suppress(OSError, ValueError):
        err.line(text, style=style)
        err.stream.flush()


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
    from squad.daemon.fatal import report_fatal_signals
    from squad.daemon.malloc import limit_arenas
    from squad.daemon.service import Daemon
    from squad.settings import Settings

    environ = dict(os.environ)  # as the shell gave it: what `squad run` compares its own to
    limit_arenas()  # before any thread: weeks of runs must not fragment a dozen arenas
    report_fatal_signals()  # a crash says where, in the node's own stderr
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
            echo=_echo(err, settings.home, Output(stream=sys.stdout)),
            reload_settings=Settings.load,
            attachments=attachments,
            layout=_cluster_layout() if settings.clustered else None,
            environ=environ,
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
            out = Output(stream=sys.stdout)  # the command's output; what it logs is on stderr
            _say(out, f"dashboard: {bound.url}", style="bold" if out.rich else None)
            _say(out, f"  log in:  {link}")
            if web.mcp:
                _say(out, f"  MCP:     {bound.url}mcp (Authorization: Bearer <api-token>)")
            _say(err, "Ctrl-C stops it")
            if open_browser:
                import webbrowser

                webbrowser.open(link)
            with on_signals(lambda _sig: stop.set(), (signal.SIGINT, signal.SIGTERM)):
                while not stop.wait(0.5):
                    pass
        finally:
            server.stop()
            control.close(settings.daemon.shutdown_grace_s)


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
