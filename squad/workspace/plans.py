"""The plans of a workspace: ``plans/plan-<n>.md``, numbered from 1 with no ceiling.

A number has at least three digits (``plan-001.md``) and as many more as it needs
(``plan-1000.md``), so the next plan is the highest number any entry of the folder carries
plus one: gaps (plans retention deleted) are not filled, names that are not a plan's
(``plan-notes.md``) are ignored, and no plan is ever written over. Listed, plans go by number,
never by name (``plan-1000.md`` after ``plan-999.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PLANS_FOLDER", "next_plan", "next_plan_number", "plan_name", "plan_number"]

PLANS_FOLDER = "plans"
_PLAN = re.compile(r"^plan-([0-9]+)\.md$")


def plan_number(name: str) -> int | None:
    """The number of the plan file named ``name``; None when it is not a plan's name."""
    match = _PLAN.match(name)
    return None if match is None else int(match.group(1))


def plan_name(number: int) -> str:
    """``plan-001.md``, ``plan-1000.md``."""
    if number < 1:
        raise ValueError(f"plans are numbered from 1, got {number!r}")
    return f"plan-{number:03d}.md"


def next_plan_number(names: Iterable[str]) -> int:
    """The number after the highest plan number among ``names`` (1 with none)."""
    numbers = (plan_number(name) for name in names)
    return max((n for n in numbers if n is not None), default=0) + 1


def next_plan(folder: Path) -> tuple[int, Path]:
    """The next plan's number and path in ``folder`` (made if missing). Every entry counts,
    file or not, so the path is always free."""
    folder.mkdir(parents=True, exist_ok=True)
    number = next_plan_number(entry.name for entry in folder.iterdir())
    return number, folder / plan_name(number)
