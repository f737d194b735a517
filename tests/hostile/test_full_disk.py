"""A full disk under the squad home: reading commands keep working, writing ones say which disk
is full, how much is free and what to do (exit 2, no traceback), and work again once there is
room. The disk is a real 4 MiB tmpfs filled to the last byte (mounting needs root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here starts a process

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs as the full disk")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def squad(disk: Path, *args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SQUAD_HOME": str(home or disk / "home"),
        "SQUAD_CONFIGS": str(disk / "configs"),
        "SQUAD_WORKSPACES": str(disk / "workspaces"),
    }
    return subprocess.run(
        [str(Path(sys.executable).with_name("squad")), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=disk,
        timeout=300,
    )


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    # Unbuffered: a buffered file's close() would try the refused bytes again and raise.
    with filler.open("wb", buffering=0) as f:
        for size in (65536, 1):  # then the last partial block too
            try:
                while f.write(b"\0" * size):
                    pass
            except OSError:
                pass
    assert shutil.disk_usage(disk).free == 0
    return filler


def test_a_full_disk_keeps_reading_commands_working_and_names_itself_to_writing_ones(
    disk: Path,
) -> None:
    (disk / "configs" / "squads").mkdir(parents=True)
    spec = disk / "configs" / "squads" / "docs-site.yaml"
    shutil.copy(ROOT / "configs" / "squads" / "docs-site.yaml", spec)
    squad(disk, "run", str(spec))  # waits for approval at its gate: a run to read
    (run,) = json.loads(squad(disk, "runs", "list", "--json").stdout)
    filler = fill(disk)

    for reading in (["status"], ["runs", "list"], ["memory", "show", "docs-site", "writer"]):
        done = squad(disk, *reading)
        assert done.returncode == 0, (reading, done.stderr)
        assert "docs-site" in done.stdout or "Insights" in done.stdout, reading

    remember = ["memory", "remember", "docs-site", "writer", "the site builds with make"]
    for writing in (
        [*remember, "--layer", "experiential"],  # the state database
        [*remember, "--layer", "project"],  # memory.md in the workspace
        ["approve", run["run_id"], "publish", "--reject", "--reason", "not now"],
    ):
        done = squad(disk, *writing)
        # A memory write stays a memory error (exit 1): agents and tools handle those.
        assert done.returncode == (1 if "project" in writing else 2), (writing, done.stderr)
        assert "Traceback" not in done.stderr
        assert "disk I/O error" not in done.stderr
        assert f"{disk} (tmpfs) has 0 B free of 4.0 MiB" in done.stderr, done.stderr
        assert "Free some space on it" in done.stderr
        named = {"experiential": "squad.db", "project": "memory.md", "publish": "checkpoints"}
        assert next(v for k, v in named.items() if k in writing) in done.stderr, done.stderr

    filler.unlink()
    for layer in ("experiential", "project"):
        done = squad(disk, *remember, "--layer", layer)
        assert done.returncode == 0, done.stderr


def test_a_new_squad_whose_workspace_disk_is_full_names_that_disk_and_writes_nothing_half(
    disk: Path, tmp_path: Path
) -> None:
    """The home has room; the disk of the workspaces has none."""
    home = tmp_path / "home"
    (disk / "configs" / "squads").mkdir(parents=True)
    (disk / "workspaces").mkdir()
    spec = disk / "configs" / "squads" / "docs-site.yaml"
    shutil.copy(ROOT / "configs" / "squads" / "docs-site.yaml", spec)
    fill(disk)
    done = squad(disk, "run", str(spec), home=home)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{disk} (tmpfs) has 0 B free of 4.0 MiB" in done.stderr, done.stderr
    assert "Free some space on it" in done.stderr
    assert not list((disk / "workspaces").glob("*/.squad-config.json"))
    assert squad(disk, "runs", "list", "--json", home=home).stdout.strip() in ("", "[]")
