"""The memory block shows each thing once, no superseded line, and the lines that matter:
the pure assembly, and the block the memory service builds from a real store and files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from squad.clock import FrozenClock
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.assembly import PROJECT_HEADER, Budget, build_memory_block
from squad.memory.document import MemoryDocument, superseded
from squad.memory.repeats import line_key
from squad.memory.service import MemoryService
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import Store
from squad.text.tokens import counter_for_model
from tests.conftest import BASIC_YAML

REAL = counter_for_model("offline")


@pytest.fixture
def service(settings: Settings, clock: FrozenClock) -> Iterator[MemoryService]:
    with Store.open(settings.database_url, clock=clock) as store:
        SquadManager(settings, store=store, clock=clock).create(squad_from_text(BASIC_YAML))
        yield MemoryService(settings, store, clock=clock)


def writer(service: MemoryService) -> AgentContext:
    return AgentContext.of(
        squad_from_text(BASIC_YAML), "writer", service.settings.workspaces / "demo"
    )


def write_memory(ctx: AgentContext, text: str) -> None:
    path = ctx.workspace / "agents" / ctx.agent.id / "memory.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# pure


def test_lines_are_the_same_when_only_marker_date_note_case_and_spacing_differ() -> None:
    same = {
        line_key("- The deploy target is staging. (2026-11-02)"),
        line_key("* the deploy  target is STAGING"),
        line_key("The deploy target is staging (2026-12-01; details: daily/2026-12-01.md)"),
        line_key("1. The deploy target is staging!"),
    }
    assert same == {"the deploy target is staging"}
    assert line_key("- The deploy target is production") not in same


def test_a_line_is_struck_through_only_when_all_of_it_is() -> None:
    assert superseded("- ~~Deploys go to staging~~ (2026-11-02; superseded 2026-11-29)")
    assert superseded("~~Deploys go to staging~~")
    assert not superseded("- Deploys go to ~~staging~~ production")
    assert not superseded("- ~~old~~ and ~~older~~ but this stays")
    assert not superseded("- Deploys go to production")
    assert not superseded("- ~~old~~ middle ~~older~~")
    assert superseded("- Deploys go to staging (2026-11-02; superseded 2026-11-29)")
    assert superseded("1. ~~Deploys go to staging~~ (moved to the daily log)")


def test_a_struck_through_memory_line_stays_in_the_file_but_is_not_injected() -> None:
    document = MemoryDocument.parse(
        "# Decisions\n"
        "- ~~Deploys go to staging first~~ (2026-11-02; superseded 2026-11-29)\n"
        "- Deploys go to production behind a flag (2026-11-29)\n"
    )
    block = build_memory_block([], document, Budget(2000), REAL)
    assert "Deploys go to production behind a flag" in block.text
    assert "staging" not in block.text and "~~" not in block.text
    assert block.project.kept == 1 and block.project.dropped == 0


def test_a_line_written_four_times_and_filed_as_a_fact_is_shown_once() -> None:
    line = "- The deploy target is staging (2026-12-0{})"
    document = MemoryDocument.parse(
        "# Insights\n" + "\n".join(line.format(day) for day in range(1, 5)) + "\n- Other note\n"
    )
    block = build_memory_block(
        ["The deploy target is staging", "The deploy target is staging."],
        document,
        Budget(2000),
        REAL,
    )
    assert block.text.casefold().count("the deploy target is staging") == 1
    assert block.experiential.kept == 1 and "- Other note" in block.text
    assert PROJECT_HEADER[0] in block.text  # B still shows what A does not


def test_an_over_budget_memory_md_keeps_the_lines_that_bear_on_the_message() -> None:
    filler = [f"- Insight number {i} about the colour of the logo" for i in range(30)]
    document = MemoryDocument.parse(
        "# Coding Rules\n- Invoices are rendered with the billing templates\n"
        "# Insights\n- The billing service retries a failed charge twice\n"
        + "\n".join(filler)
        + "\n"
    )
    message = "Fix the retries of a failed charge in the billing service"
    tight = build_memory_block([], document, Budget(150), REAL, message=message).project
    assert tight.kept == 1 and "- The billing service retries a failed charge twice" in tight.text
    roomier = build_memory_block([], document, Budget(300), REAL, message=message).project
    assert roomier.dropped > 0 and "- The billing service retries" in roomier.text
    assert "- Invoices are rendered with the billing templates" in roomier.text
    by_position = build_memory_block([], document, Budget(150), REAL).project
    assert "retries a failed charge" not in by_position.text  # no message: oldest Insights go


# the block the service builds


def test_a_fact_told_four_times_appears_once_in_the_block(service: MemoryService) -> None:
    ctx = writer(service)
    told = "The deploy target is staging."
    for chat in range(4):  # four chats; the agent appended it to memory.md each time
        service.store.conversation.record_messages(
            "demo",
            "writer",
            [("user", told, None), ("assistant", "Noted.", None)],
            session_id=f"chat-{chat}",
        )
    write_memory(ctx, "# Project Context\n" + f"- {told} (2026-12-06)\n" * 4)
    service.store.memory.add_fact(service.namespace_id(ctx), told, squad="demo", agent="writer")
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))

    block = service.memory_block(ctx, message="What is the deploy target?")

    assert block.text.count("deploy target is staging") == 1
    assert block.experiential.kept == 1 and not {1, 3, 5, 7} & set(block.recalled)


def test_a_recalled_message_already_a_memory_md_line_is_not_injected_again(
    service: MemoryService,
) -> None:
    ctx = writer(service)
    line = "Invoices go out on the first Monday of the month"
    (said, reply) = service.store.conversation.record_messages(
        "demo",
        "writer",
        [("user", line, None), ("assistant", "Then I will send them next Monday.", None)],
    )
    write_memory(ctx, f"# Decisions\n- {line} (2026-12-06)\n")
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))

    block = service.memory_block(ctx, message="When do invoices go out each month?")

    assert block.text.count(line) == 1 and block.project.kept == 1
    assert said.seq not in block.recalled and reply.seq in block.recalled
