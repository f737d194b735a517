"""One agent's extraction pass on a real store and workspace, with the offline extractor."""

from __future__ import annotations

import json
from collections.abc import Callable

from squad.memory.audit import AuditLog
from tests.extraction.conftest import World

MakeWorld = Callable[..., World]


def test_project_facts_go_to_memory_md_and_experiential_ones_to_layer_a(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=2)
    world.talk(
        "In this repo the API listens on port 8080.",
        "I prefer short answers with code first.",
        "Thanks, that's all!",
    )
    [report] = world.extractor().run(world.ctx)

    assert report.status == "done" and report.extractor == "offline"
    assert "- In this repo the API listens on port 8080. (2026-11-29)" in world.memory_md()
    assert world.facts() == ["I prefer short answers with code first."]
    wm = world.manager.store.conversation.watermark("demo", "planner")
    assert (wm.last_processed_seq, wm.in_flight) == (6, False)


def test_every_pass_is_recorded_in_the_store_and_the_audit_log(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    world.talk("We decided to deploy every Friday.", "Can you check the build?")
    world.extractor().run(world.ctx)

    [run] = world.manager.store.extraction.runs("demo", "planner")
    assert (run.status, run.extractor, run.from_seq, run.to_seq) == ("done", "offline", 1, 4)
    assert len(run.message_ids) == 4
    assert [w["where"] for w in run.written] == ["agents/planner/memory.md#Decisions"]
    [audit] = [r for r in AuditLog(world.ctx.workspace).records() if r.operation == "extract"]
    assert audit.file == f"extraction:{run.id}"
    assert audit.details is not None and audit.details["written"] == run.written


def test_a_pass_that_changes_nothing_leaves_no_audit_line(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    world.talk("Thanks!", "ok")
    [report] = world.extractor().run(world.ctx)

    [run] = world.manager.store.extraction.runs("demo", "planner")
    assert report.status == "done" and (run.written, run.dropped) == ([], [])
    assert [r for r in AuditLog(world.ctx.workspace).records() if r.operation == "extract"] == []


def test_nothing_new_means_no_pass_and_the_watermark_only_moves_forward(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("The staging URL is https://staging.example.dev.")
    world.extractor().run(world.ctx)
    before = world.memory_md()
    assert world.extractor().run(world.ctx) == []
    assert world.memory_md() == before


def test_fewer_messages_than_the_interval_skip_with_a_log_line_and_wait(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=6)
    world.talk("The API listens on port 8080 in this repo.")
    [report] = world.extractor().run(world.ctx)

    assert report.status == "skipped" and "fewer than the trigger interval of 6" in (
        report.reason or ""
    )
    assert world.manager.store.conversation.watermark("demo", "planner").last_processed_seq == 0
    assert AuditLog(world.ctx.workspace).records() == []  # nothing changed: no audit line
    [forced] = world.extractor().run(world.ctx, force=True)
    assert forced.status == "done"


def test_a_contradicting_fact_supersedes_the_old_line_which_stays_dated(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("In this repo the API listens on port 8080.")
    world.extractor().run(world.ctx)
    world.clock.advance(3 * 86400)
    world.talk("In this repo the API listens on port 9090 now.")
    world.extractor().run(world.ctx)

    text = world.memory_md()
    assert (
        "- ~~In this repo the API listens on port 8080.~~ (2026-11-29; superseded 2026-12-02)"
        in text
    )
    assert "- In this repo the API listens on port 9090 now. (2026-12-02)" in text


def test_duplicates_are_not_written_twice_and_count_as_sightings(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    for run in ("run-1", "run-2", "run-3"):
        world.say(
            ("user", "Task: Check the service config."),
            ("assistant", "In this repo the API listens on port 8080."),
            run=run,
        )
        world.extractor().run(world.ctx)

    assert world.memory_md().count("listens on port 8080") == 1
    [candidate] = world.manager.store.maintenance.promotion_candidates(min_sources=3)
    assert candidate.text == "In this repo the API listens on port 8080."


def test_an_experiential_fact_about_the_same_subject_supersedes_in_the_store(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("I prefer short answers with code first.")
    world.extractor().run(world.ctx)
    world.talk("Actually I prefer long, detailed answers.")
    world.extractor().run(world.ctx)

    ns = world.memory.namespace_id(world.ctx)
    facts = world.manager.store.memory.facts(ns, include_inactive=True)
    by_text = {f.text: f for f in facts}
    old = by_text["I prefer short answers with code first."]
    new = by_text["Actually I prefer long, detailed answers."]
    assert (old.status, old.superseded_by) == ("superseded", new.id)


def test_a_trigger_during_a_pass_is_coalesced_into_one_more_round(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    conversation = world.manager.store.conversation
    world.talk("The API listens on port 8080 in this repo.")
    assert conversation.claim_extraction("demo", "planner")  # another process's pass
    assert world.extractor().run(world.ctx) == []  # coalesced: recorded as pending
    assert conversation.watermark("demo", "planner").pending
    # The holder finishes, learns of the pending trigger, and runs once more.
    assert conversation.finish_extraction("demo", "planner", 0)
    [report] = world.extractor().run(world.ctx)
    assert report.status == "done"


def test_secrets_questions_and_status_never_reach_memory(make_world: MakeWorld) -> None:
    world = make_world(interval=1)
    world.talk(
        "The DB password is Tr0ub4dor&3 for the staging box.",
        "What's the port of the API?",
        "I'm running the tests now.",
    )
    [report] = world.extractor().run(world.ctx)
    assert report.written == []
    assert "Tr0ub4dor" not in world.memory_md() + json.dumps(world.facts())


def test_in_a_run_task_prompts_are_context_and_echoes_of_them_are_dropped(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    prompt = (
        "Task: Outline the getting-started guide.\n\nGoal: Ship it.\n\n"
        "Your answer is saved as tasks/outline/output.md; write the deliverable itself."
    )
    world.say(
        ("user", prompt),
        ("assistant", "This deliverable addresses the task: Outline the getting-started guide."),
        run="run-1",
    )
    world.say(
        ("user", "Task: Write the guide.\n\nYour answer is saved as tasks/draft/output.md."),
        ("assistant", "We decided to use MkDocs Material for the docs site."),
        run="run-1",
    )
    [report] = world.extractor().run(world.ctx)

    assert [w["text"] for w in report.written] == [
        "We decided to use MkDocs Material for the docs site."
    ]
    assert world.facts() == []  # nothing from the task prompts themselves


def test_a_fact_told_again_after_many_newer_lines_is_not_written_twice(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("In this repo the API listens on port 8080.")
    world.extractor().run(world.ctx)
    newer = "\n".join(f"- The job number {n} keeps its logs for {n} days." for n in range(40))
    world.memory.memory_file(world.ctx).append("Insights", newer, actor="cli")

    world.talk("In this repo the API listens on port 8080.")
    [report] = world.extractor().run(world.ctx)

    assert world.memory_md().count("the API listens on port 8080") == 1
    assert report.written == []
    assert [d["reason"] for d in report.dropped] == ["duplicate"]


def test_a_change_told_after_many_newer_lines_supersedes_the_old_line(
    make_world: MakeWorld,
) -> None:
    world = make_world(interval=1)
    world.talk("We deploy the backend on Fridays.")
    world.extractor().run(world.ctx)
    newer = "\n".join(f"- The job number {n} keeps its logs for {n} days." for n in range(40))
    world.memory.memory_file(world.ctx).append("Insights", newer, actor="cli")

    world.talk("We now deploy the backend on Tuesdays, not Fridays.")
    [report] = world.extractor().run(world.ctx)

    text = world.memory_md()
    assert "- ~~We deploy the backend on Fridays.~~" in text
    assert "- We now deploy the backend on Tuesdays, not Fridays." in text
    assert [w["text"] for w in report.written] == [
        "We now deploy the backend on Tuesdays, not Fridays."
    ]
