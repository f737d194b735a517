"""What the memory pages show and change, as JSON-ready dicts, on the same services as
``squad memory``: memory.md by section (read-only here), Layer A facts with provenance, the
namespaces with their switch, the boot files (editable with a version check), the exact
memory block an agent would get for a message, and the extractor's recent passes; each as
its view (:mod:`squad.views`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from squad.errors import NotFound
from squad.views import (
    AgentMemory,
    BootFile,
    ContextPreview,
    Decision,
    ExtractionPass,
    Fact,
    Namespace,
)

if TYPE_CHECKING:
    from squad.app import App
    from squad.store.records import FactRecord

__all__ = [
    "agent_memory",
    "boot_file",
    "context_preview",
    "extraction_passes",
    "fact_action",
    "fact_row",
    "namespaces",
    "save_boot_file",
    "set_namespace",
]

ACTOR = "web"


def fact_row(fact: FactRecord) -> Fact:
    return Fact(
        id=fact.id,
        text=fact.text,
        subject=fact.subject,
        status=fact.status.value,
        squad=fact.squad,
        agent=fact.agent,
        run_id=fact.run_id,
        turns=list(fact.turns),
        source=fact.source,
        created_at=fact.created_at.isoformat(),
        expires_at=None if fact.expires_at is None else fact.expires_at.isoformat(),
        access_count=fact.access_count,
        superseded_by=fact.superseded_by,
    )


def agent_memory(app: App, squad: str, agent: str, *, include_inactive: bool = True) -> AgentMemory:
    """One agent's memory.md by section and its Layer A facts (inactive ones marked)."""
    ctx = app.agent(squad, agent)
    snapshot = app.memory.memory_file(ctx).snapshot()
    ns = app.memory.namespace(ctx)
    facts = app.store.memory.facts(ns.id, include_inactive=include_inactive)
    sections = [
        {"name": s.name, "heading": s.heading.strip(), "text": s.body}
        for s in snapshot.document.sections
        if s.name is not None or s.body.strip()
    ]
    return AgentMemory.model_validate(
        {
            "squad": ctx.squad.name,
            "agent": ctx.agent.id,
            "name": ctx.agent.display_name,
            "memory_enabled": ctx.memory_enabled,
            "project": {
                "file": f"agents/{ctx.agent.id}/memory.md",
                "size": snapshot.size,
                "cap": app.settings.memory_file_cap_bytes,
                "version": snapshot.version,
                "problem": snapshot.problem,
                "sections": sections,
            },
            "namespace": ns.view(),
            "facts": [fact_row(f) for f in facts],
        }
    )


def context_preview(
    app: App,
    squad: str,
    agent: str,
    *,
    message: str,
    max_tokens: int | None = None,
    context_window: int | None = None,
) -> ContextPreview:
    """The memory part of the agent's next prompt for ``message`` and the prompt's regions
    with their budgets and use (nothing is touched)."""
    ctx = app.agent(squad, agent)
    prompt = app.memory.preview(
        ctx, message=message, max_tokens=max_tokens, context_window=context_window
    )
    return ContextPreview.model_validate({**prompt.to_dict(), "message": message})


def decisions(
    app: App,
    squad: str | None = None,
    query: str | None = None,
    *,
    include_superseded: bool = True,
    limit: int = 50,
) -> list[Decision]:
    """Decisions of one squad or all, newest first, or those matching ``query``."""
    if squad is not None:
        app.squads.locate(squad)  # NotFound for a squad that is not there
    if not app.database_exists():
        return []
    log = app.decisions
    if query is not None and query.strip():
        found = log.search(
            query,
            squads=None if squad is None else [squad],
            limit=limit,
            include_superseded=include_superseded,
        )
    else:
        found = log.list(squad, include_superseded=include_superseded, limit=limit)
    return [d.view() for d in found]


def namespaces(app: App) -> list[Namespace]:
    return [ns.view() for ns in app.store.memory.list_namespaces()]


def set_namespace(app: App, namespace_id: int, enabled: bool) -> Namespace:
    if app.store.memory.get_namespace(namespace_id) is None:
        raise NotFound(f"no namespace with id {namespace_id}; the memory page lists them")
    changed = app.store.memory.set_namespace_enabled(namespace_id, enabled)
    return changed.view()


def boot_file(app: App, name: str, squad: str | None = None) -> BootFile:
    """A boot file of the home, or with ``squad`` that squad's workspace ``AGENTS.md``
    (the workspace rules), with its version for an edit and where the editor posts it."""
    from squad.memory.boot import BOOT_FILES, WORKSPACE_RULES_TITLE, read_boot_file

    if name not in BOOT_FILES:
        raise NotFound(f"no boot file {name!r}; they are: {', '.join(BOOT_FILES)}")
    workspace = None if squad is None else app.squads.locate(squad).path
    text, version = read_boot_file(app.settings.home, name, workspace)
    return BootFile.model_validate(
        {
            "name": name,
            "file": BOOT_FILES[name][0],
            "title": BOOT_FILES[name][1] if squad is None else WORKSPACE_RULES_TITLE,
            "squad": squad,
            "action": f"/memory/boot/{name}" if squad is None else f"/squads/{squad}/rules",
            "text": text,
            "version": version,
            "size": len(text.encode("utf-8")),
            "cap": app.settings.memory_file_cap_bytes,
        }
    )


def save_boot_file(
    app: App, name: str, text: str, *, version: str, squad: str | None = None
) -> BootFile:
    """Replace a boot file (with ``squad``: its workspace ``AGENTS.md``) if it is still at
    ``version`` (else StaleWriteError)."""
    from squad.history.history import NO_HISTORY
    from squad.memory.boot import BOOT_FILES, write_boot_file

    if name not in BOOT_FILES:
        raise NotFound(f"no boot file {name!r}; they are: {', '.join(BOOT_FILES)}")
    found = None if squad is None else app.squads.locate(squad)
    workspace = None if found is None else found.path
    history = None if found is None else app.history(found.path, found.squad)
    write_boot_file(
        app.settings.home,
        name,
        text,
        cap_bytes=app.settings.memory_file_cap_bytes,
        actor=ACTOR,
        workspace=workspace,
        clock=app.clock,
        expected_version=version,
        history=history if history is not None and history.enabled else NO_HISTORY,
    )
    return boot_file(app, name, squad)


def extraction_passes(
    app: App, squad: str | None = None, agent: str | None = None, *, limit: int = 20
) -> list[ExtractionPass]:
    """The extractor's recent passes: what each wrote, merged, superseded and dropped, why."""
    if not app.database_exists():
        return []
    return [
        ExtractionPass(
            id=r.id,
            squad=r.squad,
            agent=r.agent,
            started_at=r.started_at.isoformat(),
            finished_at=None if r.finished_at is None else r.finished_at.isoformat(),
            status=r.status,
            reason=r.reason,
            extractor=r.extractor,
            messages=[r.from_seq, r.to_seq],
            written=r.written,
            dropped=r.dropped,
        )
        for r in app.store.extraction.runs(squad, agent, limit=limit)
    ]


def fact_action(app: App, fact_id: int, action: str) -> Fact:
    """Forget a fact (kept for audit) or revive a dormant one, audited as ``web``."""
    from squad.memory.audit import AuditLog, AuditRecord

    fact = app.store.memory.get_fact(fact_id)
    if fact is None:
        raise NotFound(f"no experiential fact with id {fact_id}; the memory page lists them")
    try:
        workspace = app.squads.locate(fact.squad).path
    except NotFound:  # the squad is gone; the store row keeps what happened
        workspace = None
    if action == "forget":
        changed = app.memory.forget(fact_id, actor=ACTOR, workspace=workspace)
        assert changed is not None
        return fact_row(changed)
    revived = app.store.maintenance.revive(fact_id)
    if workspace is not None:
        AuditLog(workspace).append(
            AuditRecord(
                time=app.clock().isoformat(),
                actor=ACTOR,
                operation="revive",
                file=f"fact:{fact_id}",
            )
        )
    return fact_row(revived)
