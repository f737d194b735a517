"""The dashboard in a real browser: Debian's Chromium, driven by Playwright, against a real
``squad daemon`` subprocess that serves the example squads on 127.0.0.1 (offline model).

The tests skip when /usr/bin/chromium is missing and fail instead under
``SQUAD_REQUIRE_BROWSER=1`` (CI sets it). Each saves a full-page screenshot of the page it
drives into ``build/screenshots/`` (or ``$SQUAD_SCREENSHOTS``). One daemon and one logged-in
browser context serve the whole module, so each test changes only what it owns: its own
fact, its own namespace, the one paused run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from squad.settings import Settings
from tests.cli.test_cli import Cli
from tests.conftest import propose
from tests.daemon.test_daemon_cli import Daemon
from tests.support.waiting import wait_for
from tests.web.conftest import REPO

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

# One worker runs the whole module, in order: its dashboard and browser start once, and each
# screenshot shows the state the tests before it left (as in a serial run).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(os.environ.get("SQUAD_SCREENSHOTS") or REPO / "build" / "screenshots")
"""Where every page's screenshot goes (``build/`` is not committed; the README's are copies
in ``docs/screenshots/``)."""
VIEWPORT = {"width": 1280, "height": 800}
TIMEOUT_MS = 20_000


@dataclass
class Dashboard:
    """The daemon serving the dashboard, its login link, and the CLI on the same home."""

    daemon: Daemon
    cli: Cli
    url: str
    login: str

    @property
    def token(self) -> str:
        return self.login.partition("token=")[2]

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url.rstrip("/"),
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
        )

    def settings(self) -> Settings:
        """The daemon's settings, for an App of its own in the test process."""
        env = {k: v for k, v in self.cli.env.items() if k.startswith("SQUAD_")}
        return Settings.load(env, cwd=self.cli.tmp)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium; skips (or fails, if required) when it or Playwright is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing: str | None = "Playwright is not installed (pip install -e '.[dev]')"
    else:
        missing = None if CHROMIUM.exists() else f"no Chromium at {CHROMIUM}"
    if missing is not None:
        if os.environ.get("SQUAD_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing} (SQUAD_REQUIRE_BROWSER=1 demands it)")
        pytest.skip(f"{missing}: apt-get install chromium")

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _login_line(stdout: Path) -> tuple[str, str] | None:
    """The dashboard address and login link the daemon printed, once it has."""
    text = stdout.read_text() if stdout.exists() else ""
    url = re.search(r"^dashboard: (\S+)$", text, re.MULTILINE)
    login = re.search(r"^\s+log in:\s+(\S+)$", text, re.MULTILINE)
    return (url.group(1), login.group(1)) if url and login else None


@pytest.fixture(scope="module")
def dashboard(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """``squad daemon --port 0`` on a copy of the example squads; both run on start (the
    docs-site run pauses at its approval gate). SIGTERM stops it at the end."""
    root = tmp_path_factory.mktemp("browser")
    shutil.copytree(REPO / "configs" / "squads", root / "configs" / "squads")
    cli = Cli(root)
    daemon = Daemon(cli)
    process = daemon.start()
    try:
        url, login = daemon.wait_for(lambda: _login_line(root / "daemon.out"), "the login link")
        assert login.startswith(f"{url}login?token=")
        yield Dashboard(daemon, cli, url, login)
    finally:
        if process.poll() is None:
            try:
                code = daemon.stop()
            except BaseException:
                process.kill()
                process.wait()
                raise
            assert code == 0, (root / "daemon.err").read_text()


@pytest.fixture(scope="module")
def context(browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:
    """A browser context logged in through the link."""
    opened = browser.new_context(viewport=VIEWPORT)
    opened.set_default_timeout(TIMEOUT_MS)
    page = opened.new_page()
    page.goto(dashboard.login)
    page.close()
    try:
        yield opened
    finally:
        opened.close()


def page_errors(tab: Page) -> list[str]:
    """A list that gathers the tab's script errors and console errors (a CSP violation
    included) from now on; a test fails when it is not empty."""
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on(
        "console",
        lambda message: (
            problems.append(f"console {message.type}: {message.text}")
            if message.type == "error"
            else None
        ),
    )
    return problems


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    """A tab of the logged-in context; the test fails on any script error or console error
    (a CSP violation included)."""
    tab = context.new_page()
    problems = page_errors(tab)
    yield tab
    tab.close()
    assert problems == []


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def expect(target: Any) -> Any:
    """Playwright's retrying assertions, with room for a loaded CI machine."""
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=TIMEOUT_MS)
    return playwright_expect(target)


def settled(dashboard: Dashboard) -> None:
    """Until both start-up runs have ended (the docs-site one, or paused at its gate)."""
    with dashboard.api() as api:

        def ended() -> bool:
            squads = api.get("/api/v1/overview").json()["squads"]
            return len(squads) == 2 and all(
                s["last_run"] and s["last_run"]["status"] not in ("pending", "running")
                for s in squads
            )

        wait_for(ended, "the start-up runs to end")


def paused_run(dashboard: Dashboard) -> dict[str, Any]:
    """The docs-site run waiting at its approval gate (the daemon ran it on start)."""
    with dashboard.api() as api:

        def waiting() -> dict[str, Any] | None:
            runs = api.get("/api/v1/approvals").json()
            return next((r for r in runs if r["squad"] == "docs-site"), None)

        found: dict[str, Any] = wait_for(waiting, "the docs-site run at its approval gate")
        return found


# -- logging in, the overview --------------------------------------------------------------------


def test_the_login_link_sets_a_session_cookie_and_lands_on_the_overview(
    browser: Browser, dashboard: Dashboard
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(dashboard.login)
        assert page.url == dashboard.url  # the token left the address bar
        cookies = {c["name"]: c for c in context.cookies()}
        assert cookies["squad_session"]["httpOnly"] is True
        assert cookies["squad_session"]["sameSite"] == "Strict"
        assert dashboard.token not in cookies["squad_session"]["value"]
        squads = page.locator("#squads tbody tr td:first-child a")
        expect(squads).to_have_text(["code-review", "docs-site"])
        expect(page.locator(".card").first).to_contain_text("up · pid")
        settled(dashboard)  # so the screenshot shows both last runs
        page.reload()
        expect(page.locator("#squads .status")).to_have_count(2)
        shot(page, "overview.png")
    finally:
        context.close()


def test_a_browser_without_the_token_gets_401_and_a_path_escape_gets_400(
    browser: Browser, dashboard: Dashboard, context: BrowserContext
) -> None:
    stranger = browser.new_context(viewport=VIEWPORT)
    try:
        refused = stranger.new_page().goto(dashboard.url)
        assert refused is not None and refused.status == 401
        wrong = stranger.new_page().goto(f"{dashboard.url}login?token=not-the-token")
        assert wrong is not None and wrong.status == 401
        assert stranger.cookies() == []
    finally:
        stranger.close()
    page = context.new_page()
    try:
        answer = page.goto(f"{dashboard.url}squads/docs-site/preview?path=../../etc/passwd")
        assert answer is not None and answer.status == 400
        expect(page.locator("h1")).to_have_text("400")
        expect(page.locator("p.error")).to_contain_text("must be relative to the workspace")
        assert "root:" not in page.content()
    finally:
        page.close()


def test_run_now_on_the_squad_page_queues_a_run_the_daemon_runs_and_the_list_shows_it(
    dashboard: Dashboard, page: Page
) -> None:
    settled(dashboard)
    page.goto(f"{dashboard.url}squads/code-review")
    runs = page.locator("#runs tbody tr")
    expect(runs).to_have_count(1)
    page.locator("input[name=goal]").fill("Add a --dry-run flag to the export command.")
    page.locator("button", has_text="Run now").click()
    expect(page.locator("#run-result")).to_contain_text("Run queued")
    mine = runs.filter(has_text="web")
    expect(mine.locator(".status")).to_have_text("succeeded")  # the list follows, no reload
    expect(runs).to_have_count(2)
    expect(page.locator("#squad-runs h2")).to_have_text("Runs (2)")
    shot(page, "squad.png")
    with dashboard.api() as api:
        latest = api.get("/api/v1/squads/code-review").json()["runs"][0]
    assert latest["trigger"] == "web" and latest["goal"].startswith("Add a --dry-run flag")


# -- the workspace explorer ----------------------------------------------------------------------


def test_the_explorer_expands_folders_and_previews_markdown_as_html(
    dashboard: Dashboard, page: Page
) -> None:
    remembered = dashboard.cli(
        "memory",
        "remember",
        "docs-site",
        "writer",
        "The site is built with MkDocs Material",
        "--layer",
        "project",
    )
    assert remembered.returncode == 0, remembered.stderr
    page.goto(f"{dashboard.url}squads/docs-site/files")
    tree = page.locator("#tree")
    tree.locator("details[data-path='agents'] > summary").click()
    writer = tree.locator("details[data-path='agents/writer'] > summary")
    expect(writer).to_be_visible()
    writer.click()
    memory = tree.locator("a[data-path='agents/writer/memory.md']")
    expect(memory).to_be_visible()
    memory.click()
    preview = page.locator("#pane #preview.markdown")
    expect(page.locator("#pane h2.file")).to_have_text("agents/writer/memory.md")
    expect(preview.locator("h1")).to_have_text(
        ["Project Context", "Coding Rules", "Decisions", "Insights"]
    )
    expect(preview.locator("li")).to_contain_text(["The site is built with MkDocs Material"])
    # a task's output, a folder deeper
    tree.locator("details[data-path='tasks'] > summary").click()
    tree.locator("details[data-path='tasks/draft'] > summary").click()
    tree.locator("a[data-path='tasks/draft/output.md']").click()
    expect(page.locator("#pane h2.file")).to_have_text("tasks/draft/output.md")
    expect(tree.locator("a[aria-current]")).to_have_attribute("data-path", "tasks/draft/output.md")
    expect(preview.locator("h1")).to_have_text("Write the guide following the outline")
    expect(preview.locator("h2")).to_have_text(["Approach", "Result"])
    expect(preview.locator("em")).to_contain_text("offline model")
    shot(page, "explorer.png")


def test_a_task_output_link_opens_the_explorer_on_that_file(
    dashboard: Dashboard, page: Page
) -> None:
    page.goto(f"{dashboard.url}squads/docs-site/files?open=tasks/draft/output.md")
    expect(page.locator("#pane h2.file")).to_have_text("tasks/draft/output.md")
    expect(page.locator("#pane #preview.markdown h2").first).to_have_text("Approach")


def test_a_workspace_search_highlights_its_matches(dashboard: Dashboard, page: Page) -> None:
    page.goto(f"{dashboard.url}squads/docs-site/files")
    page.locator("form[role=search] input[name=q]").fill("guide")
    page.locator("form[role=search] button[type=submit]").click()
    expect(page.locator("#pane h2")).to_contain_text("matches for")
    marks = page.locator("#pane pre.hit mark")
    expect(marks.first).to_be_visible()
    assert marks.count() >= 3
    assert {m.lower() for m in marks.all_inner_texts()} == {"guide"}
    hit = page.locator("#pane .hits h3 a", has_text="tasks/draft/output.md")
    expect(hit).to_be_visible()
    shot(page, "search.png")
    hit.click()  # a hit opens its file in the same pane
    expect(page.locator("#pane h2.file")).to_have_text("tasks/draft/output.md")


# -- memory --------------------------------------------------------------------------------------


def test_turning_a_namespace_on_puts_its_facts_into_another_agents_prompt(
    dashboard: Dashboard, page: Page
) -> None:
    fact = "The release checklist lives in RELEASING.md"
    remembered = dashboard.cli(
        "memory", "remember", "code-review", "developer", fact, "--layer", "experiential"
    )
    assert remembered.returncode == 0, remembered.stderr
    agent_page = f"{dashboard.url}squads/docs-site/agents/writer"
    page.goto(agent_page)
    expect(page.locator("#context-text")).not_to_contain_text(fact)

    page.goto(f"{dashboard.url}memory")
    row = page.locator("#namespaces tr", has_text="python-dev-v1")
    expect(row.locator("td").nth(2)).not_to_have_text("0")  # its facts
    switch = row.locator("button")
    expect(switch).to_have_text("off")
    switch.click()
    expect(row.locator("button")).to_have_text("on")
    expect(row.locator("button")).to_have_attribute("aria-pressed", "true")
    shot(page, "memory.png")

    page.goto(agent_page)
    context_text = page.locator("#context-text")
    expect(context_text).to_contain_text(fact)
    expect(context_text).to_contain_text("Supplementary Context")
    # typing a message asks for that message's context, in place
    with page.expect_response(lambda r: "/agents/writer/context?message=" in r.url):
        page.locator("input[name=message]").fill("write the release notes")
    expect(context_text).to_contain_text(fact)
    shot(page, "agent-memory.png")

    with dashboard.api() as api:
        listed = {n["identity"]: n for n in api.get("/api/v1/memory/namespaces").json()}
    assert listed["profile:python-dev-v1"]["enabled"] is True
    # leave the home as it was found
    page.goto(f"{dashboard.url}memory")
    page.locator("#namespaces tr", has_text="python-dev-v1").locator("button").click()
    expect(page.locator("#namespaces tr", has_text="python-dev-v1").locator("button")).to_have_text(
        "off"
    )


def test_soul_md_saved_in_the_memory_page_reaches_the_next_system_prompt(
    dashboard: Dashboard, page: Page
) -> None:
    from squad.app import App
    from squad.memory.agent import AgentContext

    page.goto(f"{dashboard.url}memory#boot-soul")  # opens the folded boot files
    editor = page.locator("#boot-soul")
    text = editor.locator("textarea[name=text]")
    before = text.input_value()
    assert before.strip(), "the daemon writes a default SOUL.md"
    persona = "You sign every page you write with the squad's name."
    noticed = len(dashboard.daemon.events("boot_changed"))
    text.fill(f"{before.rstrip()}\n- {persona}\n")
    editor.locator("button[type=submit]").click()
    expect(editor.locator("p.ok")).to_have_text("Saved.")
    expect(editor.locator("textarea[name=text]")).to_have_value(re.compile(re.escape(persona)))

    home = dashboard.cli.home
    assert persona in (home / "SOUL.md").read_text()
    audit = [
        json.loads(line) for line in (home / "logs" / "memory-audit.jsonl").read_text().splitlines()
    ]
    assert audit[-1]["actor"] == "web" and audit[-1]["file"] == "SOUL.md"
    # the daemon noticed the edit, and the next turn's system prompt carries it
    dashboard.daemon.wait_for(
        lambda: len(dashboard.daemon.events("boot_changed")) > noticed,
        "the daemon's boot_changed event for the edit",
    )
    with App.open(dashboard.settings()) as app:
        spec, workspace = app.squads.definition("docs-site")
        prompt = app.memory.system_prompt(AgentContext.of(spec, "writer", workspace))
    assert persona in prompt

    # a second save from the same editor works too (it holds the new version), and leaves
    # the home as it was found
    editor.locator("textarea[name=text]").fill(before)
    with page.expect_response(lambda r: r.url.endswith("/memory/boot/soul")) as saved:
        editor.locator("button[type=submit]").click()
    assert saved.value.status == 200
    expect(editor.locator("textarea[name=text]")).to_have_value(before)
    assert (home / "SOUL.md").read_text() == before


def test_the_agent_page_shows_regions_working_memory_and_approves_the_review_queue(
    dashboard: Dashboard, page: Page
) -> None:
    from squad.app import App

    paused = paused_run(dashboard)
    facts = ["The style guide lives in docs/STYLE.md.", "Screenshots are taken at 1280 wide."]
    with App.open(dashboard.settings()) as app:
        for text in facts:
            propose(app.store, "docs-site", "writer", text)
    page.goto(f"{dashboard.url}squads/docs-site/agents/writer")
    regions = page.locator("#context-regions")
    expect(regions).to_contain_text("regions for a window of 8,192 tokens (offline)")
    expect(regions.locator("tbody tr")).to_have_count(8)
    expect(regions.locator('tr[data-region="working"] td').nth(2)).not_to_have_text("0")
    working = page.locator("#working-memory")
    expect(working).to_contain_text(f"run {paused['id']}")
    expect(working).to_contain_text("Remaining:")
    panel = page.locator("#review-panel")
    for text in facts:
        expect(panel).to_contain_text(text)
    expect(page.locator("#context-text")).not_to_contain_text("docs/STYLE.md")  # pending
    shot(page, "agent-memory-regions-review.png")

    panel.locator("input[data-tick-all]").check()
    panel.locator("button[value=approve]").click()
    expect(page.locator("#review-panel p.ok")).to_contain_text("2 written to memory")
    expect(page.locator("#review-panel")).to_contain_text("nothing awaits review")
    memory = dashboard.cli.workspaces / "docs-site" / "agents" / "writer" / "memory.md"
    assert all(text.rstrip(".") in memory.read_text() for text in facts)
    history = page.locator("#memory-history")  # refreshed in place: the approval is a change
    expect(history).to_contain_text("approved")
    expect(history).to_contain_text("docs/STYLE.md")
    shot(page, "agent-memory-review-approved.png")


# -- approvals and the live run log --------------------------------------------------------------


def test_approving_the_paused_run_in_the_browser_shows_it_finish_live(
    dashboard: Dashboard, page: Page
) -> None:
    run = paused_run(dashboard)
    page.goto(f"{dashboard.url}approvals")
    row = page.locator("#approvals tbody tr", has_text="docs-site")
    expect(row).to_contain_text("publish")
    shot(page, "approvals.png")

    row.locator("a[href^='/runs/']").click()
    page.wait_for_url(f"**/runs/{run['id']}")
    log = page.locator("#log li")
    expect(log.first).to_be_visible()  # the log so far, from the event stream
    expect(page.locator("#run-status")).to_have_text("awaiting_approval")
    expect(page.locator("#log-state")).to_have_text("live")
    before = log.count()
    page.evaluate("window.squadSamePage = true")
    page.locator("form.approval button[value=approve]").click()
    expect(page.locator("#decision")).to_contain_text("Approved")
    expect(page.locator("#run-status")).to_have_text("succeeded")
    expect(page.locator("#log li.ev-run_end").last).to_contain_text("status=succeeded")
    expect(page.locator("#log-state")).to_have_text("ended")
    assert log.count() > before
    assert page.evaluate("window.squadSamePage") is True  # no reload on the way
    expect(page.locator("#tasks tr", has_text="publish").locator(".status")).to_have_text("done")
    shot(page, "run-live.png")


def test_the_spend_page_charts_tokens_per_run(dashboard: Dashboard, page: Page) -> None:
    settled(dashboard)
    page.goto(f"{dashboard.url}spend")
    blocks = page.locator(".chart-block")
    expect(blocks.locator("h2 a")).to_have_text(["code-review", "docs-site"])
    expect(blocks.first.locator("svg.chart").first).to_be_visible()
    shot(page, "spend.png")
