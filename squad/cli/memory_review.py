"""``squad memory review list | approve | reject | edit``: the facts the extractor proposed
that wait for a person."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

import typer

from squad.cli.context import open_app
from squad.cli.memory import AgentArg, JsonFlag, SquadArg, store_id
from squad.cli.output import Output
from squad.errors import UsageError

if TYPE_CHECKING:
    from squad.app import App
    from squad.memory.agent import AgentContext
    from squad.views import ReviewResult

__all__ = ["register"]


def register(memory_app: typer.Typer) -> None:
    """Add ``review`` to ``squad memory``."""
    memory_app.add_typer(review_app, name="review")


review_app = typer.Typer(
    help="The review queue: facts the extractor proposed that wait for a person "
    "(memory.review: low_confidence or all).",
    no_args_is_help=True,
)
ReviewIds = Annotated[list[int] | None, typer.Argument(help="Review item ids (see `list`).")]


def _review_ids(ids: list[int] | None, every: bool, app: App, ctx: AgentContext) -> list[int]:
    """The ids given, or with ``--all`` every pending one; each checked like any stored id."""
    if every and ids:
        raise UsageError("give review item ids or --all, not both")
    if every:
        found = [r.id for r in app.review.items(ctx)]
        if not found:
            raise UsageError(f"nothing awaits review for {ctx.squad.name}/{ctx.agent.id}")
        return found
    if not ids:
        raise UsageError(
            "give the review item ids (or --all); "
            f"`squad memory review list {ctx.squad.name} {ctx.agent.id}` lists them"
        )
    listing = f"`squad memory review list {ctx.squad.name} {ctx.agent.id}`"
    return [store_id(i, "review item", listing) for i in ids]


def _print_decided(out: Output, result: ReviewResult) -> None:
    if out.json_mode:
        out.json(result.model_dump())
        return
    for d in result.decided:
        verb = d.item.status
        style = "green" if d.written else ("yellow" if verb == "approved" else None)
        out.line(f"#{d.item.id} {verb}: {d.item.edited_text or d.item.text}", style=style)
        out.line(f"    {d.note}", style="dim")


@review_app.command("list")
def review_list_command(
    squad: SquadArg,
    agent: AgentArg,
    status: Annotated[
        Literal["pending", "approved", "rejected", "all"],
        typer.Option("--status", help="Which items: pending (default), approved, rejected, all."),
    ] = "pending",
    json_output: JsonFlag = False,
) -> None:
    """List the facts proposed for an agent's memory that wait for review (or were decided)."""
    from squad.web.review import review_list

    out = Output(json_mode=json_output)
    with open_app() as app:
        listed = review_list(app, squad, agent, status=status)
    if json_output:
        out.json(listed.model_dump())
        return
    if listed.mode == "off" and not listed.items:
        out.line(
            f"review is off for {listed.squad}/{listed.agent}: facts are written as extracted "
            "(set memory.review to low_confidence or all)",
            style="dim",
        )
        return
    if not listed.items:
        out.line(f"nothing {status if status != 'all' else 'in the queue'}", style="dim")
    for item in listed.items:
        where = f"[{item.section}]" if item.section else "[experiential]"
        out.line(f"#{item.id:<5} {where} {item.text}", style="bold")
        seen = f"    confidence {item.confidence:.2f} · {item.extractor} · from {item.source}"
        if item.status != "pending":
            seen += f" · {item.status} by {item.decided_by}"
            if item.edited_text:
                seen += f" as: {item.edited_text}"
            if item.outcome:
                seen += f" · {item.outcome}"
        out.line(seen, style="dim")


@review_app.command("approve")
def review_approve_command(
    squad: SquadArg,
    agent: AgentArg,
    ids: ReviewIds = None,
    every: Annotated[bool, typer.Option("--all", help="Approve every pending item.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Write proposed facts to the agent's memory, as the extractor would have written them."""
    _review_decide("approve", squad, agent, ids, every=every, json_output=json_output)


@review_app.command("reject")
def review_reject_command(
    squad: SquadArg,
    agent: AgentArg,
    ids: ReviewIds = None,
    every: Annotated[bool, typer.Option("--all", help="Reject every pending item.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Turn proposed facts down: kept as rejected, so the same text is not proposed again."""
    _review_decide("reject", squad, agent, ids, every=every, json_output=json_output)


def _review_decide(
    action: Literal["approve", "reject"],
    squad: str,
    agent: str,
    ids: list[int] | None,
    *,
    every: bool,
    json_output: bool,
) -> None:
    from squad.web.review import review_decide

    out = Output(json_mode=json_output)
    with open_app() as app:
        chosen = _review_ids(ids, every, app, app.agent(squad, agent))
        result = review_decide(app, squad, agent, action, chosen, actor="cli")
    _print_decided(out, result)


@review_app.command("edit")
def review_edit_command(
    squad: SquadArg,
    agent: AgentArg,
    review_id: Annotated[int, typer.Argument(help="The review item's id (see `list`).")],
    text: Annotated[str, typer.Argument(help="The fact as it should be kept, one line.")],
    json_output: JsonFlag = False,
) -> None:
    """Approve a proposed fact with your wording instead (checked for credentials)."""
    from squad.web.review import review_decide

    out = Output(json_mode=json_output)
    listing = f"`squad memory review list {squad} {agent}`"
    chosen = [store_id(review_id, "review item", listing)]
    with open_app() as app:
        result = review_decide(app, squad, agent, "edit", chosen, actor="cli", text=text)
    _print_decided(out, result)
