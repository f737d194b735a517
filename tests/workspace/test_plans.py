"""Plan files past plan-999.md: numbered without a ceiling, listed by number everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from squad.app import App
from squad.text.natural import natural_key
from squad.workspace.inspect import tree
from squad.workspace.listing import list_folder
from squad.workspace.plans import next_plan, next_plan_number, plan_name, plan_number
from tests.conftest import BASIC_YAML

PLANS = ["plan-1000.md", "plan-998.md", "plan-1003.md", "plan-999.md", "plan-001.md"]


def test_plan_numbers_have_three_digits_or_as_many_more_as_they_need() -> None:
    assert [plan_name(n) for n in (1, 999, 1000, 123456)] == [
        "plan-001.md",
        "plan-999.md",
        "plan-1000.md",
        "plan-123456.md",
    ]
    assert [plan_number(n) for n in ("plan-001.md", "plan-1000.md", "plan-0042.md")] == [
        1,
        1000,
        42,
    ]
    for other in ("plan-notes.md", "plan-12.txt", "plan-.md", "plan-1.md.bak", "xplan-3.md"):
        assert plan_number(other) is None
    with pytest.raises(ValueError, match="from 1"):
        plan_name(0)


def test_the_next_plan_follows_the_highest_number_across_gaps_and_strays() -> None:
    assert next_plan_number([]) == 1
    assert next_plan_number(["plan-998.md", "plan-999.md"]) == 1000
    assert next_plan_number(["plan-999.md", "plan-1000.md"]) == 1001  # plan-1000 is never rewritten
    assert next_plan_number(["plan-003.md", "plan-250.md", "plan-notes.md", "plan-9999.txt"]) == 251


def test_next_plan_counts_every_entry_of_the_folder_and_makes_it(tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    assert next_plan(folder) == (1, folder / "plan-001.md")
    (folder / "plan-999.md").write_text("x")
    (folder / "plan-1000.md").mkdir()  # not a file, but its name is taken
    assert next_plan(folder) == (1001, folder / "plan-1001.md")


def test_plans_are_listed_by_number_in_the_tree_and_the_folder_listing(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    for name in PLANS:
        (plans / name).write_text(name)
    in_order = ["plan-001.md", "plan-998.md", "plan-999.md", "plan-1000.md", "plan-1003.md"]
    assert sorted(PLANS, key=natural_key) == in_order
    assert [e.name for e in list_folder(tmp_path, "plans").entries] == in_order
    assert [e.path for e in tree(tmp_path)] == ["plans", *(f"plans/{n}" for n in in_order)]


def test_natural_order_counts_numbers_and_keeps_text_order() -> None:
    names = ["b", "a10", "a2", "a02", "A1", "a", "a2b", "10", "9"]
    assert sorted(names, key=natural_key) == ["9", "10", "A1", "a", "a02", "a2", "a2b", "a10", "b"]


def test_mcp_lists_a_squads_plans_by_number_and_reads_plan_1000(app: App) -> None:
    from squad.mcp.resources import SquadResources
    from squad.mcp.tools import Scope
    from squad.spec.loader import squad_from_text

    workspace = app.squads.create(squad_from_text(BASIC_YAML, source="demo.yaml")).path
    for name in PLANS:
        (workspace / "plans" / name).write_text(f"# {name}\n")
    resources = SquadResources(app, Scope())
    listed = [r.uri for r in resources.list() if "/plans/" in r.uri]
    assert listed == [
        f"squad://demo/plans/{n}"
        for n in ("plan-001.md", "plan-998.md", "plan-999.md", "plan-1000.md", "plan-1003.md")
    ]
