"""How a run ended: its result, as the runner returns it and the CLI and API show it.

:class:`RunResult` imports nothing of the runtime: ``squad run`` builds one from what a
daemon that ran the run for it sent (:mod:`squad.cli.handoff`).

:func:`run_end` reads the end from the graph's final state (pure); :func:`result_of` adds the
spend the store holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from squad.runtime.limits import RunBudget
    from squad.spec.models import SquadSpec
    from squad.store import SpendTotals, Store
    from squad.store.records import RunRecord, RunStatus

__all__ = ["RunEnd", "RunResult", "RunResultDict", "result_of", "run_end", "turns_so_far"]


class RunResultDict(TypedDict):
    """:meth:`RunResult.to_dict`."""

    run_id: str
    squad: str
    status: str
    workspace: str
    tasks: dict[str, str]
    turns: int
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    duration_s: float | None
    error: str | None
    awaiting: str | None


@dataclass(frozen=True)
class RunResult:
    run_id: str
    squad: str
    status: str
    workspace: Path
    tasks: dict[str, str] = field(default_factory=dict)
    turns: int = 0
    """The run's agent turns, over all its resumes and approvals (what ``limits.max_turns``
    counts)."""
    model_calls: int = 0
    """The run's model calls, from the spend ledger (a turn with tool rounds makes several)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    awaiting: str | None = None
    """The task waiting for approval, when the run is paused."""
    duration_s: float | None = None
    """:meth:`~squad.store.RunRecord.duration_s`, as ``squad status`` shows it; None while it
    has not ended."""

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunResult:
        """The result :meth:`to_dict` gave (a daemon sends it to the ``squad run`` that
        handed it the run); a KeyError, TypeError or ValueError for anything else."""
        duration = data["duration_s"]
        return cls(
            run_id=str(data["run_id"]),
            squad=str(data["squad"]),
            status=str(data["status"]),
            workspace=Path(str(data["workspace"])),
            tasks={str(k): str(v) for k, v in dict(data["tasks"]).items()},
            turns=int(data["turns"]),
            model_calls=int(data["model_calls"]),
            prompt_tokens=int(data["prompt_tokens"]),
            completion_tokens=int(data["completion_tokens"]),
            cost_usd=float(data["cost_usd"]),
            error=None if data["error"] is None else str(data["error"]),
            awaiting=None if data["awaiting"] is None else str(data["awaiting"]),
            duration_s=None if duration is None else float(duration),
        )

    def to_dict(self) -> RunResultDict:
        """What ``squad run --json`` prints."""
        return {
            "run_id": self.run_id,
            "squad": self.squad,
            "status": self.status,
            "workspace": str(self.workspace),
            "tasks": dict(self.tasks),
            "turns": self.turns,
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "duration_s": self.duration_s,
            "error": self.error,
            "awaiting": self.awaiting,
        }


@dataclass(frozen=True)
class RunEnd:
    """How the graph ended: the run's status, its error, the task awaiting approval, and
    each task's state."""

    status: RunStatus
    error: str | None
    awaiting: str | None
    tasks: dict[str, str]


def run_end(result: Mapping[str, Any]) -> RunEnd:
    """The end of a run whose graph returned ``result`` (its final state, or an interrupt)."""
    from squad.runtime.steps import RunState, state_outcome
    from squad.runtime.tasks import RunOutcome
    from squad.store.records import RunStatus

    awaiting = None
    error = result.get("error")
    tasks = dict(result.get("status", {}))
    if result.get("__interrupt__"):
        status = RunStatus.AWAITING_APPROVAL
        awaiting = str(result["__interrupt__"][0].value.get("task"))
        # The interrupted step never returned, so the state still says pending.
        tasks[awaiting] = "awaiting_approval"
        error = None
    elif result.get("stopped") == "plan_failed":
        status = RunStatus.FAILED
    elif result.get("stopped"):
        status = RunStatus.STOPPED
    else:
        outcome = (
            state_outcome(cast(RunState, result)) if result.get("tasks") else RunOutcome.SUCCEEDED
        )
        status = RunStatus.SUCCEEDED if outcome == RunOutcome.SUCCEEDED else RunStatus.FAILED
        if status == RunStatus.FAILED and not error:
            failed = [k for k, v in result.get("status", {}).items() if v == "failed"]
            error = f"failed tasks: {', '.join(failed)}"
    return RunEnd(status, error, awaiting, tasks)


def result_of(
    store: Store,
    run_id: str,
    spec: SquadSpec,
    workspace: Path,
    status: str,
    budget: RunBudget,
    *,
    tasks: dict[str, str] | None = None,
    error: str | None = None,
    awaiting: str | None = None,
    totals: SpendTotals | None = None,
    record: RunRecord | None = None,
) -> RunResult:
    """The run's result; ``tasks`` default to their states in the store, ``totals`` to its
    spend there and ``record`` to its record (a run that has just ended has both at hand)."""
    if totals is None:
        totals = store.spend.of_run(run_id)
    if tasks is None:
        tasks = {t.task_id: str(t.status) for t in store.run_state.tasks(run_id)}
    if record is None:
        record = store.get_run(run_id)
    return RunResult(
        run_id,
        spec.name,
        status,
        workspace,
        tasks,
        turns=budget.turns,
        model_calls=totals.calls,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        cost_usd=totals.cost_usd,
        error=error,
        awaiting=awaiting,
        duration_s=None if record is None else record.duration_s(),
    )


def turns_so_far(record: RunRecord | None) -> int:
    """The agent turns a run took before this process went on with it (its summary's
    ``turns``): a resumed or approved run goes on counting from there."""
    summary = (record.summary or {}) if record is not None else {}
    turns = summary.get("turns")
    return turns if isinstance(turns, int) and turns > 0 else 0
