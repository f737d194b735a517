"""The agent's working memory tool: ``working_memory_update``, offered in runs only.

A plain method bound to one agent in one run, like the memory and decision tools. The
arguments come from the model's JSON, so they are validated here (pydantic, unknown keys
refused); a refusal (a credential, an unknown field to clear, too much text) comes back as
``refused: ...`` text. The answer is a short receipt ("working memory updated: ..."), which the
extractor knows as a tool receipt and never files as a fact (:mod:`squad.text.chatter`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from squad.errors import MemoryError_, UsageError
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.memory.working import AGENT_FIELDS, Field, WorkingMemory, WorkingUpdate, apply
from squad.text.secrets import refuse_secrets

__all__ = ["MAX_INPUT_CHARS", "WorkingMemoryTools"]

MAX_INPUT_CHARS = 4000
"""Text one call may bring in all: working memory keeps a few short lines, not documents."""


def _lines(value: object) -> tuple[str, ...]:
    """One item per line of a string, or per string of a list (models send either)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(line for line in value.splitlines() if line.strip())
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(line for v in value for line in v.splitlines() if line.strip())
    raise ValueError("give text, one item per line")


Items = Annotated[tuple[str, ...], BeforeValidator(_lines)]


class _Arguments(BaseModel):
    """``working_memory_update``'s arguments as the model sent them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decisions: Items = ()
    blockers: Items = ()
    done: Items = ()
    remaining: Items = ()
    notes: Items = ()
    remove: Items = ()
    clear: Items = ()

    def update(self) -> WorkingUpdate:
        cleared: list[Field] = []
        for name in (n.strip().casefold() for item in self.clear for n in item.split(",")):
            if not name:
                continue
            if name not in AGENT_FIELDS:
                raise UsageError(
                    f"cannot clear {name!r}: clear takes {', '.join(AGENT_FIELDS)} "
                    "(tasks and files are kept by squad)"
                )
            cleared.append(name)
        add = {name: getattr(self, name) for name in AGENT_FIELDS}
        return WorkingUpdate(add=add, remove=self.remove, clear=tuple(cleared))


class WorkingMemoryTools:
    """The working memory tool for ``ctx``'s agent in ``ctx``'s run."""

    def __init__(
        self, service: MemoryService, ctx: AgentContext, *, known: Collection[str] = ()
    ) -> None:
        """``known``: credential values found earlier in the run, refused wherever an update
        repeats them."""
        if ctx.run_id is None:
            raise UsageError("working memory belongs to a run; this agent is not in one")
        self._service = service
        self._ctx = ctx
        self._known = known

    def working_memory_update(
        self,
        decisions: str = "",
        blockers: str = "",
        done: str = "",
        remaining: str = "",
        notes: str = "",
        remove: str = "",
        clear: str = "",
    ) -> str:
        """Update your working memory for this run: the short state shown at the end of your
        instructions until the run ends (your task and the files you touched are kept for
        you). decisions, blockers, done, remaining, notes: items to add, one per line; an
        item marked done leaves remaining. remove: items to take out of any of them, one per
        line (a blocker solved, a step dropped; a task id names its item). clear: fields to
        empty, comma-separated. Keep items short: each is cut to one line."""
        given = {
            "decisions": decisions,
            "blockers": blockers,
            "done": done,
            "remaining": remaining,
            "notes": notes,
            "remove": remove,
            "clear": clear,
        }
        try:
            arguments = _Arguments.model_validate(given)
            return self._update(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            return f"refused: bad arguments for working_memory_update: {problems}"
        except (MemoryError_, UsageError) as exc:
            return f"refused: {exc}"

    def _update(self, arguments: _Arguments) -> str:
        fields = _Arguments.model_fields
        text = "\n".join(line for name in fields for line in getattr(arguments, name))
        if len(text) > MAX_INPUT_CHARS:
            raise UsageError(
                f"{len(text):,} characters is more than working memory takes at once "
                f"({MAX_INPUT_CHARS:,}); keep a few short lines, and long details in "
                "memory_write_daily"
            )
        refuse_secrets(text, what="the working memory update", known=self._known)
        update = arguments.update()
        if update.nothing:
            return (
                "working memory unchanged: nothing was given (decisions, blockers, done, "
                "remaining, notes, remove or clear)"
            )
        before: list[WorkingMemory] = []

        def change(state: WorkingMemory) -> WorkingMemory:
            before.append(state)
            return apply(state, update)

        after = self._service.working_file(self._ctx).update(change)
        if before and after == before[0]:
            return "working memory unchanged: it already says that"
        return "working memory updated: " + _counts(after)


def _counts(state: WorkingMemory) -> str:
    """How many items each field the agent edits holds now ("decisions 2, blockers 0, ...")."""
    return ", ".join(f"{name} {len(getattr(state, name))}" for name in AGENT_FIELDS)
