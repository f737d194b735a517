"""A project folder for ``squad init`` and friends, and the console script run in process
from inside it, with only the squad home pinned (configs and workspaces found as a user's
shell would: from the current folder)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_in_process


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        self.home = tmp_path / "home"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SQUAD_")},
            "SQUAD_HOME": str(self.home),
            "COLUMNS": "200",
        }

    def __call__(
        self, *args: str | Path, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        folder = cwd or self.root
        folder.mkdir(parents=True, exist_ok=True)
        return run_in_process([str(a) for a in args], env=self.env, cwd=folder)

    def files(self) -> dict[str, str]:
        """Every file under the project, by relative path, with its text."""
        return {
            str(p.relative_to(self.root)): p.read_text(encoding="utf-8")
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)
