"""The dashboard's review panel: on an agent's page, the facts the extractor proposed that
wait for a person, each approved or rejected in bulk (tick, then one button) or edited before
it is approved. Answers re-render the panel, swap the agent's memory in out of band and tell
the prompt preview to ask again, so the page shows what is now true."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from squad.errors import UsageError
from squad.web.api import AgentId, SquadName
from squad.web.pages import MAX_FORM_BYTES, _page, _web, translator

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
MAX_ID = 2**31 - 1


async def _fields(request: Request) -> dict[str, list[str]]:
    """The form with every value of each field (the ticked ids are many)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise UsageError(f"the form is over {MAX_FORM_BYTES:,} bytes")
    try:
        return parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise UsageError("the form is not UTF-8") from None


def _ids(request: Request, values: list[str]) -> list[int]:
    ids = []
    for value in values:
        if not value.isascii() or not value.isdigit() or not 1 <= int(value[:12]) <= MAX_ID:
            raise UsageError(f"{value!r} is not a review item id")
        ids.append(int(value))
    if not ids:
        _ = translator(request)
        raise UsageError(_("tick the facts to approve or reject first"))
    return ids


def _answer(request: Request, squad: str, agent: str, message: str) -> HTMLResponse:
    from squad.web.memory import agent_memory
    from squad.web.review import review_list

    app = _web(request).app
    answer = _page(
        request,
        "review_panel.html",
        review=review_list(app, squad, agent),
        flash=message,
        memory=agent_memory(app, squad, agent).model_dump(mode="json"),
        oob=True,
    )
    answer.headers["HX-Trigger"] = "memory-changed"  # the prompt preview asks again
    return answer


def _summary(request: Request, result: Any) -> str:
    _ = translator(request)
    written = sum(d.written for d in result.decided)
    ids = ", ".join(f"#{d.item.id}" for d in result.decided)
    if result.action == "reject":
        return _("Rejected %(ids)s: not written, and not proposed again.", ids=ids)
    unwritten = [f"#{d.item.id} {d.note}" for d in result.decided if not d.written]
    message = _("Approved %(ids)s: %(written)s written to memory.", ids=ids, written=written)
    return message + (f" {'; '.join(unwritten)}." if unwritten else "")


@router.post("/squads/{squad}/agents/{agent}/review", response_class=HTMLResponse)
async def decide_fragment(request: Request, squad: SquadName, agent: AgentId) -> HTMLResponse:
    """Approve or reject the ticked facts (``action`` is the button pressed)."""
    import asyncio

    from squad.web.review import review_decide

    form = await _fields(request)
    pressed = (form.get("action") or [""])[-1]
    if pressed not in ("approve", "reject"):
        raise UsageError("press Approve or Reject")
    action: Literal["approve", "reject"] = "approve" if pressed == "approve" else "reject"
    ids = _ids(request, form.get("id", []))
    app = _web(request).app
    result = await asyncio.to_thread(review_decide, app, squad, agent, action, ids, actor="web")
    return await asyncio.to_thread(_answer, request, squad, agent, _summary(request, result))


@router.post("/squads/{squad}/agents/{agent}/review/{review_id}/edit", response_class=HTMLResponse)
async def edit_fragment(
    request: Request, squad: SquadName, agent: AgentId, review_id: int
) -> HTMLResponse:
    """Approve one fact with the text as edited in its row."""
    import asyncio

    from squad.web.review import review_decide

    form = await _fields(request)
    text = (form.get("text") or [""])[-1]
    ids = _ids(request, [str(review_id)])
    app = _web(request).app
    result = await asyncio.to_thread(
        review_decide, app, squad, agent, "edit", ids, actor="web", text=text
    )
    return await asyncio.to_thread(_answer, request, squad, agent, _summary(request, result))
