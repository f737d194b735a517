"""``store.redaction``: credentials in stored rows found and redacted in place, on each backend."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from squad.store import Store
from squad.store.decisions import NewDecision
from squad.store.review import NewProposal
from squad.store.tables import metadata
from tests.scan.seed import blind_detector

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
CUED = "hunter2xyz"  # not shaped like a password alone: only its cue says it is one


def _seed(store: Store, monkeypatch: pytest.MonkeyPatch) -> int:
    with blind_detector(monkeypatch):
        talk = store.conversation
        talk.record_message("s", "a", "assistant", "What's the staging db password?", run_id="r")
        talk.record_message("s", "a", "user", CUED, run_id="r")
        talk.record_message("s", "a", "user", CUED, run_id="other-thread")  # no cue there
        talk.record_message("t", "a", "tool", f"token={TOKEN}", session_id="chat")
        namespace = store.memory.ensure_namespace("squad:s/a", "Agent Experience: A")
        fact = store.memory.add_fact(namespace.id, f"CI pushes with {TOKEN}", squad="s", agent="a")
        store.memory.add_fact(namespace.id, "The docs use MkDocs", squad="s", agent="a")
        store.decisions.add(
            NewDecision(
                squad="s",
                title="Deploy with the bot",
                decision="Use the deploy bot",
                decision_key="k" * 64,
                reasons=(f"it holds {TOKEN}",),
                alternatives=("by hand",),
                decided_by="cli",
                decided_at=store.memory._now(),
            )
        )
        store.review.propose(
            NewProposal(
                squad="s",
                agent="a",
                layer="project",
                text="CI pushes with the bot",
                key="r" * 64,
                confidence=0.5,
                extractor="offline",
                source="chat",
                detail=f"the bot's token {TOKEN}",
            )
        )
    return fact.id


def _text_of_every_row(store: Store) -> str:
    parts = []
    with store._engine.connect() as conn:
        for table in metadata.sorted_tables:
            for row in conn.execute(select(table)):
                parts.append(json.dumps(list(row), default=str))
    return "\n".join(parts).lower()


def test_a_sweep_finds_then_a_fix_redacts_every_row_and_reindexes_and_a_second_finds_none(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact_id = _seed(store, monkeypatch)

    looked = store.redaction.sweep(fix=False)
    only_s = store.redaction.sweep(fix=False, squad="s")
    fixed = store.redaction.sweep(fix=True)
    again = store.redaction.sweep(fix=True)

    places = sorted((f.place, f.ref.split(":")[0], f.found[0].kind) for f in looked.findings)
    assert places == [
        ("conversation", "message", "followup_secret"),
        ("conversation", "message", "github_token"),
        ("decision", "decision", "github_token"),
        ("layer_a", "fact", "github_token"),
        ("review", "review", "github_token"),
    ]
    assert not any(f.fixed for f in looked.findings)
    assert {f.squad for f in only_s.findings} == {"s"} and len(only_s.findings) == 4
    assert [f.fixed for f in fixed.findings] == [True] * 5
    assert again.findings == () and again.scanned["conversation"] == 4
    everything = _text_of_every_row(store)
    assert TOKEN[4:].lower() not in everything  # nor in the fact index's terms
    assert everything.count(CUED.lower()) == 1  # the message with no cue before it keeps it
    (kept,) = store.conversation.messages("s", "a", run_id="other-thread")
    assert kept.content == CUED
    (fact,) = store.memory.search_facts("pushes")
    assert (fact.id, fact.text) == (fact_id, "CI pushes with [REDACTED:github_token]")
    (hit,) = store.memory.scored_facts(fact.namespace_id, "redacted pushes")  # indexed anew
    assert hit[0].id == fact_id
    (decision,) = store.decisions.of_squad("s")
    assert decision.reasons == ("it holds [REDACTED:github_token]",)
    (item,) = store.review.items("s", "a")
    assert item.detail == "the bot's token [REDACTED:github_token]"
