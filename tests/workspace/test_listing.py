"""One folder of a workspace, for the explorer: one level, contained, links never entered."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from squad.errors import NotFound, PathEscapeError
from squad.workspace.listing import list_folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "agents" / "writer").mkdir(parents=True)
    (ws / "agents" / "writer" / "memory.md").write_text("# Insights\n")
    (ws / "b.txt").write_text("hello")
    (ws / "a-folder").mkdir()
    return ws


def test_a_folder_lists_one_level_folders_first_with_sizes_of_files_only(root: Path) -> None:
    listing = list_folder(root, "")
    assert [(e.name, e.kind) for e in listing.entries] == [
        ("a-folder", "dir"),
        ("agents", "dir"),
        ("b.txt", "file"),
    ]
    assert [e.size for e in listing.entries] == [None, None, 5]
    nested = list_folder(root, "agents/writer")
    assert [e.path for e in nested.entries] == ["agents/writer/memory.md"]
    assert nested.view().model_dump()["path"] == "agents/writer"


def test_a_link_is_listed_but_never_entered(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("no")
    (root / "escape").symlink_to(outside)
    assert {e.name: e.kind for e in list_folder(root).entries}["escape"] == "link"
    with pytest.raises(PathEscapeError, match="symbolic link"):
        list_folder(root, "escape")


@pytest.mark.parametrize("path", ["..", "agents/../..", "/etc", "\\\\server\\share"])
def test_paths_that_climb_or_jump_are_refused(root: Path, path: str) -> None:
    with pytest.raises(PathEscapeError):
        list_folder(root, path)


def test_a_missing_folder_or_a_file_is_not_found(root: Path) -> None:
    with pytest.raises(NotFound, match="no folder 'nope'"):
        list_folder(root, "nope")
    with pytest.raises(NotFound, match="not a folder"):
        list_folder(root, "b.txt")


def test_a_fifo_is_listed_as_other_and_listing_it_never_blocks(root: Path) -> None:
    os.mkfifo(root / "pipe")
    assert {e.name: e.kind for e in list_folder(root).entries}["pipe"] == "other"
    with pytest.raises(NotFound):
        list_folder(root, "pipe")
