"""A hierarchical run's plan: the lead asked for it, the answer checked, squad's own plan when
the lead's is invalid twice, and the plan saved as ``plans/NNN.md``.

The pure parts (the request, parsing, the fallback plan, the rendering) are in
:mod:`squad.runtime.plan`; this is their one caller, with the model turn, the run log and
the redaction of the run's executor handed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from squad.errors import ModelError, PlanError
from squad.fsutil import atomic_write
from squad.paths import contained
from squad.runtime.plan import (
    PlanFallback,
    fallback_plan,
    parse_plan,
    plan_request,
    plan_response_formats,
    render_plan,
)
from squad.runtime.runlog import RunLog
from squad.runtime.tasks import TaskNode
from squad.spec.models import SquadSpec
from squad.workspace.plans import PLANS_FOLDER, next_plan

__all__ = ["LeadPlanner", "PlanTurn"]


class PlanTurn(Protocol):
    """One model turn of an agent without tools, as the run's executor takes it."""

    def __call__(
        self,
        agent_id: str,
        prompt: str,
        *,
        tools: bool = True,
        task_id: str | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> str: ...


class LeadPlanner:
    """The plan of one run, asked of its squad's lead."""

    def __init__(
        self,
        *,
        spec: SquadSpec,
        goal: str,
        workspace: Path,
        log: RunLog,
        turn: PlanTurn,
        redacted: Callable[[str], str],
        progress: Callable[[str], None],
    ) -> None:
        self._spec = spec
        self._goal = goal
        self._workspace = workspace
        self._log = log
        self._turn = turn
        self._redacted = redacted
        self._progress = progress
        self._format = 0
        """Which of the plan's response formats to ask for next (past the end: none)."""

    def plan(self) -> list[TaskNode]:
        """The run's tasks, redacted (the checkpoint keeps them), once the plan file is
        written and the log says so."""
        lead = self._spec.lead
        self._progress(f"planning: {lead.id} writes the plan")
        request = plan_request(self._spec, self._goal)
        answer = self._ask(lead.id, request)
        fallback: PlanFallback | None = None
        try:
            tasks = parse_plan(answer, self._spec)
        except PlanError as first:
            self._log.emit("plan_invalid", agent=lead.id, error=str(first), attempt=1)
            answer = self._ask(
                lead.id,
                f"{request}\n\nYour previous plan was invalid: {first}. "
                "Answer again with only the corrected JSON.",
            )
            try:
                tasks = parse_plan(answer, self._spec)
            except PlanError as second:
                self._log.emit("plan_invalid", agent=lead.id, error=str(second), attempt=2)
                fallback = self._fall_back(first, second)
                tasks = list(fallback.tasks)
        tasks = [self._redacted_task(t) for t in tasks]
        number, path = next_plan(contained(self._workspace, PLANS_FOLDER))
        by = lead.id if fallback is None else fallback.author(lead.id)
        plan = self._redacted(render_plan(number, self._goal, tasks, by))
        atomic_write(path, plan.encode())
        relative = path.relative_to(self._workspace.resolve()).as_posix()
        graph = [{"id": t.id, "agent": t.agent, "depends_on": list(t.depends_on)} for t in tasks]
        marked = {} if fallback is None else {"fallback": fallback.kind}
        self._log.emit(
            "plan_written",
            agent=lead.id,
            path=relative,
            tasks=[t.id for t in tasks],
            graph=graph,
            **marked,
        )
        self._progress(f"plan: {relative} ({len(tasks)} tasks)")
        return tasks

    def _fall_back(self, first: PlanError, second: PlanError) -> PlanFallback:
        """The plan squad makes for the goal when the lead's is invalid twice (or the run's
        failure, with ``process.strict_plan``). It is checkpointed as the lead's would be."""
        if self._spec.process.strict_plan:
            raise PlanError(f"the lead's plan is invalid twice: {second}") from None
        fallback = fallback_plan(self._spec, self._goal)
        self._log.emit(
            "plan_fallback",
            agent=self._spec.lead.id,
            kind=fallback.kind,
            errors=[str(first), str(second)],
            tasks=[t.id for t in fallback.tasks],
        )
        self._progress(f"plan: {fallback.describe()}; process.strict_plan: true fails it instead")
        return fallback

    def _ask(self, lead: str, prompt: str) -> str:
        """The lead's plan, asked for as structured output in the forms providers take:
        OpenAI's ``json_schema`` (OpenAI, vLLM, llama.cpp's own server), then llama-cpp-python's
        ``json_object`` with a ``schema`` (a grammar the weakest model cannot break), then no
        format. A form the provider refuses is not asked for again in this run; the plan is
        validated whatever form it came in. Refusals differ: OpenAI answers 400 or 422,
        llama-cpp-python 500, so any answered error but a rate limit or a credential problem
        counts as one."""
        formats = plan_response_formats(self._spec)
        while self._format < len(formats):
            wanted = formats[self._format]
            try:
                return self._turn(lead, prompt, tools=False, response_format=wanted)
            except ModelError as exc:
                if exc.status is None or exc.status in (401, 403, 429):
                    raise
                self._format += 1
                self._log.emit(
                    "plan_format_refused", agent=lead, format=str(wanted["type"]), error=str(exc)
                )
        return self._turn(lead, prompt, tools=False)

    def _redacted_task(self, task: TaskNode) -> TaskNode:
        """A planned task with credentials redacted from what the lead wrote of it."""
        expected = task.expected_output
        return replace(
            task,
            description=self._redacted(task.description),
            expected_output=None if expected is None else self._redacted(expected),
        )
