"""``squad import``: a squad exported from another home, with its history, into this one.

Everything is checked before anything is written where it stays: the archive is extracted
into a new folder beside the workspaces (:func:`squad.transfer.archive.extract` refuses
hostile members), its manifest, the workspace's manifest and definition and its history are
validated, and every part is scanned for credentials. Only then is the folder renamed into
place, the squad registered, its decisions and experiential facts added, its YAML put in the
squads folder (unless a file of that name is there), the boot files this home lacks written,
and an ``import`` commit made. An existing squad of that name is never overwritten (import
``--as`` another name); an agent namespace this home already has is refused unless
``--merge``, which adds the facts it lacks.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from squad.errors import ConfigError, HistoryUnavailable, SquadError, UsageError
from squad.history.message import Kind, compose
from squad.memory.boot import BOOT_FILES
from squad.paths import check_name
from squad.transfer.archive import extract
from squad.transfer.contents import (
    VERSION,
    ExportedDecision,
    ExportedFact,
    ExportManifest,
)
from squad.transfer.scan import Finding, scan_history, scan_text, scan_tree
from squad.workspace.layout import MANIFEST_NAME
from squad.workspace.manifest import Manifest, experience_identity

if TYPE_CHECKING:
    from squad.app import App
    from squad.spec.models import SquadSpec

__all__ = ["ImportReport", "import_squad"]

MAX_JSONL_LINES = 1_000_000
_DAY = timedelta(days=1)


@dataclass(frozen=True)
class ImportReport:
    squad: str
    workspace: Path
    commits: int
    facts_added: int
    facts_skipped: int
    decisions: int
    yaml: Path | None
    boot_written: list[str] = field(default_factory=list)
    boot_kept: list[str] = field(default_factory=list)


def import_squad(
    app: App, archive: Path, *, name: str | None = None, merge: bool = False
) -> ImportReport:
    """Import ``archive`` (as ``name``); UsageError, nothing written, for any bad input."""
    root = app.settings.workspaces
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".squad-import-{secrets.token_hex(6)}"
    try:
        extract(archive, staging)
        plan = _check(app, staging, name, merge)
        return _apply(app, staging, plan, archive)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class _Plan:
    manifest: ExportManifest
    spec: SquadSpec
    target: Path
    facts: list[ExportedFact]
    decisions: list[ExportedDecision]
    yaml: bytes | None
    renamed: bool


def _check(app: App, staging: Path, name: str | None, merge: bool) -> _Plan:
    manifest = _manifest(staging)
    workspace = staging / "workspace"
    if not (workspace / MANIFEST_NAME).is_file():
        raise UsageError("the archive has no workspace/.squad-config.json: not a squad export")
    try:
        workspace_manifest = Manifest.from_json(
            (workspace / MANIFEST_NAME).read_bytes(), source="workspace/.squad-config.json"
        )
    except ConfigError as exc:
        raise UsageError(f"the archive's workspace manifest is not valid: {exc}") from None
    spec = workspace_manifest.definition
    if spec.name != manifest.squad:
        raise UsageError(
            f"the archive says it holds {manifest.squad!r} but its workspace is {spec.name!r}"
        )
    new_name = check_name(name, what="squad name") if name else spec.name
    renamed = new_name != spec.name
    if renamed:
        spec = spec.model_copy(update={"name": new_name, "workspace": None})
    target = app.squads.workspaces.root / spec.workspace_name
    _refuse_existing(app, spec.name, target)
    _sanitize_git(workspace / ".git", manifest.squad)
    findings: list[Finding] = scan_tree(workspace, "workspace")
    findings += _history_findings(workspace, manifest, spec.name if not renamed else None)
    facts = _lines(staging / "experience.jsonl", ExportedFact)
    decisions = _lines(staging / "decisions.jsonl", ExportedDecision)
    for fact in facts:
        if (found := scan_text(f"experience ({fact.agent})", fact.text)) is not None:
            findings.append(found)
    for d in decisions:
        text = "\n".join([d.title, d.decision, *d.reasons, *d.alternatives])
        if (found := scan_text(f"decision {d.id}", text)) is not None:
            findings.append(found)
    boot = staging / "boot"
    if boot.is_dir():
        findings += scan_tree(boot, "boot", skip=())
    yaml_path = staging / "squad.yaml"
    yaml = yaml_path.read_bytes() if yaml_path.is_file() else None
    if yaml is not None and (found := scan_text("squad.yaml", yaml.decode("utf-8", "replace"))):
        findings.append(found)
    if findings:
        shown = "\n  ".join(str(f) for f in findings[:10])
        raise UsageError(
            f"nothing was imported: credentials never travel, and the archive holds some:\n"
            f"  {shown}"
        )
    _check_namespaces(app, spec, facts, merge, renamed)
    return _Plan(manifest, spec, target, facts, decisions, yaml, renamed)


_GIT_KEPT = re.compile(
    r"^(HEAD|packed-refs|description|info/exclude|refs/(heads|tags|runs)/[^/]+"
    r"|objects/[0-9a-f]{2}/[0-9a-f]{38}|objects/pack/pack-[0-9a-f]{40,64}\.(pack|idx|rev))$"
)


def _sanitize_git(git_dir: Path, squad: str) -> None:
    """Keep of an archive's ``.git`` only its objects, refs and HEAD, with a config of
    squad's own: hooks, alternates, worktree links and config from elsewhere (a
    ``core.fsmonitor`` runs a command at ``git status``) never reach this machine."""
    if not git_dir.exists():
        return
    if git_dir.is_symlink() or not git_dir.is_dir():
        raise UsageError("the archive's workspace/.git is not a folder")
    for path in sorted(git_dir.rglob("*"), reverse=True):
        relative = path.relative_to(git_dir).as_posix()
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.rmdir()  # only empty ones
            continue
        if not _GIT_KEPT.match(relative):
            path.unlink()
    (git_dir / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
        "\tlogallrefupdates = false\n\tautocrlf = false\n[gc]\n\tauto = 0\n"
        f"[squad]\n\tworkspace = {squad}\n",
        encoding="utf-8",
    )
    for folder in ("refs/heads", "refs/tags", "refs/runs", "objects/pack", "objects/info", "info"):
        (git_dir / folder).mkdir(parents=True, exist_ok=True)


def _manifest(staging: Path) -> ExportManifest:
    path = staging / "manifest.json"
    if not path.is_file():
        raise UsageError("the archive has no manifest.json: not a squad export")
    try:
        manifest = ExportManifest.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise UsageError(
            f"the archive's manifest.json is not valid: {where}: {first['msg']}"
        ) from None
    if manifest.version > VERSION:
        raise UsageError(
            f"the archive is export format {manifest.version}; this squad reads up to "
            f"{VERSION}: upgrade squad to import it"
        )
    return manifest


def _refuse_existing(app: App, squad: str, target: Path) -> None:
    registered = app.database_exists() and app.store.get_squad(squad) is not None
    if target.exists() or target.is_symlink() or registered:
        where = f"{target}" if target.exists() else "this home's state database"
        raise UsageError(
            f"squad {squad!r} already exists ({where}); import never overwrites a squad: "
            "import it under another name with --as NAME"
        )


def _history_findings(
    workspace: Path, manifest: ExportManifest, owner: str | None
) -> list[Finding]:
    if manifest.history is None:
        if (workspace / ".git").exists():
            raise UsageError("the archive says it has no history, but its workspace has a .git")
        return []
    from squad.history.engine import git

    pygit2 = git()
    try:
        repo = pygit2.Repository(str(workspace), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        head = str(repo.head.target)
        tree = repo[head].peel(pygit2.Commit).tree
        index = repo.index  # the archive's index is not trusted: rebuilt from the history
        index.read_tree(tree)
        index.write()
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        raise UsageError(f"the archive's history cannot be read: {exc}") from None
    if head != manifest.history.head:
        raise UsageError(
            f"the archive's history ends at {head[:10]}, not at {manifest.history.head[:10]} as "
            "its manifest says"
        )
    try:
        stated = repo.config["squad.workspace"]
    except KeyError:
        stated = None
    if owner is not None and stated != owner:
        raise UsageError(f"the archive's history belongs to {stated!r}, not {owner!r}")
    return scan_history(repo)


def _lines(path: Path, model: Any) -> list[Any]:
    if not path.is_file():
        return []
    found = []
    with path.open(encoding="utf-8", errors="strict") as handle:
        for number, line in enumerate(handle, start=1):
            if number > MAX_JSONL_LINES:
                raise UsageError(f"{path.name} has over {MAX_JSONL_LINES:,} lines")
            if not line.strip():
                continue
            try:
                found.append(model.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "(line)"
                raise UsageError(
                    f"{path.name} line {number} is not valid: {where}: {first['msg']}"
                ) from None
    return found


def _check_namespaces(
    app: App, spec: SquadSpec, facts: list[ExportedFact], merge: bool, renamed: bool
) -> None:
    if merge or not app.database_exists():
        return
    for identity in dict.fromkeys(_target_identity(spec, f, renamed) for f in facts):
        namespace = app.store.memory.get_namespace(identity)
        if namespace is not None and app.store.memory.facts(namespace.id, limit=1):
            raise UsageError(
                f"this home already has the experience namespace {namespace.name!r} "
                f"({identity}); add --merge to add the facts it lacks to it"
            )


def _target_identity(spec: SquadSpec, fact: ExportedFact, renamed: bool) -> str:
    """The namespace a fact goes to here: the same profile identity, or the new squad's."""
    if not renamed or fact.identity.startswith("profile:"):
        return fact.identity
    agent = fact.identity.rsplit("/", 1)[-1]
    return experience_identity(spec.name, agent, None)


def _apply(app: App, staging: Path, plan: _Plan, archive: Path) -> ImportReport:
    spec, target = plan.spec, plan.target
    workspace = staging / "workspace"
    if plan.renamed:
        _rename(workspace, spec)
    (workspace / "logs").mkdir(exist_ok=True)
    workspace.rename(target)
    try:
        app.squads.restore(target)
    except SquadError:
        with contextlib.suppress(OSError):
            shutil.rmtree(target)
        raise
    added, skipped = _add_facts(app, spec, plan.facts, plan.manifest.squad)
    decisions = _add_decisions(app, spec.name, target, plan.decisions)
    yaml_path = _put_yaml(app, spec, plan.yaml, plan.renamed)
    written, kept = _put_boot(app, staging / "boot")
    history = app.history(target, spec.name)
    commits = 0
    if history.enabled:
        history.start()
        old = plan.manifest.squad
        subject = f"import: {spec.name}" + (f" (was {old})" if plan.renamed else "")
        history.record_all(
            "cli",
            compose(
                subject,
                [
                    f"imported from {archive.name}, exported "
                    f"{plan.manifest.exported_at.isoformat(timespec='minutes')} by squad "
                    f"{plan.manifest.squad_version}",
                    f"{added} experience facts added, {decisions} decisions",
                ],
                [("Squad-Kind", Kind.IMPORT.value), ("Squad-Actor", "cli")],
            ),
        )
        health = history.health()
        commits = health.commits
    return ImportReport(
        spec.name, target, commits, added, skipped, decisions, yaml_path, written, kept
    )


def _rename(workspace: Path, spec: SquadSpec) -> None:
    """The workspace manifest and the history's owner follow the new name."""
    from squad.fsutil import atomic_write

    manifest = Manifest.from_json((workspace / MANIFEST_NAME).read_bytes(), source="import")
    renamed = Manifest(spec.name, spec, manifest.created_at, manifest.updated_at, None)
    atomic_write(workspace / MANIFEST_NAME, renamed.to_json())
    if (workspace / ".git").is_dir():
        from squad.history.engine import git

        try:
            git().Repository(str(workspace)).config["squad.workspace"] = spec.name
        except (git().GitError, OSError) as exc:
            raise HistoryUnavailable(f"cannot rename the imported history: {exc}") from None


def _add_facts(
    app: App, spec: SquadSpec, facts: list[ExportedFact], old_name: str
) -> tuple[int, int]:
    """Add the facts this home's namespaces lack (the same text, spacing and case aside)."""
    from squad.store.records import NewFact

    renamed = old_name != spec.name
    added = skipped = 0
    by_namespace: dict[tuple[str, str], list[ExportedFact]] = {}
    for fact in facts:
        identity = _target_identity(spec, fact, renamed)
        by_namespace.setdefault((identity, fact.namespace), []).append(fact)
    for (identity, name), items in by_namespace.items():
        namespace = app.store.memory.ensure_namespace(identity, name)
        have = {
            " ".join(f.text.lower().split())
            for f in app.store.memory.facts(namespace.id, include_inactive=True)
        }
        new = []
        for item in items:
            key = " ".join(item.text.lower().split())
            if key in have:
                skipped += 1
                continue
            have.add(key)
            new.append(item)
        made = app.store.memory.add_facts_bulk(
            namespace.id,
            [
                NewFact(
                    text=f.text,
                    squad=spec.name if f.squad == old_name else f.squad,
                    agent=f.agent,
                    run_id=f.run_id,
                    subject=f.subject,
                    source=f.source,
                    transient=f.transient,
                    expires_at=f.expires_at,
                )
                for f in new
            ],
        )
        dormant = [record.id for record, f in zip(made, new, strict=True) if f.status == "dormant"]
        if dormant:
            app.store.maintenance.make_dormant(dormant, unused_since=app.clock() + _DAY)
        added += len(made)
    return added, skipped


def _add_decisions(app: App, squad: str, workspace: Path, decisions: list[ExportedDecision]) -> int:
    from squad.memory.decisions.text import decision_key
    from squad.store.decisions import NewDecision

    ids: dict[int, int] = {}
    for d in sorted(decisions, key=lambda d: d.id):
        record, _ = app.store.decisions.add(
            NewDecision(
                squad=squad,
                title=d.title,
                decision=d.decision,
                decision_key=decision_key(d.decision),
                reasons=tuple(d.reasons),
                alternatives=tuple(d.alternatives),
                decided_by=d.decided_by,
                decided_at=d.decided_at,
                supersedes=ids.get(d.supersedes) if d.supersedes is not None else None,
            )
        )
        ids[d.id] = record.id
    if decisions:
        app.decisions.regenerate(squad, workspace)
    return len(ids)


def _put_yaml(app: App, spec: SquadSpec, yaml: bytes | None, renamed: bool) -> Path | None:
    """The squad's YAML in the squads folder (its own text, renamed when imported ``--as``),
    unless a file of that name is there."""
    from squad.fsutil import create_new

    folder = app.settings.squads_dir
    target = folder / f"{spec.name}.yaml"
    if target.exists():
        return None
    text = _yaml_of(spec) if yaml is None or renamed else yaml.decode("utf-8", "replace")
    folder.mkdir(parents=True, exist_ok=True)
    return target if create_new(target, text.encode()) else None


def _yaml_of(spec: SquadSpec) -> str:
    """A YAML file for ``spec`` (JSON is YAML): what its manifest holds, reloadable."""
    data = spec.model_dump(mode="json", exclude_defaults=True)
    return (
        "# Imported by `squad import`; the definition as its workspace manifest holds it.\n"
        + json.dumps(data, indent=2, ensure_ascii=False)
        + "\n"
    )


def _put_boot(app: App, boot: Path) -> tuple[list[str], list[str]]:
    from squad.fsutil import create_new

    written: list[str] = []
    kept: list[str] = []
    names = {file_name for file_name, _ in BOOT_FILES.values()}
    if not boot.is_dir():
        return written, kept
    app.settings.home.mkdir(parents=True, exist_ok=True)
    for path in sorted(boot.iterdir()):
        if path.name not in names or not path.is_file():
            continue
        if create_new(app.settings.home / path.name, path.read_bytes()):
            written.append(path.name)
        else:
            kept.append(path.name)
    return written, kept
