"""The workspaces' history in a real browser (Debian's Chromium through Playwright, against a
``squad daemon`` subprocess, as :mod:`tests.web.test_browser` drives it): a run page's changes
since the previous run with a file's diff opened, and a memory change reverted on the agent
page. Screenshots go where that module puts them (``$SQUAD_SCREENSHOTS``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.waiting import wait_for
from tests.web import test_browser
from tests.web.test_browser import Dashboard, expect, settled, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

# test_browser's fixtures, one daemon and one logged-in browser of this module's own
browser = test_browser.browser
dashboard = test_browser.dashboard
context = test_browser.context
page = test_browser.page

# One worker runs the whole module, in order: its dashboard and browser start once, and each
# screenshot shows the state the tests before it left (as in a serial run).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("history-browser")]

GOAL = "Add a --dry-run flag to the export command."


def second_run(dashboard: Dashboard) -> tuple[str, str]:
    """A second code-review run, with a goal of its own (so its plan and tasks differ from
    the start-up run's): (the start-up run's id, the new run's id) once it has ended."""
    settled(dashboard)
    with dashboard.api() as api:
        started = api.post("/api/v1/squads/code-review/runs", json={"goal": GOAL})
        assert started.status_code == 202, started.text

        def ended() -> list[dict[str, Any]] | None:
            runs: list[dict[str, Any]] = api.get(
                "/api/v1/runs", params={"squad": "code-review"}
            ).json()
            done = [r for r in runs if r["commit"] and r["status"] == "succeeded"]
            return done if len(done) >= 2 else None

        newest, previous = wait_for(ended, "the second code-review run to end")[:2]
    return previous["run_id"], newest["run_id"]


def test_the_run_page_lists_the_files_a_run_changed_and_opens_a_files_diff(
    dashboard: Dashboard, page: Page
) -> None:
    previous, run = second_run(dashboard)
    page.goto(f"{dashboard.url}runs/{run}")
    changes = page.locator("#changes")
    expect(changes.locator("h2")).to_have_text("Changes since the previous run")
    expect(changes.locator("#previous-run")).to_have_text(previous)
    files = changes.locator("#changed-files > li")
    expect(files.first).to_be_visible()
    plan = files.filter(has_text="plans/")
    expect(plan.locator(".count.add")).to_have_text(re.compile(r"^\+[1-9][0-9]*$"))
    plan.locator("summary").click()
    added = plan.locator("pre.diff span.add")
    expect(added.filter(has_text=f"Goal: {GOAL}")).to_have_count(1)
    expect(plan.locator("pre.diff span.hunk")).to_have_count(1)
    changes.scroll_into_view_if_needed()
    shot(page, "run-changes.png")
    # the link goes to the previous run's page
    changes.locator("#previous-run").click()
    page.wait_for_url(f"**/runs/{previous}")
    expect(page.locator("#changes h2")).to_have_text("Changes since the previous run")


def test_reverting_a_memory_change_on_the_agent_page_takes_its_line_out(
    dashboard: Dashboard, context: BrowserContext, page: Page
) -> None:
    line = "Every migration needs a down step"
    remembered = dashboard.cli(
        "memory", "remember", "code-review", "reviewer", line, "--layer", "project"
    )
    assert remembered.returncode == 0, remembered.stderr
    page.goto(f"{dashboard.url}squads/code-review/agents/reviewer")
    project = page.locator("#project-memory")
    expect(project).to_contain_text(line)
    expect(page.locator("#context-text")).to_contain_text(line)
    row = page.locator("#memory-history tbody tr", has_text=line)
    expect(row.locator(".badge")).to_have_text("cli")
    expect(row.locator("pre.diff span.add")).to_contain_text(line)

    row.locator("button", has_text="Revert").click()
    expect(page.locator("#history-flash")).to_contain_text("Reverted")
    expect(page.locator("#project-memory")).not_to_contain_text(line)
    expect(page.locator("#context-text")).not_to_contain_text(line)  # the next prompt's too
    newest = page.locator("#memory-history tbody tr").first
    expect(newest.locator(".badge")).to_have_text("web")
    expect(newest.locator("pre.diff span.del")).to_contain_text(line)
    shot(page, "memory-history.png")

    # the same change again: nothing left to undo, said in place (in a tab of its own: the
    # browser logs the 422 on the console, which the page fixture counts as a failure)
    again = context.new_page()
    try:
        again.goto(f"{dashboard.url}squads/code-review/agents/reviewer")
        mine = again.locator("#memory-history tbody tr", has_text="cli remembered")
        mine.first.locator("button", has_text="Revert").click()
        expect(again.locator("#history-flash .error")).to_contain_text("nothing to undo")
        expect(again.locator("#project-memory")).not_to_contain_text(line)
        expect(again.locator("#memory-history tbody tr").first.locator(".badge")).to_have_text(
            "web"
        )
    finally:
        again.close()
