"""The JSON API, ``/api/v1/...``: every page's data (the actions are in
:mod:`squad.web.actions`).

Handlers are plain functions: FastAPI runs them on its thread pool, so the store and the disk
never block the event loop. Names in paths are checked against squad's slug rule before
anything looks them up, so a squad "name" can never be a path on disk.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict

from squad.paths import RUN_ID_PATTERN, SLUG_PATTERN
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW
from squad.views import (
    AgentMemory,
    Approval,
    BootFile,
    ClusterView,
    ContextPreview,
    Decision,
    ExtractionPass,
    HistoryRun,
    MemoryChange,
    MemorySearch,
    Namespace,
    Overview,
    ReviewList,
    RunChangesView,
    RunDiffView,
    RunPage,
    Spend,
    SquadDetail,
    SquadSummary,
)

__all__ = ["ERRORS", "Problem", "router"]

RUN_ID = RUN_ID_PATTERN


class FieldProblem(BaseModel):
    field: str
    """Where the bad value is: ``query.page``, ``path.squad``, ``text`` (of the body)..."""
    message: str


class Problem(BaseModel):
    """Every error answer: ``detail`` says what went wrong and how to fix it."""

    model_config = ConfigDict(extra="forbid")

    detail: str
    problems: list[FieldProblem] | None = None
    """Each bad value of a request that did not validate (422)."""
    current: BootFile | None = None
    """The file as it is now, when an edit was made on an older version (409)."""


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in (
        (400, "A path that leaves its workspace, or a file that is not text"),
        (401, "No API token (Authorization: Bearer) and no session cookie"),
        (404, "No such squad, agent, run, task, fact, namespace or file, or no cluster"),
        (409, "A stale edit (with the current version), or the squad is busy"),
        (413, "The edit is over its cap"),
        (422, "A bad value (each named in problems), or an action the state forbids"),
        (503, "The store (or the cluster's queue) cannot be reached"),
    )
}
"""The error answers of every route (:func:`squad.web.app.status_of` picks them)."""

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)

SquadName = Annotated[str, Path(pattern=SLUG_PATTERN, description="Squad name")]
AgentId = Annotated[str, Path(pattern=SLUG_PATTERN, description="Agent id")]
RunId = Annotated[str, Path(pattern=RUN_ID, description="Run id")]
HistoryRunId = Annotated[
    str, Path(pattern=r"^[A-Za-z0-9_-]{4,64}$", description="Run id, or its first 4+ characters")
]
NamespaceId = Annotated[int, Path(ge=1, le=2**31 - 1, description="Namespace id")]
FactId = Annotated[int, Path(ge=1, le=2**62, description="Experiential fact id")]
MAX_PATH_CHARS = 1024
"""The longest workspace path a query may name. Query values must fit, percent-encoded (up to
12 bytes a character), in the 16 KiB request head uvicorn's HTTP/1.1 parser (h11) accepts;
a longer head is refused before any route sees it, often as a reset connection."""
MAX_TEXT_CHARS = 1000
"""The longest search text or message a query may carry (see :data:`MAX_PATH_CHARS`)."""

FilePath = Annotated[
    str, Query(max_length=MAX_PATH_CHARS, description="Path relative to the workspace")
]


def _web(request: Request) -> Any:
    return request.app.state.web


def _now(request: Request) -> Any:
    return _web(request).app.clock()


def server_info(request: Request) -> dict[str, Any]:
    web = _web(request)
    return {"mode": web.mode, "started_at": web.started_at.isoformat(), **web.extra}


# -- reading ---------------------------------------------------------------------------------


@router.get("/overview", response_model=Overview)
def get_overview(request: Request) -> Overview:
    """Daemon, squads (schedule, next fire, last run, spend against cap), runs in progress,
    approvals waiting, extractor backlog, files that failed to load."""
    from squad.web.overview import overview

    return overview(_web(request).app, now=_now(request), server=server_info(request))


@router.get("/squads", response_model=list[SquadSummary])
def list_squads(request: Request) -> list[SquadSummary]:
    """Every squad as the overview lists it."""
    from squad.web.overview import overview

    return overview(_web(request).app, now=_now(request)).squads


@router.get("/squads/{squad}", response_model=SquadDetail)
def get_squad(
    request: Request,
    squad: SquadName,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 20,
) -> SquadDetail:
    """Definition (validated), agents, a page of runs, spend, workspace health."""
    from squad.web.overview import squad_detail

    return squad_detail(_web(request).app, squad, page=page, per_page=per_page)


@router.get("/runs/{run_id}", response_model=RunPage)
def get_run(request: Request, run_id: RunId) -> RunPage:
    """Task timeline, plan, model calls, the run log so far, the approval it waits on."""
    from squad.web.runs import run_page

    return run_page(_web(request).app, run_id)


@router.get("/runs", response_model=list[HistoryRun])
def list_runs(
    request: Request,
    squad: Annotated[
        str | None, Query(pattern=SLUG_PATTERN, description="Only this squad's")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
) -> list[Any]:
    """The newest runs, from the workspaces' histories (each with its commit)."""
    from squad.web.history import recent_runs

    return recent_runs(_web(request).app, squad, limit=limit)


@router.get("/runs/{run_id}/changes", response_model=RunChangesView)
def get_run_changes(request: Request, run_id: HistoryRunId) -> Any:
    """The run's commit, and the files it changed since the squad's previous run."""
    from squad.web.history import run_changes

    return run_changes(_web(request).app, run_id)


@router.get("/runs/{run_id}/diff", response_model=RunDiffView)
def get_run_diff(
    request: Request,
    run_id: HistoryRunId,
    against: Annotated[
        str | None,
        Query(pattern=RUN_ID, description="Another run of the squad (default: the previous)"),
    ] = None,
    path: Annotated[list[str] | None, Query(max_length=20, description="Only these paths")] = None,
    stat: Annotated[bool, Query(description="Only files and counts, no patch")] = False,
) -> Any:
    """What the run changed in its workspace: the unified diff against the squad's previous
    run (or ``against``), limited to ``path``s."""
    from squad.web.history import run_diff

    for one in path or []:
        if len(one) > MAX_PATH_CHARS:
            from squad.errors import UsageError

            raise UsageError(f"a path is at most {MAX_PATH_CHARS} characters")
    return run_diff(_web(request).app, run_id, against, paths=path, stat_only=stat)


@router.get("/squads/{squad}/agents/{agent}/memory/history", response_model=list[MemoryChange])
def get_memory_history(
    request: Request,
    squad: SquadName,
    agent: AgentId,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 50,
) -> list[Any]:
    """Every change to the agent's memory (memory.md lines and facts), newest first, each
    with the id a revert takes."""
    from squad.web.history import memory_history

    return memory_history(_web(request).app, squad, agent, limit=limit)


@router.get("/squads/{squad}/agents/{agent}/memory/review", response_model=ReviewList)
def get_memory_review(
    request: Request,
    squad: SquadName,
    agent: AgentId,
    status: Literal["pending", "approved", "rejected", "all"] = "pending",
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> Any:
    """The facts the extractor proposed for the agent that wait for review (or those
    decided), with the agent's ``memory.review`` mode."""
    from squad.web.review import review_list

    return review_list(_web(request).app, squad, agent, status=status, limit=limit)


@router.get("/approvals", response_model=list[Approval])
def get_approvals(request: Request) -> list[Approval]:
    """Runs paused at an approval gate, across squads."""
    from squad.web.overview import approvals

    return approvals(_web(request).app)


@router.get("/squads/{squad}/agents/{agent}/memory", response_model=AgentMemory)
def get_agent_memory(request: Request, squad: SquadName, agent: AgentId) -> AgentMemory:
    """memory.md by section, the agent's namespace and its facts with provenance."""
    from squad.web.memory import agent_memory

    return agent_memory(_web(request).app, squad, agent)


@router.get("/squads/{squad}/agents/{agent}/context", response_model=ContextPreview)
def get_context(
    request: Request,
    squad: SquadName,
    agent: AgentId,
    message: Annotated[str, Query(max_length=MAX_TEXT_CHARS)] = "",
    max_tokens: Annotated[int | None, Query(ge=0, le=1_000_000)] = None,
    context_window: Annotated[
        int | None, Query(ge=MIN_CONTEXT_WINDOW, le=MAX_CONTEXT_WINDOW)
    ] = None,
) -> ContextPreview:
    """The exact memory block the agent's next prompt would get for ``message``, and the
    prompt's regions sized from the model's window (or ``context_window``)."""
    from squad.web.memory import context_preview

    return context_preview(
        _web(request).app,
        squad,
        agent,
        message=message,
        max_tokens=max_tokens,
        context_window=context_window,
    )


@router.get("/memory/namespaces", response_model=list[Namespace])
def get_namespaces(request: Request) -> list[Namespace]:
    """Every experiential namespace with its switch."""
    from squad.web.memory import namespaces

    return namespaces(_web(request).app)


@router.get("/memory/boot/{name}", response_model=BootFile)
def get_boot(request: Request, name: Literal["soul", "user", "agents"]) -> BootFile:
    """SOUL.md, USER.md or AGENTS.md with its version (for an edit)."""
    from squad.web.memory import boot_file

    return boot_file(_web(request).app, name)


@router.get("/memory/search", response_model=MemorySearch)
def search_memory(
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=MAX_TEXT_CHARS)],
    squad: Annotated[str | None, Query(pattern=SLUG_PATTERN)] = None,
    agent: Annotated[str | None, Query(pattern=SLUG_PATTERN)] = None,
    section: Annotated[str | None, Query(max_length=100)] = None,
    layer: Literal["project", "experiential", "conversation"] | None = None,
    regex: bool = False,
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 0,
) -> MemorySearch:
    """Every agent's memory.md and every experiential fact, filtered."""
    return memory_search(
        request,
        q,
        squad=squad,
        agent=agent,
        section=section,
        layer=layer,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
    )


def memory_search(request: Request, query: str, **options: Any) -> MemorySearch:
    from squad.memory.search import search_all_memory
    from squad.text.grep import compile_query

    app = _web(request).app
    regex, case_sensitive = options.pop("regex"), options.pop("case_sensitive")
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    squad = options.get("squad")
    targets = [app.squads.locate(squad)] if squad else app.squads.all_workspaces()
    found = search_all_memory(
        [(t.squad, t.path) for t in targets],
        app.store.memory if app.database_exists() else None,
        pattern,
        literal=None if regex else query,
        case_sensitive=case_sensitive,
        **options,
    )
    return MemorySearch.model_validate(
        {
            "query": query,
            "hits": [h.to_dict() for h in found.hits],
            "skipped": [s.to_dict() for s in found.skipped],
        }
    )


@router.get("/decisions", response_model=list[Decision])
def get_decisions(
    request: Request,
    squad: Annotated[str | None, Query(pattern=SLUG_PATTERN)] = None,
    q: Annotated[str | None, Query(min_length=1, max_length=MAX_TEXT_CHARS)] = None,
    include_superseded: bool = True,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[Decision]:
    """The squads' decisions with their reasons, newest first, or those matching ``q``
    (every word, any case); superseded ones are marked with their successor."""
    from squad.web.memory import decisions

    return decisions(
        _web(request).app, squad, q, include_superseded=include_superseded, limit=limit
    )


@router.get("/memory/extraction", response_model=list[ExtractionPass])
def get_extraction(
    request: Request,
    squad: Annotated[str | None, Query(pattern=SLUG_PATTERN)] = None,
    agent: Annotated[str | None, Query(pattern=SLUG_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> list[ExtractionPass]:
    """The extractor's recent passes: written, merged, superseded, dropped, and why."""
    from squad.web.memory import extraction_passes

    return extraction_passes(_web(request).app, squad, agent, limit=limit)


@router.get("/cluster", response_model=ClusterView)
def get_cluster(request: Request) -> ClusterView:
    """The cluster's nodes with their last heartbeat, the queue's depth, the jobs running and
    on which node, and the stalled ones; 404 when this home is not in a cluster, 503 when
    its queue cannot be reached."""
    from squad.web.cluster import cluster

    return cluster(_web(request).app, now=_now(request))


@router.get("/spend", response_model=Spend)
def get_spend(request: Request, days: Annotated[int, Query(ge=1, le=366)] = 30) -> Spend:
    """Spend per squad per day, and tokens of each squad's recent runs."""
    from squad.web.charts import spend_activity

    return spend_activity(_web(request).app, now=_now(request), days=days)
