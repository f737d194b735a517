"""Boot files: read fresh at every build, empty ones left out, default persona, safe writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.errors import MemoryFileError, MemoryFullError, SecretInMemoryError, UsageError
from squad.memory.audit import AuditLog
from squad.memory.boot import ensure_default_soul, load_boot_files, write_boot_file


def test_default_soul_is_written_once_and_an_emptied_one_is_respected(tmp_path: Path) -> None:
    assert ensure_default_soul(tmp_path) is True
    assert "candid" in (tmp_path / "SOUL.md").read_text()
    (tmp_path / "SOUL.md").write_text("")
    assert ensure_default_soul(tmp_path) is False
    assert load_boot_files(tmp_path) == []


def test_boot_files_come_in_order_and_empty_ones_are_left_out(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (home / "SOUL.md").write_text("Be candid.")
    (home / "USER.md").write_text("   \n")
    (home / "AGENTS.md").write_text("Run the tests.")
    (ws / "AGENTS.md").write_text("Use pnpm here.")
    titles = [(f.title, f.text) for f in load_boot_files(home, ws)]
    assert titles == [
        ("Persona (SOUL.md)", "Be candid."),
        ("Work rules (AGENTS.md)", "Run the tests."),
        ("Workspace rules (AGENTS.md in this workspace)", "Use pnpm here."),
    ]


def test_hand_edits_apply_to_the_next_read(tmp_path: Path) -> None:
    (tmp_path / "USER.md").write_text("Prefers tables.")
    assert load_boot_files(tmp_path)[0].text == "Prefers tables."
    (tmp_path / "USER.md").write_text("Prefers bullet lists.")
    assert load_boot_files(tmp_path)[0].text == "Prefers bullet lists."


def test_write_boot_file_caps_refuses_secrets_and_audits(tmp_path: Path) -> None:
    path = write_boot_file(tmp_path, "user", "Prefers short answers.", cap_bytes=100)
    assert path.read_text() == "Prefers short answers."
    with pytest.raises(MemoryFullError):
        write_boot_file(tmp_path, "user", "x" * 101, cap_bytes=100)
    with pytest.raises(SecretInMemoryError):
        write_boot_file(tmp_path, "agents", "deploy with password=Sup3rS3cret!x", cap_bytes=100)
    assert path.read_text() == "Prefers short answers."
    assert [r.file for r in AuditLog(tmp_path).records()] == ["USER.md"]


def test_workspace_rules_file_and_bad_names(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = write_boot_file(tmp_path, "agents", "Use pnpm.", cap_bytes=100, workspace=ws)
    assert path == ws.resolve() / "AGENTS.md"
    with pytest.raises(UsageError):
        write_boot_file(tmp_path, "soul", "x", cap_bytes=100, workspace=ws)
    with pytest.raises(UsageError):
        write_boot_file(tmp_path, "memory", "x", cap_bytes=100)


def test_a_write_keeps_the_files_crlf_and_bom_but_text_with_its_own_cr_is_kept_as_given(
    tmp_path: Path,
) -> None:
    user = tmp_path / "USER.md"
    user.write_bytes(b"\xef\xbb\xbfOld.\r\n")
    write_boot_file(tmp_path, "user", "New.\nLines.\n", cap_bytes=100)
    assert user.read_bytes() == b"\xef\xbb\xbfNew.\r\nLines.\r\n"
    write_boot_file(tmp_path, "user", "Mixed\r\nas\ngiven\n", cap_bytes=100)
    assert user.read_bytes() == b"\xef\xbb\xbfMixed\r\nas\ngiven\n"
    assert load_boot_files(tmp_path)[0].text == "Mixed\r\nas\ngiven\n"


def test_the_cap_counts_the_bytes_written(tmp_path: Path) -> None:
    (tmp_path / "USER.md").write_bytes(b"a\r\n")
    with pytest.raises(MemoryFullError):
        write_boot_file(tmp_path, "user", "1\n2\n3\n", cap_bytes=8)  # 9 bytes with CRLF


def test_a_read_only_boot_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run the tests.")
    (tmp_path / "AGENTS.md").chmod(0o444)
    with pytest.raises(MemoryFileError, match="read-only"):
        write_boot_file(tmp_path, "agents", "Skip the tests.", cap_bytes=100)
    assert (tmp_path / "AGENTS.md").read_text() == "Run the tests."
    assert AuditLog(tmp_path).records() == []


def test_a_write_with_a_stale_version_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    from squad.errors import StaleWriteError
    from squad.memory.boot import read_boot_file

    text, version = read_boot_file(tmp_path, "user")
    assert (text, version) == ("", "")
    write_boot_file(
        tmp_path, "user", "Prefers short answers.\n", cap_bytes=1000, expected_version=version
    )
    text, fresh = read_boot_file(tmp_path, "user")
    assert text == "Prefers short answers.\n" and fresh != ""
    with pytest.raises(StaleWriteError, match="changed since it was read"):
        write_boot_file(tmp_path, "user", "Mine.\n", cap_bytes=1000, expected_version=version)
    assert read_boot_file(tmp_path, "user") == (text, fresh)
    write_boot_file(
        tmp_path, "user", "Mine.\n", cap_bytes=1000, expected_version=fresh, actor="web"
    )
    assert read_boot_file(tmp_path, "user")[0] == "Mine.\n"
    assert [r.actor for r in AuditLog(tmp_path).records()][-1] == "web"
