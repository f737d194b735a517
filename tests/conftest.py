"""Shared fixtures: example definitions, a frozen clock, isolated settings."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from squad.clock import FrozenClock
from squad.extraction.background import Worker
from squad.settings import Settings
from squad.spec.loader import squad_from_text
from squad.spec.models import SquadSpec

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "configs" / "squads").glob("*.yaml"))

BASIC_YAML = """\
name: demo
goal: Ship it.
agents:
  - {id: planner, role: Plans the work, profile: planner-v1}
  - {id: writer, role: Writes the pages}
tasks:
  - {id: outline, description: Outline the guide., agent: planner}
  - {id: draft, description: Write the guide., agent: writer, depends_on: [outline]}
"""


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def make_spec() -> Callable[..., SquadSpec]:
    def make(text: str = BASIC_YAML) -> SquadSpec:
        return squad_from_text(text, source="test.yaml")

    return make


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings rooted in a temporary folder, no environment leaking in."""
    return Settings.load(
        {
            "SQUAD_HOME": str(tmp_path / "home"),
            "SQUAD_WORKSPACES": str(tmp_path / "workspaces"),
            "SQUAD_CONFIGS": str(tmp_path / "configs"),
        },
        cwd=tmp_path,
    )


@pytest.fixture(autouse=True)
def no_extraction_left_behind() -> Iterator[None]:
    """Extraction passes a test queued and did not wait for are dropped when it ends, so none
    runs later, in another test (against a stub server that is gone)."""
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        if isinstance(thread, Worker):
            thread.owner.close(10.0, abandon=True)
