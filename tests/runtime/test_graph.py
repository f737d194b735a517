"""The run graph with a scripted executor and a real SQLite checkpointer."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from squad.errors import LimitReached, ModelError, PlanError
from squad.runtime.graph import build_graph
from squad.runtime.steps import RunState, state_outcome
from squad.runtime.tasks import RunOutcome, TaskNode, TaskStatus

TASKS = [
    TaskNode("outline", "planner"),
    TaskNode("draft", "writer", ("outline",)),
    TaskNode("publish", "writer", ("draft",), approval=True),
    TaskNode("notes", "writer"),
]
OUTLINE_ONLY = TaskNode("outline", "writer")
DRAFT_AFTER = TaskNode("draft", "writer", ("outline",))


@dataclass
class Script:
    """An executor that records what it was asked and fails where told to."""

    fail: dict[str, BaseException] = field(default_factory=dict)
    reviews: list[tuple[bool, str]] = field(default_factory=list)
    planned: list[TaskNode] = field(default_factory=list)
    plan_error: Exception | None = None
    secret: str = "Blu3Whale$2024"
    """A value the run found: the executor redacts it wherever the run writes it."""
    fail_review: Exception | None = None
    executed: list[str] = field(default_factory=list)
    statuses: list[tuple[str, str]] = field(default_factory=list)
    feedback_seen: list[str | None] = field(default_factory=list)
    done_in_store: dict[str, str] = field(default_factory=dict)

    def plan(self) -> list[TaskNode]:
        if self.plan_error is not None:
            raise self.plan_error
        return self.planned

    def execute(self, task: TaskNode, feedback: str | None) -> str:
        self.executed.append(task.id)
        self.feedback_seen.append(feedback)
        error = self.fail.pop(task.id, None)
        if error is not None:
            raise error
        return f"tasks/{task.id}/output.md"

    def review(self, task: TaskNode, output: str) -> tuple[bool, str]:
        error, self.fail_review = self.fail_review, None
        if error is not None:
            raise error
        return self.reviews.pop(0) if self.reviews else (True, "")

    def task_status(
        self,
        task: TaskNode,
        status: TaskStatus,
        *,
        error: str | None = None,
        output: str | None = None,
        rounds: int = 0,
    ) -> None:
        self.statuses.append((task.id, status.value))

    def finished(self, task: TaskNode) -> str | None:
        return self.done_in_store.get(task.id)

    def redacted(self, text: str) -> str:
        return text.replace(self.secret, "[REDACTED:known]")


@pytest.fixture
def checkpointer(tmp_path: Path) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    try:
        yield SqliteSaver(connection)
    finally:
        connection.close()


def compile_run(
    script: Script, checkpointer: Any, *, hierarchical: bool = False, max_rounds: int = 2
) -> Any:
    return build_graph(script, hierarchical=hierarchical, max_rounds=max_rounds).compile(
        checkpointer=checkpointer
    )


CONFIG = {"configurable": {"thread_id": "run-1"}, "recursion_limit": 200}


def start(app: Any, tasks: list[TaskNode] = TASKS) -> dict[str, Any]:
    state: RunState = {
        "tasks": [asdict(t) for t in tasks],
        "status": {t.id: "pending" for t in tasks},
    }
    return app.invoke(state, CONFIG, durability="sync")


def resume(app: Any, value: Any) -> dict[str, Any]:
    from langgraph.types import Command

    return app.invoke(Command(resume=value), CONFIG, durability="sync")


def test_tasks_run_in_order_and_approval_pauses_the_run(checkpointer: Any) -> None:
    script = Script()
    app = compile_run(script, checkpointer)
    result = start(app)
    assert script.executed == ["outline", "notes", "draft"]
    assert result["__interrupt__"][0].value["task"] == "publish"
    assert ("publish", "awaiting_approval") in script.statuses
    assert result["status"]["publish"] == "pending"  # the step paused before changing it
    final = resume(app, {"approved": True})
    assert script.executed == ["outline", "notes", "draft", "publish"]
    assert state_outcome(final) == RunOutcome.SUCCEEDED


def test_rejection_fails_the_task(checkpointer: Any) -> None:
    script = Script()
    app = compile_run(script, checkpointer)
    start(app)
    final = resume(app, {"approved": False, "reason": "tone is off"})
    assert final["status"]["publish"] == "failed"
    assert "publish" not in script.executed
    assert state_outcome(final) == RunOutcome.FAILED


def test_a_model_error_fails_one_task_blocks_dependents_and_the_rest_goes_on(
    checkpointer: Any,
) -> None:
    script = Script(fail={"outline": ModelError("provider down", attempts=4)})
    final = start(compile_run(script, checkpointer))
    assert final["status"] == {
        "outline": "failed",
        "draft": "blocked",
        "publish": "blocked",
        "notes": "done",
    }
    assert script.executed == ["outline", "notes"]
    assert state_outcome(final) == RunOutcome.FAILED


def test_a_limit_stops_the_run_cleanly(checkpointer: Any) -> None:
    script = Script(fail={"notes": LimitReached("max_cost_usd", "cap reached")})
    final = start(compile_run(script, checkpointer))
    assert final["stopped"] == "max_cost_usd"
    assert final["status"]["notes"] == "pending"
    assert script.executed == ["outline", "notes"]


def test_a_crash_resumes_at_the_unfinished_task_without_redoing_finished_ones(
    checkpointer: Any,
) -> None:
    script = Script(fail={"draft": KeyboardInterrupt()})
    app = compile_run(script, checkpointer)
    with pytest.raises(KeyboardInterrupt):
        start(app)
    assert script.executed == ["outline", "notes", "draft"]
    result = app.invoke(None, CONFIG, durability="sync")
    assert script.executed == ["outline", "notes", "draft", "draft"]
    assert result["__interrupt__"][0].value["task"] == "publish"


def test_hierarchical_run_plans_then_reviews_and_sends_work_back(checkpointer: Any) -> None:
    script = Script(
        planned=[TaskNode("build", "developer"), TaskNode("docs", "developer", ("build",))],
        reviews=[(False, "add tests"), (True, "")],
    )
    final = start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert script.executed == ["build", "build", "docs"]
    assert script.feedback_seen == [None, "add tests", None]
    assert final["rounds"] == {"build": 1}
    assert state_outcome(final) == RunOutcome.SUCCEEDED


def test_work_never_approved_fails_after_max_rounds(checkpointer: Any) -> None:
    script = Script(
        planned=[TaskNode("build", "developer")], reviews=[(False, "no"), (False, "still no")]
    )
    final = start(compile_run(script, checkpointer, hierarchical=True, max_rounds=2), tasks=[])
    assert script.executed == ["build", "build"]
    assert final["status"] == {"build": "failed"}


def test_a_plan_that_cannot_be_made_stops_the_run(checkpointer: Any) -> None:
    script = Script(plan_error=PlanError("the plan does not match the schema"))
    final = start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert final["stopped"] == "plan_failed" and "schema" in final["error"]
    assert script.executed == []


def test_an_errors_message_enters_the_state_through_the_executors_redaction(
    checkpointer: Any,
) -> None:
    # The state is checkpointed: a provider's message quoting what the run was told must not
    # carry a credential into it, whichever node met the error.
    script = Script(plan_error=ModelError("400: the prompt said Blu3Whale$2024", attempts=1))
    final = start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert final["error"].endswith("the prompt said [REDACTED:known]")


def test_a_failed_reviews_message_is_sent_back_through_the_executors_redaction(
    checkpointer: Any,
) -> None:
    script = Script(planned=[TaskNode("build", "developer")])
    script.fail_review = ModelError("reviewer saw Blu3Whale$2024", attempts=1)
    start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert script.feedback_seen == [None, "the review failed: reviewer saw [REDACTED:known]"]


def test_a_review_that_fails_sends_the_work_back_with_the_failure_as_feedback(
    checkpointer: Any,
) -> None:
    script = Script(planned=[TaskNode("build", "developer")])
    script.fail_review = ModelError("reviewer down", attempts=1)
    final = start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert script.executed == ["build", "build"]
    assert script.feedback_seen == [None, "the review failed: reviewer down"]
    assert final["rounds"] == {"build": 1}
    assert state_outcome(final) == RunOutcome.SUCCEEDED


def test_a_limit_during_the_review_stops_the_run_keeping_the_output(checkpointer: Any) -> None:
    script = Script(planned=[TaskNode("build", "developer")])
    script.fail_review = LimitReached("max_turns", "turns used up")
    final = start(compile_run(script, checkpointer, hierarchical=True), tasks=[])
    assert (final["stopped"], final["error"]) == ("max_turns", "turns used up")
    assert final["outputs"] == {"build": "tasks/build/output.md"}
    assert final["status"] == {"build": "pending"}
    assert not final.get("rounds")


def test_a_decision_is_kept_so_a_crash_after_approval_does_not_ask_again(
    checkpointer: Any,
) -> None:
    script = Script(fail={"publish": KeyboardInterrupt()})
    app = compile_run(script, checkpointer)
    start(app)
    with pytest.raises(KeyboardInterrupt):
        resume(app, {"approved": True, "reason": "ship it"})
    final = app.invoke(None, CONFIG, durability="sync")
    assert "__interrupt__" not in final
    assert script.executed[-2:] == ["publish", "publish"]
    assert final["approvals"] == {"publish": "approved"}
    assert state_outcome(final) == RunOutcome.SUCCEEDED


def test_a_task_the_store_records_done_is_not_run_again(checkpointer: Any) -> None:
    """The instant between a task's end and its checkpoint write: a kill there leaves the
    store saying done, and the redone step takes that instead of calling the model again."""
    script = Script(done_in_store={"outline": "tasks/outline/output.md"})
    final = start(compile_run(script, checkpointer), tasks=[OUTLINE_ONLY, DRAFT_AFTER])
    assert script.executed == ["draft"]
    assert final["status"] == {"outline": "done", "draft": "done"}
    assert final["outputs"]["outline"] == "tasks/outline/output.md"


def test_ready_tasks_run_together_up_to_max_parallel(checkpointer: Any) -> None:
    import threading

    together = threading.Barrier(3, timeout=10)
    seen: list[str] = []

    class Parallel(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            seen.append(task.id)
            together.wait()  # breaks unless three tasks are in here at once
            return f"tasks/{task.id}/output.md"

    tasks = [TaskNode(f"t{i}", "writer") for i in range(3)]
    app = build_graph(Parallel(), hierarchical=False, max_rounds=1, max_parallel=3).compile(
        checkpointer=checkpointer
    )
    final = start(app, tasks=tasks)
    assert sorted(seen) == ["t0", "t1", "t2"]
    assert final["status"] == dict.fromkeys(["t0", "t1", "t2"], "done")


UNEVEN = [
    TaskNode("start", "writer"),
    TaskNode("a1", "writer", ("start",)),
    TaskNode("a2", "writer", ("a1",)),
    TaskNode("b1", "writer", ("start",)),
    TaskNode("end", "writer", ("a2", "b1")),
]


def test_a_task_starts_when_its_dependencies_end_not_when_its_siblings_do(
    checkpointer: Any,
) -> None:
    """b1 is slow: a2, ready once a1 ends, starts while b1 still works (a bulk-synchronous
    step would hold it until b1 ended, and b1's wait here would time out)."""
    a2_started = threading.Event()
    seen_while_b1_worked: list[bool] = []

    class Uneven(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            if task.id == "a2":
                a2_started.set()
            if task.id == "b1":
                seen_while_b1_worked.append(a2_started.wait(10))
            return super().execute(task, feedback)

    script = Uneven()
    app = build_graph(script, hierarchical=False, max_rounds=1, max_parallel=2).compile(
        checkpointer=checkpointer
    )
    final = start(app, tasks=UNEVEN)
    assert seen_while_b1_worked == [True]
    assert script.executed.index("a2") < script.executed.index("end")
    assert final["status"] == dict.fromkeys([t.id for t in UNEVEN], "done")
    assert not [t for t in threading.enumerate() if t.name.startswith("squad-task-")]


def test_tasks_at_work_never_pass_max_parallel_across_steps(checkpointer: Any) -> None:
    lock = threading.Lock()
    at_once = [0, 0]  # now, most

    class Counting(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            with lock:
                at_once[0] += 1
                at_once[1] = max(at_once[1], at_once[0])
            time.sleep(0.02 if task.id.endswith("0") else 0.005)
            with lock:
                at_once[0] -= 1
            return super().execute(task, feedback)

    tasks = [TaskNode("root", "writer")] + [
        TaskNode(f"t{i}", "writer", ("root",)) for i in range(6)
    ]
    script = Counting()
    app = build_graph(script, hierarchical=False, max_rounds=1, max_parallel=2).compile(
        checkpointer=checkpointer
    )
    final = start(app, tasks=tasks)
    assert at_once[1] == 2
    assert sorted(script.executed) == sorted(t.id for t in tasks)
    assert final["status"] == {t.id: "done" for t in tasks}


def test_a_limit_in_one_task_stops_the_run_once_the_others_end(checkpointer: Any) -> None:
    class Slow(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            if task.id == "slow":
                time.sleep(0.2)
            return super().execute(task, feedback)

    tasks = [TaskNode("capped", "writer"), TaskNode("slow", "writer")]
    script = Slow(fail={"capped": LimitReached("max_cost_usd", "the $0.25 cap")})
    app = build_graph(script, hierarchical=False, max_rounds=1, max_parallel=2).compile(
        checkpointer=checkpointer
    )
    final = start(app, tasks=tasks)
    assert final["stopped"] == "max_cost_usd"
    assert final["status"] == {"capped": "pending", "slow": "done"}  # its work is kept
    assert final["outputs"] == {"slow": "tasks/slow/output.md"}
    assert not [t for t in threading.enumerate() if t.name.startswith("squad-task-")]


def test_a_task_that_raises_fails_the_step_after_the_others_end(checkpointer: Any) -> None:
    class Broken(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            if task.id == "slow":
                time.sleep(0.2)
            return super().execute(task, feedback)

    tasks = [TaskNode("broken", "writer"), TaskNode("slow", "writer")]
    script = Broken(fail={"broken": OSError(28, "No space left on device")})
    app = build_graph(script, hierarchical=False, max_rounds=1, max_parallel=2).compile(
        checkpointer=checkpointer
    )
    with pytest.raises(OSError, match="No space left"):
        start(app, tasks=tasks)
    assert ("slow", "done") in script.statuses  # it ended before the step failed
    assert not [t for t in threading.enumerate() if t.name.startswith("squad-task-")]
    script.done_in_store["slow"] = "tasks/slow/output.md"  # what the store recorded
    final = app.invoke(None, CONFIG, durability="sync")  # resumed: only broken runs again
    assert script.executed == ["broken", "slow", "broken"]
    assert final["status"] == {"broken": "done", "slow": "done"}


def test_tasks_of_a_fan_out_that_start_nothing_new_share_one_checkpoint(
    checkpointer: Any,
) -> None:
    """Four middle tasks end one by one; none lets anything start before the last ends, so
    no checkpoint holds some of them done and not the others."""
    middle = [f"m{i}" for i in range(4)]

    class Staggered(Script):
        def execute(self, task: TaskNode, feedback: str | None) -> str:
            if task.id in middle:
                time.sleep(0.02 * middle.index(task.id))
            return super().execute(task, feedback)

    tasks = [
        TaskNode("root", "writer"),
        *(TaskNode(m, "writer", ("root",)) for m in middle),
        TaskNode("end", "writer", tuple(middle)),
    ]
    app = build_graph(Staggered(), hierarchical=False, max_rounds=1, max_parallel=4).compile(
        checkpointer=checkpointer
    )
    final = start(app, tasks=tasks)
    assert final["status"] == {t.id: "done" for t in tasks}
    done_counts = {
        sum((h.values.get("status") or {}).get(m) == "done" for m in middle)
        for h in app.get_state_history(CONFIG)
    }
    assert done_counts <= {0, 4}, done_counts
