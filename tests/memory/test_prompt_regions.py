"""A system prompt planned by regions: it fits the model's window, boot files included."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from squad.clock import FrozenClock
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.boot import write_boot_file
from squad.memory.service import MemoryService
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import Store
from tests.conftest import BASIC_YAML

DECLARED = BASIC_YAML.replace("goal: Ship it.", "goal: Ship it.\nmodel: {name: offline}")


@pytest.fixture
def service(settings: Settings, clock: FrozenClock) -> Iterator[MemoryService]:
    with Store.open(settings.database_url, clock=clock) as store:
        SquadManager(settings, store=store, clock=clock).create(squad_from_text(BASIC_YAML))
        yield MemoryService(settings, store, clock=clock)


def writer(service: MemoryService, yaml: str = BASIC_YAML) -> AgentContext:
    return AgentContext.of(squad_from_text(yaml), "writer", service.settings.workspaces / "demo")


def test_a_small_window_cuts_a_long_agents_md_with_a_notice_and_the_prompt_fits(
    service: MemoryService,
) -> None:
    rules = "\n".join(f"- rule {n}: run the whole test suite before a commit" for n in range(600))
    write_boot_file(service.settings.home, "agents", rules, cap_bytes=100_000)
    ctx = writer(service)
    service.remember(ctx, "The guide uses MkDocs", layer="project")

    wide = service.prompt(ctx, message="How is the guide built?", context_window=200_000)
    assert "- rule 599: run the whole test suite" in wide.text and wide.boot.dropped == {}

    small = service.prompt(ctx, message="How is the guide built?", context_window=4096)
    assert small.window.tokens == 4096 and small.window.source == "option"
    assert "- rule 0: run the whole test suite" in small.text  # a file's first lines stay
    assert "- rule 599:" not in small.text
    dropped = small.boot.dropped["Work rules (AGENTS.md)"]
    assert f"[{dropped} lines left out to fit the prompt's boot budget" in small.text
    assert "## Persona (SOUL.md)" in small.text  # the small file is whole
    assert "The guide uses MkDocs" in small.text
    assert 0 < small.used["boot"] <= small.regions.budget("boot")
    counter = service.counter(ctx)
    budgets = small.regions.budgets
    system_prompt = sum(budgets[r] for r in ("boot", "memory", "recall", "supplementary"))
    assert counter.count(small.text) <= system_prompt + budgets["working"]
    assert small.used["working"] == 0


def test_the_offline_model_plans_todays_budgets_and_working_memory_is_counted_last(
    service: MemoryService,
) -> None:
    ctx = writer(service, DECLARED)
    regions, window = service.plan(ctx)
    assert (window.tokens, window.source) == (8192, "offline")
    assert (regions.budget("memory"), regions.budget("recall")) == (2000, 1000)
    block = service.memory_block(ctx, touch=False)
    assert (block.budget.total, block.recall_budget) == (2000, 1000)
    working = "## Working memory\nTask: write the install page"
    prompt = service.prompt(ctx, working=working)
    assert prompt.text.rstrip().endswith(working)
    assert prompt.used["working"] == service.counter(ctx).count(working)
