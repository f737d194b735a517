"""A squad in a real workspace and store, and helpers to give its agents a conversation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from squad.clock import FrozenClock
from squad.extraction.job import AgentExtractor
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.service import MemoryService
from squad.model.types import ChatModel
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import Store

SQUAD_YAML = """\
name: demo
goal: Ship it.
memory: {{trigger_interval: {interval}}}
agents:
  - {{id: planner, role: Plans the work, profile: planner-v1}}
  - {{id: writer, role: Writes the pages}}
tasks:
  - {{id: outline, description: Outline the guide., agent: planner}}
"""


@dataclass
class World:
    manager: SquadManager
    memory: MemoryService
    ctx: AgentContext
    clock: FrozenClock

    def say(self, *pairs: tuple[str, str], session: str = "chat", run: str | None = None) -> None:
        """Record messages of the agent's conversation, as chat or a run would."""
        for role, content in pairs:
            self.manager.store.conversation.record_message(
                "demo", self.ctx.agent.id, role, content, session_id=session, run_id=run
            )

    def talk(self, *user_lines: str) -> None:
        """One user message and a bland reply per line."""
        for line in user_lines:
            self.say(("user", line), ("assistant", "OK."))

    def extractor(self, model: ChatModel | None = None) -> AgentExtractor:
        return AgentExtractor(self.memory, lambda ctx: model, clock=self.clock)

    def memory_md(self) -> str:
        return self.memory.memory_file(self.ctx).path.read_text()

    def facts(self) -> list[str]:
        ns = self.memory.namespace_id(self.ctx)
        return [f.text for f in self.manager.store.memory.facts(ns)]


@pytest.fixture
def make_world(settings: Settings, clock: FrozenClock) -> Iterator[Callable[..., World]]:
    stores: list[Store] = []

    def make(interval: int = 2, agent: str = "planner") -> World:
        stores.append(Store.open(settings.database_url))
        manager = SquadManager(settings, store=stores[-1])
        spec = squad_from_text(SQUAD_YAML.format(interval=interval), source="demo.yaml")
        workspace = manager.create(spec).path
        memory = MemoryService(settings, manager.store, clock=clock)
        return World(manager, memory, AgentContext.of(spec, agent, workspace), clock)

    yield make
    for store in stores:
        store.close()
