"""``squad memory scan``: the current credential detector over everything already stored."""

from __future__ import annotations

from typing import Annotated

import typer

from squad.cli.context import open_app
from squad.cli.output import Output

__all__ = ["register"]

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def register(memory_app: typer.Typer) -> None:
    """Add ``scan`` to ``squad memory``."""
    memory_app.command("scan")(scan)


def scan(
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Redact what is found where it lies ([REDACTED:<kind>]), with an audit line "
            "per value and a commit per workspace.",
        ),
    ] = False,
    squad: Annotated[
        str | None,
        typer.Option("--squad", help="Only this squad: its workspace, rows and checkpoints."),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Scan stored memory, conversations, logs and checkpoints for credentials.

    Runs the current detector over memory.md files, daily logs, working memory, chat
    summaries, task outputs, plans, decisions, boot files, run logs, MCP journals, audit logs,
    the conversation store, Layer A, conversation archives, the review queue, runs and run
    checkpoints. Each find is named by place and kind, never by value. With --fix each value
    becomes [REDACTED:<kind>]. A workspace's git history keeps what was committed before: rotate
    every credential found.

    Exit codes: 0 nothing found, or all of it redacted; 1 credentials remain (found without
    --fix, or left by --fix: a read-only file, a live run); 2 bad input (an unknown squad).
    """
    from squad.scan import scan_home

    out = Output(json_mode=json_output)
    with open_app() as app:
        report = scan_home(app, fix=fix, squad=squad)
    if json_output:
        out.json(report.to_dict())
    else:
        for line in report.lines():
            style = "yellow" if line.startswith("note:") else None
            out.line(line, style=style)
    if report.exit_code:
        raise typer.Exit(report.exit_code)
