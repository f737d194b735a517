"""The JSON API, ``/api/v1/...``: every page's data, and the actions (run now, approve or
reject, resume, namespace switch, boot file edit, forget and revive).

Handlers are plain functions: FastAPI runs them on its thread pool, so the store and the disk
never block the event loop. Names in paths are checked against squad's slug rule before
anything looks them up, so a squad "name" can never be a path on disk.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from squad.web import schemas
from squad.web.control import RunRequest

__all__ = ["ERRORS", "SLUG", "Problem", "router"]

SLUG = r"^[a-z0-9][a-z0-9-]{0,62}$"
RUN_ID = r"^[A-Za-z0-9_-]{1,64}$"


class FieldProblem(BaseModel):
    field: str
    """Where the bad value is: ``query.page``, ``path.squad``, ``text`` (of the body)..."""
    message: str


class Problem(BaseModel):
    """Every error answer: ``detail`` says what went wrong and how to fix it."""

    model_config = ConfigDict(extra="allow")

    detail: str
    problems: list[FieldProblem] | None = None
    """Each bad value of a request that did not validate (422)."""
    current: dict[str, Any] | None = None
    """The file as it is now, when an edit was made on an older version (409)."""


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in (
        (400, "A path that leaves its workspace, or a file that is not text"),
        (401, "No API token (Authorization: Bearer) and no session cookie"),
        (404, "No such squad, agent, run, task, fact, namespace or file"),
        (409, "A stale edit (with the current version), or the squad is busy"),
        (413, "The edit is over its cap"),
        (422, "A bad value (each named in problems), or an action the state forbids"),
        (503, "The store cannot be reached"),
    )
}
"""The error answers of every route (:func:`squad.web.app.status_of` picks them)."""

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)

SquadName = Annotated[str, Path(pattern=SLUG, description="Squad name")]
AgentId = Annotated[str, Path(pattern=SLUG, description="Agent id")]
RunId = Annotated[str, Path(pattern=RUN_ID, description="Run id")]
MAX_PATH_CHARS = 1024
"""The longest workspace path a query may name. Query values must fit, percent-encoded (up to
12 bytes a character), in the 16 KiB request head uvicorn's HTTP/1.1 parser (h11) accepts;
a longer head is refused before any route sees it, often as a reset connection."""
MAX_TEXT_CHARS = 1000
"""The longest search text or message a query may carry (see :data:`MAX_PATH_CHARS`)."""

FilePath = Annotated[
    str, Query(max_length=MAX_PATH_CHARS, description="Path relative to the workspace")
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RunStart(_Body):
    goal: Annotated[str | None, Field(max_length=20_000)] = None
    """The goal for this run (default: the squad's own)."""


class ApprovalAnswer(_Body):
    task: Annotated[str, Field(pattern=SLUG)]
    """The task the run waits on (the run page names it)."""
    approved: bool
    reason: Annotated[str, Field(max_length=5_000)] = ""


class NamespaceSwitch(_Body):
    enabled: bool


class BootEdit(_Body):
    text: Annotated[str, Field(max_length=10_000_000)]
    version: Annotated[str, Field(max_length=64)]
    """The version the editor read (``""`` for a file that did not exist)."""


class Accepted(BaseModel):
    accepted: bool
    """False when the request was merged into one already waiting for the squad."""
    squad: str
    message: str


def _web(request: Request) -> Any:
    return request.app.state.web


def _now(request: Request) -> Any:
    return _web(request).app.clock()


def server_info(request: Request) -> dict[str, Any]:
    web = _web(request)
    return {"mode": web.mode, "started_at": web.started_at.isoformat(), **web.extra}


# -- reading ---------------------------------------------------------------------------------


@router.get("/overview", response_model=schemas.Overview)
def get_overview(request: Request) -> dict[str, Any]:
    """Daemon, squads (schedule, next fire, last run, spend against cap), runs in progress,
    approvals waiting, extractor backlog, files that failed to load."""
    from squad.web.overview import overview

    return overview(_web(request).app, now=_now(request), server=server_info(request))


@router.get("/squads", response_model=list[schemas.SquadSummary])
def list_squads(request: Request) -> list[dict[str, Any]]:
    """Every squad as the overview lists it."""
    from squad.web.overview import overview

    return list(overview(_web(request).app, now=_now(request))["squads"])


@router.get("/squads/{squad}", response_model=schemas.SquadDetail)
def get_squad(
    request: Request,
    squad: SquadName,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per_page: Annotated[int, Query(ge=1, le=200)] = 20,
) -> dict[str, Any]:
    """Definition (validated), agents, a page of runs, spend, workspace health."""
    from squad.web.overview import squad_detail

    return squad_detail(_web(request).app, squad, page=page, per_page=per_page)


@router.get("/runs/{run_id}", response_model=schemas.RunDetail)
def get_run(request: Request, run_id: RunId) -> dict[str, Any]:
    """Task timeline, plan, model calls, the run log so far, the approval it waits on."""
    from squad.web.runs import run_detail

    return run_detail(_web(request).app, run_id)


@router.get("/approvals", response_model=list[schemas.Approval])
def get_approvals(request: Request) -> list[dict[str, Any]]:
    """Runs paused at an approval gate, across squads."""
    from squad.web.overview import approvals

    return approvals(_web(request).app)


@router.get("/squads/{squad}/files", response_model=schemas.Folder)
def get_folder(request: Request, squad: SquadName, path: FilePath = "") -> dict[str, Any]:
    """One folder of the workspace, one level (folders first)."""
    from squad.errors import WorkspaceError
    from squad.workspace.listing import list_folder

    found = _web(request).app.squads.locate(squad)
    try:
        return list_folder(found.path, path).to_dict()
    except OSError as exc:  # a name past the system's limits (ENAMETOOLONG), say
        raise WorkspaceError(f"cannot open folder {path!r}: {exc.strerror}") from None


@router.get("/squads/{squad}/file", response_model=schemas.Preview)
def get_file(
    request: Request,
    squad: SquadName,
    path: Annotated[str, Query(min_length=1, max_length=MAX_PATH_CHARS)],
    max_bytes: Annotated[int, Query(ge=1, le=5_000_000)] = 256_000,
) -> dict[str, Any]:
    """A text file's preview (JSON pretty-printed; large files in part, ``truncated``);
    credentials in it are shown as ``[REDACTED:<kind>]`` and counted in ``redacted``."""
    return file_preview(request, squad, path, max_bytes=max_bytes)


def file_preview(request: Request, squad: str, path: str, *, max_bytes: int) -> dict[str, Any]:
    from squad.web.redaction import redacted_text
    from squad.workspace.inspect import preview

    found = _web(request).app.squads.locate(squad)
    shown = preview(found.path, path, max_bytes=max_bytes).to_dict()
    shown["text"], shown["redacted"] = redacted_text(shown["text"])
    return shown


@router.get("/squads/{squad}/search", response_model=schemas.SearchResult)
def search_workspace(
    request: Request,
    squad: SquadName,
    q: Annotated[str, Query(min_length=1, max_length=MAX_TEXT_CHARS)],
    regex: bool = False,
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 0,
    max_matches: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> dict[str, Any]:
    """Full-text search of the workspace (the engine of ``squad ws search``); lines with a
    credential are shown redacted (``redacted`` counts them)."""
    return workspace_search(
        request,
        squad,
        q,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
        max_matches=max_matches,
    )


def workspace_search(
    request: Request,
    squad: str,
    query: str,
    *,
    regex: bool,
    case_sensitive: bool,
    context: int,
    max_matches: int = 500,
) -> dict[str, Any]:
    from squad.text.search import compile_query
    from squad.web.redaction import redacted_hits
    from squad.workspace.search import search

    app = _web(request).app
    found = app.squads.locate(squad)
    result = search(
        found.path,
        query,
        regex=regex,
        case_sensitive=case_sensitive,
        context=context,
        max_matches=max_matches,
        index_dir=app.settings.home / "index",
    ).to_dict()
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    hidden = 0
    files = []
    for file in result["files"]:
        matches, count = redacted_hits(file["matches"], pattern, where=file["path"])
        hidden += count
        if matches:
            files.append({**file, "matches": matches})
    result["files"] = files
    result["match_count"] = sum(len(f["matches"]) for f in files)
    return {"squad": found.squad, **result, "redacted": hidden}


@router.get("/squads/{squad}/health", response_model=schemas.Health)
def get_health(request: Request, squad: SquadName) -> dict[str, Any]:
    """Total size, file count, largest files, memory files against their cap."""
    from squad.workspace.inspect import health

    app = _web(request).app
    found = app.squads.locate(squad)
    return health(found.path, memory_cap_bytes=app.settings.memory_file_cap_bytes).to_dict()


@router.get("/squads/{squad}/agents/{agent}/memory", response_model=schemas.AgentMemory)
def get_agent_memory(request: Request, squad: SquadName, agent: AgentId) -> dict[str, Any]:
    """memory.md by section, the agent's namespace and its facts with provenance."""
    from squad.web.memory import agent_memory

    return agent_memory(_web(request).app, squad, agent)


@router.get("/squads/{squad}/agents/{agent}/context", response_model=schemas.ContextPreview)
def get_context(
    request: Request,
    squad: SquadName,
    agent: AgentId,
    message: Annotated[str, Query(max_length=MAX_TEXT_CHARS)] = "",
    max_tokens: Annotated[int | None, Query(ge=0, le=1_000_000)] = None,
) -> dict[str, Any]:
    """The exact memory block the agent's next prompt would get for ``message``."""
    from squad.web.memory import context_preview

    return context_preview(_web(request).app, squad, agent, message=message, max_tokens=max_tokens)


@router.get("/memory/namespaces", response_model=list[schemas.Namespace])
def get_namespaces(request: Request) -> list[dict[str, Any]]:
    """Every experiential namespace with its switch."""
    from squad.web.memory import namespaces

    return namespaces(_web(request).app)


@router.get("/memory/boot/{name}", response_model=schemas.BootFile)
def get_boot(request: Request, name: Literal["soul", "user", "agents"]) -> dict[str, Any]:
    """SOUL.md, USER.md or AGENTS.md with its version (for an edit)."""
    from squad.web.memory import boot_file

    return boot_file(_web(request).app, name)


@router.get("/memory/search", response_model=schemas.MemorySearch)
def search_memory(
    request: Request,
    q: Annotated[str, Query(min_length=1, max_length=MAX_TEXT_CHARS)],
    squad: Annotated[str | None, Query(pattern=SLUG)] = None,
    agent: Annotated[str | None, Query(pattern=SLUG)] = None,
    section: Annotated[str | None, Query(max_length=100)] = None,
    layer: Literal["project", "experiential"] | None = None,
    regex: bool = False,
    case_sensitive: bool = False,
    context: Annotated[int, Query(ge=0, le=20)] = 0,
) -> dict[str, Any]:
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


def memory_search(request: Request, query: str, **options: Any) -> dict[str, Any]:
    from squad.memory.search import search_all_memory
    from squad.text.search import compile_query

    app = _web(request).app
    pattern = compile_query(
        query, regex=options.pop("regex"), case_sensitive=options.pop("case_sensitive")
    )
    squad = options.get("squad")
    targets = [app.squads.locate(squad)] if squad else app.squads.all_workspaces()
    found = search_all_memory(
        [(t.squad, t.path) for t in targets],
        app.store.memory if app.database_exists() else None,
        pattern,
        **options,
    )
    return {
        "query": query,
        "hits": [h.to_dict() for h in found.hits],
        "skipped": [s.to_dict() for s in found.skipped],
    }


@router.get("/memory/extraction", response_model=list[schemas.ExtractionPass])
def get_extraction(
    request: Request,
    squad: Annotated[str | None, Query(pattern=SLUG)] = None,
    agent: Annotated[str | None, Query(pattern=SLUG)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> list[dict[str, Any]]:
    """The extractor's recent passes: written, merged, superseded, dropped, and why."""
    from squad.web.memory import extraction_passes

    return extraction_passes(_web(request).app, squad, agent, limit=limit)


@router.get("/spend", response_model=schemas.Spend)
def get_spend(request: Request, days: Annotated[int, Query(ge=1, le=366)] = 30) -> dict[str, Any]:
    """Spend per squad per day, and tokens of each squad's recent runs."""
    from squad.web.charts import spend_activity

    return spend_activity(_web(request).app, now=_now(request), days=days)


# -- acting ----------------------------------------------------------------------------------


def _accepted(squad: str, accepted: bool, what: str) -> JSONResponse:
    message = (
        f"{what} queued; the run page follows it live"
        if accepted
        else f"{what} merged into a request of {squad!r} already waiting"
    )
    body = Accepted(accepted=accepted, squad=squad, message=message)
    return JSONResponse(body.model_dump(), status_code=202)


@router.post("/squads/{squad}/runs", status_code=202, response_model=Accepted)
def start_run(request: Request, squad: SquadName, body: RunStart | None = None) -> JSONResponse:
    """Run the squad now (with an optional goal); it starts when the queue allows."""
    goal = body.goal.strip() if body is not None and body.goal else None
    control = _web(request).control
    accepted = control.submit(RunRequest(squad, "web", goal=goal or None))
    return _accepted(squad, accepted, "run")


def _paused_run(request: Request, run_id: str) -> Any:
    from squad.errors import NotFound
    from squad.paths import check_name

    check_name(run_id, what="run id")
    app = _web(request).app
    run = app.store.get_run(run_id) if app.database_exists() else None
    if run is None:
        raise NotFound(f"no run {run_id!r}")
    return run


@router.post("/runs/{run_id}/approval", status_code=202, response_model=Accepted)
def answer_approval(request: Request, run_id: RunId, body: ApprovalAnswer) -> JSONResponse:
    """Approve or reject (with a reason) the task a paused run waits on."""
    from squad.errors import UsageError
    from squad.store.records import RunStatus, TaskStatus

    app = _web(request).app
    run = _paused_run(request, run_id)
    if run.status is not RunStatus.AWAITING_APPROVAL:
        raise UsageError(f"run {run_id!r} is {run.status.value}, not waiting for an approval")
    task = app.store.runs.get_task(run_id, body.task)
    if task is None or task.status is not TaskStatus.AWAITING_APPROVAL:
        raise UsageError(f"run {run_id!r} does not wait on task {body.task!r}")
    decision = (body.task, body.approved, body.reason.strip())
    accepted = _web(request).control.submit(
        RunRequest(run.squad, "approval", run_id=run_id, decision=decision)
    )
    return _accepted(run.squad, accepted, "approval" if body.approved else "rejection")


@router.post("/runs/{run_id}/resume", status_code=202, response_model=Accepted)
def resume_run(request: Request, run_id: RunId) -> JSONResponse:
    """Resume a run that was interrupted (it goes on from its last checkpoint)."""
    from squad.errors import UsageError
    from squad.store.records import RunStatus

    run = _paused_run(request, run_id)
    if run.status not in (RunStatus.INTERRUPTED, RunStatus.RUNNING):
        raise UsageError(f"run {run_id!r} is {run.status.value}; only an interrupted run resumes")
    accepted = _web(request).control.submit(RunRequest(run.squad, "resume", run_id=run_id))
    return _accepted(run.squad, accepted, "resume")


@router.put("/memory/namespaces/{namespace_id}", response_model=schemas.Namespace)
def switch_namespace(
    request: Request,
    namespace_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
    body: NamespaceSwitch,
) -> dict[str, Any]:
    """Let other agents' chats be given this namespace's facts, or stop it."""
    from squad.web.memory import set_namespace

    return set_namespace(_web(request).app, namespace_id, body.enabled)


@router.put("/memory/boot/{name}", response_model=schemas.BootFile)
def edit_boot(
    request: Request, name: Literal["soul", "user", "agents"], body: BootEdit
) -> dict[str, Any]:
    """Replace a boot file if it is still at ``version``: 409 with the current text when
    it changed since, 413 over the cap, 422 when it holds a credential."""
    return _save_boot(request, name, body, None)


def _save_boot(request: Request, name: str, body: BootEdit, squad: str | None) -> dict[str, Any]:
    from squad.errors import StaleWriteError
    from squad.web.memory import boot_file, save_boot_file

    app = _web(request).app
    try:
        return save_boot_file(app, name, body.text, version=body.version, squad=squad)
    except StaleWriteError as exc:
        exc.web_detail = {"current": boot_file(app, name, squad)}  # type: ignore[attr-defined]
        raise


@router.get("/squads/{squad}/rules", response_model=schemas.BootFile)
def get_rules(request: Request, squad: SquadName) -> dict[str, Any]:
    """The squad's workspace rules (its workspace ``AGENTS.md``) with their version."""
    from squad.web.memory import boot_file

    return boot_file(_web(request).app, "agents", squad)


@router.put("/squads/{squad}/rules", response_model=schemas.BootFile)
def edit_rules(request: Request, squad: SquadName, body: BootEdit) -> dict[str, Any]:
    """Replace the workspace rules if still at ``version`` (409 stale, 413 over the cap,
    422 holding a credential), audited as ``web`` in the workspace."""
    return _save_boot(request, "agents", body, squad)


@router.post("/memory/facts/{fact_id}/forget", response_model=schemas.Fact)
def forget_fact(request: Request, fact_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
    """Take a fact out of memory for good (kept for audit, marked forgotten; to have it
    back, remember it again)."""
    from squad.web.memory import fact_action

    return fact_action(_web(request).app, fact_id, "forget")


@router.post("/memory/facts/{fact_id}/revive", response_model=schemas.Fact)
def revive_fact(request: Request, fact_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
    """Bring back a dormant fact (one unused for long); a forgotten, superseded or expired
    fact stays out (409)."""
    from squad.web.memory import fact_action

    return fact_action(_web(request).app, fact_id, "revive")
