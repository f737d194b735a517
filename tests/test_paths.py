"""Names and user paths can never lead outside their base folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import PathEscapeError
from squad.paths import check_name, contained, resolve_inside


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../x", "/etc", "a\\b", " x", "x\x00"])
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(PathEscapeError):
        check_name(name)


def test_contained_joins_plain_names(tmp_path: Path) -> None:
    assert contained(tmp_path, "a", "b.md") == tmp_path.resolve() / "a" / "b.md"


def test_contained_refuses_a_link_component(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError, match="symbolic link"):
        contained(tmp_path, "link", "x")


def test_resolve_inside_allows_links_that_stay_inside(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    (tmp_path / "alias.md").symlink_to(tmp_path / "real.md")
    assert resolve_inside(tmp_path, "alias.md") == (tmp_path / "real.md").resolve()


@pytest.mark.parametrize("relative", ["../x", "/etc/passwd", "a/../../x", "..\\x"])
def test_resolve_inside_refuses_climbing_paths(tmp_path: Path, relative: str) -> None:
    with pytest.raises(PathEscapeError):
        resolve_inside(tmp_path, relative)


def test_resolve_inside_refuses_a_link_leading_out(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "escape").symlink_to(tmp_path)
    with pytest.raises(PathEscapeError, match="outside"):
        resolve_inside(base, "escape/secret")


@pytest.mark.parametrize("relative", ["\x00", "a\x00b.md", "tasks/\x00/output.md"])
def test_resolve_inside_refuses_a_nul_byte_naming_it(tmp_path: Path, relative: str) -> None:
    with pytest.raises(PathEscapeError, match="NUL byte"):
        resolve_inside(tmp_path, relative)
