"""The JSON API's actions, ``/api/v1/...``: run now, approve or reject, resume, switch a
namespace, edit a boot file or a workspace's rules, forget and revive a fact, decide the
memory review queue.

Each takes the same guarded path as the CLI (the run queue, version-checked and audited
writes); runs are queued and the request returns 202 at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from squad.paths import SLUG_PATTERN
from squad.views import BootFile, Fact, MemoryRevert, Namespace, ReviewResult, RunAccepted
from squad.web.api import ERRORS, AgentId, FactId, NamespaceId, RunId, SquadName, _web
from squad.web.control import RunRequest

__all__ = ["ApprovalAnswer", "BootEdit", "NamespaceSwitch", "RunStart", "router"]

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RunStart(_Body):
    goal: Annotated[str | None, Field(max_length=20_000)] = None
    """The goal for this run (default: the squad's own)."""


class ApprovalAnswer(_Body):
    task: Annotated[str, Field(pattern=SLUG_PATTERN)]
    """The task the run waits on (the run page names it)."""
    approved: bool
    reason: Annotated[str, Field(max_length=5_000)] = ""


class NamespaceSwitch(_Body):
    enabled: bool


class BootEdit(_Body):
    text: Annotated[str, Field(max_length=10_000_000)]
    version: Annotated[str, Field(max_length=64)]
    """The version the editor read (``""`` for a file that did not exist)."""


class RevertRequest(_Body):
    change: Annotated[str, Field(pattern=r"^[0-9a-f]{4,40}$")]
    """The id of the change to undo (the memory history lists them)."""


ReviewId = Annotated[int, Field(ge=1, le=2**31 - 1, strict=False)]


class ReviewDecide(_Body):
    action: Literal["approve", "reject"]
    ids: Annotated[list[ReviewId], Field(min_length=1, max_length=500)]
    """The review items to approve or reject."""


class ReviewEdit(_Body):
    action: Literal["edit"]
    ids: Annotated[list[ReviewId], Field(min_length=1, max_length=1)]
    """The one review item to approve with ``text``."""
    text: Annotated[str, Field(min_length=1, max_length=2_000)]
    """The fact as it should be kept."""


ReviewRequest = Annotated[ReviewDecide | ReviewEdit, Field(discriminator="action")]


def _accepted(squad: str, accepted: bool, what: str) -> JSONResponse:
    message = (
        f"{what} queued; the run page follows it live"
        if accepted
        else f"{what} merged into a request of {squad!r} already waiting"
    )
    body = RunAccepted(squad=squad, accepted=accepted, message=message)
    return JSONResponse(body.model_dump(), status_code=202)


@router.post("/squads/{squad}/runs", status_code=202, response_model=RunAccepted)
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


@router.post("/runs/{run_id}/approval", status_code=202, response_model=RunAccepted)
def answer_approval(request: Request, run_id: RunId, body: ApprovalAnswer) -> JSONResponse:
    """Approve or reject (with a reason) the task a paused run waits on."""
    from squad.web.control import approval_answer

    run = _paused_run(request, run_id)
    answer = approval_answer(
        _web(request).app, run, body.task, body.approved, body.reason, trigger="approval"
    )
    accepted = _web(request).control.submit(answer)
    return _accepted(run.squad, accepted, "approval" if body.approved else "rejection")


@router.post("/runs/{run_id}/resume", status_code=202, response_model=RunAccepted)
def resume_run(request: Request, run_id: RunId) -> JSONResponse:
    """Resume a run that was interrupted (it goes on from its last checkpoint)."""
    from squad.errors import UsageError
    from squad.store.records import RunStatus

    run = _paused_run(request, run_id)
    if run.status not in (RunStatus.INTERRUPTED, RunStatus.RUNNING):
        raise UsageError(f"run {run_id!r} is {run.status.value}; only an interrupted run resumes")
    accepted = _web(request).control.submit(RunRequest(run.squad, "resume", run_id=run_id))
    return _accepted(run.squad, accepted, "resume")


@router.put("/memory/namespaces/{namespace_id}", response_model=Namespace)
def switch_namespace(
    request: Request,
    namespace_id: NamespaceId,
    body: NamespaceSwitch,
) -> Namespace:
    """Let other agents' chats be given this namespace's facts, or stop it."""
    from squad.web.memory import set_namespace

    return set_namespace(_web(request).app, namespace_id, body.enabled)


@router.put("/memory/boot/{name}", response_model=BootFile)
def edit_boot(
    request: Request, name: Literal["soul", "user", "agents"], body: BootEdit
) -> BootFile:
    """Replace a boot file if it is still at ``version``: 409 with the current text when
    it changed since, 413 over the cap, 422 when it holds a credential."""
    return _save_boot(request, name, body, None)


def _save_boot(request: Request, name: str, body: BootEdit, squad: str | None) -> BootFile:
    from squad.errors import StaleWriteError
    from squad.web.memory import boot_file, save_boot_file

    app = _web(request).app
    try:
        return save_boot_file(app, name, body.text, version=body.version, squad=squad)
    except StaleWriteError as exc:
        current = boot_file(app, name, squad).model_dump(mode="json")
        exc.web_detail = {"current": current}  # type: ignore[attr-defined]
        raise


@router.get("/squads/{squad}/rules", response_model=BootFile)
def get_rules(request: Request, squad: SquadName) -> BootFile:
    """The squad's workspace rules (its workspace ``AGENTS.md``) with their version."""
    from squad.web.memory import boot_file

    return boot_file(_web(request).app, "agents", squad)


@router.put("/squads/{squad}/rules", response_model=BootFile)
def edit_rules(request: Request, squad: SquadName, body: BootEdit) -> BootFile:
    """Replace the workspace rules if still at ``version`` (409 stale, 413 over the cap,
    422 holding a credential), audited as ``web`` in the workspace."""
    return _save_boot(request, "agents", body, squad)


@router.post("/memory/facts/{fact_id}/forget", response_model=Fact)
def forget_fact(request: Request, fact_id: FactId) -> Fact:
    """Take a fact out of memory for good (kept for audit, marked forgotten; to have it
    back, remember it again)."""
    from squad.web.memory import fact_action

    return fact_action(_web(request).app, fact_id, "forget")


@router.post("/memory/facts/{fact_id}/revive", response_model=Fact)
def revive_fact(request: Request, fact_id: FactId) -> Fact:
    """Bring back a dormant fact (one unused for long); a forgotten, superseded or expired
    fact stays out (409)."""
    from squad.web.memory import fact_action

    return fact_action(_web(request).app, fact_id, "revive")


@router.post("/squads/{squad}/agents/{agent}/memory/revert", response_model=MemoryRevert)
def revert_memory(request: Request, squad: SquadName, agent: AgentId, body: RevertRequest) -> Any:
    """Undo one change to the agent's memory as a new change (committed as ``web``): lines
    it added removed, lines it removed put back, facts it added forgotten and those it took
    out brought back. 404 for an unknown change, 422 when nothing is left to undo."""
    from squad.web.history import memory_revert

    return memory_revert(_web(request).app, squad, agent, body.change, actor="web")


@router.post("/squads/{squad}/agents/{agent}/memory/review", response_model=ReviewResult)
def review_memory(request: Request, squad: SquadName, agent: AgentId, body: ReviewRequest) -> Any:
    """Approve (written as the extractor would have), reject (kept, never proposed again) or
    edit and approve proposed facts, as ``web``; every id is checked before anything is
    written: 404 for one that is not the agent's, 422 for one decided already."""
    from squad.web.review import review_decide

    text = body.text if isinstance(body, ReviewEdit) else None
    return review_decide(
        _web(request).app, squad, agent, body.action, body.ids, actor="web", text=text
    )
