"""Long-term recall: the conversation archive, its ranking and the recalled block, for real
(a SQLite store, workspace files, the offline extractor)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from squad.clock import FrozenClock
from squad.errors import UsageError
from squad.extraction.job import AgentExtractor
from squad.manager import SquadManager
from squad.memory.agent import AgentContext
from squad.memory.assembly import Budget, build_memory_block, day_heading
from squad.memory.gc import GcPolicy, run_gc
from squad.memory.recall import RecalledLine, recall_order, speaker_line
from squad.memory.service import MemoryService
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.store import Store
from squad.text.tokens import counter_for_model
from tests.conftest import BASIC_YAML

COUNTER = counter_for_model("offline")


@pytest.fixture
def store(settings: Settings, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(settings.database_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def service(settings: Settings, store: Store, clock: FrozenClock) -> MemoryService:
    SquadManager(settings, store=store, clock=clock).create(squad_from_text(BASIC_YAML))
    return MemoryService(settings, store, clock=clock)


def writer(service: MemoryService) -> AgentContext:
    return AgentContext.of(
        squad_from_text(BASIC_YAML), "writer", service.settings.workspaces / "demo"
    )


def say(service: MemoryService, *turns: tuple[str, str], author: str | None = None) -> list[int]:
    seqs = []
    for role, text in turns:
        record = service.store.conversation.record_message(
            "demo", "writer", role, text, author=author if role == "user" else None
        )
        seqs.append(record.seq)
    return seqs


# ranking, pure


def test_an_answer_that_repeats_no_word_is_recalled_for_the_question_before_it() -> None:
    order = recall_order({10: 4.0, 30: 1.0})
    assert order.index(11) < order.index(30)  # 11 gets half of 10's score: 2.0 > 1.0
    assert order[0] == 10
    assert set(order) == {8, 9, 10, 11, 12, 28, 29, 30, 31, 32}


def test_recall_order_leaves_out_excluded_messages_and_ties_go_to_the_newer() -> None:
    assert recall_order({5: 1.0, 8: 1.0}, shares=())[:2] == [8, 5]
    assert recall_order({5: 1.0, 8: 1.0}, exclude={8}, shares=((1, 0.0),)) == [5, 9, 6]
    assert recall_order({1: 1.0}, shares=((-1, 0.5), (-2, 0.1))) == [1]  # no seq 0 or -1


def test_long_recalled_messages_are_cut_to_one_line() -> None:
    line = speaker_line("Caroline", "word\n" * 400)
    assert line.startswith("Caroline: word word") and line.endswith("…")
    assert "\n" not in line and len(line) < 700


# the recalled block, pure


def lines(*texts: str, start: date = date(2023, 5, 8)) -> list[RecalledLine]:
    return [
        RecalledLine(seq=i + 1, day=start + timedelta(days=i // 2), speaker="Mel", text=t)
        for i, t in enumerate(texts)
    ]


def test_recalled_lines_are_shown_by_day_in_the_order_they_were_said() -> None:
    recalled = lines("first", "second", "third")
    best_first = [recalled[2], recalled[0], recalled[1]]
    block = build_memory_block([], None, Budget(0), COUNTER, recall=best_first, recall_budget=200)
    text = block.text
    assert text.index("- Mel: first") < text.index("- Mel: second") < text.index("- Mel: third")
    assert day_heading(date(2023, 5, 8)) == "#### 8 May 2023 (Monday)"
    assert text.count("#### 8 May 2023") == 1 and "#### 9 May 2023 (Tuesday)" in text
    assert block.recalled == (1, 2, 3)
    assert block.to_dict()["tokens"]["recall"] == block.recall.tokens > 0


def test_recall_keeps_to_its_budget_skipping_a_line_too_long_for_what_is_left() -> None:
    recalled = lines("short one", "x " * 300, "another short one")
    for budget in range(30, 120, 7):
        block = build_memory_block(
            [], None, Budget(0), COUNTER, recall=recalled, recall_budget=budget
        )
        assert block.recall.tokens <= budget
    block = build_memory_block([], None, Budget(0), COUNTER, recall=recalled, recall_budget=80)
    assert block.recalled == (1, 3)  # the long one is skipped, the next one still fits
    empty = build_memory_block([], None, Budget(0), COUNTER, recall=recalled, recall_budget=5)
    assert empty.text == "" and empty.recalled == ()


def test_lent_share_of_unused_memory_layers_goes_to_recall() -> None:
    recalled = lines(*(f"message number {i} about the garden" for i in range(40)))
    strict = build_memory_block([], None, Budget(400), COUNTER, recall=recalled, recall_budget=100)
    lending = build_memory_block(
        [], None, Budget(400, flow=True), COUNTER, recall=recalled, recall_budget=100
    )
    assert strict.recall.tokens <= 100 < lending.recall.tokens <= 500


# the archive and recall, against the store


def test_the_extractor_archives_every_user_and_assistant_message_once(
    service: MemoryService,
) -> None:
    ctx = writer(service)
    for i in range(4):
        say(service, ("user", f"note {i}: the garden needs water"), ("assistant", "ok"))
    extractor = AgentExtractor(service, lambda c: None)
    extractor.run(ctx, force=True)
    archive = service.archive_id(ctx)
    facts = service.store.memory.facts(archive, limit=100)
    assert len(facts) == 5  # four notes, and "ok" once with the four seqs it was said at
    (ok,) = [f for f in facts if f.text.endswith(": ok")]
    assert ok.turns == (2, 4, 6, 8)
    messages = service.store.conversation.messages("demo", "writer")
    assert service.archive(ctx, messages) == 0  # again: nothing twice
    assert service.store.memory.get_namespace(archive).identity == "archive:demo/writer"


def test_a_question_recalls_an_old_message_by_another_form_of_its_words(
    service: MemoryService, clock: FrozenClock
) -> None:
    ctx = writer(service)
    seqs = say(
        service,
        ("user", "I painted a lake sunrise last year"),
        ("assistant", "Lovely! Do you still have it?"),
        ("user", "What did you research for the adoption?"),
        ("assistant", "Adoption agencies, mostly."),
        ("user", "the weather is grey today"),
        ("assistant", "Same here."),
        author="Caroline",
    )
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))
    block = service.memory_block(ctx, message="When did Caroline paint a sunrise?")
    assert "- Caroline: I painted a lake sunrise last year" in block.text
    assert day_heading(clock().date()) in block.text
    best = service.recalled(ctx, "When did Caroline paint a sunrise?")
    assert best[0].seq == seqs[0] and best[0].speaker == "Caroline"
    assert [line.seq for line in service.recalled(ctx, "what did she research?")][:2] == [
        seqs[2],
        seqs[3],  # the reply, recalled for the question it answers
    ]
    tight = service.memory_block(ctx, message="what did she research?", recall_tokens=60)
    assert tight.recalled == (seqs[2], seqs[3])
    assert f"- {ctx.agent.display_name}: Adoption agencies, mostly." in tight.text
    older = service.memory_block(
        ctx, message="When did Caroline paint a sunrise?", recall_before=seqs[0]
    )
    assert older.recalled == ()
    off = service.memory_block(ctx, message="When did Caroline paint?", recall_tokens=0)
    assert "Earlier conversation" not in off.text


def test_a_message_shown_as_a_fact_is_not_recalled_again(service: MemoryService) -> None:
    ctx = writer(service)
    (seq,) = say(service, ("user", "I always write release notes in second person"))
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))
    namespace = service.namespace_id(ctx)
    service.store.memory.add_fact(
        namespace,
        "User writes release notes in second person",
        squad="demo",
        agent="writer",
        turns=(seq,),
    )
    block = service.memory_block(ctx, message="how are release notes written?")
    assert "User writes release notes in second person" in block.text
    assert block.experience_sources == (seq,) and seq not in block.recalled


def test_an_archive_is_never_shared_and_never_fades(
    service: MemoryService, store: Store, clock: FrozenClock
) -> None:
    ctx = writer(service)
    say(service, ("user", "the greenhouse key is under the blue pot"), ("assistant", "noted"))
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))
    with pytest.raises(UsageError, match="conversation archive"):
        store.memory.set_namespace_enabled(ctx.archive_identity, True)
    run_gc(store, {"demo": ctx.workspace}, now=clock() + timedelta(days=3650), policy=GcPolicy())
    assert len(store.memory.facts(service.archive_id(ctx), limit=10)) == 2
    assert service.memory_block(ctx, message="where is the greenhouse key?").recalled


def test_history_read_before_archives_existed_is_archived_at_the_next_pass(
    service: MemoryService,
) -> None:
    ctx = writer(service)
    for i in range(3):  # read by an extractor of an earlier release: watermark past them
        say(service, ("user", f"old note {i} about the orchard"), ("assistant", "ok"))
    conversation = service.store.conversation
    assert conversation.claim_extraction("demo", "writer")
    conversation.finish_extraction("demo", "writer", 6)
    assert conversation.watermark("demo", "writer").last_processed_seq == 6
    say(service, ("user", "a new note about the orchard"), ("assistant", "fine"))
    AgentExtractor(service, lambda c: None).run(ctx, force=True)
    archived = service.store.memory.facts(service.archive_id(ctx), limit=100)
    assert sorted(seq for f in archived for seq in f.turns) == list(range(1, 9))
    assert service.catch_up_archive(ctx, 8) == 0


def test_a_text_said_a_thousand_times_is_one_archive_entry_recalled_once(
    service: MemoryService,
) -> None:
    from squad.store.archive import TURNS_KEPT

    ctx = writer(service)
    for _ in range(3):
        say(service, ("user", "check the dependency audit of the payments service"))
        service.archive(ctx, service.store.conversation.messages("demo", "writer"))
    many = [("user", "check the dependency audit of the payments service")] * 400
    say(service, *many, ("assistant", "the audit found two stale packages"))
    service.archive(ctx, service.store.conversation.messages("demo", "writer"))

    facts = service.store.memory.facts(service.archive_id(ctx), limit=100)
    assert len(facts) == 2
    (asked,) = [f for f in facts if "dependency audit" in f.text]
    assert len(asked.turns) == TURNS_KEPT and max(asked.turns) == 403
    recalled = service.recalled(ctx, "what did the dependency audit of payments find?")
    assert sorted(line.seq for line in recalled) == [403, 404]


def test_recall_reads_the_archive_when_retention_forgot_the_message(
    service: MemoryService, store: Store, clock: FrozenClock
) -> None:
    ctx = writer(service)
    run = store.create_run("demo")
    for text in ("the greenhouse key is under the blue pot", "ok", "the weather is grey"):
        store.conversation.record_message("demo", "writer", "user", text, run_id=run.id)
    from squad.store import RunStatus

    store.update_run(run.id, status=RunStatus.SUCCEEDED)
    AgentExtractor(service, lambda c: None).run(ctx, force=True)
    clock.advance(3600)
    assert store.retention.forget_runs(clock()).messages == 3
    assert store.conversation.messages("demo", "writer") == []

    (line,) = service.recalled(ctx, "where is the greenhouse key?")

    assert (line.seq, line.speaker, line.text) == (
        1,
        "user",
        "the greenhouse key is under the blue pot",
    )


# bounded reads, the ranking kept per archive version, the chatter hook


SERVICES = ["billing", "payments", "ledger", "checkout", "search", "shipping", "identity"]
TOPICS = ["retry policy", "connection pool", "rate limits", "backup schedule", "alert routing"]


def history_of_runs(service: MemoryService, runs: int) -> None:
    """``runs`` runs' worth of the writer's messages (the task, the answer), each run on
    another service and topic, archived as the extractor would."""
    ctx = writer(service)
    store = service.store
    with store.batch("write a long history"):
        for n in range(runs):
            topic, name = TOPICS[n % len(TOPICS)], SERVICES[n % len(SERVICES)]
            store.conversation.record_messages(
                "demo",
                "writer",
                [
                    ("user", f"Run {n}: document the {topic} of the {name} service.", None),
                    ("assistant", f"The {name} {topic} is documented; {n % 9} questions.", None),
                ],
                run_id=f"run-{n}",
            )
    service.archive(ctx, store.conversation.messages("demo", "writer"))


def test_recall_after_a_thousand_runs_reads_a_bounded_few_batches_of_messages(
    service: MemoryService,
) -> None:
    from squad.memory.recall import RECALL_CONSIDERED

    history_of_runs(service, 1000)
    ctx = writer(service)
    archived = service.store.memory.facts(service.archive_id(ctx), limit=5000)
    assert len(archived) == 1000 + 5 * 7 * 9  # each task, and each distinct answer once

    block = service.memory_block(ctx, message="What is the retry policy of the billing service?")

    assert block.recall.tokens > 0.8 * block.recall_budget  # the budget is filled...
    assert 0 < block.recall_read <= RECALL_CONSIDERED  # ...from a few batches, not the archive
    assert block.to_dict()["recall_read"] == block.recall_read


def test_the_same_message_at_the_same_archive_reads_no_message_again(
    service: MemoryService,
) -> None:
    history_of_runs(service, 20)
    ctx = writer(service)
    question = "What is the retry policy of the billing service?"
    first = service.memory_block(ctx, message=question)
    again = service.memory_block(ctx, message=question)
    assert first.recall_read > 0 and again.recall_read == 0
    assert again.text == first.text

    (news,) = service.store.conversation.record_messages(
        "demo", "writer", [("user", "The billing retry policy is now three tries.", None)]
    )
    service.archive(ctx, [news])  # a new archive version: the ranking is made again
    after = service.memory_block(ctx, message=question)
    assert after.recall_read > 0 and news.seq in after.recalled


def test_recall_leaves_out_what_the_chatter_filter_calls_chatter(
    settings: Settings, store: Store, clock: FrozenClock, service: MemoryService
) -> None:
    ctx = writer(service)
    say(
        service,
        ("user", "Which database does the ledger use?"),
        ("assistant", "Done. The work is written up below."),
        ("user", "The ledger uses Postgres 16 on db2."),
        ("assistant", "The ledger's database is Postgres 16, on db2."),
    )
    service.archive(ctx, store.conversation.messages("demo", "writer"))
    asked: list[tuple[str, str]] = []

    def chatter(text: str, role: str) -> bool:
        asked.append((role, text))
        return text.startswith("Done.")

    filtered = MemoryService(settings, store, clock=clock, chatter=chatter)
    question = "what database does the ledger use, and the work written up?"
    plain = [line.text for line in service.recalled(ctx, question)]
    kept = [line.text for line in filtered.recalled(ctx, question)]
    assert "Done. The work is written up below." in plain
    assert "Done. The work is written up below." not in kept
    assert "The ledger uses Postgres 16 on db2." in kept
    assert ("assistant", "Done. The work is written up below.") in asked
    assert ("user", "The ledger uses Postgres 16 on db2.") in asked
    block = filtered.memory_block(ctx, message=question)
    assert "Done. The work" not in block.text and "Postgres 16 on db2" in block.text


def test_a_new_question_recalling_the_same_messages_asks_the_chatter_filter_nothing_again(
    settings: Settings, store: Store, clock: FrozenClock, service: MemoryService
) -> None:
    ctx = writer(service)
    say(
        service,
        ("user", "Which database does the ledger use?"),
        ("assistant", "Done. The work is written up below."),
        ("user", "The ledger uses Postgres 16 on db2."),
    )
    service.archive(ctx, store.conversation.messages("demo", "writer"))
    asked: list[tuple[str, str]] = []

    def chatter(text: str, role: str) -> bool:
        asked.append((role, text))
        return text.startswith("Done.")

    filtered = MemoryService(settings, store, clock=clock, chatter=chatter)
    first = [line.text for line in filtered.recalled(ctx, "which database does the ledger use?")]
    judged = len(asked)
    second = [line.text for line in filtered.recalled(ctx, "the ledger database, and the work?")]

    assert judged > 0 and len(asked) == judged  # a new ranking, the same verdicts
    fact = "The ledger uses Postgres 16 on db2."
    assert fact in first and fact in second
    assert not any(text.startswith("Done.") for text in first + second)
