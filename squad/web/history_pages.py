"""The dashboard's history pages: what a run changed since the previous run (a file's diff
on demand), and an agent's memory changes with a revert button. Fragments asked for by htmx
once the run or agent page is shown, on the data of :mod:`squad.web.history`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from squad.errors import UsageError
from squad.web.api import MAX_PATH_CHARS, AgentId, RunId, SquadName
from squad.web.pages import _form, _page, _web, plural_translator, translator

__all__ = ["diff_lines", "router"]

router = APIRouter(include_in_schema=False)


@router.get("/runs/{run_id}/changes", response_class=HTMLResponse)
def run_changes_fragment(request: Request, run_id: RunId) -> HTMLResponse:
    """The run's files changed since the previous run, asked for after the page is shown (a
    diff stat walks two trees); a run not committed yet gets a note, polled while it runs."""
    from squad.errors import HistoryUnavailable, NotFound
    from squad.web.history import run_changes

    app = _web(request).app
    try:
        changes = run_changes(app, run_id)
    except (UsageError, NotFound, HistoryUnavailable) as exc:
        record = app.store.get_run(run_id) if app.database_exists() else None
        live = record is not None and str(record.status) in ("pending", "running")
        return _page(request, "run_changes.html", run_id=run_id, live=live, reason=str(exc))
    return _page(request, "run_changes.html", run_id=run_id, changes=changes)


@router.get("/runs/{run_id}/diff", response_class=HTMLResponse)
def run_diff_fragment(
    request: Request,
    run_id: RunId,
    path: Annotated[str, Query(min_length=1, max_length=MAX_PATH_CHARS)],
) -> HTMLResponse:
    """One file's patch from the previous run to this one, shown when its row is opened."""
    from squad.web.history import run_diff

    diff = run_diff(_web(request).app, run_id, paths=[path])
    return _page(request, "diff_fragment.html", diff=diff, lines=diff_lines(diff.patch or ""))


def diff_lines(patch: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with its kind (``meta``, ``hunk``, ``add``, ``del``,
    ``ctx``), so the page colours it; only lines inside a hunk count as added or removed,
    so a file header's ``+++``/``---`` never does (pure)."""
    lines: list[tuple[str, str]] = []
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        if line.startswith("@@"):
            in_hunk, kind = True, "hunk"
        elif not in_hunk or line.startswith("\\"):
            kind = "meta"
        else:
            kind = {"+": "add", "-": "del"}.get(line[:1], "ctx")
        lines.append((kind, line))
    return lines


@router.get("/squads/{squad}/agents/{agent}/history", response_class=HTMLResponse)
def memory_history_fragment(request: Request, squad: SquadName, agent: AgentId) -> HTMLResponse:
    """The agent's memory changes, asked for after the page is shown (a walk of the log)."""
    return _page(request, "memory_history.html", **_memory_history(request, squad, agent))


def _memory_history(request: Request, squad: str, agent: str) -> dict[str, Any]:
    """The newest changes, or why there are none (history off is a note, not an error)."""
    from squad.errors import HistoryUnavailable
    from squad.web.history import memory_history

    try:
        changes = memory_history(_web(request).app, squad, agent, limit=50)
    except HistoryUnavailable as exc:
        return {"squad": squad, "agent": agent, "changes": [], "unavailable": str(exc)}
    return {"squad": squad, "agent": agent, "changes": changes, "unavailable": None}


@router.post("/squads/{squad}/agents/{agent}/revert", response_class=HTMLResponse)
async def revert_fragment(request: Request, squad: SquadName, agent: AgentId) -> HTMLResponse:
    """Undo one memory change as ``web``: the answer is a flash, and the history and the
    memory it changed are swapped in out of band so the page shows what is now true."""
    import asyncio

    from squad.web.actions import RevertRequest
    from squad.web.history import memory_revert
    from squad.web.memory import agent_memory

    change = RevertRequest(change=(await _form(request)).get("change", "")).change
    app = _web(request).app
    done = await asyncio.to_thread(memory_revert, app, squad, agent, change, actor="web")
    memory = await asyncio.to_thread(agent_memory, app, squad, agent)
    history = await asyncio.to_thread(_memory_history, request, squad, agent)
    _ = translator(request)
    ngettext = plural_translator(request)
    what = [
        ngettext("took out %(num)s line", "took out %(num)s lines", len(done.removed))
        if done.removed
        else "",
        ngettext("put back %(num)s line", "put back %(num)s lines", len(done.restored))
        if done.restored
        else "",
        *(_("fact %(id)s %(op)s", id=f.fact_id, op=_(str(f.op))) for f in done.facts),
    ]
    message = _("Reverted %(id)s: %(subject)s", id=done.reverted.id, subject=done.reverted.subject)
    if any(what):
        message += _(" — %(what)s.", what=", ".join(w for w in what if w))
    answer = _page(
        request, "revert_done.html", message=message, ok=True, memory=memory, oob=True, **history
    )
    answer.headers["HX-Trigger"] = "memory-changed"  # the prompt preview asks again
    return answer
