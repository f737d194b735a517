"""``squad memory history | revert``: every change to an agent's memory, and its undoing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from squad.cli.context import open_app
from squad.cli.memory import AgentArg, JsonFlag, SquadArg
from squad.cli.output import Output

if TYPE_CHECKING:
    from squad.history.log import MemoryEntry

__all__ = ["register"]


def register(memory_app: typer.Typer) -> None:
    """Add ``history`` and ``revert`` to ``squad memory``."""
    memory_app.command()(history)
    memory_app.command()(revert)


def _entry_dict(entry: MemoryEntry) -> dict[str, object]:
    return {
        "id": entry.id,
        "commit": entry.commit,
        "time": entry.time.isoformat(),
        "who": entry.who,
        "kind": entry.kind,
        "subject": entry.subject,
        "run": entry.run_id,
        "pass": entry.pass_id,
        "reverts": entry.reverts,
        "removed": list(entry.removed),
        "added": list(entry.added),
        "facts": [{"op": f.op.value, "fact_id": f.fact_id, "text": f.text} for f in entry.facts],
    }


def history(
    squad: SquadArg,
    agent: AgentArg,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="At most this many, newest first.")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Every change to an agent's memory: who, when, which run or pass, and the text.

    memory.md lines and experiential facts alike, from the workspace's history; each has an
    id that `squad memory revert` takes.
    """
    out = Output(json_mode=json_output)
    with open_app() as app:
        entries = app.memory.history_of(app.agent(squad, agent), limit=limit)
    if json_output:
        out.json([_entry_dict(e) for e in entries])
        return
    if not entries:
        out.line(f"no memory changes of {agent} yet", style="dim")
        return
    for entry in entries:
        where = f"run {entry.run_id[:12]}" if entry.run_id else ""
        if entry.pass_id:
            where = f"pass {entry.pass_id}" + (f" of {where}" if where else "")
        stamp = entry.time.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        out.line(f"{entry.id}  {stamp}  {entry.who}  {where}".rstrip(), style="bold")
        out.line(f"    {entry.subject}", style="dim")
        for line in entry.removed:
            out.line(f"    - {line}", style="red")
        for line in entry.added:
            out.line(f"    + {line}", style="green")
        for fact in entry.facts:
            out.line(f"    fact {fact.fact_id} {fact.op.value}: {fact.text}", style="cyan")


def revert(
    squad: SquadArg,
    agent: AgentArg,
    change: Annotated[str, typer.Argument(help="The change's id (see `squad memory history`).")],
    json_output: JsonFlag = False,
) -> None:
    """Undo one change to an agent's memory, as a new change (history is never rewritten).

    The memory.md lines it added are removed and those it removed put back; facts it added
    are forgotten, facts it forgot or superseded come back. Reverting a revert redoes it.
    """
    out = Output(json_mode=json_output)
    with open_app() as app:
        done = app.memory.revert(app.agent(squad, agent), change, actor="cli")
    if json_output:
        out.json(
            {
                "reverted": _entry_dict(done.change),
                "removed": list(done.removed),
                "restored": list(done.restored),
                "facts": [
                    {"op": f.op.value, "fact_id": f.fact_id, "text": f.text} for f in done.facts
                ],
            }
        )
        return
    out.line(f"reverted {done.change.id} ({done.change.subject})", style="green")
    for line in done.removed:
        out.line(f"  - {line}")
    for line in done.restored:
        out.line(f"  + {line}")
    for fact in done.facts:
        out.line(f"  fact {fact.fact_id} {fact.op.value}: {fact.text}")
