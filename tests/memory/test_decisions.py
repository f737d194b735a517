"""The decisions log against a real store (SQLite file, and Postgres when reachable) and a
real workspace folder: recording, reading, searching, superseding, and decisions.md."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from squad.app import App
from squad.clock import FrozenClock
from squad.errors import MemoryError_, NotFound, SecretInMemoryError, UsageError
from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog
from squad.memory.decisions.log import Decision, DecisionLog
from squad.memory.decisions.text import render_decisions
from squad.memory.decisions.tools import DecisionTools
from squad.spec.loader import squad_from_text
from squad.store import Store
from tests.conftest import BASIC_YAML

START = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12"


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(START)


@pytest.fixture
def store(store_url: str, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(store_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def log(store: Store, clock: FrozenClock) -> DecisionLog:
    return DecisionLog(store, clock=clock)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspaces" / "demo"
    path.mkdir(parents=True)
    return path


def record(log: DecisionLog, workspace: Path, **given: Any) -> Decision:
    fields: dict[str, Any] = {
        "title": "Build the docs with MkDocs",
        "decision": "The docs site is built with MkDocs Material.",
        "reasons": ["The team knows it", "Search works offline"],
        "alternatives": ["Sphinx", "Docusaurus"],
        "decided_by": "cli",
    }
    fields.update(given)
    squad = fields.pop("squad", "demo")
    return log.record(squad, workspace, **fields)


def mirror(workspace: Path) -> str:
    return (workspace / "decisions.md").read_text(encoding="utf-8")


def test_recorded_decision_reads_back_with_every_field(
    log: DecisionLog, workspace: Path, clock: FrozenClock
) -> None:
    made = record(log, workspace, decided_by="agent:writer")

    assert made == log.get(made.id)
    assert (made.squad, made.title, made.decided_by) == (
        "demo",
        "Build the docs with MkDocs",
        "agent:writer",
    )
    assert made.reasons == ("The team knows it", "Search works offline")
    assert made.alternatives == ("Sphinx", "Docusaurus")
    assert made.decided_at == clock.now and made.decided_at.utcoffset() is not None
    assert (made.supersedes, made.superseded_by) == (None, None)
    data = json.loads(json.dumps(made.view().model_dump()))
    assert data["decided_at"] == "2030-01-02T03:04:05+00:00"
    assert data["reasons"] == ["The team knows it", "Search works offline"]


def test_unknown_decision_id_is_not_found(log: DecisionLog) -> None:
    for missing in (1, 0, -3, 2**40):
        with pytest.raises(NotFound, match=f"no decision {missing}"):
            log.get(missing)


def test_list_is_newest_first_and_can_leave_out_superseded_ones(
    log: DecisionLog, workspace: Path, clock: FrozenClock, tmp_path: Path
) -> None:
    first = record(log, workspace, title="One", decision="First.")
    clock.advance(60)
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = record(log, other, squad="other", title="Elsewhere", decision="Other squad.")
    clock.advance(60)
    second = record(log, workspace, title="Two", decision="Second.", supersedes=first.id)

    assert [d.id for d in log.list("demo")] == [second.id, first.id]
    assert [d.id for d in log.list("demo", include_superseded=False)] == [second.id]
    assert [d.id for d in log.list()] == [second.id, elsewhere.id, first.id]
    assert [d.id for d in log.list(limit=1, offset=1)] == [elsewhere.id]
    assert log.list("nobody") == []
    with pytest.raises(UsageError, match="limit must be"):
        log.list(limit=0)


def test_search_needs_every_word_ignores_case_and_ranks_title_hits_first(
    log: DecisionLog, workspace: Path, clock: FrozenClock
) -> None:
    in_reasons = record(
        log,
        workspace,
        title="Host on the Straße server",
        decision="Docs are hosted in-house.",
        reasons=["Postgres backups already run there"],
    )
    clock.advance(60)
    in_title = record(
        log,
        workspace,
        title="Use Postgres for the state",
        decision="The daemon keeps its state in Postgres.",
        reasons=["It scales to several workers"],
    )
    clock.advance(60)
    newer_in_body = record(
        log,
        workspace,
        title="Keep the queue in the database",
        decision="Jobs wait in postgres tables.",
        reasons=["One thing less to run"],
    )
    clock.advance(60)
    record(log, workspace, title="Unrelated", decision="Nothing to do with it.")

    assert [d.id for d in log.search("POSTGRES")] == [in_title.id, newer_in_body.id, in_reasons.id]
    assert [d.id for d in log.search("postgres workers")] == [in_title.id]
    # Unicode case folding on every backend: "STRASSE" finds "Straße".
    assert [d.id for d in log.search("STRASSE")] == [in_reasons.id]
    assert log.search("postgres nosuchword") == []
    assert [d.id for d in log.search("postgres", limit=1)] == [in_title.id]
    with pytest.raises(UsageError, match="query is empty"):
        log.search("   ")


def test_search_leaves_out_superseded_unless_asked_and_keeps_to_the_squads_given(
    log: DecisionLog, workspace: Path, tmp_path: Path
) -> None:
    old = record(log, workspace, decision="Use MkDocs.")
    new = record(log, workspace, decision="Use Zensical, MkDocs' successor.", supersedes=old.id)
    other = tmp_path / "other"
    other.mkdir()
    theirs = record(log, other, squad="other", decision="Use MkDocs too.")

    assert [d.id for d in log.search("mkdocs", squads=["demo"])] == [new.id]
    assert {d.id for d in log.search("mkdocs", squads=["demo"], include_superseded=True)} == {
        old.id,
        new.id,
    }
    assert {d.id for d in log.search("mkdocs")} == {new.id, theirs.id}
    assert log.search("mkdocs", squads=[]) == []


def test_superseded_decision_is_struck_and_linked_and_its_text_kept(
    log: DecisionLog, workspace: Path
) -> None:
    old = record(log, workspace)
    before = mirror(workspace)
    new = record(
        log,
        workspace,
        title="Build the docs with Zensical",
        decision="The docs site moves to Zensical.",
        reasons=["MkDocs Material is in maintenance mode"],
        alternatives=[],
        supersedes=old.id,
    )

    assert new.supersedes == old.id and log.get(old.id).superseded_by == new.id
    text = mirror(workspace)
    assert f'<a id="decision-{old.id}"></a>\n## ~~{old.id}. Build the docs with MkDocs~~' in text
    assert f"**Superseded by [decision {new.id}](#decision-{new.id}).**" in text
    assert "> ~~The docs site is built with MkDocs Material.~~" in text
    assert f"Supersedes [decision {old.id}](#decision-{old.id})." in text
    assert f'<a id="decision-{new.id}"></a>\n## {new.id}. Build the docs with Zensical' in text
    # Append-only: every line of the old decision that was not struck is still there.
    for line in before.splitlines():
        if "MkDocs Material." not in line and "## " not in line:
            assert line in text
    assert text.index(f"decision-{old.id}") < text.index(f'id="decision-{new.id}"')


def test_supersession_chain_and_a_second_successor_is_refused(
    log: DecisionLog, workspace: Path
) -> None:
    one = record(log, workspace, decision="Port 8000.")
    two = record(log, workspace, decision="Port 8080.", supersedes=one.id)
    three = record(log, workspace, decision="Port 9090.", supersedes=two.id)
    before = mirror(workspace)

    with pytest.raises(UsageError, match=f"already superseded by decision {two.id}"):
        record(log, workspace, decision="Port 7000.", supersedes=one.id)

    assert [(d.supersedes, d.superseded_by) for d in reversed(log.list("demo"))] == [
        (None, two.id),
        (one.id, three.id),
        (two.id, None),
    ]
    assert mirror(workspace) == before


def test_superseding_a_missing_or_another_squads_decision_is_refused(
    log: DecisionLog, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = record(log, other, squad="other")

    with pytest.raises(NotFound, match="no decision 999 to supersede"):
        record(log, workspace, supersedes=999)
    with pytest.raises(UsageError, match=r"squad 'other'.*own squad"):
        record(log, workspace, supersedes=theirs.id)

    assert log.list("demo") == [] and not (workspace / "decisions.md").exists()
    assert log.get(theirs.id).superseded_by is None


@pytest.mark.parametrize(
    "field",
    ["title", "decision", "reasons", "alternatives"],
)
def test_credential_in_any_field_is_refused_and_nothing_is_stored(
    log: DecisionLog, workspace: Path, field: str
) -> None:
    text = f"deploy with {KEY}"
    given: dict[str, Any] = {field: [text] if field in ("reasons", "alternatives") else text}

    with pytest.raises(SecretInMemoryError) as caught:
        record(log, workspace, **given)

    assert KEY not in str(caught.value)
    assert log.list() == [] and not (workspace / "decisions.md").exists()
    assert AuditLog(workspace).records() == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"title": "  "}, "the title is empty"),
        ({"title": "x" * 201}, "201 characters, over the 200-character limit"),
        ({"title": "Two\nlines"}, "spans several lines"),
        ({"decision": ""}, "the decision is empty"),
        ({"decision": "x" * 2001}, "over the 2,000-character limit"),
        ({"reasons": []}, "at least one reason"),
        ({"reasons": ["fine", " "]}, "reason 2 is empty"),
        ({"reasons": ["r"] * 21}, "21 reasons given, over the limit of 20"),
        ({"alternatives": ["a"] * 21}, "21 alternatives given"),
        ({"alternatives": ["x" * 2001]}, "alternative 1 is 2,001 characters"),
        ({"reasons": "one text"}, "lists of texts"),
        ({"decided_by": "alice"}, "names nobody squad knows"),
        ({"decided_by": "agent:"}, "names nobody squad knows"),
        ({"decision": "a\x00b"}, "NUL"),
        ({"supersedes": 0}, "no decision 0 to supersede"),
    ],
)
def test_invalid_decision_is_refused_with_a_clear_message_and_leaves_nothing(
    log: DecisionLog, workspace: Path, given: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        record(log, workspace, **given)

    assert log.list() == [] and list(workspace.iterdir()) == []


def test_decisions_md_that_cannot_be_written_leaves_the_store_unchanged(
    log: DecisionLog, workspace: Path
) -> None:
    kept = record(log, workspace)
    path = workspace / "decisions.md"
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        with pytest.raises(MemoryError_, match="read-only"):
            record(log, workspace, decision="Another one.")
    finally:
        path.chmod(0o644)
    path.unlink()
    path.mkdir()  # a folder where the file belongs: the rename fails inside the transaction
    with pytest.raises(MemoryError_, match=r"cannot write decisions.md.*nothing was recorded"):
        record(log, workspace, decision="Yet another one.")

    assert [d.id for d in log.list()] == [kept.id]
    path.rmdir()
    log.regenerate("demo", workspace)
    assert path.read_bytes() == before


def test_decisions_md_is_rendered_from_the_store_atomically(
    log: DecisionLog, workspace: Path, store: Store
) -> None:
    record(log, workspace)
    record(log, workspace, decision="Second.", alternatives=())
    path = workspace / "decisions.md"

    assert sorted(p.name for p in workspace.iterdir()) == [
        ".decisions.md.lock",
        "decisions.md",
        "logs",
    ]
    assert mirror(workspace) == render_decisions("demo", log.list("demo"))
    path.write_text("hand edited\n")
    log.regenerate("demo", workspace)
    assert mirror(workspace) == render_decisions("demo", log.list("demo"))
    assert mirror(workspace).startswith("# Decisions\n")


def test_recording_appends_an_audit_record_naming_who_decided(
    log: DecisionLog, workspace: Path
) -> None:
    made = record(log, workspace, decided_by="mcp:Claude Code")

    (audit,) = AuditLog(workspace).records()
    assert (audit.actor, audit.operation, audit.file) == (
        "mcp:Claude Code",
        "decision",
        f"decision:{made.id}",
    )
    assert audit.note == made.title
    assert audit.details == {"squad": "demo", "mirror": "decisions.md", "supersedes": None}


def test_record_once_returns_the_decision_already_recorded_in_other_words(
    log: DecisionLog, workspace: Path
) -> None:
    first, created = log.record_once(
        "demo",
        workspace,
        title="Port",
        decision="We use port 8080.",
        reasons=["free"],
        decided_by="agent:writer",
    )
    again, again_created = log.record_once(
        "demo",
        workspace,
        title="Port again",
        decision="  we use PORT 8080 ",
        reasons=["still free"],
        decided_by="agent:planner",
    )

    assert created and not again_created and again == first
    assert len(log.list()) == 1 and len(AuditLog(workspace).records()) == 1


def test_nothing_of_a_decision_is_left_in_temporary_files(
    log: DecisionLog, workspace: Path
) -> None:
    for n in range(3):
        record(log, workspace, decision=f"Decision {n}.")
    assert [name for name in os.listdir(workspace) if name.endswith(".tmp")] == []


# the agent's tools


@pytest.fixture
def tools(log: DecisionLog, workspace: Path) -> DecisionTools:
    spec = squad_from_text(BASIC_YAML)
    return DecisionTools(log, AgentContext.of(spec, "writer", workspace))


def test_agent_records_a_decision_with_reasons_one_per_line(
    tools: DecisionTools, log: DecisionLog
) -> None:
    answer = tools.decision_record(
        "Use JWT",
        "Auth uses JWT bearer tokens.",
        "- stateless servers\n\n* the mobile app needs it\n",
        "sessions\ncookies",
    )

    (made,) = log.list("demo")
    assert answer == f"recorded decision {made.id} in decisions.md"
    assert made.reasons == ("stateless servers", "the mobile app needs it")
    assert made.alternatives == ("sessions", "cookies")
    assert made.decided_by == "agent:writer"
    found = tools.decision_search("jwt mobile")
    assert found.startswith(f"decision {made.id}: Use JWT (2030-01-02, by agent:writer)")
    assert "reasons: stateless servers; the mobile app needs it" in found
    later = tools.decision_record(
        "Use sessions", "Back to sessions.", "simpler", supersedes=made.id
    )
    assert later.endswith(f"supersedes decision {made.id}")


def test_agent_tool_refusals_come_back_as_text(tools: DecisionTools, log: DecisionLog) -> None:
    assert tools.decision_record("Use JWT", "JWT.", "").startswith(
        "refused: a decision needs at least one reason"
    )
    secret = tools.decision_record("Key", f"use {KEY}", "it works")
    assert secret.startswith("refused: ") and KEY not in secret
    assert tools.decision_record("T", "D", "r", supersedes=42).startswith("refused: no decision 42")
    assert tools.decision_search("").startswith("refused: the query is empty")
    assert tools.decision_search("anything") == "no current decision matches 'anything'"
    assert log.list() == []


def test_concurrent_successors_of_one_decision_leave_exactly_one_link(
    log: DecisionLog, workspace: Path
) -> None:
    old = record(log, workspace)
    outcomes: list[str] = []

    def supersede(n: int) -> None:
        try:
            record(log, workspace, decision=f"Successor {n}.", supersedes=old.id)
            outcomes.append("recorded")
        except UsageError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=supersede, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert outcomes.count("recorded") == 1
    assert all("already superseded" in o for o in outcomes if o != "recorded")
    (successor,) = log.list("demo", include_superseded=False)
    assert log.get(old.id).superseded_by == successor.id
    assert mirror(workspace) == render_decisions("demo", log.list("demo"))


def test_the_app_makes_one_decision_log_on_its_store(app: App, tmp_path: Path) -> None:
    assert app.decisions is app.decisions
    made = app.decisions.record(
        "demo", tmp_path, title="T", decision="D", reasons=["R"], decided_by="cli"
    )
    assert app.decisions.get(made.id) == made


def test_html_in_a_decision_cannot_forge_an_anchor_or_a_link_in_decisions_md(
    log: DecisionLog, workspace: Path
) -> None:
    forged = '<a id="decision-1"></a>'
    record(
        log,
        workspace,
        title=f"Use {forged} anchors",
        decision=f"Anchors {forged} are plain text here.",
        reasons=[f"Because {forged}"],
        alternatives=["x & <b>y</b>"],
    )
    text = mirror(workspace)
    assert text.count('<a id="decision-1"></a>') == 1  # the real anchor only
    assert "&lt;a id=" in text and "x &amp; &lt;b>y&lt;/b>" in text
    assert log.get(1).title == f"Use {forged} anchors"  # the store keeps the text as given
