"""Settings come from the environment first, then configs/settings.yaml, then defaults."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from squad.errors import ConfigError
from squad.settings import Settings


def test_defaults_are_relative_to_the_working_folder(tmp_path: Path) -> None:
    settings = Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    assert settings.workspaces == tmp_path.resolve() / "workspaces"
    assert settings.configs == tmp_path.resolve() / "configs"
    assert settings.squads_dir == settings.configs / "squads"
    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'h' / 'squad.db'}"
    assert settings.memory_file_cap_bytes == 50 * 1024


def test_settings_file_is_read_relative_to_its_folder(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text(
        "workspaces: ../ws\ndatabase_url: sqlite:///x.db\nmemory: {file_cap_kb: 8}\n"
    )
    settings = Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    assert settings.workspaces == tmp_path.resolve() / "ws"
    assert settings.database_url == "sqlite:///x.db"
    assert settings.memory_file_cap_bytes == 8 * 1024
    assert settings.settings_file == tmp_path.resolve() / "configs" / "settings.yaml"


def test_environment_wins_over_the_settings_file(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text("workspaces: ../ws\n")
    env = {
        "SQUAD_HOME": str(tmp_path / "h"),
        "SQUAD_WORKSPACES": "other",
        "SQUAD_DATABASE_URL": "postgresql://u@h/db",
    }
    settings = Settings.load(env, cwd=tmp_path)
    assert settings.workspaces == tmp_path.resolve() / "other"
    assert settings.database_url == "postgresql://u@h/db"


def test_home_expands_the_user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Settings.load({}, cwd=tmp_path).home == tmp_path.resolve() / ".squad"


def test_bad_settings_file_is_located(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "settings.yaml").write_text("memory:\n  file_cap_k: 8\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert (problem.line, problem.dotted_path) == (2, "memory.file_cap_k")
    assert "did you mean 'file_cap_kb'" in problem.render()


def _settings_file(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    return tmp_path / "configs" / "settings.yaml"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: os.mkfifo(p), "FIFO (named pipe)"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.symlink_to(p.parent / "gone.yaml"), "broken symbolic link"),
    ],
    ids=["fifo", "directory", "broken-symlink"],
)
def test_a_settings_path_that_is_not_a_file_is_reported_not_skipped(
    tmp_path: Path, make: Callable[[Path], object], words: str
) -> None:
    path = _settings_file(tmp_path)
    make(path)
    with pytest.raises(ConfigError) as caught:
        Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert problem.source == str(path) and words in problem.message


def test_deeply_nested_settings_are_refused_at_their_line(tmp_path: Path) -> None:
    _settings_file(tmp_path).write_text("memory: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert (problem.line, problem.column) == (1, 72)
    assert "nested more than 64 levels" in problem.message


def test_a_daemon_cron_that_can_never_fire_is_refused(tmp_path: Path) -> None:
    _settings_file(tmp_path).write_text("daemon:\n  retention_cron: '0 3 31 2 *'\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load({"SQUAD_HOME": str(tmp_path / "h")}, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert problem.dotted_path == "daemon.retention_cron"
    assert "February has no day 31" in problem.message
