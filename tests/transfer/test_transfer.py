"""Moving a squad: export with its history, import into a fresh home (or under another name),
refusing hostile archives, credentials and overwrites with nothing written."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest

from squad import flock
from squad.app import App
from squad.errors import SquadBusy, UsageError
from squad.history.log import commits
from squad.memory.agent import AgentContext
from squad.paths import run_lock
from squad.settings import Settings
from squad.spec.loader import squad_from_file
from squad.spec.models import SquadSpec
from squad.store.records import FactStatus
from squad.transfer import archive as archive_module
from squad.transfer.export import export_squad
from squad.transfer.imports import import_squad

MakeSpec = Callable[..., SquadSpec]
TOKEN = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"

SQUAD = """\
name: weekly
goal: Audit the dependencies.
agents:
  - {id: auditor, role: Audits dependencies, profile: auditor-v1}
  - {id: writer, role: Writes the report}
tasks:
  - {id: audit, description: List outdated dependencies., agent: auditor}
  - {id: report, description: Write the report., agent: writer, depends_on: [audit]}
"""


@pytest.fixture
def source(tmp_path: Path) -> Iterator[App]:
    settings = Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "a" / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "a" / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "a" / "configs"),
        }
    )
    with App.open(settings) as app:
        yield app


@pytest.fixture
def target(tmp_path: Path) -> Iterator[App]:
    settings = Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "b" / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "b" / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "b" / "configs"),
        }
    )
    with App.open(settings) as app:
        yield app


@pytest.fixture
def weekly(source: App, tmp_path: Path) -> tuple[SquadSpec, Path]:
    yaml = tmp_path / "weekly.yaml"
    yaml.write_text("# the weekly audit\n" + SQUAD, encoding="utf-8")
    spec = squad_from_file(yaml)
    workspace = source.squads.create(spec, source=yaml).path
    source.runner().run(spec, workspace)
    source.runner().run(spec, workspace)
    auditor = AgentContext.of(spec, "auditor", workspace)
    writer = AgentContext.of(spec, "writer", workspace)
    source.memory.remember(auditor, "The lockfile is poetry.lock", layer="project")
    source.memory.remember(auditor, "Prefers tables over prose", layer="experiential")
    source.memory.remember(writer, "Reports go out on Mondays", layer="experiential")
    first = source.decisions.record(
        "weekly",
        workspace,
        title="Use pip-audit",
        decision="We audit with pip-audit.",
        reasons=["it reads lockfiles"],
        decided_by="cli",
    )
    source.decisions.record(
        "weekly",
        workspace,
        title="Use osv",
        decision="We audit with osv-scanner.",
        reasons=["it covers more ecosystems"],
        decided_by="cli",
        supersedes=first.id,
    )
    (source.settings.home / "USER.md").write_text("I like short reports.\n", encoding="utf-8")
    return spec, workspace


def subjects(workspace: Path) -> list[str]:
    repo = pygit2.Repository(str(workspace))
    return [c.message.split("\n", 1)[0] for c in commits(repo)]


def entries(settings: Settings) -> set[str]:
    root = settings.workspaces
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def test_a_squad_moves_to_a_fresh_home_with_its_history_experience_and_decisions(
    source: App, target: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    _, workspace = weekly
    archive = tmp_path / "weekly.tar.gz"
    report = export_squad(source, "weekly", archive)
    assert report.commits == len(subjects(workspace)) and report.facts == 2
    assert report.decisions == 2

    imported = import_squad(target, archive)

    moved = target.settings.workspaces / "weekly"
    assert imported.workspace == moved
    assert subjects(moved)[1:] == subjects(workspace)
    assert subjects(moved)[0] == "import: weekly"
    assert pygit2.Repository(str(moved)).status() == {}
    assert [r.run_id for r in target.runs.recent("weekly")] == [
        r.run_id for r in source.runs.recent("weekly")
    ]
    auditor = target.agent("weekly", "auditor")
    assert any("poetry.lock" in line for e in target.memory.history_of(auditor) for line in e.added)
    facts = {f.text for f in target.store.memory.facts(target.memory.namespace_id(auditor))}
    assert facts == {"Prefers tables over prose"}
    decisions = target.store.decisions.of_squad("weekly")
    assert [d.title for d in decisions] == ["Use pip-audit", "Use osv"]
    assert decisions[1].supersedes == decisions[0].id
    yaml = target.settings.squads_dir / "weekly.yaml"
    assert yaml.read_text(encoding="utf-8").startswith("# the weekly audit")
    assert (target.settings.home / "USER.md").read_text(
        encoding="utf-8"
    ) == "I like short reports.\n"
    run = target.runner().run(*target.squads.definition("weekly"))
    assert run.succeeded and subjects(moved)[0].startswith(f"run {run.run_id} succeeded")


def test_an_existing_squad_is_never_overwritten_but_imports_under_another_name(
    source: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "weekly.tar.gz"
    export_squad(source, "weekly", archive)
    before = entries(source.settings)
    with pytest.raises(UsageError, match="already exists"):
        import_squad(source, archive)
    assert entries(source.settings) == before

    with pytest.raises(UsageError, match="--merge"):
        import_squad(source, archive, name="weekly-copy")  # auditor-v1's namespace is here
    assert entries(source.settings) == before

    copy = import_squad(source, archive, name="weekly-copy", merge=True)
    assert copy.squad == "weekly-copy" and copy.facts_skipped == 1 and copy.facts_added == 1
    repo = pygit2.Repository(str(copy.workspace))
    assert repo.config["squad.workspace"] == "weekly-copy"
    spec, _ = source.squads.definition("weekly-copy")
    assert spec.name == "weekly-copy"
    writer = source.agent("weekly-copy", "writer")
    copied = source.store.memory.facts(source.memory.namespace_id(writer))
    assert [f.text for f in copied] == ["Reports go out on Mondays"]
    assert squad_from_file(source.settings.squads_dir / "weekly-copy.yaml").name == "weekly-copy"


def test_export_refuses_a_credential_an_existing_file_and_a_running_squad(
    source: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    _, workspace = weekly
    archive = tmp_path / "out.tar.gz"
    (workspace / "tasks" / "report" / "notes.md").write_text(f"token {TOKEN}\n")
    with pytest.raises(UsageError, match=r"(?s)credentials never.*report/notes.md line 1: github"):
        export_squad(source, "weekly", archive)
    assert not archive.exists()
    (workspace / "tasks" / "report" / "notes.md").unlink()
    archive.write_bytes(b"mine")
    with pytest.raises(UsageError, match="exists"):
        export_squad(source, "weekly", archive)
    assert archive.read_bytes() == b"mine"
    held = flock.acquire(run_lock(source.settings.locks_dir, "weekly"), "test")
    try:
        with pytest.raises(SquadBusy):
            export_squad(source, "weekly", tmp_path / "busy.tar.gz")
    finally:
        held.release()


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, None


HOSTILE = {
    "parent": [_file("workspace/../../evil.txt", b"x")],
    "absolute": [_file("/tmp/evil.txt", b"x")],
    "unknown top": [_file("etc/passwd", b"x")],
    "symlink": [_special("workspace/link", tarfile.SYMTYPE, "/etc/passwd")],
    "hardlink": [_special("workspace/hard", tarfile.LNKTYPE, "manifest.json")],
    "fifo": [_special("workspace/pipe", tarfile.FIFOTYPE)],
    "device": [_special("workspace/dev", tarfile.CHRTYPE)],
    "no manifest": [_file("workspace/.squad-config.json", b"{}")],
    "bad manifest": [_file("manifest.json", b'{"format": "squad-export", "evil": 1}')],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_and_nothing_is_written(
    target: App, tmp_path: Path, case: str
) -> None:
    archive = _tar(tmp_path / "hostile.tar.gz", HOSTILE[case])
    before = entries(target.settings)
    with pytest.raises(UsageError):
        import_squad(target, archive)
    assert entries(target.settings) == before
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()
    assert not target.database_exists() or target.store.list_squads() == []


def test_corrupt_oversized_and_crowded_archives_are_refused(
    target: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    with pytest.raises(UsageError, match="not a readable squad export"):
        import_squad(target, corrupt)
    monkeypatch.setattr(archive_module, "MAX_FILE_BYTES", 10)
    big = _tar(tmp_path / "big.tar.gz", [_file("workspace/big.bin", b"y" * 100)])
    with pytest.raises(UsageError, match="over the 10-byte cap"):
        import_squad(target, big)
    monkeypatch.setattr(archive_module, "MAX_MEMBERS", 3)
    crowded = _tar(tmp_path / "crowded.tar.gz", [_file(f"workspace/f{i}", b"z") for i in range(5)])
    with pytest.raises(UsageError, match="over 3 members"):
        import_squad(target, crowded)
    assert entries(target.settings) == set()


def _rewrite(archive: Path, out: Path, change: Callable[[str, bytes], bytes | None]) -> Path:
    """``archive`` with each member's bytes passed through ``change`` (None drops it)."""
    members = []
    with tarfile.open(archive, "r:gz") as tar:
        for info in tar:
            handle = tar.extractfile(info)
            data = handle.read() if handle is not None else b""
            new = change(info.name, data)
            if new is not None:
                members.append(_file(info.name, new))
    return _tar(out, members)


def test_an_archive_carrying_a_credential_or_lying_about_itself_is_refused(
    source: App, target: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "weekly.tar.gz"
    export_squad(source, "weekly", archive)

    def plant(name: str, data: bytes) -> bytes:
        if name == "experience.jsonl":
            fact = json.loads(data.splitlines()[0])
            fact["text"] = f"the deploy token is {TOKEN}"
            return data + (json.dumps(fact) + "\n").encode()
        return data

    with pytest.raises(UsageError, match="credentials never travel"):
        import_squad(target, _rewrite(archive, tmp_path / "planted.tar.gz", plant))

    def future(name: str, data: bytes) -> bytes:
        if name == "manifest.json":
            return data.replace(b'"version": 1', b'"version": 99')
        return data

    with pytest.raises(UsageError, match="upgrade squad"):
        import_squad(target, _rewrite(archive, tmp_path / "future.tar.gz", future))
    assert entries(target.settings) == set()


def test_an_archives_git_hooks_and_config_never_reach_this_machine(
    source: App, target: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "weekly.tar.gz"
    export_squad(source, "weekly", archive)

    def arm(name: str, data: bytes) -> bytes:
        if name == "workspace/.git/config":
            return data + b"[core]\n\tfsmonitor = touch /tmp/squad-pwned\n"
        return data

    armed = _rewrite(archive, tmp_path / "armed.tar.gz", arm)
    hook = tmp_path / "hooked.tar.gz"
    with tarfile.open(armed, "r:gz") as tar:
        members = []
        for member in tar:
            handle = tar.extractfile(member)
            if handle is not None:
                members.append((member, handle.read()))
    assert any(m.name == "workspace/.git/config" for m, _ in members)
    members.append(
        _file("workspace/.git/hooks/post-commit", b"#!/bin/sh\ntouch /tmp/squad-pwned\n")
    )
    _tar(hook, members)
    moved = import_squad(target, hook)
    git_dir = moved.workspace / ".git"
    assert "fsmonitor" not in (git_dir / "config").read_text()
    assert not (git_dir / "hooks" / "post-commit").exists()


def test_an_export_without_history_imports_as_a_fresh_history(
    source: App, target: App, weekly: tuple[SquadSpec, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "files.tar.gz"
    report = export_squad(source, "weekly", archive, with_history=False)
    assert report.commits == 0
    moved = import_squad(target, archive)
    assert subjects(moved.workspace)[-1] == "history starts: weekly"


def test_history_off_in_the_target_home_still_imports_the_files(
    source: App, weekly: tuple[SquadSpec, Path], tmp_path: Path, settings: Settings
) -> None:
    archive = tmp_path / "weekly.tar.gz"
    export_squad(source, "weekly", archive)
    off = replace(settings, history=settings.history.model_copy(update={"enabled": False}))
    with App.open(off) as app:
        moved = import_squad(app, archive)
        assert (moved.workspace / "tasks" / "report" / "output.md").is_file()
        assert app.store.get_squad("weekly") is not None
        facts = app.store.memory.facts(app.memory.namespace_id(app.agent("weekly", "writer")))
        assert [f.status for f in facts] == [FactStatus.ACTIVE]
