"""``squad ws``: list, tree, show, search and health of workspace folders."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from squad.cli.context import open_app
from squad.cli.options import TimeoutOption
from squad.cli.output import Output, human_size, skip_notes

if TYPE_CHECKING:
    from squad.history.health import HistoryHealth
    from squad.workspace.inspect import Health, TreeEntry
    from squad.workspace.search import SearchResult

__all__ = ["ws_app"]

ws_app = typer.Typer(help="Explore workspace folders.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
SquadArg = Annotated[str, typer.Argument(help="Squad name, workspace folder name, or path.")]


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else "-"


@ws_app.command("list")
def list_(json_output: JsonFlag = False) -> None:
    """List squad workspaces."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        manager = app.squads
        rows: list[dict[str, Any]] = []
        for found in manager.all_workspaces():
            manifest = manager.workspaces.read_manifest(found.path)
            spec = manifest.definition
            rows.append(
                {
                    "squad": found.squad,
                    "path": str(found.path),
                    "agents": [a.id for a in spec.agents],
                    "tasks": len(spec.tasks),
                    "process": spec.process.type,
                    "updated_at": manifest.updated_at.isoformat(),
                }
            )
        broken = manager.workspaces.unreadable()
    for path, reason in broken:
        sys.stderr.write(f"warning: {path} is skipped: {reason}\n")
    if json_output:
        out.json(rows)
        return
    if not rows:
        out.line("no workspaces yet; create one with `squad create FILE`")
        return
    if out.rich:
        from rich.table import Table

        table = Table("squad", "agents", "tasks", "process", "updated")
        table.add_column("path", overflow="fold")
        for row in rows:
            table.add_row(
                row["squad"],
                ", ".join(row["agents"]),
                str(row["tasks"]),
                row["process"],
                row["updated_at"][:16].replace("T", " "),
                row["path"],
            )
        out.render(table)
        return
    for row in rows:
        out.line(
            f"{row['squad']}\t{','.join(row['agents'])}\t{row['tasks']} tasks\t"
            f"{row['process']}\t{row['path']}"
        )


@ws_app.command()
def tree(
    squad: SquadArg,
    depth: Annotated[
        int | None, typer.Option("--depth", "-d", min=1, help="Levels to show.")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Show a workspace's files with sizes and modification times."""
    from squad.workspace.inspect import tree as walk

    out = Output(json_mode=json_output)
    with open_app() as app:
        found = app.squads.locate(squad)
    entries = walk(found.path, depth=depth)
    if json_output:
        out.json(
            {
                "squad": found.squad,
                "path": str(found.path),
                "entries": [e.to_dict() for e in entries],
            }
        )
        return
    if out.rich:
        out.render(_rich_tree(found.path.name, entries))
        return
    out.line(f"{found.path}/")
    for entry in entries:
        name = entry.name + ("/" if entry.is_dir else "")
        if entry.is_link:
            name += f" -> {entry.link_target}"
        out.line(f"{'  ' * entry.depth}{name}  {human_size(entry.size)}  {_when(entry.mtime)}")


def _rich_tree(title: str, entries: list[TreeEntry]) -> Any:
    from rich.tree import Tree

    root = Tree(f"[bold]{title}/")
    stack: list[Any] = [root]
    for entry in entries:
        del stack[entry.depth :]
        label = f"[bold blue]{entry.name}/" if entry.is_dir else entry.name
        if entry.is_link:
            label = f"[cyan]{entry.name}[/] -> {entry.link_target}"
        node = stack[-1].add(f"{label}  [dim]{human_size(entry.size)}  {_when(entry.mtime)}")
        stack.append(node)
    return root


@ws_app.command()
def show(
    squad: SquadArg,
    path: Annotated[str, typer.Argument(help="File path relative to the workspace.")],
    json_output: JsonFlag = False,
) -> None:
    """Preview a text, markdown or JSON file of a workspace (highlighted on a terminal)."""
    from squad.workspace.inspect import preview

    out = Output(json_mode=json_output)
    with open_app() as app:
        found = app.squads.locate(squad)
    shown = preview(found.path, path)
    if json_output:
        out.json(shown.to_dict())
        return
    if out.rich:
        from rich.markdown import Markdown
        from rich.syntax import Syntax

        if shown.kind == "markdown":
            out.render(Markdown(shown.text))
        else:
            out.render(Syntax(shown.text, shown.language, line_numbers=True, word_wrap=True))
    else:
        out.stream.write(shown.text if shown.text.endswith("\n") else shown.text + "\n")
    if shown.truncated:
        out.line(f"[showing the first part of {human_size(shown.size)}]", style="yellow")


@ws_app.command()
def search(
    squad: SquadArg,
    query: Annotated[str, typer.Argument(help="Text to find (a regular expression with --regex).")],
    regex: Annotated[bool, typer.Option("--regex", "-e", help="Treat QUERY as a regex.")] = False,
    case_sensitive: Annotated[
        bool, typer.Option("--case-sensitive", "-s", help="Match case exactly.")
    ] = False,
    context: Annotated[
        int,
        typer.Option("-C", "--context", min=0, max=50, help="Lines of context around each match."),
    ] = 0,
    timeout: TimeoutOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Full-text search over every text file of a workspace; matches highlighted.

    Files not searched (too large, binary, links) are listed after the matches. An index in
    the squad home keeps repeated searches fast; every file is checked against it each time.
    """
    from squad.text.grep import DEFAULT_TIMEOUT_S
    from squad.workspace.search import search as find

    out = Output(json_mode=json_output)
    with open_app() as app:
        found = app.squads.locate(squad)
        index_dir = app.settings.home / "index"  # a cache: outside the workspace it indexes
    result = find(
        found.path,
        query,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
        timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
        index_dir=index_dir,
    )
    if json_output:
        out.json({"squad": found.squad, **result.to_dict()})
        return
    _print_search(out, result)
    if not result.files:
        raise typer.Exit(1)


def _print_search(out: Output, result: SearchResult) -> None:
    total = sum(len(f.matches) for f in result.files)
    for file in result.files:
        out.line(file.path, style="bold magenta")
        for match in file.matches:
            for number, text in match.before:
                out.line(f"{number:>5}- {text}", style="dim")
            if out.rich:
                from rich.text import Text

                line = Text(f"{match.line_number:>5}: ", style="green")
                body = Text(match.line)
                for start, end in match.spans:
                    body.stylize("bold red", start, end)
                out.console.print(line + body)
            else:
                out.line(f"{match.line_number:>5}: {match.line}")
            for number, text in match.after:
                out.line(f"{number:>5}- {text}", style="dim")
    skipped = len(result.skipped)
    note = f"{total} matches in {len(result.files)} files ({result.files_scanned} scanned"
    note += f", {skipped} skipped)" if skipped else ")"
    if result.truncated:
        note += "; stopped at the match limit"
    out.line(note, style="dim")
    for skip in skip_notes(result.skipped, max_file_bytes=result.max_file_bytes):
        out.line(skip, style="yellow")


@ws_app.command()
def health(
    squad: Annotated[str | None, typer.Argument(help="Squad (default: every workspace).")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Size, file counts, largest files, memory files against their cap, last activity."""
    from squad.workspace.inspect import health as measure

    out = Output(json_mode=json_output)
    with open_app() as app:
        squads = app.squads
        targets = [squads.locate(squad)] if squad else squads.all_workspaces()
        cap = app.settings.memory_file_cap_bytes
        histories = {t.squad: app.history(t.path, t.squad).health() for t in targets}
    reports = [(t.squad, measure(t.path, memory_cap_bytes=cap)) for t in targets]
    if json_output:
        out.json(
            [
                {
                    "squad": name,
                    **report.view().model_dump(mode="json"),
                    "history": histories[name].to_dict(),
                }
                for name, report in reports
            ]
        )
        return
    if not reports:
        out.line("no workspaces yet; create one with `squad create FILE`")
    for name, report in reports:
        _print_health(out, name, report)
        _print_history(out, histories[name])


def _print_history(out: Output, history: HistoryHealth) -> None:
    if history.paused:
        out.line(f"  history: PAUSED ({history.state}): {history.detail}", style="red")
    elif history.state == "ok":
        out.line(
            f"  history: {history.commits:,} commits, {human_size(history.size_bytes)}, "
            f"newest {history.head} at {_when(history.last_commit_at)}"
        )
    else:
        out.line(f"  history: {history.state}" + (f" ({history.detail})" if history.detail else ""))


def _print_health(out: Output, name: str, report: Health) -> None:
    out.line(f"{name}  {report.path}", style="bold")
    out.line(
        f"  total: {human_size(report.total_bytes)} in {report.file_count} files, "
        f"{report.folder_count} folders"
    )
    folders = ", ".join(f"{k}: {v.files}" for k, v in sorted(report.folders.items()))
    out.line(f"  files per folder: {folders or '-'}")
    if report.largest_files:
        out.line(
            "  largest: " + ", ".join(f"{p} ({human_size(s)})" for p, s in report.largest_files)
        )
    for memory in report.memory_files:
        flag = "  OVER CAP" if memory.over_cap else ""
        out.line(
            f"  memory {memory.agent}: {human_size(memory.size)} of {human_size(memory.cap)} "
            f"({memory.percent:.0f}%){flag}",
            style="red" if memory.over_cap else None,
        )
    age = report.last_activity_age_s
    out.line(
        f"  last activity: {_when(report.last_activity)}"
        + (f" ({age / 3600:.1f} h ago)" if age is not None else "")
    )
