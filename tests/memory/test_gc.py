"""Memory gc: decay to dormant, TTL expiry, promotion proposals, dry runs, the CLI.

Every store-backed test runs on SQLite and (when reachable) Postgres, with a frozen clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from squad.app import App
from squad.clock import FrozenClock
from squad.errors import MemoryError_, UsageError
from squad.manager import SquadManager
from squad.memory.audit import AuditLog
from squad.memory.gc import GcPolicy, GcReport, decay_score, run_gc, sighting_key
from squad.memory.sightings import fact_text
from squad.settings import Settings
from squad.spec.models import SquadSpec
from squad.store import FactRecord, FactStatus, NamespaceRecord, Store
from squad.store.engine import make_engine
from squad.store.maintenance import MAX_SOURCES
from tests.store.test_memory_store import check_index  # noqa: F401 - fixture reused

DAY = 86_400


@pytest.fixture
def store(store_url: str, clock: FrozenClock) -> Iterator[Store]:
    with Store.open(store_url, clock=clock) as opened:
        yield opened


@pytest.fixture
def workspace(settings: Settings, store: Store, make_spec: Callable[..., SquadSpec]) -> Path:
    """The ``demo`` squad's workspace, registered in the store (where gc writes its audit)."""
    return SquadManager(settings, store=store).create(make_spec()).path


@pytest.fixture
def ns(store: Store) -> NamespaceRecord:
    return store.memory.ensure_namespace("squad:demo/writer", "Agent Experience: Writer")


def workspaces(settings: Settings, store: Store) -> dict[str, Path]:
    """Every squad's workspace, as the daemon and ``squad memory gc`` hand them to gc."""
    return SquadManager(settings, store=store).workspace_paths()


def add(store: Store, ns: NamespaceRecord, fact: str, **kwargs: Any) -> FactRecord:
    return store.memory.add_fact(ns.id, fact, squad="demo", agent="writer", **kwargs)


def gc_ops(workspace: Path) -> list[tuple[str, str, str]]:
    return [(r.actor, r.operation, r.file) for r in AuditLog(workspace).records()]


# -- pure parts --------------------------------------------------------------------------------


def test_decay_score_halves_every_half_life_and_grows_with_use() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert decay_score(now, 0, now, half_life_days=30) == 1.0
    assert decay_score(now - timedelta(days=30), 0, now, half_life_days=30) == 0.5
    assert decay_score(now - timedelta(days=60), 3, now, half_life_days=30) == 0.25 * 3
    assert decay_score(now + timedelta(days=1), 0, now, half_life_days=30) == 1.0


def test_policy_refuses_nonsense_and_places_the_prefilter_at_the_threshold_age() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert GcPolicy().unused_since(now) == now - timedelta(days=60) + timedelta(seconds=1)
    for bad in (
        {"half_life_days": 0},
        {"dormant_below": 1.0},
        {"dormant_below": 0},
        {"transient_ttl_days": -1},
        {"min_sources": 0},
    ):
        with pytest.raises(ValueError):
            GcPolicy(**bad)


def test_sighting_key_collides_rewordings_by_case_dates_punctuation_and_spacing() -> None:
    key = sighting_key("Deploys go out on Fridays.")
    assert key == "deploys go out on fridays"
    for variant in (
        "- Deploys go out on Fridays (2026-11-29)",
        "deploys  go out on FRIDAYS!",
        "Deploys go out on Fridays — Nov 29, 2026",
        "Ｄｅｐｌｏｙｓ go out on Fridays",
    ):
        assert sighting_key(variant) == key
    assert sighting_key("배포는 금요일에 (2026년 11월 29일)") == "배포는 금요일에"
    long = sighting_key("word " * 100)
    assert len(long) <= 200 and sighting_key(long) == long
    assert sighting_key("word " * 100 + "x") != long
    assert fact_text("- The site uses MkDocs (2026-11-29)") == "The site uses MkDocs"


# -- decay -------------------------------------------------------------------------------------


def test_old_unused_facts_go_dormant_and_recent_or_used_ones_stay(
    store: Store,
    ns: NamespaceRecord,
    clock: FrozenClock,
    settings: Settings,
    workspace: Path,
    check_index: None,  # noqa: F811
) -> None:
    unused = add(store, ns, "The staging host is called kiwi")
    used = add(store, ns, "The user likes short answers")
    for _ in range(3):
        store.memory.touch_facts([used.id])
    clock.advance(50 * DAY)
    recent = add(store, ns, "Docs are built with MkDocs")
    clock.advance(20 * DAY)  # unused: 70 days, score 0.5 ** (70 / 30) = 0.20

    report = run_gc(store, workspaces(settings, store))

    assert [c.id for n in report.namespaces for c in n.dormant] == [unused.id]
    assert report.namespaces[0].postings_removed > 0
    statuses = {f.id: f.status for f in store.memory.facts(ns.id, include_inactive=True)}
    assert statuses == {
        unused.id: FactStatus.DORMANT,
        used.id: FactStatus.ACTIVE,  # score 0.20 * (1 + log2(4)) = 0.60
        recent.id: FactStatus.ACTIVE,
    }
    assert ("gc", "dormant", f"fact:{unused.id}") in gc_ops(workspace)


def test_dormant_facts_leave_retrieval_but_stay_listed_and_revive(
    store: Store,
    ns: NamespaceRecord,
    clock: FrozenClock,
    settings: Settings,
    check_index: None,  # noqa: F811
) -> None:
    kiwi = add(store, ns, "The staging host is called kiwi")
    clock.advance(90 * DAY)
    other = add(store, ns, "Production runs on Fridays")

    run_gc(store, workspaces(settings, store))

    assert store.memory.relevant_facts(ns.id, "kiwi staging host") == [other]
    assert store.memory.search_facts("kiwi") == []
    listed = store.memory.facts(ns.id, include_inactive=True)
    assert {f.id: f.status for f in listed} == {
        kiwi.id: FactStatus.DORMANT,
        other.id: FactStatus.ACTIVE,
    }
    assert store.memory.list_namespaces()[0].fact_count == 1

    revived = store.maintenance.revive(kiwi.id)

    assert revived.status is FactStatus.ACTIVE and revived.last_accessed_at == clock.now
    assert [f.id for f in store.memory.relevant_facts(ns.id, "kiwi")] == [kiwi.id, other.id]
    assert store.maintenance.revive(kiwi.id) == revived  # again: nothing changes
    assert run_gc(store, workspaces(settings, store)).dormant == 0  # just revived: recent again


def test_revive_refuses_unknown_and_non_dormant_facts(store: Store, ns: NamespaceRecord) -> None:
    fact = add(store, ns, "A fact")
    store.memory.forget(fact.id)
    with pytest.raises(MemoryError_, match="forgotten, not dormant"):
        store.maintenance.revive(fact.id)
    with pytest.raises(UsageError, match="no memory fact with id 999"):
        store.maintenance.revive(999)


def test_a_fact_retrieved_between_read_and_write_stays_active(
    store: Store, ns: NamespaceRecord, clock: FrozenClock
) -> None:
    fact = add(store, ns, "The staging host is called kiwi")
    clock.advance(90 * DAY)
    cutoff = GcPolicy().unused_since(clock.now)
    assert [f.id for f in store.maintenance.decay_candidates(cutoff)] == [fact.id]
    store.memory.touch_facts([fact.id])  # an agent's prompt used it meanwhile

    assert store.maintenance.make_dormant([fact.id], unused_since=cutoff) == {}
    assert store.memory.get_fact(fact.id) is not None
    assert store.memory.get_fact(fact.id).status is FactStatus.ACTIVE  # type: ignore[union-attr]


# -- TTL ---------------------------------------------------------------------------------------


def test_transient_facts_past_their_ttl_expire_and_lose_their_postings(
    store: Store,
    ns: NamespaceRecord,
    clock: FrozenClock,
    settings: Settings,
    store_url: str,
    workspace: Path,
    check_index: None,  # noqa: F811
) -> None:
    freeze = add(
        store, ns, "Code freeze until Friday", transient=True, expires_at=clock.now + timedelta(1)
    )
    demo = add(store, ns, "The demo is this week", transient=True)
    durable = add(store, ns, "The site uses MkDocs")
    assert _postings(store_url, freeze.id) > 0
    clock.advance(2 * DAY)

    first = run_gc(store, workspaces(settings, store))

    assert [c.id for n in first.namespaces for c in n.expired] == [freeze.id]
    assert first.postings_removed == first.namespaces[0].postings_removed > 0
    assert _postings(store_url, freeze.id) == 0
    assert store.memory.get_fact(freeze.id).status is FactStatus.EXPIRED  # type: ignore[union-attr]
    clock.advance(13 * DAY)  # the transient fact without expires_at: unused for 15 days
    second = run_gc(store, workspaces(settings, store))
    assert [c.id for n in second.namespaces for c in n.expired] == [demo.id]
    assert "transient, unused for 14 days" in second.namespaces[0].expired[0].reason
    assert store.memory.get_fact(durable.id).status is FactStatus.ACTIVE  # type: ignore[union-attr]
    assert ("gc", "expire", f"fact:{freeze.id}") in gc_ops(workspace)


def _postings(url: str, fact_id: int) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            query = text("SELECT count(*) FROM memory_postings WHERE fact_id = :id")
            return int(conn.execute(query, {"id": fact_id}).scalar_one())
    finally:
        engine.dispose()


# -- promotion proposals -----------------------------------------------------------------------


def test_three_distinct_sources_make_exactly_one_proposal_once(
    store: Store, settings: Settings, workspace: Path
) -> None:
    maintenance = store.maintenance
    key = sighting_key("Deploys go out on Fridays")
    assert (
        maintenance.record_sighting("demo", "writer", key, "Deploys go out on Fridays", "r1") == 1
    )
    assert (
        maintenance.record_sighting("demo", "writer", key, "deploys go out on fridays.", "r1") == 1
    )
    assert maintenance.record_sighting("demo", "writer", key, "Deploys: Fridays", "chat") == 2
    assert maintenance.record_sighting("demo", "planner", key, "Deploys...", "r2") == 1

    assert run_gc(store, workspaces(settings, store)).proposals == ()

    assert (
        maintenance.record_sighting("demo", "writer", key, "Deploys go out on Fridays", "r2") == 3
    )
    proposed = run_gc(store, workspaces(settings, store))
    again = run_gc(store, workspaces(settings, store))

    assert [(p.squad, p.agent, p.key, p.text, p.sources) for p in proposed.proposals] == [
        ("demo", "writer", key, "Deploys go out on Fridays", ("r1", "chat", "r2"))
    ]
    assert again.proposals == ()
    sighting = maintenance.sighting("demo", "writer", key)
    assert sighting is not None and sighting.proposed_at is not None
    assert [op for op in gc_ops(workspace) if op[1] == "propose"] == [
        ("gc", "propose", "agents/writer/memory.md")
    ]
    assert maintenance.record_sighting("demo", "writer", key, "x", "r3") == 4
    assert (
        run_gc(store, workspaces(settings, store)).proposals == ()
    )  # proposed once, whatever comes after


def test_sighting_sources_saturate(store: Store) -> None:
    for i in range(MAX_SOURCES + 5):
        count = store.maintenance.record_sighting("demo", "writer", "k", "text", f"run-{i}")
    assert count == MAX_SOURCES
    with pytest.raises(ValueError, match="non-empty"):
        store.maintenance.record_sighting("demo", "writer", "", "text", "run")


# -- dry run -----------------------------------------------------------------------------------

TABLES = (
    "memory_facts",
    "memory_postings",
    "memory_terms",
    "memory_namespaces",
    "memory_sightings",
)


def _database(url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {
                table: sorted(
                    (tuple(map(repr, row)) for row in conn.execute(text(f"SELECT * FROM {table}"))),
                )
                for table in TABLES
            }
    finally:
        engine.dispose()


def test_dry_run_reports_the_same_changes_and_writes_nothing(
    store: Store,
    ns: NamespaceRecord,
    clock: FrozenClock,
    settings: Settings,
    workspace: Path,
    store_url: str,
) -> None:
    add(store, ns, "Old and unused")
    add(store, ns, "Soon over", transient=True, expires_at=clock.now + timedelta(days=1))
    for source in ("r1", "r2", "r3"):
        store.maintenance.record_sighting("demo", "writer", "k", "A project fact", source)
    clock.advance(100 * DAY)
    before, audit = _database(store_url), gc_ops(workspace)

    dry = run_gc(store, workspaces(settings, store), dry_run=True)

    assert _database(store_url) == before and gc_ops(workspace) == audit
    assert (dry.dry_run, dry.dormant, dry.expired, len(dry.proposals)) == (True, 1, 1, 1)
    assert dry.audited == ()
    real = run_gc(store, workspaces(settings, store))
    assert real.namespaces == dry.namespaces and real.proposals == dry.proposals
    assert real.audited == (str(workspace),)
    assert _database(store_url) != before


# -- report and CLI ----------------------------------------------------------------------------


def test_report_to_dict_is_json_and_render_names_every_change(
    store: Store, ns: NamespaceRecord, clock: FrozenClock, settings: Settings
) -> None:
    fact = add(store, ns, "Old and unused")
    store.maintenance.record_sighting("demo", "writer", "k", "A project fact", "r1")
    clock.advance(100 * DAY)

    report = run_gc(
        store, workspaces(settings, store), dry_run=True, policy=GcPolicy(min_sources=1)
    )

    data = json.loads(json.dumps(report.to_dict()))
    assert data["totals"] == {"dormant": 1, "expired": 0, "postings_removed": 2, "proposals": 1}
    assert data["namespaces"][0]["dormant"][0]["id"] == fact.id
    text_report = report.render()
    assert "1 dormant, 0 expired, 2 index rows removed, 1 proposals" in text_report
    assert (
        f"dormant {fact.id}: Old and unused  (score 0.099: 100 days unused, 0 retr" in text_report
    )
    assert "squad memory promote demo writer k" in text_report
    assert isinstance(report, GcReport)


def _point_cli_at(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI, run in this process, uses ``settings``' folders and database."""
    for name, value in (
        ("SQUAD_HOME", settings.home),
        ("SQUAD_WORKSPACES", settings.workspaces),
        ("SQUAD_CONFIGS", settings.configs),
    ):
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("SQUAD_DATABASE_URL", raising=False)


def test_cli_gc_json_has_the_documented_shape(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., SquadSpec]
) -> None:
    from typer.testing import CliRunner

    from squad.cli.app import app

    _point_cli_at(settings, monkeypatch)
    with App.open(settings) as home:
        manager = home.squads
        manager.create(make_spec())
        namespace = manager.store.memory.ensure_namespace("squad:demo/writer", "Writer")
        past = datetime.now(UTC) - timedelta(days=1)
        manager.store.memory.add_fact(
            namespace.id, "Gone", squad="demo", agent="writer", expires_at=past
        )

    runner = CliRunner()
    dry = runner.invoke(app, ["memory", "gc", "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    data = json.loads(dry.stdout)
    assert set(data) == {"at", "dry_run", "policy", "totals", "namespaces", "proposals", "audited"}
    assert data["dry_run"] is True and data["totals"]["expired"] == 1
    assert set(data["namespaces"][0]) == {
        "id",
        "name",
        "identity",
        "dormant",
        "expired",
        "postings_removed",
    }
    real = runner.invoke(app, ["memory", "gc"])
    assert real.exit_code == 0 and "0 dormant, 1 expired" in real.stdout
    shown = runner.invoke(app, ["memory", "show", "demo", "writer", "--all", "--json"])
    facts = json.loads(shown.stdout)["experiential"]["facts"]
    assert [(f["text"], f["status"]) for f in facts] == [("Gone", "expired")]


def test_cli_promote_copies_a_proposed_project_fact_once_and_revive_restores(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, make_spec: Callable[..., SquadSpec]
) -> None:
    from typer.testing import CliRunner

    from squad.cli.app import app

    _point_cli_at(settings, monkeypatch)
    line = "- Deploys go out on Fridays (2026-11-29)"
    with App.open(settings) as home:
        manager = home.squads
        workspace = manager.create(make_spec()).path
        for source in ("r1", "r2", "chat"):
            manager.store.maintenance.record_sighting(
                "demo", "writer", sighting_key(line), line, source
            )
        namespace = manager.store.memory.ensure_namespace("squad:demo/writer", "Writer")
        old = manager.store.memory.add_fact(namespace.id, "Old", squad="demo", agent="writer")
        manager.store.maintenance.make_dormant([old.id], unused_since=datetime.now(UTC))
    runner = CliRunner()

    proposed = json.loads(runner.invoke(app, ["memory", "gc", "--json"]).stdout)
    [proposal] = proposed["proposals"]
    promoted = runner.invoke(app, ["memory", "promote", "demo", "writer", proposal["key"]])
    twice = runner.invoke(app, ["memory", "promote", "demo", "writer", "deploys go out ON fridays"])
    revived = runner.invoke(app, ["memory", "revive", str(old.id)])

    assert promoted.exit_code == 0, promoted.output
    assert isinstance(twice.exception, UsageError) and "already" in str(twice.exception)
    assert revived.exit_code == 0 and "is active again" in revived.stdout
    shown = json.loads(runner.invoke(app, ["memory", "show", "demo", "writer", "--json"]).stdout)
    assert sorted(f["text"] for f in shown["experiential"]["facts"]) == [
        "Deploys go out on Fridays",
        "Old",
    ]
    operations = [(r.actor, r.operation) for r in AuditLog(workspace).records()]
    assert ("gc", "propose") in operations
    assert ("promote", "remember") in operations
    assert ("cli", "revive") in operations
