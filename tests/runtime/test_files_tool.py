"""The agents' file tool stays inside the workspace and writes only to its task folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import PathEscapeError
from squad.runtime.files_tool import WorkspaceFiles


@pytest.fixture
def files(tmp_path: Path) -> WorkspaceFiles:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "plan-001.md").write_text("# Plan\n")
    return WorkspaceFiles(tmp_path, "draft")


def test_writes_land_in_the_task_folder(files: WorkspaceFiles, tmp_path: Path) -> None:
    assert files.write_file("guide/intro.md", "# Intro\n") == (
        "wrote tasks/draft/guide/intro.md (8 bytes)"
    )
    assert (tmp_path / "tasks" / "draft" / "guide" / "intro.md").read_text() == "# Intro\n"
    files.write_file("tasks/draft/notes.md", "n")  # the task prefix is accepted too
    assert (tmp_path / "tasks" / "draft" / "notes.md").is_file()


@pytest.mark.parametrize("path", ["../escape.md", "/etc/passwd", "a/../../x", "", "tasks/draft"])
def test_writes_outside_the_task_folder_are_refused(files: WorkspaceFiles, path: str) -> None:
    with pytest.raises(PathEscapeError):
        files.write_file(path, "x")


def test_a_link_in_the_task_folder_is_never_written_through(
    files: WorkspaceFiles, tmp_path: Path
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "tasks" / "draft").mkdir()
    (tmp_path / "tasks" / "draft" / "out").symlink_to(outside)
    with pytest.raises(PathEscapeError):
        files.write_file("out/x.md", "x")
    assert list(outside.iterdir()) == []


def test_reads_and_listing_cover_the_workspace(files: WorkspaceFiles) -> None:
    files.write_file("a.md", "alpha")
    assert files.read_file("plans/plan-001.md") == "# Plan\n"
    assert files.read_file("tasks/draft/a.md") == "alpha"
    assert "no file" in files.read_file("missing.md")
    assert files.list_files() == "plans/plan-001.md\ntasks/draft/a.md"
    with pytest.raises(PathEscapeError):
        files.read_file("../../etc/passwd")


def test_a_file_made_read_only_is_left_as_it_is(files: WorkspaceFiles, tmp_path: Path) -> None:
    files.write_file("keep.md", "mine\n")
    kept = tmp_path / "tasks" / "draft" / "keep.md"
    kept.chmod(0o444)
    assert files.write_file("keep.md", "overwritten") == (
        "refused: tasks/draft/keep.md is read-only (mode 0444); it was left as it is"
    )
    assert kept.read_text() == "mine\n" and kept.stat().st_mode & 0o777 == 0o444
