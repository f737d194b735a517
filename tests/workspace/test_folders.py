"""Workspace creation, idempotent update and restore from the manifest alone."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from squad.clock import FrozenClock
from squad.errors import ConfigError, PathEscapeError, WorkspaceError
from squad.spec.models import SquadSpec
from squad.workspace.folders import WorkspaceFolders
from squad.workspace.layout import MANIFEST_NAME, memory_seed
from squad.workspace.manifest import FORMAT_VERSION, MAX_MANIFEST_BYTES, Manifest
from tests.conftest import BASIC_YAML

MakeSpec = Callable[..., SquadSpec]


@pytest.fixture
def manager(tmp_path: Path, clock: FrozenClock) -> WorkspaceFolders:
    return WorkspaceFolders(tmp_path / "ws", locks=tmp_path / "locks", clock=clock)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under root with its bytes (None for folders)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        out[path.relative_to(root).as_posix()] = None if path.is_dir() else path.read_bytes()
    return out


def test_create_lays_out_the_standard_workspace(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    report = manager.create(make_spec())
    ws = manager.root / "demo"
    assert report.path == ws and report.manifest == "created"
    assert sorted(snapshot(ws)) == [
        ".squad-config.json",
        "agents",
        "agents/planner",
        "agents/planner/memory.md",
        "agents/writer",
        "agents/writer/memory.md",
        "logs",
        "plans",
        "tasks",
    ]
    memory = (ws / "agents/planner/memory.md").read_text()
    assert memory == memory_seed()
    assert [line for line in memory.splitlines() if line.startswith("#")] == [
        "# Project Context",
        "# Coding Rules",
        "# Decisions",
        "# Insights",
    ]
    assert set(report.created) >= {"plans/", "agents/writer/memory.md", MANIFEST_NAME}


def test_manifest_records_what_restore_needs(
    manager: WorkspaceFolders, make_spec: MakeSpec, clock: FrozenClock
) -> None:
    spec = make_spec()
    manager.create(spec)
    data = json.loads((manager.root / "demo" / MANIFEST_NAME).read_text())
    assert data["format_version"] == FORMAT_VERSION
    assert data["squad"] == "demo"
    assert data["created_at"] == data["updated_at"] == clock.now.isoformat()
    assert data["agents"][0] == {
        "id": "planner",
        "name": "Planner",
        "profile": "planner-v1",
        "experience_identity": "profile:planner-v1",
        "memory_namespace": "Agent Experience: Planner",
    }
    assert data["agents"][1]["experience_identity"] == "squad:demo/writer"
    assert data["definition"] == spec.model_dump(mode="json")


def test_creating_again_changes_nothing_and_keeps_edits(
    manager: WorkspaceFolders, make_spec: MakeSpec, clock: FrozenClock
) -> None:
    manager.create(make_spec())
    ws = manager.root / "demo"
    (ws / "agents/planner/memory.md").write_text("# Insights\n- learned something\n")
    (ws / "plans/plan-001.md").write_text("my plan\n")
    before = snapshot(ws)
    manifest_mtime = (ws / MANIFEST_NAME).stat().st_mtime_ns
    clock.advance(60)
    report = manager.create(make_spec())
    assert report.manifest == "unchanged" and report.created == []
    assert snapshot(ws) == before
    assert (ws / MANIFEST_NAME).stat().st_mtime_ns == manifest_mtime


def test_creating_again_completes_what_went_missing_from_an_unchanged_workspace(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    manager.create(make_spec())
    ws = manager.root / "demo"
    (ws / "logs").rmdir()
    (ws / "agents/writer/memory.md").unlink()
    report = manager.create(make_spec())
    assert report.manifest == "unchanged"
    assert sorted(report.created) == ["agents/writer/memory.md", "logs/"]
    assert (ws / "logs").is_dir() and (ws / "agents/writer/memory.md").is_file()
    (ws / "plans").rmdir()
    (ws / "plans").write_text("not a folder")
    with pytest.raises(WorkspaceError, match="exists and is not a folder"):
        manager.create(make_spec())


def test_changed_definition_updates_manifest_and_adds_new_agents_only(
    manager: WorkspaceFolders, make_spec: MakeSpec, clock: FrozenClock
) -> None:
    first = manager.create(make_spec())
    ws = first.path
    (ws / "agents/writer/memory.md").write_text("# Insights\n- keep me\n")
    created_at = json.loads((ws / MANIFEST_NAME).read_text())["created_at"]
    clock.advance(3600)
    changed = BASIC_YAML.replace(
        "  - {id: writer, role: Writes the pages}\n", "  - {id: reviewer, role: Reviews}\n"
    ).replace("agent: writer", "agent: reviewer")
    report = manager.create(make_spec(changed))
    data = json.loads((ws / MANIFEST_NAME).read_text())
    assert report.manifest == "updated"
    assert report.created == ["agents/reviewer/", "agents/reviewer/memory.md"]
    assert data["created_at"] == created_at
    assert data["updated_at"] == clock.now.isoformat()
    assert [a["id"] for a in data["agents"]] == ["planner", "reviewer"]
    assert (ws / "agents/writer/memory.md").read_text() == "# Insights\n- keep me\n"


def test_restore_rebuilds_squad_from_manifest_alone(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    spec = make_spec()
    ws = manager.create(spec).path
    (ws / "agents/planner/memory.md").write_text("# Decisions\n- JWT\n")
    for gone in ("plans", "logs"):
        (ws / gone).rmdir()
    (ws / "agents/writer/memory.md").unlink()
    restored, report = manager.restore(ws)
    assert restored == spec
    assert report.manifest == "unchanged"
    assert sorted(report.created) == ["agents/writer/memory.md", "logs/", "plans/"]
    assert (ws / "agents/planner/memory.md").read_text() == "# Decisions\n- JWT\n"


def test_restore_accepts_the_manifest_path_and_a_moved_folder(
    manager: WorkspaceFolders, make_spec: MakeSpec, tmp_path: Path
) -> None:
    ws = manager.create(make_spec()).path
    moved = tmp_path / "elsewhere" / "backup-of-demo"
    moved.parent.mkdir()
    ws.rename(moved)
    spec, report = manager.restore(moved / MANIFEST_NAME)
    assert spec.name == "demo" and report.path == moved.resolve()


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda d: d.update(format_version=FORMAT_VERSION + 1), "newer than this squad"),
        (lambda d: d["definition"]["agents"][0].update(id="Bad Id"), "not a valid id"),
        (lambda d: d.update(squad="other"), "manifest names squad 'other'"),
        (lambda d: d.pop("definition"), "manifest is malformed"),
    ],
    ids=["newer-format", "bad-definition", "name-mismatch", "missing-definition"],
)
def test_restore_refuses_a_manifest_it_cannot_trust(
    manager: WorkspaceFolders, make_spec: MakeSpec, mutate: Callable[[dict], None], words: str
) -> None:
    ws = manager.create(make_spec()).path
    data = json.loads((ws / MANIFEST_NAME).read_text())
    mutate(data)
    (ws / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(ConfigError) as caught:
        manager.restore(ws)
    assert words in str(caught.value)


def test_restore_of_a_folder_without_manifest_is_refused(
    manager: WorkspaceFolders, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorkspaceError, match="not a squad workspace"):
        manager.restore(tmp_path / "plain")


def test_corrupt_manifest_json_is_reported_with_its_line(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    ws = manager.create(make_spec()).path
    (ws / MANIFEST_NAME).write_text('{\n  "squad": "demo",\n  oops\n}\n')
    with pytest.raises(ConfigError) as caught:
        manager.restore(ws)
    assert caught.value.problems[0].line == 3


def test_workspace_of_another_squad_is_never_taken_over(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    manager.create(make_spec())
    intruder = make_spec(BASIC_YAML.replace("name: demo", "name: other\nworkspace: demo"))
    with pytest.raises(WorkspaceError, match="belongs to squad 'demo'"):
        manager.create(intruder)


def test_workspace_folder_that_is_a_link_out_of_the_root_is_refused(
    manager: WorkspaceFolders, make_spec: MakeSpec, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    manager.root.mkdir()
    (manager.root / "demo").symlink_to(outside)
    with pytest.raises(PathEscapeError, match="symbolic link"):
        manager.create(make_spec())
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("link", ["agents", "agents/planner", "agents/planner/memory.md", "plans"])
def test_links_inside_a_workspace_are_never_followed_when_writing(
    manager: WorkspaceFolders, make_spec: MakeSpec, tmp_path: Path, link: str
) -> None:
    ws = manager.create(make_spec()).path
    outside = tmp_path / "outside"
    outside.mkdir()
    target = ws / link
    if target.is_dir():
        for child in sorted(target.rglob("*"), reverse=True):
            child.unlink() if child.is_file() else child.rmdir()
        target.rmdir()
    else:
        target.unlink()
    target.symlink_to(outside)
    with pytest.raises(PathEscapeError):
        manager.create(make_spec())
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_belongs_is_reported(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    ws = manager.create(make_spec()).path
    (ws / "logs").rmdir()
    (ws / "logs").write_text("not a folder")
    with pytest.raises(WorkspaceError, match="exists and is not a folder"):
        manager.create(make_spec())


def test_workspace_root_that_is_a_file_is_reported(tmp_path: Path, make_spec: MakeSpec) -> None:
    (tmp_path / "root").write_text("x")
    manager = WorkspaceFolders(tmp_path / "root", locks=tmp_path / "locks")
    with pytest.raises(WorkspaceError, match="not a folder"):
        manager.create(make_spec())


def test_scan_lists_only_readable_workspaces(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    manager.create(make_spec())
    manager.create(make_spec(BASIC_YAML.replace("name: demo", "name: alpha")))
    (manager.root / "junk").mkdir()
    (manager.root / "broken").mkdir()
    (manager.root / "broken" / MANIFEST_NAME).write_text("{")
    assert [info.squad for info in manager.scan()] == ["alpha", "demo"]
    assert manager.find("alpha") == manager.root / "alpha"
    assert manager.find("missing") is None


def test_manifest_round_trips_every_example(make_spec: MakeSpec, clock: FrozenClock) -> None:
    from tests.conftest import EXAMPLES

    assert len(EXAMPLES) >= 2
    for example in EXAMPLES:
        spec = make_spec(example.read_text())
        manifest = Manifest(spec.name, spec, clock.now, clock.now, str(example))
        again = Manifest.from_json(manifest.to_json(), source="m.json")
        assert again == manifest


def _create_in_process(root: str, locks: str, text: str) -> str:
    from squad.spec.loader import squad_from_text
    from squad.workspace.folders import WorkspaceFolders

    manager = WorkspaceFolders(Path(root), locks=Path(locks))
    return manager.create(squad_from_text(text)).manifest


@pytest.mark.slow
def test_concurrent_creators_of_one_workspace_agree(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    args = (str(tmp_path / "ws"), str(tmp_path / "locks"), BASIC_YAML)
    with context.Pool(4) as pool:
        results = pool.starmap(_create_in_process, [args] * 4)
    assert sorted(results) == ["created", "unchanged", "unchanged", "unchanged"]
    ws = tmp_path / "ws" / "demo"
    assert json.loads((ws / MANIFEST_NAME).read_text())["squad"] == "demo"
    leftovers = [p for p in ws.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    assert sorted(os.listdir(ws / "agents")) == ["planner", "writer"]


def test_comment_only_edit_of_the_yaml_leaves_the_manifest_alone(
    manager: WorkspaceFolders, tmp_path: Path, clock: FrozenClock
) -> None:
    from squad.spec.loader import squad_from_file

    source = tmp_path / "demo.yaml"
    source.write_text(BASIC_YAML)
    manager.create(squad_from_file(source), source=source)
    manifest = manager.root / "demo" / MANIFEST_NAME
    before = manifest.read_bytes()
    source.write_text("# a new comment\n" + BASIC_YAML.replace("goal: Ship it.", "goal:  Ship it."))
    clock.advance(5)
    assert manager.create(squad_from_file(source), source=source).manifest == "unchanged"
    assert manifest.read_bytes() == before
    assert json.loads(before)["source"] == {"path": str(source.resolve())}


def test_unreadable_manifests_are_reported_not_hidden(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    manager.create(make_spec())
    (manager.root / "broken").mkdir()
    (manager.root / "broken" / MANIFEST_NAME).write_text("{")
    ((path, reason),) = manager.unreadable()
    assert path.name == "broken" and "not valid JSON" in reason


def test_manifest_nested_past_the_parsers_stack_is_a_config_error_naming_it() -> None:
    deep = 100_000
    raw = ('{"squad": ' + "[" * deep + "]" * deep + "}").encode()
    with pytest.raises(ConfigError) as caught:
        Manifest.from_json(raw, source="ws/.squad-config.json")
    [problem] = caught.value.problems
    assert problem.source == "ws/.squad-config.json" and "nested too deeply" in problem.message


def test_manifest_over_the_size_limit_is_refused_before_parsing() -> None:
    raw = b" " * (MAX_MANIFEST_BYTES + 1)
    with pytest.raises(ConfigError, match=f"over the {MAX_MANIFEST_BYTES:,}-byte limit"):
        Manifest.from_json(raw, source="m.json")


def test_a_manifest_that_is_a_folder_is_refused_as_not_a_file(
    manager: WorkspaceFolders, tmp_path: Path
) -> None:
    (tmp_path / "odd" / MANIFEST_NAME).mkdir(parents=True)
    with pytest.raises(ConfigError, match="manifest is a folder, not a regular file"):
        manager.restore(tmp_path / "odd")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_creating_over_a_manifest_swapped_for_a_fifo_is_refused_not_blocked(
    manager: WorkspaceFolders, make_spec: MakeSpec
) -> None:
    from tests.hostile.test_paths_hostile import call_with_timeout

    manifest = manager.create(make_spec()).path / MANIFEST_NAME
    manifest.unlink()
    os.mkfifo(manifest)

    def create() -> BaseException | None:
        try:
            manager.create(make_spec())
        except ConfigError as error:
            return error
        return None

    error = call_with_timeout(create, fifo=manifest)
    assert isinstance(error, ConfigError) and "FIFO (named pipe)" in str(error)
