"""The review queue on the dashboard and the JSON API: the agent page's panel approves ticked
facts in bulk, rejects them, edits one before approving, with the session's CSRF token; the
API answers the same typed views."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import propose
from tests.web.conftest import Served
from tests.web.test_guard import Browser


@pytest.fixture
def browser(served: Served) -> Iterator[Browser]:
    made = Browser(served)
    try:
        yield made
    finally:
        made.client.close()


def _propose(served: Served, text: str, layer: str = "project") -> int:
    return propose(served.app.store, "docs-site", "writer", text, layer=layer)


def test_the_review_panel_approves_in_bulk_rejects_and_edits_before_approving(
    served: Served, browser: Browser
) -> None:
    first = _propose(served, "The docs site deploys from the main branch.")
    second = _propose(served, "Screenshots live in docs/img.")
    third = _propose(served, "The reviewer prefers British spelling.", "experiential")
    fourth = _propose(served, "Pages use sentence case titels.")
    memory = served.app.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"

    listing = served.client.get("/memory").text
    assert "4 awaiting review" in listing
    page = browser.client.get("/squads/docs-site/agents/writer").text
    panel = page.split('<section id="review-panel">')[1].split("</section>")[0]
    for review_id in (first, second, third, fourth):
        assert f'name="id" value="{review_id}"' in panel
    assert "main branch" not in memory.read_text()

    headers = {"X-CSRF-Token": browser.csrf, "HX-Request": "true"}
    url = "/squads/docs-site/agents/writer/review"
    body = f"id={first}&id={second}&action=approve"
    refused = browser.client.post(url, content=body, headers={"HX-Request": "true"})
    assert refused.status_code == 403 and "main branch" not in memory.read_text()
    form = {**headers, "Content-Type": "application/x-www-form-urlencoded"}
    approved = browser.client.post(url, content=body, headers=form)
    assert approved.status_code == 200, approved.text
    assert f"Approved #{first}, #{second}: 2 written to memory." in approved.text
    assert approved.headers["HX-Trigger"] == "memory-changed"
    assert 'id="agent-memory" hx-swap-oob="true"' in approved.text
    text = memory.read_text()
    assert "main branch" in text and "docs/img" in text

    rejected = browser.client.post(url, content=f"id={third}&action=reject", headers=form)
    assert rejected.status_code == 200 and f"Rejected #{third}" in rejected.text
    edit = f"/squads/docs-site/agents/writer/review/{fourth}/edit"
    edited = browser.client.post(edit, content="text=Pages+use+sentence+case+titles.", headers=form)
    assert edited.status_code == 200 and "1 written" in edited.text
    assert "sentence case titles" in memory.read_text()
    assert "nothing awaits review" in edited.text

    again = browser.client.post(url, content=f"id={first}&action=approve", headers=form)
    assert again.status_code == 422 and "approved already, by web" in again.text
    unknown = browser.client.post(url, content="id=999999&action=approve", headers=form)
    assert unknown.status_code == 404 and "no review item 999999" in unknown.text


def test_the_api_lists_and_decides_the_review_queue(served: Served) -> None:
    client = served.client
    review_id = _propose(served, "Release notes go in docs/changes.md.")
    url = "/api/v1/squads/docs-site/agents/writer/memory/review"
    listed = client.get(url).json()
    assert listed["mode"] == "off" and listed["status"] == "pending"
    item = next(i for i in listed["items"] if i["id"] == review_id)
    assert item["layer"] == "project" and item["status"] == "pending"
    assert item["confidence"] == 0.55 and item["section"] == "Insights"

    done = client.post(url, json={"action": "approve", "ids": [review_id]})
    assert done.status_code == 200, done.text
    decided = done.json()["decided"][0]
    assert decided["written"] and decided["where"] == "agents/writer/memory.md#Insights"
    assert decided["item"]["decided_by"] == "web" and decided["item"]["status"] == "approved"
    assert client.post(url, json={"action": "approve", "ids": [review_id]}).status_code == 422
    assert client.post(url, json={"action": "reject", "ids": [2**31 - 1]}).status_code == 404
    assert client.post(url, json={"action": "approve", "ids": []}).status_code == 422
    two = client.post(url, json={"action": "edit", "ids": [1, 2], "text": "x"})
    assert two.status_code == 422
    approved = client.get(url, params={"status": "approved"}).json()["items"]
    assert any(i["id"] == review_id for i in approved)
