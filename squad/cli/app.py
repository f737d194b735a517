"""Top-level commands: validate, schema, create, restore; ``ws`` lives in its own module."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from squad.cli.cluster import register as register_cluster_commands
from squad.cli.context import open_app
from squad.cli.daemon import register as register_daemon_commands
from squad.cli.decisions import decisions_app
from squad.cli.mcp import register as register_mcp_commands
from squad.cli.memory import memory_app
from squad.cli.memory_history import register as register_memory_history
from squad.cli.memory_review import register as register_memory_review
from squad.cli.memory_scan import register as register_memory_scan
from squad.cli.memory_view import register as register_memory_view
from squad.cli.output import Output, report_error
from squad.cli.run import register as register_run_commands
from squad.cli.runs import runs_app
from squad.cli.scaffold import register as register_scaffold_commands
from squad.cli.transfer import register as register_transfer_commands
from squad.cli.ws import ws_app

if TYPE_CHECKING:
    from squad.errors import Problem
    from squad.spec.models import SquadSpec
    from squad.views import WorkspaceCreated
    from squad.workspace.folders import CreateReport

__all__ = ["app"]

app = typer.Typer(
    name="squad",
    help="Run teams of LLM agents defined in YAML, each in a workspace folder you can open.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
register_scaffold_commands(app)  # first: what a newcomer runs first
app.add_typer(ws_app, name="ws")
app.add_typer(memory_app, name="memory")
register_memory_view(memory_app)
register_memory_history(memory_app)
register_memory_review(memory_app)
register_memory_scan(memory_app)
app.add_typer(decisions_app, name="decisions")
app.add_typer(runs_app, name="runs")
register_run_commands(app)
register_daemon_commands(app)
register_mcp_commands(app)
register_cluster_commands(app)
register_transfer_commands(app)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
Files = Annotated[list[Path], typer.Argument(help="Squad YAML files.", show_default=False)]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"squad {version('squad')}")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Run teams of LLM agents defined in YAML, each in a workspace folder you can open."""


def _summary(spec: SquadSpec) -> str:
    schedule = "on demand"
    if spec.schedule is not None:
        schedule = spec.schedule.cron or (
            f"every {spec.schedule.interval}" if spec.schedule.interval else "on start"
        )
    return (
        f"squad {spec.name!r}: {len(spec.agents)} agents, {len(spec.tasks)} tasks, "
        f"{spec.process.type}, {schedule}"
    )


def _warning_line(problem: Problem) -> str:
    """``file:line:col: warning: key.path: message; hint``, the form compilers use."""
    where = problem.source or "<input>"
    if problem.line is not None:
        where += f":{problem.line}" + (f":{problem.column}" if problem.column is not None else "")
    text = f"{where}: warning: "
    if problem.path:
        text += f"{problem.dotted_path}: "
    text += problem.message
    return text + (f"; {problem.hint}" if problem.hint else "")


@app.command()
def validate(
    files: Files,
    json_output: JsonFlag = False,
    no_env: Annotated[
        bool,
        typer.Option(
            "--no-env",
            help="Skip the checks that read this machine's environment (a model's API key "
            "variable): for CI that validates without keys.",
        ),
    ] = False,
) -> None:
    """Check squad YAML files; every problem is reported with file, line and column.

    Besides the format, what `squad run` would refuse is an error: a model with no price
    (say, a self-hosted one without cost_per_1k_input/output) and a model whose API key
    variable is not set (OPENAI_API_KEY, ANTHROPIC_API_KEY, its api_key_env, ...). No model is
    called. Warnings (what validates but is unlikely to be meant) go to stderr; they do not
    change the exit code.
    """
    import os
    import sys

    from squad.errors import ConfigError
    from squad.runtime.runnable import run_problems
    from squad.spec.loader import load_squad_file, locate_problems

    out = Output(json_mode=json_output)
    results: list[dict[str, Any]] = []
    failed = 0
    for path in files:
        try:
            loaded = load_squad_file(path)
            problems = run_problems(loaded.spec, None if no_env else os.environ, source=str(path))
            if problems:
                raise ConfigError(
                    locate_problems(problems, loaded.positions) if loaded.positions else problems
                )
        except ConfigError as error:
            failed += 1
            results.append(
                {
                    "file": str(path),
                    "valid": False,
                    "squad": None,
                    "problems": [p.to_dict() for p in error.problems],
                    "warnings": [],
                }
            )
            if not json_output:
                report_error(error)
            continue
        spec = loaded.spec
        results.append(
            {
                "file": str(path),
                "valid": True,
                "squad": spec.name,
                "problems": [],
                "warnings": [w.to_dict() for w in loaded.warnings],
            }
        )
        if not json_output:
            out.line(f"ok: {path}: {_summary(spec)}", style="green")
            for warning in loaded.warnings:
                sys.stderr.write(_warning_line(warning) + "\n")
    if json_output:
        out.json(results)
    elif len(files) > 1:
        out.line(f"{len(files) - failed} valid, {failed} invalid")
    if failed:
        raise typer.Exit(2)


@app.command()
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead.")
    ] = None,
    settings: Annotated[
        bool, typer.Option("--settings", help="The schema of settings.yaml instead.")
    ] = False,
) -> None:
    """Print the JSON Schema of the squad YAML format (for editor completion and checks)."""
    from squad.spec.json_schema import schema_text

    if settings:
        from squad.settings import SettingsFile

        text = schema_text(SettingsFile)
    else:
        text = schema_text()
    if output is None:
        typer.echo(text, nl=False)
        return
    from squad.errors import UsageError
    from squad.fsutil import atomic_write

    try:
        atomic_write(output, text.encode())
    except OSError as exc:
        raise UsageError(f"cannot write {str(output)!r}: {exc.strerror or exc}") from None
    typer.echo(f"wrote {output}", err=True)


def _report(out: Output, spec: SquadSpec, report: CreateReport) -> WorkspaceCreated:
    from squad.views import WorkspaceCreated

    data = WorkspaceCreated(
        squad=spec.name,
        workspace=str(report.path),
        manifest=report.manifest,
        created=report.created,
    )
    if not out.json_mode:
        out.line(
            f"{spec.name}: {report.path} (manifest {report.manifest}, "
            f"{len(report.created)} new paths)",
            style="green",
        )
        for created in report.created:
            out.line(f"  + {created}")
    return data


@app.command()
def create(files: Files, json_output: JsonFlag = False) -> None:
    """Create or update the workspaces of squad files, without running anything.

    All files are validated first; if any is invalid, nothing is created.
    """
    from squad.errors import ConfigError
    from squad.spec.loader import squad_from_file

    out = Output(json_mode=json_output)
    specs: list[tuple[Path, SquadSpec]] = []
    problems: list[Problem] = []
    for path in files:
        try:
            specs.append((path, squad_from_file(path)))
        except ConfigError as error:
            problems.extend(error.problems)
    if problems:
        raise ConfigError(problems)
    results = []
    with open_app() as app:
        for path, spec in specs:
            results.append(_report(out, spec, app.squads.create(spec, source=path)))
    if json_output:
        out.json(results)


@app.command()
def restore(
    path: Annotated[Path, typer.Argument(help="A workspace folder (or its .squad-config.json).")],
    json_output: JsonFlag = False,
) -> None:
    """Rebuild a squad from its workspace manifest alone (when the YAML is gone)."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        spec, report = app.squads.restore(path)
        data = _report(out, spec, report)
    if json_output:
        out.json(data)
