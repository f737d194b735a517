"""``squad mcp``: squad's MCP server over stdio, for Claude Code, Codex and other MCP hosts.

The host launches ``squad mcp`` and talks JSON-RPC on its stdin and stdout, so nothing else
may be written to stdout: messages go to stderr. The parent process is trusted (it could
read the squad home anyway); ``--squad`` and ``--read-only`` narrow what the client reaches.
Runs it starts (and approvals it gives) each get a process of their own, which goes on after
the host ends the session (:mod:`squad.mcp.detached`); a daemon's ``/mcp`` endpoint hands runs
to the daemon instead.
"""

from __future__ import annotations

import signal
from typing import Annotated

import typer

from squad.cli.mcp_config import Host
from squad.cli.signals import on_stop_signals

__all__ = ["register"]


class _Stop(Exception):
    """A stop signal while serving."""


def mcp(
    squads: Annotated[
        list[str] | None,
        typer.Option(
            "--squad",
            help="Show only this squad (repeat for more; default: every squad).",
            show_default=False,
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Offer only the reading tools: no remember, forget, decision_record or runs.",
        ),
    ] = False,
    print_config: Annotated[
        Host | None,
        typer.Option(
            "--print-config",
            help="Print how Claude Code (claude), Codex (codex) or Cursor (cursor) should "
            "launch this server, from any folder, and exit.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve squad's memory, decisions and runs to an MCP client over stdio."""
    if print_config is not None:
        _print_config(print_config, squads or [], read_only)
        return
    import anyio

    from squad.app import App
    from squad.mcp.detached import ProcessControl
    from squad.mcp.server import build_server
    from squad.mcp.tools import Scope
    from squad.settings import Settings

    settings = Settings.load()
    with App.open(settings) as app:
        names = sorted(set(squads or ()))
        for name in names:
            app.squads.locate(name)  # an unknown squad is a usage error before serving
        scope = Scope(frozenset(names) if names else None, read_only)
        control = None if read_only else ProcessControl(app)
        server = build_server(app, control=control, scope=scope)

        def stop(sig: signal.Signals) -> None:
            raise _Stop(sig.name)

        try:
            with on_stop_signals(stop):
                anyio.run(server.run_stdio_async)
        except* _Stop:
            pass
        finally:
            if control is not None:
                control.close()


def _print_config(host: Host, squads: list[str], read_only: bool) -> None:
    """The host's configuration for ``squad mcp`` with these options, on stdout."""
    from squad.cli.mcp_config import WHERE, render, server_command, server_env
    from squad.cli.output import visible
    from squad.settings import Settings

    settings = Settings.load()
    args = ["mcp", *(f"--squad={name}" for name in sorted(set(squads)))]
    if read_only:
        args.append("--read-only")
    env = server_env(settings.home, settings.configs, settings.workspaces)
    typer.echo(render(host, [*server_command(), *args], env), nl=False)
    typer.echo(f"# {WHERE[host]}", err=True)
    if not settings.squads_dir.is_dir():
        typer.echo(
            visible(
                f"# note: no squads folder at {settings.squads_dir}; run this from the folder "
                "holding configs/ (or set SQUAD_CONFIGS) to serve its squads"
            ),
            err=True,
        )


def register(app: typer.Typer) -> None:
    app.command()(mcp)
