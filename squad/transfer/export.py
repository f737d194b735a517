"""``squad export``: one squad, with its history, into one file another home can import.

The archive (a gzipped tar, :mod:`squad.transfer.archive`) holds ``manifest.json`` (what it
is), ``workspace/`` (the folder with its ``.git``, run logs and audit log; lock files,
temporary files and MCP answer journals left out), ``experience.jsonl`` (the Layer A facts,
active and dormant, of its agents' namespaces), ``decisions.jsonl``, ``boot/`` (the home's
SOUL.md, USER.md and AGENTS.md) and ``squad.yaml`` (the definition's file, comments and
all, when it is still there). Nothing is written unless every part is free of credentials
(:mod:`squad.transfer.scan`); the history is brought up to date (a person's edits committed)
and packed first, and a squad that is running is refused: its folder is half written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from squad import flock
from squad.errors import HistoryUnavailable, SquadBusy, UsageError
from squad.memory.boot import BOOT_FILES
from squad.paths import run_lock
from squad.transfer.archive import write_archive
from squad.transfer.contents import (
    FORMAT,
    VERSION,
    AgentEntry,
    ExportedDecision,
    ExportedFact,
    ExportManifest,
    HistoryEntry,
)
from squad.transfer.scan import Finding, scan_history, scan_text, scan_tree
from squad.workspace.manifest import experience_identity

if TYPE_CHECKING:
    from squad.app import App

__all__ = ["ExportReport", "export_squad"]

_SKIPPED_AT_ROOT = frozenset({".squad-history.lock"})
_SKIPPED_IN_GIT = frozenset(
    {"index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "squad/intent.json"}
)


@dataclass(frozen=True)
class ExportReport:
    path: Path
    squad: str
    files: int
    commits: int
    facts: int
    decisions: int
    bytes: int


def export_squad(app: App, squad: str, target: Path, *, with_history: bool = True) -> ExportReport:
    """Write ``squad`` to the new file ``target`` (UsageError, nothing written, when it
    exists, the squad is running, or anything would carry a credential)."""
    from importlib.metadata import version

    if target.exists() or target.is_symlink():
        raise UsageError(f"{target} exists; choose another file name (export never overwrites)")
    if not target.parent.is_dir():
        raise UsageError(f"the folder {target.parent} does not exist")
    found = app.squads.locate(squad)
    spec, workspace = app.squads.definition(found.squad)
    if flock.probe(run_lock(app.settings.locks_dir, spec.name)).held:
        raise SquadBusy(
            f"squad {spec.name!r} is running; export it when the run ends (its folder is "
            "half written)",
            squad=spec.name,
            run_id=None,
        )
    history = app.history(workspace, spec.name)
    head = None
    commits = 0
    findings: list[Finding] = []
    if with_history and history.enabled:
        history.record_hand_edits()
        history.pack()
        health = history.health()
        if health.paused:
            raise HistoryUnavailable(
                f"the history of {spec.name!r} cannot be read ({health.detail}); export it "
                "with --without-history, or fix its .git first"
            )
        if health.state == "ok":
            repo = history.open()
            head = str(repo.head.target)
            commits = health.commits
            findings += scan_history(repo)
    findings += scan_tree(workspace, "workspace")
    facts, agents = _facts(app, spec.name, [(a.id, a.profile, a.display_name) for a in spec.agents])
    for fact in facts:
        finding = scan_text(f"experience ({fact.agent})", fact.text)
        if finding is not None:
            findings.append(finding)
    decisions = [
        ExportedDecision(
            id=d.id,
            title=d.title,
            decision=d.decision,
            reasons=list(d.reasons),
            alternatives=list(d.alternatives),
            decided_by=d.decided_by,
            decided_at=d.decided_at,
            supersedes=d.supersedes,
        )
        for d in (app.store.decisions.of_squad(spec.name) if app.database_exists() else [])
    ]
    for d in decisions:
        text = "\n".join([d.title, d.decision, *d.reasons, *d.alternatives])
        finding = scan_text(f"decision {d.id}", text)
        if finding is not None:
            findings.append(finding)
    boot = _boot_files(app.settings.home)
    for name, data in boot.items():
        finding = scan_text(f"boot/{name}", data.decode("utf-8", "replace"))
        if finding is not None:
            findings.append(finding)
    source = _source_yaml(app, workspace)
    if source is not None:
        finding = scan_text("squad.yaml", source.decode("utf-8", "replace"))
        if finding is not None:
            findings.append(finding)
    if findings:
        shown = "\n  ".join(str(f) for f in findings[:10])
        more = f"\n  ... and {len(findings) - 10} more" if len(findings) > 10 else ""
        raise UsageError(
            f"{spec.name!r} was not exported: credentials never travel, and these hold "
            f"one:\n  {shown}{more}\nRemove them (history: `squad memory revert`, or export "
            "with --without-history when only old commits hold one), then export again"
        )
    files = list(_workspace_files(workspace, with_history=with_history))
    manifest = ExportManifest(
        format=FORMAT,
        version=VERSION,
        squad=spec.name,
        exported_at=app.clock(),
        squad_version=version("squad"),
        history=HistoryEntry(head=head, commits=commits) if head else None,
        agents=agents,
        decisions=len(decisions),
        files=len(files),
        source_yaml=source is not None,
    )
    members: list[tuple[str, Path | bytes]] = [
        ("manifest.json", (manifest.model_dump_json(indent=2) + "\n").encode())
    ]
    members += [(f"workspace/{relative}", path) for relative, path in files]
    members.append(("experience.jsonl", _jsonl(f.model_dump_json() for f in facts)))
    members.append(("decisions.jsonl", _jsonl(d.model_dump_json() for d in decisions)))
    members += [(f"boot/{name}", data) for name, data in boot.items()]
    if source is not None:
        members.append(("squad.yaml", source))
    size = write_archive(target, members)
    return ExportReport(target, spec.name, len(files), commits, len(facts), len(decisions), size)


def _jsonl(lines: Iterator[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _facts(
    app: App, squad: str, agents: list[tuple[str, str | None, str]]
) -> tuple[list[ExportedFact], list[AgentEntry]]:
    from squad.store.records import FactStatus

    facts: list[ExportedFact] = []
    entries: list[AgentEntry] = []
    for agent_id, profile, display in agents:
        identity = experience_identity(squad, agent_id, profile)
        namespace = app.store.memory.get_namespace(identity) if app.database_exists() else None
        mine: list[ExportedFact] = []
        if namespace is not None:
            for fact in reversed(app.store.memory.facts(namespace.id, include_inactive=True)):
                if fact.status not in (FactStatus.ACTIVE, FactStatus.DORMANT):
                    continue
                mine.append(
                    ExportedFact(
                        identity=identity,
                        namespace=namespace.name,
                        text=fact.text,
                        subject=fact.subject,
                        squad=fact.squad,
                        agent=fact.agent,
                        run_id=fact.run_id,
                        source=fact.source,
                        status="active" if fact.status is FactStatus.ACTIVE else "dormant",
                        created_at=fact.created_at,
                        transient=fact.transient,
                        expires_at=fact.expires_at,
                    )
                )
        name = namespace.name if namespace is not None else f"Agent Experience: {display}"
        entries.append(AgentEntry(id=agent_id, identity=identity, namespace=name, facts=len(mine)))
        facts += mine
    return facts, entries


def _boot_files(home: Path) -> dict[str, bytes]:
    found = {}
    for file_name, _ in BOOT_FILES.values():
        path = home / file_name
        if path.is_file() and not path.is_symlink():
            found[file_name] = path.read_bytes()
    return found


def _source_yaml(app: App, workspace: Path) -> bytes | None:
    manifest = app.squads.workspaces.read_manifest(workspace)
    if not manifest.source_path:
        return None
    path = Path(manifest.source_path)
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _workspace_files(workspace: Path, *, with_history: bool) -> Iterator[tuple[str, Path]]:
    """(relative name, path) of every regular file of the workspace that travels."""
    for folder, folders, files in os.walk(workspace):
        here = Path(folder)
        relative_folder = here.relative_to(workspace).as_posix()
        if relative_folder == ".":
            relative_folder = ""
            if not with_history:
                folders[:] = [f for f in folders if f != ".git"]
        folders[:] = [f for f in folders if not f.startswith(".squad-git-init-")]
        for name in sorted(files):
            relative = f"{relative_folder}/{name}" if relative_folder else name
            path = here / name
            if path.is_symlink() or not path.is_file():
                continue
            if _skipped(relative):
                continue
            yield relative, path


def _skipped(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    if relative in _SKIPPED_AT_ROOT or name.endswith(".tmp"):
        return True
    if relative.startswith(".git/"):
        return relative.removeprefix(".git/") in _SKIPPED_IN_GIT
    if name.startswith(".") and name.endswith(".lock"):
        return True
    return relative.startswith("logs/") and name.endswith(".mcp.jsonl")
