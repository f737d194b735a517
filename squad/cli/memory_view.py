"""``squad memory show | context | search``: an agent's memory as it is, as its next prompt
would get it, and every memory searched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer

from squad.cli.context import open_app
from squad.cli.memory import AgentArg, JsonFlag, SquadArg
from squad.cli.options import TimeoutOption
from squad.cli.output import Output, skip_notes
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW

if TYPE_CHECKING:
    from squad.memory.search import MemoryHit

__all__ = ["register"]

SearchLayer = Literal["project", "experiential", "conversation"]


def register(memory_app: typer.Typer) -> None:
    """Add ``show``, ``context`` and ``search`` to ``squad memory``."""
    memory_app.command()(show)
    memory_app.command()(context)
    memory_app.command()(search)


def show(
    squad: SquadArg,
    agent: AgentArg,
    include_all: Annotated[
        bool,
        typer.Option(
            "--all", help="Also list inactive facts: dormant, expired, forgotten, superseded."
        ),
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Show an agent's project memory (memory.md) and its experience (Layer A facts)."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        ctx = app.agent(squad, agent)
        snapshot = app.memory.memory_file(ctx).snapshot()
        ns = app.memory.namespace(ctx)
        facts = app.store.memory.facts(ns.id, include_inactive=include_all)
    if json_output:
        out.json(
            {
                "squad": ctx.squad.name,
                "agent": ctx.agent.id,
                "project": {
                    "file": f"agents/{ctx.agent.id}/memory.md",
                    "size": snapshot.size,
                    "text": snapshot.document.render(),
                    "sections": snapshot.document.names,
                },
                "experiential": {
                    **ns.view().model_dump(),
                    "facts": [
                        {
                            "id": f.id,
                            "text": f.text,
                            "squad": f.squad,
                            "created_at": f.created_at.isoformat(),
                            "access_count": f.access_count,
                            "status": f.status.value,
                        }
                        for f in facts
                    ],
                },
            }
        )
        return
    out.line(
        f"# {ctx.agent.display_name} in {ctx.squad.name}: agents/{ctx.agent.id}/memory.md "
        f"({snapshot.size:,} bytes)",
        style="bold",
    )
    out.stream.write(snapshot.document.render() or "(empty)\n")
    state = "enabled" if ns.enabled else "disabled for other agents"
    listed = (
        ("fact" if len(facts) == 1 else "facts")
        if include_all
        else ("active fact" if len(facts) == 1 else "active facts")
    )
    out.line(f"# {ns.name} [{ns.identity}] ({state}): {len(facts)} {listed}", style="bold")
    for fact in facts:
        status = "" if fact.status.value == "active" else f"[{fact.status.value}] "
        out.line(
            f"{fact.id:>5}  {status}{fact.text}  ({fact.created_at.date().isoformat()}, "
            f"from {fact.squad}/{fact.agent})"
        )


def context(
    squad: SquadArg,
    agent: AgentArg,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=0, help="Budget T (default: the squad's memory region's)"),
    ] = None,
    message: Annotated[
        str, typer.Option("--message", "-m", help="The user message the facts are ranked against.")
    ] = "",
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window",
            min=MIN_CONTEXT_WINDOW,
            max=MAX_CONTEXT_WINDOW,
            help="Plan the prompt for a model with this many tokens of context (default: the "
            "agent's model's window).",
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Print exactly the memory part the agent's next prompt would get (with its working
    memory when a run of it is under way), and its regions."""
    out = Output(json_mode=json_output)
    with open_app(reading=True) as app:
        prompt = app.memory.preview(
            app.agent(squad, agent),
            message=message,
            max_tokens=max_tokens,
            context_window=context_window,
        )
    if json_output:
        out.json(prompt.to_dict())
        return
    working = prompt.working.state.render() if prompt.working is not None else ""
    shown = (prompt.block.text, prompt.supplementary.text, working)
    text = "\n\n".join(t for t in shown if t)
    out.stream.write((text or "(no memory would be injected)") + "\n")
    window = prompt.window
    out.line()
    out.line(f"# regions for a window of {window.tokens:,} tokens ({window.source})", style="bold")
    for row in prompt.regions.report(prompt.used):
        used = "-" if row.used is None else f"{row.used:,}"
        note = f"  ({row.set_by}{', capped' if row.capped else ''})" if row.set_by else ""
        out.line(f"{row.region:<14}{row.budget:>10,}{used:>10}{note}")


def search(
    query: Annotated[str, typer.Argument(help="Text to find (a regex with --regex).")],
    squad: Annotated[str | None, typer.Option("--squad", help="Only this squad.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent.")] = None,
    section: Annotated[
        str | None, typer.Option("--section", help="Only this memory.md section.")
    ] = None,
    layer: Annotated[
        SearchLayer | None,
        typer.Option(
            "--layer",
            help="Only one layer: project (memory.md), experiential or conversation (the "
            "earlier messages recall draws on).",
        ),
    ] = None,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", "-s")] = False,
    regex: Annotated[bool, typer.Option("--regex", "-e", help="QUERY is a regex.")] = False,
    context_lines: Annotated[int, typer.Option("-C", "--context", min=0, max=50)] = 0,
    timeout: TimeoutOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search all agents' memory files and the experiential store.

    Memory files not searched (links, too large, not regular files) are listed after the hits.
    """
    from squad.memory.search import MAX_MEMORY_FILE_BYTES, search_all_memory
    from squad.text.grep import DEFAULT_TIMEOUT_S, compile_query

    out = Output(json_mode=json_output)
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    with open_app() as app:
        targets = [app.squads.locate(squad)] if squad else app.squads.all_workspaces()
        found = search_all_memory(
            [(t.squad, t.path) for t in targets],
            app.store.memory if app.database_exists() else None,
            pattern,
            squad=targets[0].squad if squad else None,
            agent=agent,
            section=section,
            layer=layer,
            context=context_lines,
            timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
            literal=None if regex else query,
            case_sensitive=case_sensitive,
        )
    hits, skipped = found.hits, found.skipped
    if json_output:
        out.json(
            {
                "query": query,
                "hits": [h.to_dict() for h in hits],
                "skipped": [s.to_dict() for s in skipped],
            }
        )
        return
    _print_hits(out, hits)
    for line in skip_notes(skipped, max_file_bytes=MAX_MEMORY_FILE_BYTES, noun="memory file"):
        out.line(line, style="yellow")
    if not hits:
        raise typer.Exit(1)


def _print_hits(out: Output, hits: list[MemoryHit]) -> None:
    for hit in hits:
        where = f"{hit.squad}/{hit.where}" if hit.layer == "project" else hit.where
        label = f"[{hit.section}]" if hit.section else f"[{hit.namespace}]"
        out.line(f"{where} {label}", style="bold magenta")
        for number, text in hit.match.before:
            out.line(f"{number:>5}- {text}", style="dim")
        if out.rich:
            from rich.text import Text

            body = Text(hit.match.line)
            for start, end in hit.match.spans:
                body.stylize("bold red", start, end)
            out.console.print(Text(f"{hit.match.line_number:>5}: ", style="green") + body)
        else:
            out.line(f"{hit.match.line_number:>5}: {hit.match.line}")
        for number, text in hit.match.after:
            out.line(f"{number:>5}- {text}", style="dim")
    out.line(f"{len(hits)} matches", style="dim")
