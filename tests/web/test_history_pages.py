"""The workspaces' history on the dashboard, against a real server: the files a run changed
since the previous run and each file's diff (escaped), the note for a run with no commit yet,
an agent's memory changes and their revert (a POST with the session's CSRF token)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from squad.model.testing import OpenAIStubServer
from squad.spec.loader import squad_from_text
from squad.store.records import RunStatus
from squad.web.history import run_changes
from squad.web.history_pages import diff_lines
from tests.runtime.test_runner import on_stub
from tests.web.conftest import Served
from tests.web.test_guard import Browser

# The stub is set up before the served app, so it outlives the extraction the runs queue.
pytestmark = pytest.mark.usefixtures("stub")

WEEKLY = """\
name: weekly
goal: Audit the dependencies.
agents:
  - {id: auditor, role: Audits dependencies}
tasks:
  - {id: audit, description: List outdated dependencies., agent: auditor}
"""
SCRIPT = "<script>alert('owned')</script>"


@dataclass
class TwoRuns:
    first: str
    second: str
    workspace: Path


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    """A model that answers with the task's prompt, goal included: runs differ by goal."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STUB_KEY", "stub-key")
        with OpenAIStubServer() as server:
            yield server


@pytest.fixture(scope="module")
def runs(stub: OpenAIStubServer, served: Served) -> TwoRuns:
    """The module's own squad, run twice with different goals (the second holds a script)."""
    spec = squad_from_text(on_stub(WEEKLY, stub.url), source="weekly.yaml")
    workspace = served.app.squads.create(spec).path
    first = served.app.runner().run(spec, workspace, goal="Audit for week 1.")
    second = served.app.runner().run(spec, workspace, goal=f"Audit for week 2. {SCRIPT}")
    assert first.succeeded and second.succeeded
    return TwoRuns(first.run_id, second.run_id, workspace)


@pytest.fixture
def browser(served: Served) -> Iterator[Browser]:
    made = Browser(served)
    try:
        yield made
    finally:
        made.client.close()


def fragment(client: Served | Browser, url: str, **params: str) -> str:
    """A fragment as htmx asks for it; 200 and HTML."""
    response = client.client.get(url, params=params, headers={"HX-Request": "true"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    return response.text


def files_listed(html: str) -> dict[str, str]:
    """Each changed file of the changes fragment with the text of its summary."""
    found = re.findall(r'<summary><code class="path">([^<]*)</code>(.*?)</summary>', html)
    return {path: re.sub(r"<[^>]+>", "", rest).strip() for path, rest in found}


# -- a run's changes -------------------------------------------------------------------------


def test_the_run_page_loads_the_files_the_run_changed_since_the_previous_run(
    served: Served, runs: TwoRuns
) -> None:
    page = served.client.get(f"/runs/{runs.second}")
    assert page.status_code == 200
    assert f'hx-get="/runs/{runs.second}/changes" hx-trigger="load"' in page.text

    html = fragment(served, f"/runs/{runs.second}/changes")
    assert "Changes since the previous run" in html
    assert f'<a href="/runs/{runs.first}" id="previous-run">{runs.first}</a>' in html
    commit = run_changes(served.app, runs.second).run.commit
    assert commit is not None
    assert f'<code title="{commit}">{commit[:10]}</code>' in html
    expected = run_changes(served.app, runs.second).changes
    outputs = {c.path for c in expected if not c.path.startswith("agents/auditor/daily/")}
    assert outputs == {"tasks/audit/output.md", "tasks/audit/status.json"}
    assert len(expected) == 3  # and the auditor's daily log, with its working memory summary
    listed = files_listed(html)
    assert set(listed) == {c.path for c in expected}
    for change in expected:
        assert listed[change.path].endswith(f"+{change.added} -{change.removed}")
    assert f'hx-get="/runs/{runs.second}/diff?path=tasks/audit/output.md"' in html
    assert "every 5s" not in html, "a committed run's section is not polled"


def test_a_files_diff_colours_its_lines_and_shows_a_script_as_text(
    served: Served, runs: TwoRuns
) -> None:
    html = fragment(served, f"/runs/{runs.second}/diff", path="tasks/audit/output.md")
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in html
    added = re.findall(r'<span class="add">([^<]*)</span>', html)
    removed = re.findall(r'<span class="del">([^<]*)</span>', html)
    assert any("week 2" in line and "&lt;script&gt;" in line for line in added)
    assert any("week 1" in line for line in removed)
    assert not any("week 2" in line for line in removed)
    assert '<span class="hunk">@@ ' in html
    assert '<span class="meta">--- a/tasks/audit/output.md</span>' in html
    assert "status.json" not in html, "only the file asked for"

    first = fragment(served, f"/runs/{runs.first}/changes")
    assert "none: the first since the history started" in first
    missing = served.client.get(f"/runs/{runs.second}/diff", headers={"HX-Request": "true"})
    assert missing.status_code == 422 and "path" in missing.text


def test_only_lines_inside_a_hunk_count_as_added_or_removed() -> None:
    patch = (
        "diff --git a/x.md b/x.md\n"
        "--- a/x.md\n"
        "+++ b/x.md\n"
        "@@ -1,2 +1,2 @@\n"
        " same\n"
        "-old\n"
        "+++ a line that starts with pluses\n"
        "\\ No newline at end of file\n"
        "diff --git a/y.md b/y.md\n"
        "+++ b/y.md\n"
    )
    assert [kind for kind, _ in diff_lines(patch)] == [
        "meta",
        "meta",
        "meta",
        "hunk",
        "ctx",
        "del",
        "add",
        "meta",
        "meta",
        "meta",
    ]
    assert diff_lines("") == []


def test_a_run_not_committed_yet_gets_a_note_polled_until_it_ends(
    served: Served, runs: TwoRuns
) -> None:
    pending = served.app.store.create_run("weekly", trigger="manual")
    html = fragment(served, f"/runs/{pending.id}/changes")
    assert "not committed yet (it is committed when it ends or pauses)" in html
    assert f'hx-get="/runs/{pending.id}/changes" hx-trigger="every 5s"' in html
    assert "<details" not in html

    served.app.store.update_run(pending.id, status=RunStatus.FAILED, error="left by a test")
    html = fragment(served, f"/runs/{pending.id}/changes")
    assert "not committed yet" in html and "has no commit in its workspace" in html
    assert "every 5s" not in html, "an ended run is not polled"
    assert served.client.get(f"/runs/{pending.id}").status_code == 200


# -- an agent's memory changes ---------------------------------------------------------------


def test_reverting_a_remembered_line_takes_it_out_once_and_a_second_time_undoes_nothing(
    served: Served, runs: TwoRuns, browser: Browser
) -> None:
    line = "Pin every dependency with a hash"
    ctx = served.app.agent("weekly", "auditor")
    served.app.memory.remember(ctx, line, layer="project", actor="cli")
    memory = runs.workspace / "agents" / "auditor" / "memory.md"
    assert line in memory.read_text()
    change = served.app.memory.history_of(ctx)[0]
    assert any(line in added for added in change.added)

    page = browser.client.get("/squads/weekly/agents/auditor")
    assert page.status_code == 200
    assert 'hx-get="/squads/weekly/agents/auditor/history" hx-trigger="load"' in page.text
    assert line in page.text.split('id="project-memory"')[1].split("</section>\n</div>")[0]
    history = fragment(browser, "/squads/weekly/agents/auditor/history")
    row = history.split(f'<tr id="change-{change.id}">')[1].split("</tr>")[0]
    assert "memory: cli remembered for auditor" in row and '<span class="badge">cli</span>' in row
    assert f'<span class="add">+ {change.added[0]}</span>' in row
    assert f'<input type="hidden" name="change" value="{change.id}">' in row
    assert 'hx-post="/squads/weekly/agents/auditor/revert"' in row
    changes = len(served.app.memory.history_of(ctx))
    assert history.count("<tr id=") == changes
    assert history.count('<form class="revert"') == changes - 1, "not the history's start"

    refused = browser.post("/squads/weekly/agents/auditor/revert", {"change": change.id})
    assert refused.status_code == 403 and "CSRF" in refused.text
    assert line in memory.read_text()
    assert len(served.app.memory.history_of(ctx)) == changes

    csrf = {"X-CSRF-Token": browser.csrf, "HX-Request": "true"}
    done = browser.post("/squads/weekly/agents/auditor/revert", {"change": change.id}, **csrf)
    assert done.status_code == 200, done.text
    assert f"Reverted {change.id}: memory: cli remembered for auditor" in done.text
    assert "took out 1 line." in done.text
    assert done.headers["HX-Trigger"] == "memory-changed"
    history = done.text.split('<div id="memory-history" ')[1].split(">")[0]
    assert 'hx-swap-oob="true"' in history  # swapped in out of band
    assert 'hx-trigger="memory-changed from:body"' in history  # and refreshed by later changes
    assert '<div id="agent-memory" hx-swap-oob="true">' in done.text
    assert line not in done.text.split('id="agent-memory"')[1]
    assert line not in memory.read_text()
    newest = served.app.memory.history_of(ctx)[0]
    assert newest.who == "web" and newest.reverts == change.commit
    assert f'<tr id="change-{newest.id}">' in done.text

    text = memory.read_bytes()
    again = browser.post("/squads/weekly/agents/auditor/revert", {"change": change.id}, **csrf)
    assert again.status_code == 422
    assert "nothing to undo" in again.text and 'class="error"' in again.text
    assert memory.read_bytes() == text
    assert len(served.app.memory.history_of(ctx)) == changes + 1

    bad = browser.post("/squads/weekly/agents/auditor/revert", {"change": "../HEAD"}, **csrf)
    assert bad.status_code == 422 and "change" in bad.text


# -- the JSON API ------------------------------------------------------------------------------


def test_the_api_lists_runs_with_their_commits_and_gives_a_runs_changes_and_diff(
    served: Served, runs: TwoRuns
) -> None:
    client = served.client
    listed = client.get("/api/v1/runs", params={"squad": "weekly", "limit": 5})
    assert listed.status_code == 200
    rows = listed.json()
    assert [r["run_id"] for r in rows] == [runs.second, runs.first]
    assert all(r["commit"] and r["source"] == "history" for r in rows)

    changes = client.get(f"/api/v1/runs/{runs.second[:8]}/changes").json()
    assert changes["previous_run"] == runs.first
    assert changes["run"]["commit"] == rows[0]["commit"]
    paths = {c["path"] for c in changes["changes"]}
    assert {p for p in paths if not p.startswith("agents/auditor/daily/")} == {
        "tasks/audit/output.md",
        "tasks/audit/status.json",
    }
    diff = client.get(
        f"/api/v1/runs/{runs.second}/diff", params={"path": "tasks/audit/output.md"}
    ).json()
    assert diff["old_run"] == runs.first and not diff["truncated"]
    assert "+" in diff["patch"] and "status.json" not in diff["patch"]
    stat = client.get(f"/api/v1/runs/{runs.second}/diff", params={"stat": "true"}).json()
    assert stat["patch"] is None and len(stat["stat"]) == len(paths) == 3
    assert client.get("/api/v1/runs/feedfacefeed/changes").status_code == 404
    assert client.get("/api/v1/runs/ab/changes").status_code == 422


def test_the_api_gives_an_agents_memory_history_and_reverts_a_change(
    served: Served, runs: TwoRuns
) -> None:
    ctx = served.app.agent("weekly", "auditor")
    served.app.memory.remember(ctx, "Audits run on Mondays", layer="project", actor="cli")
    client = served.client
    history = client.get("/api/v1/squads/weekly/agents/auditor/memory/history").json()
    change = history[0]
    assert change["who"] == "cli" and any("Mondays" in a for a in change["added"])
    url = "/api/v1/squads/weekly/agents/auditor/memory/revert"
    done = client.post(url, json={"change": change["id"]})
    assert done.status_code == 200, done.text
    assert done.json()["reverted"]["id"] == change["id"]
    again = client.post(url, json={"change": change["id"]})
    assert again.status_code == 422 and "nothing to undo" in again.json()["detail"]
    assert client.post(url, json={"change": "not-hex"}).status_code == 422
    assert client.post(url, json={"change": "0000000000"}).status_code == 404
