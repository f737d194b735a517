"""One agent of one squad as memory sees it: its specs, its workspace, and what follows.

Whether its memory and extraction are on, which review mode applies, its experience identity
and namespace, its conversation archive; every memory operation takes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from squad.errors import NotFound
from squad.spec.models import AgentSpec, ModelSpec, ReviewMode, SquadSpec
from squad.store.records import MessageRecord, MessageRole
from squad.workspace.manifest import experience_identity

__all__ = ["AgentContext"]


@dataclass(frozen=True)
class AgentContext:
    """One agent of one squad, with its workspace folder."""

    squad: SquadSpec
    agent: AgentSpec
    workspace: Path
    run_id: str | None = None
    """The run the agent works in; its memory writes are then committed with the run."""

    @classmethod
    def of(
        cls, squad: SquadSpec, agent_id: str, workspace: Path, *, run_id: str | None = None
    ) -> AgentContext:
        try:
            return cls(squad, squad.agent(agent_id), workspace, run_id)
        except KeyError:
            known = ", ".join(a.id for a in squad.agents)
            raise NotFound(
                f"squad {squad.name!r} has no agent {agent_id!r} (agents: {known})"
            ) from None

    @property
    def model_spec(self) -> ModelSpec:
        return self.agent.model or self.squad.model

    @property
    def model(self) -> str:
        return self.model_spec.name

    @property
    def memory_enabled(self) -> bool:
        own = self.agent.memory.enabled
        return self.squad.memory.enabled if own is None else own

    @property
    def extraction_enabled(self) -> bool:
        """Memory on, and the background extractor not turned off for the agent or squad."""
        own = self.agent.memory.extract
        return self.memory_enabled and (self.squad.memory.extract if own is None else own)

    @property
    def review(self) -> ReviewMode:
        """Which extracted facts wait for review: the agent's setting, else the squad's
        (``off``, ``low_confidence`` or ``all``)."""
        own = self.agent.memory.review
        return self.squad.memory.review if own is None else own

    @property
    def identity(self) -> str:
        return experience_identity(self.squad.name, self.agent.id, self.agent.profile)

    @property
    def namespace_name(self) -> str:
        return f"Agent Experience: {self.agent.display_name}"

    @property
    def archive_identity(self) -> str:
        """The conversation archive's namespace: this squad's agent only, never shared."""
        return f"archive:{self.squad.name}/{self.agent.id}"

    @property
    def archive_name(self) -> str:
        return f"Conversation archive: {self.agent.display_name} in {self.squad.name}"

    def speaker(self, message: MessageRecord) -> str:
        """Who said ``message``: its recorded author, else the agent or "user"."""
        if message.author:
            return message.author
        return self.agent.display_name if message.role is MessageRole.ASSISTANT else "user"
