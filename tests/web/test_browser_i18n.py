"""The Korean dashboard in a real browser (Debian's Chromium through Playwright, a real
``squad daemon``): the header's switch changes the language and the choice survives links,
reloads and htmx's polling; a browser that asks for Korean gets it without the switch; the
Korean pages keep their layout and their pictures' Korean labels fit. Screenshots go to
``build/screenshots/*-ko.png`` (the README's copies are in ``docs/screenshots/``)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.web.test_browser import (
    SHOTS,
    TIMEOUT_MS,
    VIEWPORT,
    Dashboard,
    browser,  # noqa: F401 - the module's Chromium
    dashboard,  # noqa: F401 - the module's daemon
    expect,
    page_errors,
    paused_run,
    settled,
    shot,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Locator, Page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


@pytest.fixture
def english(browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:  # noqa: F811
    """A logged-in browser that asks for English (as most do)."""
    opened = browser.new_context(viewport=VIEWPORT, locale="en-US")
    opened.set_default_timeout(TIMEOUT_MS)
    opened.new_page().goto(dashboard.login)
    try:
        yield opened
    finally:
        opened.close()


def _fits(page: Page) -> None:
    """Nothing sticks out sideways: no horizontal scrolling, the header on one line."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] if page.viewport_size else True
    header = page.locator("header.top").bounding_box()
    assert header is not None and header["height"] < 60


def test_the_switch_changes_the_language_and_it_stays_across_links_and_reloads(
    english: BrowserContext,
    dashboard: Dashboard,  # noqa: F811
) -> None:
    settled(dashboard)
    page = english.new_page()
    problems = page_errors(page)
    page.goto(dashboard.url)
    html = page.locator("html")
    expect(html).to_have_attribute("lang", "en")
    expect(page.locator("header nav a").first).to_have_text("Overview")

    page.locator("#lang-switch a[data-lang=ko]").click()
    expect(html).to_have_attribute("lang", "ko")
    expect(page.locator("header nav a").first).to_have_text("개요")
    expect(page.locator("#lang-switch strong")).to_have_text("한국어")
    cookie = next(c for c in english.cookies() if c["name"] == "squad_lang")
    assert cookie["value"] == "ko" and cookie["sameSite"] == "Lax"
    assert cookie["expires"] > 0  # kept after the browser closes

    page.locator("header nav a", has_text="승인").click()  # a plain link, no ?lang=
    expect(page.locator("h1")).to_have_text("승인")
    assert "lang=" not in page.url
    page.reload()
    expect(page.locator("h1")).to_have_text("승인")
    expect(page.locator("#approvals button[value=approve]")).to_have_text("승인")
    expect(page.locator("#approvals button[value=reject]")).to_have_text("거부")
    _fits(page)
    shot(page, "approvals-ko.png")

    page.goto(dashboard.url)  # the overview polls its body: the swapped-in part stays Korean
    expect(page.locator("#squads thead th").first).to_have_text("스쿼드")
    with page.expect_response(lambda r: "part=body" in r.url):
        pass
    expect(page.locator("#squads thead th").first).to_have_text("스쿼드")
    expect(page.locator("#squads .status")).to_have_text(["성공", "승인 대기 중"])
    _fits(page)
    shot(page, "overview-ko.png")

    page.locator("#lang-switch a[data-lang=en]").click()
    expect(html).to_have_attribute("lang", "en")
    expect(page.locator("header nav a").first).to_have_text("Overview")
    page.close()
    assert problems == []


def test_a_browser_asking_for_korean_gets_the_workspace_in_korean(
    browser: Browser,  # noqa: F811
    dashboard: Dashboard,  # noqa: F811
) -> None:
    opened = browser.new_context(viewport=VIEWPORT, locale="ko-KR")
    opened.set_default_timeout(TIMEOUT_MS)
    try:
        page = opened.new_page()
        problems = page_errors(page)
        page.goto(dashboard.login)
        expect(page.locator("html")).to_have_attribute("lang", "ko")
        expect(page.locator("#squads thead th").nth(1)).to_have_text("일정")
        page.goto(f"{dashboard.url}squads/docs-site/files")
        expect(page.locator("#health")).to_contain_text("파일")  # a fragment, Korean too
        expect(page.locator("#pane")).to_have_text("미리 볼 파일을 고르세요.")
        tree = page.locator("#tree")
        tree.locator("details[data-path='tasks'] > summary").click()
        tree.locator("details[data-path='tasks/draft'] > summary").click()
        tree.locator("a[data-path='tasks/draft/output.md']").click()
        expect(page.locator("#pane h2.file")).to_have_text("tasks/draft/output.md")
        expect(page.locator("#pane p.dim")).to_contain_text("수정")
        expect(page.locator("#pane p.dim")).to_contain_text("마크다운")
        _fits(page)
        shot(page, "explorer-ko.png")
        page.locator("input[name=q]").fill("guide")
        page.locator("form[role=search] button").click()
        expect(page.locator("#pane > h2").first).to_contain_text("검색 결과")
        page.goto(f"{dashboard.url}squads/docs-site/agents/writer")
        expect(page.locator("#context-regions caption")).to_contain_text("토큰 컨텍스트 창의 영역")
        expect(page.locator("#memory-history th").first).to_have_text("시각")
        shot(page, "agent-memory-ko.png")
        assert problems == []
    finally:
        opened.close()


PHONE = {"width": 390, "height": 844}

CRAMPED = """(svg) => {
  const view = svg.viewBox.baseVal;
  const problems = [];
  const drawn = [];
  if (!svg.getBoundingClientRect().width) return ["not drawn: a hidden picture has no boxes"];
  const own = (t) => Array.from(t.childNodes).filter((n) => n.nodeType === 3)
    .map((n) => n.data).join("").trim();
  svg.querySelectorAll("text").forEach((t) => {
    const words = own(t);
    if (!words) return;
    const b = t.getBBox();
    if (b.x < view.x - 0.5 || b.y < view.y - 0.5 || b.x + b.width > view.x + view.width + 0.5
        || b.y + b.height > view.y + view.height + 0.5) problems.push("outside: " + words);
    const node = t.closest("g.node");
    if (node) {
      const r = node.querySelector("rect").getBBox();
      if (b.x < r.x + 2 || b.x + b.width > r.x + r.width - 2) {
        problems.push("wider than its node: " + words);
      }
    }
    drawn.push([words, b]);
  });
  drawn.forEach(([a, p], i) => drawn.slice(i + 1).forEach(([c, q]) => {
    const apart = p.x + p.width <= q.x + 0.5 || q.x + q.width <= p.x + 0.5
      || p.y + p.height <= q.y + 0.5 || q.y + q.height <= p.y + 0.5;
    if (!apart) problems.push("overlap: " + a + " / " + c);
  }));
  return problems;
}"""
"""What a picture's text does wrong as the browser drew it (with its real font): a label
outside the picture, a task's words wider than its node, two labels on top of each other."""


def cramped(picture: Locator) -> list[str]:
    """:data:`CRAMPED` of the picture as drawn once it stays drawn: the run page redraws its
    timeline after the log's events replay (htmx swaps it in), and a picture swapped out
    while it was measured reads as hidden; the next look finds the new one."""
    for _ in range(10):
        problems: list[str] = picture.evaluate(CRAMPED)
        if problems != ["not drawn: a hidden picture has no boxes"]:
            return problems
        time.sleep(0.3)
    return problems


def test_the_korean_pictures_fit_their_labels(
    browser: Browser,  # noqa: F811
    dashboard: Dashboard,  # noqa: F811
) -> None:
    """The run's timeline (lanes, legend, axis title), the task graph's nodes and the memory
    page in Korean: Hangul is drawn, no label sticks out or covers another, nothing scrolls
    sideways. Screenshots: run-ko.png, run-timeline-ko.png,
    run-timeline-phone-ko.png, squad-ko.png, task-graph-ko.png,
    memory-ko.png."""
    settled(dashboard)
    run = paused_run(dashboard)
    opened = browser.new_context(viewport=VIEWPORT, locale="ko-KR")
    opened.set_default_timeout(TIMEOUT_MS)
    try:
        page = opened.new_page()
        problems = page_errors(page)
        page.goto(dashboard.login)
        page.goto(f"{dashboard.url}runs/{run['id']}")
        expect(page.locator("#run-status")).to_have_text("승인 대기 중")
        timeline = page.locator("#run-picture .wide-only svg.timeline")
        expect(timeline.locator("text.axis-title")).to_have_text("실행 시작 후 경과 시간 (분:초)")
        expect(timeline.locator("g.legend text")).to_have_text(
            ["완료", "실행 중", "실패", "승인 대기", "임계 경로"]
        )
        expect(timeline.locator("rect.wait title")).to_contain_text("publish 승인 대기")
        expect(page.locator("#log-state")).to_have_text(re.compile("^(실시간|종료됨)$"))
        assert cramped(timeline) == []
        _fits(page)
        shot(page, "run-ko.png")
        timeline.screenshot(path=str(SHOTS / "run-timeline-ko.png"))
        page.set_viewport_size(PHONE)  # the timeline drawn for a phone, legend wrapped
        narrow = page.locator("#run-picture .narrow-only svg.timeline")
        expect(narrow).to_be_visible()
        assert cramped(narrow) == []
        narrow.screenshot(path=str(SHOTS / "run-timeline-phone-ko.png"))
        page.set_viewport_size(VIEWPORT)

        page.goto(f"{dashboard.url}squads/docs-site")
        graph = page.locator("#task-graph svg.taskgraph")
        expect(graph.locator("g.node text.task-id")).to_have_text(
            ["outline", "draft", "review", "publish"]
        )
        expect(graph.locator("g.node.approval title")).to_contain_text(
            "먼저 사람의 승인을 받습니다"
        )
        assert cramped(graph) == []
        _fits(page)
        shot(page, "squad-ko.png")
        graph.screenshot(path=str(SHOTS / "task-graph-ko.png"))

        page.goto(f"{dashboard.url}memory")
        expect(page.locator("h1")).to_have_text("메모리")
        expect(page.locator("#decisions-fold summary h2")).to_have_text("결정")
        _fits(page)
        shot(page, "memory-ko.png")
        assert problems == []
    finally:
        opened.close()
