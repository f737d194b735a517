"""A run as the front ends show it: a row in a list, the run awaiting a person, the whole run
with its task timeline, and what ``squad status`` says of a squad's last run."""

from __future__ import annotations

from pydantic import Field

from squad.views._base import View

__all__ = [
    "Approval",
    "ApprovalQueued",
    "FallbackPlan",
    "FileChanged",
    "ModelCall",
    "Plan",
    "RunAccepted",
    "RunDetail",
    "RunList",
    "RunPage",
    "RunRow",
    "RunStatus",
    "RunSummary",
    "TaskRow",
]


class RunSummary(View):
    """A squad's last run in ``squad status``: tokens and cost from the spend ledger, so a
    running run's count too."""

    id: str
    status: str
    trigger: str
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    error: str | None


class RunRow(View):
    """A run in a list: what the store has, without the per-run spend query."""

    id: str
    squad: str
    status: str
    trigger: str
    goal: str | None
    created_at: str
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    error: str | None


class Approval(RunRow):
    """A run paused at an approval gate, with the task it waits on."""

    task: str | None
    agent: str | None
    output: str | None


class TaskRow(View):
    """One task of a run: its state, timing, and the tokens and cost its model calls took."""

    id: str
    agent: str
    status: str
    attempts: int
    rounds: int
    error: str | None
    output: str | None
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class ModelCall(View):
    agent: str | None
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    at: str


class FallbackPlan(View):
    """Why a run's plan is squad's own and not its lead's: the lead's plan was invalid twice
    and the squad does not set ``process.strict_plan`` (the run log's ``plan_fallback``)."""

    kind: str
    """``offline_planner`` (the offline planner's plan for the goal) or ``lead_task`` (one
    task for the lead, the goal itself)."""
    reason: str
    """One line for a person: what happened and what the run went on with."""
    errors: list[str]
    """What was wrong with each of the lead's two plans."""


class Plan(View):
    """The last plan a hierarchical run's lead wrote (or squad, for a lead that could not)."""

    path: str | None
    tasks: list[str]
    text: str | None
    fallback: FallbackPlan | None = None
    """Set when the lead's plan was invalid twice and the run went on with squad's own."""


class RunDetail(RunRow):
    """One run, the same in every front end: figures from the spend ledger, the task
    timeline, the plan, the model calls and the task it waits on."""

    model: str | None
    tasks: list[TaskRow]
    awaiting: str | None
    resumable: bool
    plan: Plan | None
    model_calls: list[ModelCall]
    log_file: str | None


class RunPage(RunDetail):
    """The run page's data (``/api/v1/runs/{id}``): the run and its log so far."""

    events: list[dict[str, object]]
    """The run log's last events (the live tail streams the rest)."""
    events_total: int


class FileChanged(View):
    path: str
    status: str
    added: int
    removed: int
    binary: bool


class RunStatus(RunDetail):
    """The run as ``squad runs status`` and MCP's ``run_status`` show it: the run, its
    commit in the workspace's history and the diff against the squad's previous run (cut
    for a reader), or why there is none."""

    commit: str | None
    previous_run: str | None = None
    previous_commit: str | None = None
    changes: list[FileChanged] = Field(default_factory=list)
    diff: str | None
    diff_truncated: bool = False
    history: str | None = None
    """Why the run has no commit (history off or paused), when it has none."""


class RunList(View):
    """A squad's recent runs, newest first."""

    squad: str
    runs: list[RunRow]


class RunAccepted(View):
    """A run asked for: queued, or merged into one of the squad's already waiting."""

    squad: str
    accepted: bool
    message: str
    run_id: str | None = None
    """The run, when it is known as the answer is given (``squad mcp`` over stdio waits for
    its run to be recorded; a queue answers before the run exists)."""


class ApprovalQueued(View):
    run_id: str
    task: str
    approved: bool
    message: str
