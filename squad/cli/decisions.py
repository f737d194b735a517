"""``squad decisions``: record, list, show and search squads' decisions with their reasons."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from squad.cli.context import open_app
from squad.cli.output import Output
from squad.errors import NotFound, UsageError

if TYPE_CHECKING:
    from squad.memory.decisions.log import Decision

__all__ = ["decisions_app"]

decisions_app = typer.Typer(
    help="Record, list and search squads' decisions and their reasons (decisions.md).",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
AllFlag = Annotated[bool, typer.Option("--all", help="Also superseded decisions (marked as such).")]
_ACTOR_KINDS = ("person", "agent", "mcp")


@decisions_app.command("list")
def list_decisions(
    squad: Annotated[
        str | None, typer.Argument(help="Squad name (or workspace folder); default: all.")
    ] = None,
    include_all: AllFlag = False,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=10_000, help="At most this many, newest first.")
    ] = 50,
    json_output: JsonFlag = False,
) -> None:
    """List decisions, newest first: the ones in force, or all of them with --all."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        name = app.squads.locate(squad).squad if squad is not None else None
        found = (
            app.decisions.list(name, include_superseded=include_all, limit=limit)
            if app.database_exists()
            else []
        )
    if json_output:
        out.json([d.view() for d in found])
        return
    if not found:
        which = "decisions" if include_all else "decisions in force"
        out.line(f"no {which} yet; `squad decisions record SQUAD ...` records one")
    for decision in found:
        _print_line(out, decision)


@decisions_app.command()
def show(
    decision_id: Annotated[int, typer.Argument(metavar="ID", help="The decision's id.")],
    json_output: JsonFlag = False,
) -> None:
    """Show one decision with its reasons, alternatives and what it supersedes."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        if not app.database_exists():
            raise NotFound(f"no decision {decision_id}; no decision is recorded yet")
        decision = app.decisions.get(decision_id)
    if json_output:
        out.json(decision.view())
        return
    title = f"decision {decision.id}: {decision.title}"
    out.line(title + ("  [superseded]" if decision.superseded_by else ""), style="bold")
    when = decision.decided_at.strftime("%Y-%m-%d %H:%M UTC")
    out.line(f"squad:       {decision.squad}")
    out.line(f"decided:     {when} by {decision.decided_by}")
    if decision.supersedes is not None:
        out.line(f"supersedes:  decision {decision.supersedes}")
    if decision.superseded_by is not None:
        out.line(f"superseded:  by decision {decision.superseded_by}", style="yellow")
    out.line()
    out.line(decision.decision)
    out.line()
    out.line("Reasons:")
    for reason in decision.reasons:
        out.line(f"- {reason}")
    if decision.alternatives:
        out.line("Alternatives considered:")
        for alternative in decision.alternatives:
            out.line(f"- {alternative}")


@decisions_app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words that must all appear (any case).")],
    squads: Annotated[
        list[str] | None,
        typer.Option("--squad", help="Only this squad (repeat for several)."),
    ] = None,
    include_all: AllFlag = False,
    json_output: JsonFlag = False,
) -> None:
    """Search decisions' titles, texts, reasons and alternatives, best match first.

    Exits 1 when nothing matches (text output), like grep.
    """
    out = Output(json_mode=json_output)
    if not query.split():
        raise UsageError("the query is empty; give the words to look for")
    with open_app() as app:
        names = None if not squads else [app.squads.locate(s).squad for s in squads]
        found = (
            app.decisions.search(query, squads=names, include_superseded=include_all)
            if app.database_exists()
            else []
        )
    if json_output:
        out.json([d.view() for d in found])
        return
    for decision in found:
        _print_line(out, decision)
        out.line(f"      {_first_line(decision.decision)}", style="dim")
    if not found:
        out.line(f"no decision matches {query!r}", style="dim")
        raise typer.Exit(1)


@decisions_app.command()
def record(
    squad: Annotated[str, typer.Argument(help="Squad name (or workspace folder).")],
    title: Annotated[str, typer.Option("--title", help="One line naming the decision.")],
    decision: Annotated[str, typer.Option("--decision", help="What was decided.")],
    reasons: Annotated[
        list[str] | None,
        typer.Option("--reason", help="Why it was decided (at least one; repeat for more)."),
    ] = None,
    alternatives: Annotated[
        list[str] | None,
        typer.Option("--alternative", help="An option considered and not taken (repeatable)."),
    ] = None,
    supersedes: Annotated[
        int | None, typer.Option("--supersedes", help="Id of the decision this one replaces.")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Who decided: a person's name (recorded as person:NAME), or agent:ID / "
            "mcp:CLIENT. Default: cli.",
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Record a decision with its reasons; it is added to the workspace's decisions.md."""
    out = Output(json_mode=json_output)
    actor = _actor(by)
    with open_app() as app:
        found = app.squads.locate(squad)
        made = app.decisions.record(
            found.squad,
            found.path,
            title=title,
            decision=decision,
            reasons=reasons or [],
            alternatives=alternatives or [],
            decided_by=actor,
            supersedes=supersedes,
        )
    if json_output:
        out.json(made.view())
        return
    replaced = f", superseding decision {made.supersedes}" if made.supersedes else ""
    out.line(
        f"recorded decision {made.id} in {found.path / 'decisions.md'}{replaced}", style="green"
    )


def _actor(by: str | None) -> str:
    """``cli`` by default; a name as ``person:<name>``; ``agent:``/``person:``/``mcp:`` kept."""
    if by is None:
        return "cli"
    name = by.strip()
    if not name:
        raise UsageError("--by is empty; give the name of who decided, or leave --by out")
    kind, _, rest = name.partition(":")
    if kind in _ACTOR_KINDS and rest.strip():
        return name
    return f"person:{name}"


def _print_line(out: Output, d: Decision) -> None:
    day = d.decided_at.date().isoformat()
    line = f"{d.id:>5}  {day}  {d.squad}  {d.title}  (by {d.decided_by})"
    if d.superseded_by is not None:
        out.line(f"{line}  [superseded by {d.superseded_by}]", style="dim")
    else:
        out.line(line)


def _first_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 120 else first[:117] + "..."
