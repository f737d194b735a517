"""The dashboard's pages and the htmx fragments they swap in, server-rendered with Jinja2 from
the same data the JSON API returns (:mod:`squad.web.overview`, :mod:`squad.web.runs`,
:mod:`squad.web.memory`, the workspace explorer of :mod:`squad.workspace`).

Forms are sent by htmx as ``application/x-www-form-urlencoded`` with the session's CSRF token
in a header; the answer is a fragment that replaces the form's target, errors included (a
stale edit shows the current text, an over-cap edit the cap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel

from squad.errors import SquadError, UsageError
from squad.paths import SLUG_PATTERN
from squad.web.api import (
    MAX_TEXT_CHARS,
    AgentId,
    FactId,
    FilePath,
    NamespaceId,
    RunId,
    SquadName,
)
from squad.web.control import RunRequest
from squad.web.guard import COOKIE
from squad.web.i18n import LOCALES, gettext_for, ngettext_for, remember, request_locale
from squad.web.render import environment
from squad.web.svg import Words

__all__ = ["render_error", "router"]

router = APIRouter(include_in_schema=False)
OPTIONAL_SLUG = f"^$|{SLUG_PATTERN}"
"""A filter left empty in a form, or a squad or agent id."""
MAX_FORM_BYTES = 12_000_000
CHART_WIDTHS = (("wide", 640), ("narrow", 360))
"""Each chart is drawn for a desktop and for a phone (the page's CSS shows one): shrunk to a
phone, a desktop's text would be too small to read."""


def _web(request: Request) -> Any:
    return request.app.state.web


def _json(views: Sequence[BaseModel]) -> list[dict[str, Any]]:
    """Views as their JSON, which the templates render (the same the API answers)."""
    return [view.model_dump(mode="json") for view in views]


def _page(request: Request, template: str, http_status: int = 200, **values: Any) -> HTMLResponse:
    html = _render(request, template, mode=_web(request).mode, **values)
    return remember(request, HTMLResponse(html, status_code=http_status))


def _render(request: Request, template: str, **values: Any) -> str:
    """``template`` in the request's language, with what the page frame needs: the CSRF
    token, the path (for the nav) and the language switch's links back to this page."""
    session = getattr(request.state, "session", None)
    locale = request_locale(request)
    return (
        environment(locale)
        .get_template(template)
        .render(
            csrf=session.csrf if session is not None else "",
            path=request.url.path,
            switch={code: _here_in(request, code) for code in LOCALES},
            **values,
        )
    )


KEPT_BY_SWITCH = ("page", "open", "path")
"""Query values the language switch keeps: which page of a list, which file. Nothing else
(a login link's token above all) is copied into the switch's links."""


def _here_in(request: Request, locale: str) -> str:
    """This page's address with ``?lang=locale``, keeping only :data:`KEPT_BY_SWITCH`."""
    from urllib.parse import urlencode

    query = [(k, v) for k, v in request.query_params.multi_items() if k in KEPT_BY_SWITCH]
    return f"{request.url.path}?{urlencode([*query, ('lang', locale)])}"


def translator(request: Request) -> Callable[..., str]:
    """``_(message, **values)`` in the request's language, for text a route writes."""
    return gettext_for(request_locale(request))


def plural_translator(request: Request) -> Callable[..., str]:
    """``ngettext(singular, plural, n, **values)`` in the request's language."""
    return ngettext_for(request_locale(request))


def _words(request: Request) -> Words:
    """How the pictures on a page speak to its reader: the page's catalogue and number format."""
    from squad.web.i18n import Formats

    return Formats(request_locale(request)).words()


def render_error(request: Request, status: int, message: str) -> str:
    template = "error_fragment.html" if request.headers.get("hx-request") else "error.html"
    try:
        mode = _web(request).mode
    except AttributeError:
        mode = ""
    return _render(request, template, status=status, message=message, mode=mode)


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise UsageError(f"the form is over {MAX_FORM_BYTES:,} bytes")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise UsageError("the form is not UTF-8") from None
    return {name: values[-1] for name, values in fields.items()}


# -- login -----------------------------------------------------------------------------------


@router.get("/login")
def login(request: Request, token: Annotated[str, Query(max_length=200)] = "") -> Response:
    """Trade the token of the login link for a session cookie, then go to the overview
    (the token leaves the address bar and, with no-referrer, never leaks)."""
    web = _web(request)
    _ = translator(request)
    if not web.tokens.token_ok(token):
        return HTMLResponse(
            render_error(
                request,
                401,
                _(
                    "this login link is wrong or out of date: use the one `squad daemon`, "
                    "`squad dashboard` or `squad status` prints"
                ),
            ),
            status_code=401,
        )
    session = web.tokens.new_session()
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        session.cookie,
        httponly=True,
        samesite="strict",
        secure=False,  # plain HTTP on loopback; the cookie never leaves this machine's site
        path="/",
        max_age=30 * 24 * 3600,
    )
    return response


@router.get("/favicon.ico")
def favicon() -> Response:
    """The icon, open like the login page: browsers ask for it before anyone logs in."""
    from importlib.resources import files

    icon = (files("squad.web") / "static" / "favicon.svg").read_bytes()
    return Response(icon, media_type="image/svg+xml")


# -- overview, squads, runs, approvals ----------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def overview_page(request: Request) -> HTMLResponse:
    from squad.web.api import server_info
    from squad.web.cluster import cluster_panel
    from squad.web.overview import overview

    view = overview(_web(request).app, now=_web(request).app.clock(), server=server_info(request))
    data = view.model_dump(mode="json")
    fragment = request.headers.get("hx-request") and request.query_params.get("part")
    template = "overview_body.html" if fragment else "overview.html"
    return _page(request, template, status=data, cluster=cluster_panel(data))


@router.get("/squads/{squad}", response_class=HTMLResponse)
def squad_page(
    request: Request, squad: SquadName, page: Annotated[int, Query(ge=1, le=1_000_000)] = 1
) -> HTMLResponse:
    from squad.web.overview import squad_detail

    app = _web(request).app
    if request.headers.get("hx-request") and request.query_params.get("part") == "runs":
        return _page(request, "squad_runs.html", squad=_squad_runs(app, squad, page=page))
    from squad.web.memory import boot_file

    view = squad_detail(app, squad, page=page)
    rules = boot_file(app, "agents", squad).model_dump(mode="json")
    return _page(
        request,
        "squad.html",
        squad=view.model_dump(mode="json"),
        rules=rules,
        graph=_task_graph(app, view, _words(request)),
    )


def _task_graph(app: Any, squad: Any, words: Words) -> dict[str, Any] | None:
    """The squad page's task graph: the definition's tasks, or for a squad whose lead plans,
    its last plan's (None when there is neither)."""
    from squad.web.runs import last_plan_graph
    from squad.web.taskgraph import GraphNode, graph_svg

    nodes = [
        GraphNode(t.id, t.agent, tuple(t.depends_on), approval=t.approval) for t in squad.tasks
    ]
    planned = not nodes and squad.process == "hierarchical"
    if planned:
        nodes = [GraphNode(i, a, d) for i, a, d in last_plan_graph(app, squad.name)]
    if not nodes:
        return None
    return {"svg": graph_svg(nodes, words=words), "planned": planned}


def _squad_runs(app: Any, name: str, *, page: int, per_page: int = 20) -> dict[str, Any]:
    """The runs part of the squad page, polled while it is open: runs and approvals only
    (no definition check, no workspace walk)."""
    from squad.web.overview import approvals, run_row

    found = app.squads.locate(name)
    total = app.store.count_runs(found.squad) if app.database_exists() else 0
    pages = max(1, -(-total // per_page))
    page = min(page, pages)
    runs = app.store.list_runs(found.squad, per_page, offset=(page - 1) * per_page) if total else []
    return {
        "name": found.squad,
        "runs": [run_row(r).model_dump(mode="json") for r in runs],
        "runs_total": total,
        "page": page,
        "pages": pages,
        "approvals": [a.model_dump(mode="json") for a in approvals(app, found.squad)],
    }


@router.post("/squads/{squad}/run", response_class=HTMLResponse)
async def run_now(request: Request, squad: SquadName) -> HTMLResponse:
    import asyncio

    from squad.web.actions import RunStart

    goal = RunStart(goal=(await _form(request)).get("goal", "").strip() or None).goal
    control = _web(request).control
    accepted = await asyncio.to_thread(control.submit, RunRequest(squad, "web", goal=goal))
    _ = translator(request)
    message = (
        _("Run queued: it appears in the list below when it starts.")
        if accepted
        else _("A run of this squad is already waiting; this request was merged into it.")
    )
    return _page(request, "flash.html", message=message, ok=accepted)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: RunId) -> HTMLResponse:
    from squad.web.runs import run_page as page_of
    from squad.web.runs import run_picture

    app = _web(request).app
    view = page_of(app, run_id)
    picture = run_picture(app, view, _words(request))
    template = "run_timeline.html" if request.headers.get("hx-request") else "run.html"
    return _page(request, template, run=view.model_dump(mode="json"), picture=picture)


@router.post("/runs/{run_id}/decide", response_class=HTMLResponse)
async def decide(request: Request, run_id: RunId) -> HTMLResponse:
    import asyncio

    from squad.web.actions import ApprovalAnswer, answer_approval

    _ = translator(request)
    form = await _form(request)
    answer = ApprovalAnswer(
        task=form.get("task", ""),
        approved=form.get("decision") == "approve",
        reason=form.get("reason", ""),
    )
    if not answer.approved and not answer.reason.strip():
        raise UsageError(_("say why the task is rejected: the agent gets the reason"))
    await asyncio.to_thread(answer_approval, request, run_id, answer)
    message = (
        _("Approved; the run goes on below.")
        if answer.approved
        else _("Rejected; the run goes on below.")
    )
    return _page(request, "flash.html", message=message, ok=True)


@router.post("/runs/{run_id}/resume", response_class=HTMLResponse)
async def resume(request: Request, run_id: RunId) -> HTMLResponse:
    import asyncio

    from squad.web.actions import resume_run

    await asyncio.to_thread(resume_run, request, run_id)
    _ = translator(request)
    return _page(
        request,
        "flash.html",
        message=_("Resuming from the last checkpoint."),
        ok=True,
    )


@router.get("/approvals", response_class=HTMLResponse)
def approvals_page(request: Request) -> HTMLResponse:
    from squad.web.overview import approvals

    waiting = [a.model_dump(mode="json") for a in approvals(_web(request).app)]
    return _page(request, "approvals.html", approvals=waiting)


# -- workspace explorer ------------------------------------------------------------------------


@router.get("/squads/{squad}/files", response_class=HTMLResponse)
def explorer_page(request: Request, squad: SquadName, path: FilePath = "") -> HTMLResponse:
    from squad.workspace.listing import list_folder

    found = _web(request).app.squads.locate(squad)
    listing = list_folder(found.path, path)
    template = "tree_level.html" if request.headers.get("hx-request") else "explorer.html"
    # The health line walks the whole tree: it comes as a fragment of its own, after the
    # page, so opening a folder costs only listing that folder.
    return _page(
        request, template, squad=found.squad, listing=listing.view().model_dump(mode="json")
    )


@router.get("/squads/{squad}/health", response_class=HTMLResponse)
def health_fragment(request: Request, squad: SquadName) -> HTMLResponse:
    from squad.workspace.inspect import health

    app = _web(request).app
    found = app.squads.locate(squad)
    report = health(found.path, memory_cap_bytes=app.settings.memory_file_cap_bytes)
    return _page(request, "health_line.html", health=report.view().model_dump(mode="json"))


@router.get("/squads/{squad}/preview", response_class=HTMLResponse)
def preview_fragment(
    request: Request, squad: SquadName, path: Annotated[str, Query(min_length=1, max_length=4096)]
) -> HTMLResponse:
    from datetime import UTC, datetime

    from squad.web.files_api import PREVIEW_MAX_BYTES, file_preview

    found = _web(request).app.squads.locate(squad)
    shown = file_preview(request, found.squad, path).model_dump(mode="json")
    try:
        st = (found.path / shown["path"]).lstat()
        mtime: str | None = datetime.fromtimestamp(st.st_mtime, tz=UTC).isoformat()
    except OSError:
        mtime = None
    return _page(
        request,
        "preview.html",
        squad=found.squad,
        file=shown,
        mtime=mtime,
        limit=PREVIEW_MAX_BYTES,  # the notice of a cut preview says it in the page's language
    )


@router.get("/squads/{squad}/find", response_class=HTMLResponse)
def search_fragment(
    request: Request,
    squad: SquadName,
    q: Annotated[str, Query(max_length=1000)] = "",
    regex: bool = False,
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 2,
) -> HTMLResponse:
    from squad.web.files_api import workspace_search

    _ = translator(request)
    if not q.strip():
        return _page(
            request,
            "flash.html",
            message=_("Type something to search for."),
            ok=True,
        )
    result = workspace_search(
        request, squad, q, regex=regex, case_sensitive=case_sensitive, context=context
    ).model_dump(mode="json")
    return _page(request, "search_results.html", squad=squad, result=result)


# -- memory ------------------------------------------------------------------------------------


@router.get("/memory", response_class=HTMLResponse)
def memory_page(request: Request) -> HTMLResponse:
    from squad.web.memory import boot_file, decisions, extraction_passes, namespaces
    from squad.web.overview import squad_names

    app = _web(request).app
    agents = []
    for name in squad_names(app):
        try:
            spec, _source = app.squads.definition(name)
        except SquadError:
            continue
        agents += [(name, a.id, a.display_name) for a in spec.agents]
    waiting = app.store.review.pending_counts() if app.database_exists() else {}
    return _page(
        request,
        "memory.html",
        namespaces=_json(namespaces(app)),
        boot=_json([boot_file(app, n) for n in ("soul", "user", "agents")]),
        agents=agents,
        waiting=waiting,
        passes=_json(extraction_passes(app, limit=20)),
        decisions=_json(decisions(app, limit=50)),
    )


@router.post("/memory/namespaces/{namespace_id}", response_class=HTMLResponse)
async def toggle_namespace(request: Request, namespace_id: NamespaceId) -> HTMLResponse:
    import asyncio

    from squad.web.memory import set_namespace

    enabled = (await _form(request)).get("enabled") == "true"
    row = await asyncio.to_thread(set_namespace, _web(request).app, namespace_id, enabled)
    return _page(request, "namespace_row.html", ns=row.model_dump(mode="json"))


@router.post("/memory/boot/{name}", response_class=HTMLResponse)
async def save_boot(request: Request, name: str) -> HTMLResponse:
    return await _save_boot_form(request, name, None)


@router.post("/squads/{squad}/rules", response_class=HTMLResponse)
async def save_rules(request: Request, squad: SquadName) -> HTMLResponse:
    return await _save_boot_form(request, "agents", squad)


async def _save_boot_form(request: Request, name: str, squad: str | None) -> HTMLResponse:
    """Save a boot file from its editor; a refusal shows the editor again with the current
    text, the reason and the text that was not saved."""
    import asyncio

    from squad.web.app import status_of
    from squad.web.memory import boot_file, save_boot_file

    app = _web(request).app
    form = await _form(request)
    mine = form.get("text", "")
    try:
        saved = await asyncio.to_thread(
            save_boot_file, app, name, mine, version=form.get("version", ""), squad=squad
        )
    except SquadError as exc:
        if status_of(exc) == 404:
            raise
        current = await asyncio.to_thread(boot_file, app, name, squad)
        return _page(
            request,
            "boot_editor.html",
            http_status=status_of(exc),
            file=current.model_dump(mode="json"),
            error=str(exc),
            mine=mine,
        )
    return _page(request, "boot_editor.html", file=saved.model_dump(mode="json"), saved=True)


@router.post("/memory/facts/{fact_id}/{action}", response_class=HTMLResponse)
async def fact_action_fragment(
    request: Request, fact_id: FactId, action: Literal["forget", "revive"]
) -> HTMLResponse:
    import asyncio

    from squad.web.memory import fact_action

    fact = await asyncio.to_thread(fact_action, _web(request).app, fact_id, action)
    return _page(request, "fact_row.html", fact=fact.model_dump(mode="json"))


@router.get("/memory/find", response_class=HTMLResponse)
def memory_search_fragment(
    request: Request,
    q: Annotated[str, Query(max_length=1000)] = "",
    squad: Annotated[str, Query(pattern=OPTIONAL_SLUG)] = "",
    agent: Annotated[str, Query(pattern=OPTIONAL_SLUG)] = "",
    section: Annotated[str, Query(max_length=200)] = "",
    layer: Literal["", "project", "experiential", "conversation"] = "",
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 0,
) -> HTMLResponse:
    from squad.web.api import memory_search

    _ = translator(request)
    if not q.strip():
        return _page(
            request,
            "flash.html",
            message=_("Type something to search for."),
            ok=True,
        )
    result = memory_search(
        request,
        q,
        squad=squad or None,
        agent=agent or None,
        section=section or None,
        layer=layer or None,
        regex=False,
        case_sensitive=case_sensitive,
        context=context,
    )
    return _page(request, "memory_hits.html", result=result.model_dump(mode="json"))


@router.get("/squads/{squad}/agents/{agent}", response_class=HTMLResponse)
def agent_page(request: Request, squad: SquadName, agent: AgentId) -> HTMLResponse:
    from squad.web.memory import agent_memory, context_preview, extraction_passes
    from squad.web.review import review_list

    app = _web(request).app
    return _page(
        request,
        "agent.html",
        memory=agent_memory(app, squad, agent).model_dump(mode="json"),
        review=review_list(app, squad, agent),
        context=context_preview(app, squad, agent, message="").model_dump(mode="json"),
        passes=_json(extraction_passes(app, squad, agent, limit=10)),
    )


@router.get("/squads/{squad}/agents/{agent}/context", response_class=HTMLResponse)
def context_fragment(
    request: Request,
    squad: SquadName,
    agent: AgentId,
    message: Annotated[str, Query(max_length=MAX_TEXT_CHARS)] = "",
) -> HTMLResponse:
    from squad.web.memory import context_preview

    context = context_preview(_web(request).app, squad, agent, message=message)
    return _page(request, "context_block.html", context=context.model_dump(mode="json"))


# -- spend -------------------------------------------------------------------------------------


@router.get("/spend", response_class=HTMLResponse)
def spend_page(request: Request) -> HTMLResponse:
    from squad.web.charts import bar_chart, spend_activity

    app = _web(request).app
    words = _words(request)
    data = spend_activity(app, now=app.clock()).model_dump(mode="json")

    def dollars(value: float) -> str:
        return words("${amount}", amount=words.number(value, 4))

    def dollar_tick(value: float, digits: int) -> str:
        return words("${amount}", amount=words.number(value, digits))

    def tokens(value: float) -> str:
        return words("{count} tokens", count=words.number(value, 0))

    charts = [
        {
            "squad": s["squad"],
            "total_usd": s["total_usd"],
            "calls": s["calls"],
            "spend": {
                size: bar_chart(
                    [(d["day"][5:], d["day"], d["cost_usd"]) for d in s["days"]],
                    title=words("Spend per day (US dollars)"),
                    value_text=dollars,
                    tick_text=dollar_tick,
                    width=width,
                )
                for size, width in CHART_WIDTHS
            },
            "tokens": {
                size: bar_chart(
                    [
                        (
                            _day_time(r["created_at"])[5:],
                            _day_time(r["created_at"]),
                            float(r["tokens"]),
                        )
                        for r in s["runs"]
                    ],
                    title=words("Tokens per run (in and out)"),
                    value_text=tokens,
                    tick_text=words.number,
                    width=width,
                )
                for size, width in CHART_WIDTHS
            },
        }
        for s in data["squads"]
    ]
    return _page(request, "spend.html", data=data, charts=charts)


def _day_time(iso: str) -> str:
    """``2026-11-29 14:05`` from an ISO timestamp."""
    return iso[:16].replace("T", " ")
