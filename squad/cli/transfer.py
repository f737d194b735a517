"""``squad export`` and ``squad import``: a squad, with its history, moved to another home."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from squad.cli.context import open_app
from squad.cli.output import Output, human_size

__all__ = ["register"]

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def export(
    squad: Annotated[str, typer.Argument(help="The squad to export.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The archive to write (a new .tar.gz file).")
    ],
    without_history: Annotated[
        bool,
        typer.Option("--without-history", help="Leave the workspace's .git out (files only)."),
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Write a squad to one file: its workspace with its history, its agents' experience,
    its decisions, the home's boot files and its YAML. Refused, with nothing written, when
    any part holds a credential, the file exists, or the squad is running."""
    from squad.transfer.export import export_squad

    out = Output(json_mode=json_output)
    with open_app() as app:
        report = export_squad(app, squad, output, with_history=not without_history)
    if json_output:
        out.json(
            {
                "squad": report.squad,
                "archive": str(report.path),
                "files": report.files,
                "commits": report.commits,
                "facts": report.facts,
                "decisions": report.decisions,
                "bytes": report.bytes,
            }
        )
        return
    out.line(
        f"exported {report.squad} to {report.path} ({human_size(report.bytes)}): "
        f"{report.files} files, {report.commits} commits, {report.facts} experience facts, "
        f"{report.decisions} decisions",
        style="green",
    )


def import_(
    archive: Annotated[Path, typer.Argument(help="An archive written by `squad export`.")],
    as_name: Annotated[
        str | None, typer.Option("--as", help="Import under this squad name instead.")
    ] = None,
    merge: Annotated[
        bool,
        typer.Option(
            "--merge",
            help="Add the archive's experience facts to namespaces this home already has "
            "(the facts they lack; duplicates are skipped).",
        ),
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Bring in a squad exported from another home: workspace and history, experience,
    decisions, YAML (into the squads folder) and the boot files this home lacks. An
    existing squad is never overwritten (use --as); nothing is written for a bad archive."""
    from squad.transfer.imports import import_squad

    out = Output(json_mode=json_output)
    with open_app() as app:
        report = import_squad(app, archive, name=as_name, merge=merge)
    if json_output:
        out.json(
            {
                "squad": report.squad,
                "workspace": str(report.workspace),
                "commits": report.commits,
                "facts_added": report.facts_added,
                "facts_skipped": report.facts_skipped,
                "decisions": report.decisions,
                "yaml": str(report.yaml) if report.yaml else None,
                "boot_written": report.boot_written,
                "boot_kept": report.boot_kept,
            }
        )
        return
    out.line(f"imported {report.squad} into {report.workspace}", style="green")
    out.line(
        f"  history: {report.commits} commits; experience: {report.facts_added} facts added"
        + (f", {report.facts_skipped} already here" if report.facts_skipped else "")
        + f"; decisions: {report.decisions}"
    )
    if report.yaml is not None:
        out.line(f"  definition: {report.yaml} (the daemon schedules it from there)")
    else:
        out.line("  definition: a file of that name is already in the squads folder; left as it is")
    if report.boot_written:
        out.line(f"  boot files written: {', '.join(report.boot_written)}")
    if report.boot_kept:
        out.line(f"  boot files kept (this home has its own): {', '.join(report.boot_kept)}")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_)
