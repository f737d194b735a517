"""Objects written ahead of a run's commit: the very ones the commit makes, nothing more."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pygit2
import pytest

from squad.history.loose import object_id, write_ahead, write_object, writes_ahead

GIT = shutil.which("git")


def folder_with_outcome(root: Path) -> Path:
    folder = root / "tasks" / "audit"
    folder.mkdir(parents=True)
    (folder / "output.md").write_text("Nothing outdated.\n", encoding="utf-8")
    (folder / "status.json").write_text('{"status": "done"}\n', encoding="utf-8")
    (folder / ".status.json.1a-2b.tmp").write_text("{", encoding="utf-8")  # ignored by squad
    return folder


def committed_tree(repo: pygit2.Repository, relative: str) -> str:
    index = repo.index
    index.add_all()
    index.remove(f"{relative}/.status.json.1a-2b.tmp")
    root = repo[index.write_tree()]
    return str(root[relative].id)


def test_a_task_folder_written_ahead_is_the_tree_its_commit_makes_without_the_output_blob(
    tmp_path: Path,
) -> None:
    repo = pygit2.init_repository(str(tmp_path))
    git_dir = tmp_path / ".git"
    folder = folder_with_outcome(tmp_path)
    assert writes_ahead(git_dir)

    write_ahead(git_dir, folder)

    status_id, _ = object_id("blob", (folder / "status.json").read_bytes())
    output_id, _ = object_id("blob", (folder / "output.md").read_bytes())
    assert status_id in repo.odb, "squad's own record is written ahead"
    assert output_id not in repo.odb, "an agent's text waits for the commit's credential check"
    tree_id = committed_tree(repo, "tasks/audit")
    assert (git_dir / "objects" / tree_id[:2] / tree_id[2:]).is_file(), "the same tree"
    assert not [p for p in (git_dir / "objects").rglob("tmp_obj_*")], "no temporary file left"
    if GIT is not None:
        done = subprocess.run([GIT, "fsck", "--strict"], cwd=tmp_path, capture_output=True)
        assert done.returncode == 0, done.stderr


def test_an_object_already_there_is_left_as_it_is(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path))
    oid = str(repo.create_blob(b"same bytes\n"))
    path = tmp_path / ".git" / "objects" / oid[:2] / oid[2:]
    before = path.stat()
    assert write_object(tmp_path / ".git", "blob", b"same bytes\n") == oid
    assert path.stat().st_ino == before.st_ino
    assert repo[oid].data == b"same bytes\n"


def test_a_folder_holding_more_than_files_is_left_to_the_commit(tmp_path: Path) -> None:
    pygit2.init_repository(str(tmp_path))
    folder = folder_with_outcome(tmp_path)
    (folder / "charts").mkdir()
    before = sorted(p.name for p in (tmp_path / ".git" / "objects").iterdir())
    write_ahead(tmp_path / ".git", folder)
    assert sorted(p.name for p in (tmp_path / ".git" / "objects").iterdir()) == before


@pytest.mark.parametrize("kind", ["gitfile", "sha256"])
def test_objects_are_written_ahead_only_into_a_plain_sha1_repository(
    tmp_path: Path, kind: str
) -> None:
    if kind == "gitfile":
        (tmp_path / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    else:
        pygit2.init_repository(str(tmp_path))
        with (tmp_path / ".git" / "config").open("a", encoding="utf-8") as config:
            config.write("[extensions]\n\tobjectFormat = sha256\n")
    assert not writes_ahead(tmp_path / ".git")


def test_writers_of_the_same_object_at_once_leave_it_whole(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path))
    git_dir = tmp_path / ".git"
    for round_ in range(30):
        data = f'{{"status": "done", "round": {round_}}}\n'.encode() * 200
        start = threading.Barrier(4)
        errors: list[BaseException] = []

        def write(
            data: bytes = data,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            start.wait()
            try:
                write_object(git_dir, "blob", data)
            except BaseException as exc:  # noqa: BLE001  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=write) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert repo[object_id("blob", data)[0]].data == data
    assert not [p for p in (git_dir / "objects").rglob("tmp_obj_*")]
