"""What a run step decides, on plain data: no executor, no LangGraph."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from squad.runtime.steps import (
    Decision,
    RunState,
    Schedule,
    SentBack,
    Stop,
    TaskResult,
    Transition,
    approval_request,
    approves,
    batch,
    failed,
    first,
    merged,
    more_to_do,
    needs_approval,
    nodes_of,
    plan_stop,
    plan_update,
    read_decision,
    rejected,
    reviewed,
    schedule,
    state_outcome,
    statuses_of,
    step_update,
    stopped_reviewing,
    stopped_running,
)
from squad.runtime.tasks import RunOutcome, TaskNode, TaskStatus

S = TaskStatus
OUTLINE = TaskNode("outline", "planner", description="outline the post")
DRAFT = TaskNode("draft", "writer", ("outline",))
IMAGES = TaskNode("images", "writer", ("outline",))
REVIEW = TaskNode("review", "reviewer", ("draft", "images"))
PUBLISH = TaskNode("publish", "writer", ("review",), approval=True)
NOTES = TaskNode("notes", "writer")
TASKS = [OUTLINE, DRAFT, IMAGES, REVIEW, PUBLISH, NOTES]


def state_of(tasks: list[TaskNode], **status: TaskStatus) -> RunState:
    return {
        "tasks": [asdict(t) for t in tasks],
        "status": {t.id: status.get(t.id, S.PENDING).value for t in tasks},
    }


# -- schedule -------------------------------------------------------------------------------


def test_schedule_lists_every_ready_task_in_topological_order() -> None:
    plan = schedule(TASKS, {"outline": S.DONE})
    assert plan.ready == (NOTES, DRAFT, IMAGES)
    assert plan.blocked == ()


def test_schedule_blocks_every_task_a_failure_dooms_in_id_order() -> None:
    plan = schedule(TASKS, {"outline": S.DONE, "draft": S.FAILED})
    assert plan.blocked == (
        Transition(PUBLISH, S.BLOCKED, error="a dependency failed"),
        Transition(REVIEW, S.BLOCKED, error="a dependency failed"),
    )
    assert plan.ready == (NOTES, IMAGES)


def test_schedule_runs_nothing_while_the_rest_waits_on_unfinished_work() -> None:
    assert schedule([OUTLINE, DRAFT], {"outline": S.RUNNING}) == Schedule((), ())


def test_a_stopped_run_has_nothing_more_to_do_even_with_ready_tasks() -> None:
    assert not more_to_do({**state_of(TASKS), "stopped": "max_turns"})


def test_a_run_steps_again_while_a_task_is_ready_or_still_to_block() -> None:
    assert more_to_do(state_of(TASKS))
    assert more_to_do(state_of([OUTLINE, DRAFT], outline=S.FAILED))


def test_a_run_has_nothing_more_to_do_once_every_task_is_finished_or_running() -> None:
    status = {"outline": S.FAILED, "draft": S.BLOCKED, "images": S.BLOCKED}
    assert not more_to_do(state_of([OUTLINE, DRAFT, IMAGES], **status))
    assert not more_to_do(state_of([OUTLINE, DRAFT], outline=S.RUNNING))


# -- approval -------------------------------------------------------------------------------


def test_a_task_needs_approval_until_a_decision_is_recorded() -> None:
    assert needs_approval(PUBLISH, {})
    assert not needs_approval(PUBLISH, {"publish": "approved"})
    assert not needs_approval(PUBLISH, {"publish": "rejected: tone"})


def test_a_task_without_approval_never_waits_for_a_person() -> None:
    assert not needs_approval(NOTES, {})


def test_an_approval_request_names_the_task_its_agent_and_what_it_does() -> None:
    assert approval_request(OUTLINE) == {
        "task": "outline",
        "agent": "planner",
        "description": "outline the post",
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"approved": True}, Decision(True)),
        ({"approved": True, "reason": "fine"}, Decision(True, "fine")),
        ({"approved": False, "reason": "tone is off"}, Decision(False, "tone is off")),
        ({"reason": "no answer"}, Decision(False, "no answer")),
        ({"approved": 1}, Decision(True)),
        ("yes", Decision(False)),
        (True, Decision(False)),
    ],
)
def test_only_a_dict_with_a_true_approved_approves(value: object, expected: Decision) -> None:
    assert read_decision(value) == expected


def test_a_decision_is_recorded_as_approved_or_rejected_with_the_reason() -> None:
    assert Decision(True, "fine").record == "approved"
    assert Decision(False, "tone is off").record == "rejected: tone is off"
    assert Decision(False).record == "rejected:"


def test_a_rejected_approval_fails_the_task_with_the_reason() -> None:
    result = rejected(PUBLISH, Decision(False, "tone is off"))
    assert result.report == Transition(PUBLISH, S.FAILED, error="rejected by a person: tone is off")
    assert result.stop is None and result.output is None


def test_a_rejection_without_a_reason_says_only_who_rejected_it() -> None:
    assert rejected(PUBLISH, Decision(False)).report == Transition(
        PUBLISH, S.FAILED, error="rejected by a person"
    )


# -- execution and review --------------------------------------------------------------------


def test_a_model_failure_fails_the_task_with_the_error() -> None:
    result = failed(DRAFT, "provider down")
    assert result == TaskResult(DRAFT, Transition(DRAFT, S.FAILED, error="provider down"))


def test_a_limit_while_running_stops_the_run_and_reports_the_task_pending() -> None:
    stop = Stop("max_cost_usd", "cap reached")
    result = stopped_running(DRAFT, stop)
    assert result.report == Transition(DRAFT, S.PENDING, error="cap reached")
    assert result.stop == stop and result.output is None


def test_a_limit_during_the_review_keeps_the_output_and_reports_nothing() -> None:
    stop = Stop("max_turns", "turns used up")
    result = stopped_reviewing(DRAFT, "tasks/draft/output.md", stop)
    assert result == TaskResult(DRAFT, None, output="tasks/draft/output.md", stop=stop)


def test_approved_work_is_done_with_its_output_and_earlier_rounds() -> None:
    result = reviewed(DRAFT, "out.md", (True, "good"), rounds=1, max_rounds=3)
    assert result.report == Transition(DRAFT, S.DONE, output="out.md", rounds=1)
    assert result.output == "out.md" and result.sent_back is None


def test_a_review_sent_back_before_the_last_round_runs_the_task_again_with_the_notes() -> None:
    result = reviewed(DRAFT, "out.md", (False, "add tests"), rounds=0, max_rounds=2)
    assert result.report == Transition(DRAFT, S.PENDING, output="out.md", rounds=1)
    assert result.sent_back == SentBack(1, "add tests")


def test_a_review_sent_back_on_the_last_round_fails_the_task() -> None:
    result = reviewed(DRAFT, "out.md", (False, "still no"), rounds=1, max_rounds=2)
    assert result.report == Transition(
        DRAFT, S.FAILED, error="not approved after 2 review rounds", output="out.md", rounds=2
    )
    assert result.sent_back == SentBack(2, "still no")


def test_with_one_round_the_first_send_back_fails_the_task() -> None:
    result = reviewed(DRAFT, "out.md", (False, ""), rounds=0, max_rounds=1)
    assert result.report is not None and result.report.status == S.FAILED
    assert result.sent_back == SentBack(1, "")


@pytest.mark.parametrize(
    ("verdict", "approved"),
    [
        ("APPROVED: covers every point", True),
        ("approved - fine", True),
        ("**Approved**: covers it", True),  # markdown, as small models write it
        ("## Verdict: APPROVED", True),
        ("**Decision**: Approved", True),
        ("The work covers the task well.\n\nAPPROVED: complete", True),  # concluded last
        ("APPROVED.\nBut CHANGES REQUESTED would be fair too.", True),  # the first line first
        ("CHANGES REQUESTED: add tests", False),
        ("changes_requested: add tests", False),
        ("Verdict: **CHANGES REQUESTED**: add tests", False),
        ("It reads well.\nCHANGES REQUESTED: add an example", False),
        ("NOT APPROVED: no tests", False),
        ("Rejected.", False),
        ("Once tests are added it can be APPROVED.", False),  # no verdict at either end
        ("Approvedness is not a word", False),
        ("", False),
    ],
)
def test_a_review_approves_when_its_first_or_last_line_says_approved(
    verdict: str, approved: bool
) -> None:
    assert approves(verdict) is approved


# -- the state update -----------------------------------------------------------------------


def test_a_step_with_nothing_ready_writes_only_the_blocked_statuses() -> None:
    state = state_of(TASKS, outline=S.FAILED)
    plan = schedule(nodes_of(state), statuses_of(state))
    assert step_update(plan.blocked) == {
        "status": {
            "draft": "blocked",
            "images": "blocked",
            "review": "blocked",
            "publish": "blocked",
        }
    }


def test_finished_work_writes_its_output_and_status_but_no_rounds() -> None:
    result = reviewed(OUTLINE, "o.md", (True, ""), rounds=0, max_rounds=2)
    assert step_update((), [result]) == {
        "outputs": {"outline": "o.md"},
        "status": {"outline": "done"},
    }


def test_work_sent_back_writes_the_round_and_the_notes_and_stays_pending() -> None:
    result = reviewed(OUTLINE, "o.md", (False, "add tests"), rounds=0, max_rounds=2)
    assert step_update((), [result]) == {
        "rounds": {"outline": 1},
        "feedback": {"outline": "add tests"},
        "outputs": {"outline": "o.md"},
        "status": {"outline": "pending"},
    }


def test_a_decision_made_this_step_is_kept_in_approvals() -> None:
    decision = Decision(False, "tone is off")
    result = TaskResult(PUBLISH, rejected(PUBLISH, decision).report, decision=decision)
    assert step_update((), [result]) == {
        "approvals": {"publish": "rejected: tone is off"},
        "status": {"publish": "failed"},
    }


def test_a_stopped_run_keeps_the_task_pending_in_the_state_and_says_why() -> None:
    state = state_of([OUTLINE, DRAFT], outline=S.FAILED)
    plan = schedule(nodes_of(state), statuses_of(state))
    result = stopped_running(NOTES, Stop("max_turns", "turns used up"))
    assert step_update(plan.blocked, [result]) == {
        "stopped": "max_turns",
        "error": "turns used up",
        "status": {"draft": "blocked"},
    }


def test_a_step_update_merges_the_results_of_several_tasks() -> None:
    done = reviewed(OUTLINE, "o.md", (True, ""), rounds=0, max_rounds=2)
    back = reviewed(NOTES, "n.md", (False, "shorter"), rounds=0, max_rounds=2)
    assert step_update((), [done, back]) == {
        "rounds": {"notes": 1},
        "feedback": {"notes": "shorter"},
        "outputs": {"outline": "o.md", "notes": "n.md"},
        "status": {"outline": "done", "notes": "pending"},
    }


def test_updates_of_tasks_run_together_merge_into_the_state_and_the_first_stop_wins() -> None:
    old = {"outline": "done", "draft": "pending", "notes": "pending"}
    writes = [{"draft": "done"}, {"notes": "failed"}]
    status: dict[str, str] = old
    for write in writes:
        status = merged(status, write)
    assert status == {"outline": "done", "draft": "done", "notes": "failed"}
    assert old == {"outline": "done", "draft": "pending", "notes": "pending"}
    assert first(None, "max_turns") == "max_turns"
    assert first("max_turns", "max_cost_usd") == "max_turns"


def test_a_batch_is_the_ready_tasks_up_to_the_limit_and_a_gate_waits_while_others_can_run() -> None:
    gated = TaskNode("publish", "writer", approval=True)
    free = [TaskNode(f"t{i}", "writer") for i in range(5)]
    assert batch(free, {}, 3) == free[:3]
    assert batch([gated, *free[:2]], {}, 4) == free[:2]  # the gate waits, its siblings run
    assert batch([gated, TaskNode("x", "w", approval=True)], {}, 4) == [gated]  # one ask at a time
    assert batch([gated, free[0]], {"publish": "approved"}, 4) == [gated, free[0]]
    assert batch(free, {}, 0) == free[:1]


# -- plan and reading the state -------------------------------------------------------------


def test_a_plan_becomes_pending_tasks_that_read_back_unchanged() -> None:
    update = plan_update(TASKS)
    assert update["planned"] is True
    assert update["status"] == {t.id: "pending" for t in TASKS}
    assert nodes_of(update) == TASKS
    assert state_outcome(update) == RunOutcome.IN_PROGRESS


def test_a_plan_that_could_not_be_made_stops_the_run_as_planned() -> None:
    assert plan_stop(Stop("plan_failed", "not JSON")) == {
        "planned": True,
        "stopped": "plan_failed",
        "error": "not JSON",
    }


def test_statuses_read_back_typed_and_a_state_without_them_has_none() -> None:
    assert statuses_of({"tasks": [], "status": {"a": "done"}}) == {"a": S.DONE}
    assert statuses_of({"tasks": []}) == {}
