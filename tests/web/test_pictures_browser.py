"""The dashboard's pictures and its phone layout in a real browser (Debian's Chromium through
Playwright, against a real ``squad daemon`` on the example squads, as in test_browser.py):
the run timeline and the task graph drawn and refreshed, the memory filter, and no page wider
than a phone. Screenshots go where test_browser.py puts its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.test_browser import (  # noqa: F401 - fixtures, shared with this module
    SHOTS,
    TIMEOUT_MS,
    Dashboard,
    browser,
    context,
    dashboard,
    expect,
    page,
    paused_run,
    settled,
    shot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, FloatRect, Locator, Page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("pictures-browser")]

PHONE = {"width": 390, "height": 844}

OVERFLOW = """() => {
  const width = window.innerWidth;
  const wide = [];
  document.querySelectorAll("body *").forEach((el) => {
    const box = el.getBoundingClientRect();
    const inside = el.closest("table.grid, pre, ol.log, .markdown table");
    if (box.right > width + 1 && inside === null) {
      const css = el.getAttribute("class") || "";
      wide.push(el.tagName.toLowerCase() + "#" + el.id + "." + css + " " + Math.round(box.right));
    }
  });
  return {scroll: document.documentElement.scrollWidth, inner: width, wide: wide.slice(0, 8)};
}"""
"""The page's width against the window's, and the first elements that stick out (those
inside a table, a code block or the log scroll in their own box)."""


def steady_box(tab: Page, picture: Locator) -> FloatRect:
    """The picture's box, asked again while a redraw has swapped the element out (Playwright
    answers None for an element detached between finding and measuring it)."""
    for _ in range(int(TIMEOUT_MS / 100)):
        box = picture.bounding_box()
        if box is not None:
            return box
        tab.wait_for_timeout(100)
    raise AssertionError(f"{picture} had no box for {TIMEOUT_MS} ms")


@pytest.fixture(scope="module")
def phone(browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:  # noqa: F811
    """A logged-in context the size of a phone (390 x 844, touch)."""
    opened = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    opened.set_default_timeout(TIMEOUT_MS)
    tab = opened.new_page()
    tab.goto(dashboard.login)
    tab.close()
    try:
        yield opened
    finally:
        opened.close()


def test_the_run_page_draws_its_timeline_and_the_approval_redraws_it_live(
    dashboard: Dashboard,  # noqa: F811
    page: Page,  # noqa: F811
) -> None:
    run = paused_run(dashboard)
    page.goto(f"{dashboard.url}runs/{run['id']}")
    picture = page.locator("#run-picture .wide-only svg.timeline")
    expect(picture).to_be_visible()
    bars = picture.locator("rect.bar[data-task]")
    expect(bars).to_have_count(3)  # publish waits for its approval: a shaded wait, no bar
    expect(picture.locator("rect.wait title")).to_contain_text("publish waited for approval")
    expect(picture.locator("rect.bar.critical[data-task]")).to_have_count(3)
    box = steady_box(page, picture)
    assert 600 < box["width"] <= 760  # drawn at its own size on a desktop
    shot(page, "run-timeline.png")
    # by the box, not the element: a redraw may swap the element out while it is taken
    page.screenshot(path=str(SHOTS / "run-timeline-picture.png"), clip=box)

    page.locator("form.approval button[value=approve]").click()
    expect(page.locator("#run-status")).to_have_text("succeeded")
    redrawn = page.locator("#run-picture .wide-only svg.timeline")
    expect(redrawn.locator("rect.bar[data-task]")).to_have_count(4)  # publish ran
    expect(redrawn.locator("rect.bar.critical[data-task]")).to_have_count(4)
    title = redrawn.locator('rect.bar[data-task="publish"] title')
    expect(title).to_contain_text("publish (writer):")
    expect(redrawn.locator("line.now")).to_have_count(0)
    shot(page, "run-timeline-finished.png")
    # while a run runs, its timeline is redrawn every few seconds (a model call can be long
    # and log nothing); a finished one is not
    # (a redraw the log's last events asked for may still land and put the finished status
    # back; the page is told it runs again until the tick's request is seen)
    ticks: list[str] = []
    page.on(
        "request",
        lambda r: (
            ticks.append(r.url)
            if r.url.endswith(f"/runs/{run['id']}") and "hx-request" in r.headers
            else None
        ),
    )
    for _ in range(120):  # up to 30 s: the tick comes every 5 s
        if ticks:
            break
        page.evaluate(
            "() => { const s = document.getElementById('run-status');"
            " if (!s.classList.contains('running')) s.className = 'status running'; }"
        )
        page.wait_for_timeout(250)
    assert ticks, "a page whose run runs asked for no redraw in 30 s"
    expect(page.locator("#run-status")).to_have_class("status succeeded")  # redrawn from the store


def test_the_squad_page_draws_its_task_graph(
    dashboard: Dashboard,  # noqa: F811
    page: Page,  # noqa: F811
) -> None:
    page.goto(f"{dashboard.url}squads/docs-site")
    graph = page.locator("#task-graph svg.taskgraph")
    expect(graph).to_be_visible()
    expect(graph.locator("g.node text.task-id")).to_have_text(
        ["outline", "draft", "review", "publish"]
    )
    expect(graph.locator("path.edge")).to_have_count(3)
    graph.screenshot(path=str(SHOTS / "task-graph.png"))
    settled(dashboard)
    page.goto(f"{dashboard.url}squads/code-review")
    planned = page.locator("#task-graph svg.taskgraph")
    expect(planned).to_be_visible()
    assert planned.locator("g.node").count() >= 2
    planned.screenshot(path=str(SHOTS / "task-graph-plan.png"))


def test_the_memory_filter_keeps_the_sections_and_lines_that_match(
    dashboard: Dashboard,  # noqa: F811
    page: Page,  # noqa: F811
) -> None:
    remembered = dashboard.cli(
        "memory",
        "remember",
        "docs-site",
        "writer",
        "Screenshots live in docs/screenshots",
        "--layer",
        "project",
    )
    assert remembered.returncode == 0, remembered.stderr
    page.goto(f"{dashboard.url}squads/docs-site/agents/writer")
    sections = page.locator("#project-memory details.mem-section")
    total = sections.count()
    assert total >= 3
    opened = [sections.nth(i).evaluate("d => d.open") for i in range(total)]
    assert opened[:2] == [True, True] and not any(opened[2:])
    box = page.locator("#memory-filter")
    box.fill("screenshots live")
    visible = page.locator("#project-memory details.mem-section:visible")
    expect(visible).to_have_count(1)
    expect(visible.locator("li:visible")).to_have_text(
        [re.compile(r"^Screenshots live in docs/screenshots")]
    )
    expect(page.locator("#memory-filter-count")).to_have_text(f"1 of {total} sections match")
    shot(page, "agent-memory-filtered.png")
    box.fill("")
    expect(page.locator("#project-memory details.mem-section:visible")).to_have_count(total)
    assert [sections.nth(i).evaluate("d => d.open") for i in range(total)] == opened

    page.goto(f"{dashboard.url}memory")
    expect(page.locator("details.fold[open]")).to_have_count(2)
    page.locator("#page-filter").fill("soul")
    expect(page.locator("details.fold:visible")).to_have_count(1)
    expect(page.locator("#boot-fold")).to_have_attribute("open", "")
    shot(page, "memory-filtered.png")


def test_no_page_is_wider_than_a_phone(
    dashboard: Dashboard,  # noqa: F811
    phone: BrowserContext,
) -> None:
    settled(dashboard)
    with dashboard.api() as api:
        run = api.get("/api/v1/squads/docs-site").json()["runs"][0]
    pages = {
        "overview": "",
        "squad": "squads/docs-site",
        "squad-plan": "squads/code-review",
        "run": f"runs/{run['id']}",
        "memory": "memory",
        "agent-memory": "squads/docs-site/agents/writer",
        "spend": "spend",
        "approvals": "approvals",
        "explorer": "squads/docs-site/files",
    }
    tab = phone.new_page()
    try:
        for name, path in pages.items():
            tab.goto(f"{dashboard.url}{path}")
            tab.wait_for_load_state("load")
            tab.wait_for_timeout(600)  # the fragments a page loads after it
            measured = tab.evaluate(OVERFLOW)
            assert measured["scroll"] <= measured["inner"], (name, measured)
            tab.screenshot(path=str(SHOTS / f"phone-{name}.png"), full_page=True)
        # a phone gets the timeline drawn for its width (its text stays readable), not the
        # desktop's shrunk
        tab.goto(f"{dashboard.url}runs/{run['id']}")
        expect(tab.locator("#run-picture .wide-only svg")).to_be_hidden()
        box = steady_box(tab, tab.locator("#run-picture .narrow-only svg"))
        assert 340 <= box["width"] <= PHONE["width"]
    finally:
        tab.close()
