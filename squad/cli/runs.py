"""``squad runs list | show | status | diff``: every run, from the workspaces' histories
(``status``: one run from the store, as the HTTP API and MCP show it)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from squad.cli.output import Output

if TYPE_CHECKING:
    from squad.history.log import FileChange
    from squad.run_history import Runs, RunView

__all__ = ["runs_app"]

runs_app = typer.Typer(
    help="The runs of your squads, as each workspace's history records them.",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _runs() -> Runs:
    """The runs view over this invocation's settings; the store is opened only if a squad's
    runs must come from it (history off or paused for its workspace)."""
    from squad.cli.context import open_app

    return open_app().runs


def _when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S") if value else "-"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def _row(view: RunView, *, squad_column: bool) -> str:
    parts = [view.run_id[:12]]
    if squad_column:
        parts.append(view.squad[:20].ljust(20))
    parts += [
        view.status.ljust(17),
        view.trigger[:12].ljust(12),
        _when(view.started_at),
        _duration(view.duration_s).rjust(7),
        f"{view.tokens_in + view.tokens_out:>9,}",
        f"${view.cost_usd:>8.4f}",
        (view.commit or "-")[:10],
    ]
    return "  ".join(parts)


@runs_app.command("list")
def list_runs(
    squad: Annotated[str | None, typer.Argument(help="Only this squad's runs.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many, newest first.")] = 20,
    json_output: JsonFlag = False,
) -> None:
    """The newest runs: id, squad, status, trigger, started, duration, tokens, cost, commit."""
    out = Output(json_mode=json_output)
    views = _runs().recent(squad, limit=limit)
    if json_output:
        out.json([v.to_dict() for v in views])
        return
    if not views:
        out.line("no runs yet" + (f" of {squad}" if squad else ""), style="dim")
        return
    header = ["run         "]
    if squad is None:
        header.append("squad".ljust(20))
    header += [
        "status".ljust(17),
        "trigger".ljust(12),
        "started".ljust(19),
        "took".rjust(7),
        "tokens".rjust(9),
        "cost".rjust(9),
        "commit",
    ]
    out.line("  ".join(header), style="bold")
    for view in views:
        style = {"succeeded": "green", "failed": "red", "running": "cyan"}.get(view.status)
        out.line(_row(view, squad_column=squad is None), style=style)


def _stat_lines(changes: tuple[FileChange, ...] | list[FileChange]) -> list[str]:
    if not changes:
        return ["  (no files changed)"]
    width = max(len(c.path) for c in changes)
    lines = []
    for c in changes:
        counts = "binary" if c.binary else f"+{c.added} -{c.removed}"
        lines.append(f"  {c.path.ljust(width)}  {c.status:<9} {counts}")
    added = sum(c.added for c in changes)
    removed = sum(c.removed for c in changes)
    lines.append(f"  {len(changes)} files changed, {added} insertions(+), {removed} deletions(-)")
    return lines


@runs_app.command("show")
def show(
    run: Annotated[str, typer.Argument(help="A run id (or the start of one).")],
    json_output: JsonFlag = False,
) -> None:
    """One run: its figures, tasks, commit, and the files it changed since the previous run."""
    out = Output(json_mode=json_output)
    detail = _runs().show(run)
    if json_output:
        out.json(detail.to_dict())
        return
    view = detail.run
    out.line(f"run {view.run_id}: {view.status}", style="bold")
    out.line(f"  squad:    {view.squad} ({view.trigger})")
    out.line(f"  started:  {_when(view.started_at)}  took {_duration(view.duration_s)}")
    out.line(
        f"  tokens:   {view.tokens_in:,} in, {view.tokens_out:,} out  cost: ${view.cost_usd:.4f}"
    )
    out.line(f"  commit:   {view.commit}")
    if view.outputs != "tasks":
        out.line(f"  outputs:  {view.outputs}/ (approved after newer runs had finished)")
    if view.tasks:
        out.line("  tasks:")
        for task, agent, status in view.tasks:
            out.line(f"    {task}  {status}  ({agent})")
    since = f"run {detail.previous}" if detail.previous else "the start of the history"
    out.line(f"  changed since {since}:")
    for line in _stat_lines(detail.changes):
        out.line(line)


@runs_app.command("status")
def status(
    run: Annotated[str, typer.Argument(help="A run id.")],
    json_output: JsonFlag = False,
) -> None:
    """One run from the store: its tasks with their outputs, tokens and cost, the task it
    waits on, its commit and the diff against the squad's previous run (the view MCP's
    run_status gives; the HTTP API's /api/v1/runs/RUN has the same fields and the log)."""
    from squad.cli.context import open_app
    from squad.web.runs import run_status

    out = Output(json_mode=json_output)
    with open_app() as app:
        view = run_status(app, run)
    if json_output:
        out.json(view)
        return
    out.line(f"run {view.id}: {view.status}", style="bold")
    out.line(f"  squad:    {view.squad} ({view.trigger})")
    out.line(f"  took:     {_duration(view.duration_s)}")
    out.line(
        f"  tokens:   {view.tokens_in:,} in, {view.tokens_out:,} out  cost: ${view.cost_usd:.4f}"
    )
    out.line(f"  commit:   {view.commit or '-'}" + (f" ({view.history})" if view.history else ""))
    for task in view.tasks:
        out.line(f"    {task.id}  {task.status}  ({task.agent})")
    if view.awaiting:
        out.line(f"  waiting for approval: squad approve {view.id} {view.awaiting}", style="yellow")
    if view.error:
        out.line(f"  error: {view.error}", style="red")


@runs_app.command("diff")
def diff(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="RUN [OTHER] [-- PATH...]: a run, the run to compare with (default: the "
            "squad's previous run), and after `--` the paths to limit the diff to.",
            show_default=False,
        ),
    ],
    paths: Annotated[
        list[str] | None,
        typer.Option("--path", "-p", help="Only this path (file, folder or glob); repeatable."),
    ] = None,
    stat: Annotated[bool, typer.Option("--stat", help="Only the files and their counts.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """What a run changed in its workspace: against the squad's previous run, or OTHER."""
    import sys

    from squad.errors import UsageError

    runs, limited = targets, list(paths or [])
    if "--" in sys.argv:  # everything after `--` is a path (the parser drops the `--`)
        count = len(sys.argv) - sys.argv.index("--") - 1
        if count:
            runs, limited = targets[:-count], [*limited, *targets[-count:]]
    if not 1 <= len(runs) <= 2:
        raise UsageError(
            f"give one run, or two runs of one squad (got {len(runs)}): "
            "squad runs diff RUN [OTHER] [-- PATH...]"
        )
    out = Output(json_mode=json_output)
    result = _runs().diff(
        runs[0], runs[1] if len(runs) > 1 else None, paths=limited, stat_only=stat
    )
    if json_output:
        out.json(
            {
                "squad": result.squad,
                "old_run": result.old_run,
                "old_commit": result.old_commit,
                "new_run": result.new_run,
                "new_commit": result.new_commit,
                "stat": [c.__dict__ for c in result.stat],
                "patch": result.patch,
            }
        )
        return
    since = f"run {result.old_run}" if result.old_run else "the start of the history"
    if stat or not result.patch:
        out.line(f"{result.squad}: run {result.new_run} against {since}", style="bold")
        for line in _stat_lines(result.stat):
            out.line(line)
        return
    _print_patch(out, result.patch)


def _print_patch(out: Output, patch: str) -> None:
    if not out.rich:
        out.stream.write(patch)
        return
    for line in patch.splitlines():
        style = None
        if line.startswith(("+++", "---", "diff ", "index ")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        out.line(line, style=style)
