"""The JSON API (``/api/v1``) against a real server holding the example squads: what each
page's data says, what an unknown name or a hostile path gets, and what the actions do.

The module shares one server (see ``served``): a test that changes something makes it its own
(a run it started, a scratch folder, a fact it wrote) or puts it back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from squad.memory.agent import AgentContext
from squad.memory.audit import AuditLog
from squad.store.records import RunStatus
from tests.support.leaks import assert_nowhere_on_disk
from tests.support.waiting import wait_for
from tests.text.secrets_corpus import URLSAFE, fake
from tests.web.conftest import Served

T = TypeVar("T")
FINAL = ("succeeded", "failed", "stopped")


# -- helpers ---------------------------------------------------------------------------------


def get(served: Served, url: str, **params: Any) -> Any:
    response = served.client.get(url, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def run_status(served: Served, run_id: str) -> str:
    return str(get(served, f"/api/v1/runs/{run_id}")["status"])


def wait_status(served: Served, run_id: str, *statuses: str) -> str:
    def reached() -> str | None:
        status = run_status(served, run_id)
        return status if status in statuses else None

    return wait_for(reached, f"run {run_id} to be {' or '.join(statuses)}")


def start_run(served: Served, squad: str, body: dict[str, Any] | None = None) -> str:
    """Start a run through the API; its id once it shows up."""
    before = {r.id for r in served.app.store.list_runs(squad, 1000)}
    response = served.client.post(f"/api/v1/squads/{squad}/runs", json=body)
    assert response.status_code == 202, response.text
    assert response.json()["accepted"] is True
    return wait_for(
        lambda: next(
            (r.id for r in served.app.store.list_runs(squad, 1000) if r.id not in before), None
        ),
        f"a new run of {squad}",
    )


@pytest.fixture
def paused(served: Served) -> Iterator[str]:
    """A docs-site run of this test's own, waiting at its approval gate (rejected afterwards
    if the test left it waiting, so ``served.paused_run()`` stays the module's own)."""
    run_id = start_run(served, "docs-site")
    wait_status(served, run_id, "awaiting_approval")
    yield run_id
    if run_status(served, run_id) == "awaiting_approval":
        answer = {"task": "publish", "approved": False, "reason": "left by a test"}
        served.client.post(f"/api/v1/runs/{run_id}/approval", json=answer)
        wait_status(served, run_id, *FINAL)


def workspace(served: Served, squad: str = "docs-site") -> Path:
    return served.app.squads.locate(squad).path


@pytest.fixture
def scratch(served: Served) -> Iterator[tuple[Path, str]]:
    """A folder of this test's own in the docs-site workspace: (its path, its relative name)."""
    name = f"scratch-{uuid.uuid4().hex[:8]}"
    folder = workspace(served) / name
    folder.mkdir()
    try:
        yield folder, name
    finally:
        shutil.rmtree(folder)


def context_of(served: Served, squad: str, agent: str) -> AgentContext:
    spec, where = served.app.squads.definition(squad)
    return AgentContext.of(spec, agent, where)


# -- reading ---------------------------------------------------------------------------------


def test_overview_lists_both_example_squads_with_spend_against_cap(served: Served) -> None:
    data = get(served, "/api/v1/overview")
    squads = {s["name"]: s for s in data["squads"]}
    assert set(squads) == {"code-review", "docs-site"}
    assert squads["code-review"]["cap_usd"] == 2.5
    assert squads["docs-site"]["cap_usd"] == 5.0
    for squad in squads.values():
        assert squad["spent_usd"] == 0.0  # the offline model costs nothing
        assert squad["last_run"]["tokens_in"] > 0
    assert served.paused_run() in [a["id"] for a in data["approvals"]]
    assert data["server"]["mode"] == "dashboard"


def test_squads_lists_what_the_overview_lists(served: Served) -> None:
    names = [s["name"] for s in get(served, "/api/v1/squads")]
    assert names == [s["name"] for s in get(served, "/api/v1/overview")["squads"]]


def test_squad_detail_has_its_definition_file_validated_agents_runs_and_health(
    served: Served,
) -> None:
    data = get(served, "/api/v1/squads/docs-site")
    source = served.settings.configs / "squads" / "docs-site.yaml"
    assert data["definition"]["text"] == source.read_text(encoding="utf-8")
    assert data["definition"]["valid"] is True
    assert data["definition"]["problems"] == []
    assert [a["id"] for a in data["agents"]] == ["planner", "writer", "reviewer"]
    assert data["agents"][0]["memory_identity"] == "profile:planner-v1"
    assert [t["id"] for t in data["tasks"] if t["approval"]] == ["publish"]
    assert served.paused_run() in [r["id"] for r in data["runs"]]
    assert data["runs_total"] >= 1
    assert data["limits"]["max_cost_usd"] == 5.0
    assert {m["agent"] for m in data["health"]["memory_files"]} == {
        "planner",
        "writer",
        "reviewer",
    }


def test_squad_detail_marks_a_definition_broken_since_it_was_loaded(served: Served) -> None:
    source = served.settings.configs / "squads" / "docs-site.yaml"
    good = source.read_text(encoding="utf-8")
    source.write_text("name: docs-site\nagents: three\n", encoding="utf-8")
    try:
        definition = get(served, "/api/v1/squads/docs-site")["definition"]
    finally:
        source.write_text(good, encoding="utf-8")
    assert definition["valid"] is False
    assert definition["text"] == "name: docs-site\nagents: three\n"
    assert definition["problems"]


def test_squad_detail_pages_its_runs(served: Served) -> None:
    first = get(served, "/api/v1/squads/docs-site", per_page=1)
    assert len(first["runs"]) == 1
    assert first["pages"] == first["runs_total"]


def test_run_detail_has_each_task_with_status_agent_and_tokens_and_the_awaited_task(
    served: Served,
) -> None:
    data = get(served, f"/api/v1/runs/{served.paused_run()}")
    tasks = {t["id"]: t for t in data["tasks"]}
    assert list(tasks) == ["outline", "draft", "review", "publish"]
    assert [t["status"] for t in tasks.values()] == ["done", "done", "done", "awaiting_approval"]
    assert [t["agent"] for t in tasks.values()] == ["planner", "writer", "reviewer", "writer"]
    for task_id in ("outline", "draft", "review"):
        assert tasks[task_id]["prompt_tokens"] > 0
        assert tasks[task_id]["completion_tokens"] > 0
    assert tasks["publish"]["prompt_tokens"] == 0
    assert data["awaiting"] == "publish"
    assert data["resumable"] is False
    assert data["tokens_in"] == sum(t["prompt_tokens"] for t in data["tasks"])
    assert len(data["model_calls"]) == 3
    assert data["events_total"] == len(data["events"]) > 0
    assert data["log_file"] == f"logs/run-{data['id']}.jsonl"


def test_run_detail_of_a_hierarchical_run_shows_the_plan_its_lead_wrote(served: Served) -> None:
    run_id = served.app.store.list_runs("code-review")[-1].id
    plan = get(served, f"/api/v1/runs/{run_id}")["plan"]
    assert plan["path"].startswith("plans/")
    assert plan["text"] == (workspace(served, "code-review") / plan["path"]).read_text()
    assert plan["tasks"]


def test_approvals_lists_the_paused_run_with_the_task_it_waits_on(served: Served) -> None:
    waiting = {a["id"]: a for a in get(served, "/api/v1/approvals")}
    entry = waiting[served.paused_run()]
    assert (entry["squad"], entry["task"], entry["agent"]) == ("docs-site", "publish", "writer")
    assert entry["status"] == "awaiting_approval"


def test_files_lists_the_workspace_root_folders_first(served: Served) -> None:
    data = get(served, "/api/v1/squads/docs-site/files")
    assert data["path"] == ""
    kinds = [e["kind"] for e in data["entries"]]
    assert kinds == sorted(kinds, key=lambda k: k != "dir")
    names = {e["name"]: e for e in data["entries"]}
    assert {"agents", "logs", "tasks", ".squad-config.json"} <= set(names)
    assert (
        names[".squad-config.json"]["size"]
        == (workspace(served) / ".squad-config.json").stat().st_size
    )


def test_files_lists_one_subfolder_one_level_deep(served: Served) -> None:
    data = get(served, "/api/v1/squads/docs-site/files", path="agents")
    assert data["path"] == "agents"
    assert [(e["path"], e["kind"]) for e in data["entries"]] == [
        ("agents/planner", "dir"),
        ("agents/reviewer", "dir"),
        ("agents/writer", "dir"),
    ]


def test_file_preview_of_memory_md_is_its_markdown(served: Served) -> None:
    data = get(served, "/api/v1/squads/docs-site/file", path="agents/planner/memory.md")
    on_disk = (workspace(served) / "agents/planner/memory.md").read_bytes()
    assert data["kind"] == "markdown"
    assert data["text"] == on_disk.decode()
    assert data["size"] == len(on_disk)
    assert data["truncated"] is False


def test_file_preview_of_json_is_pretty_printed(served: Served, scratch: tuple[Path, str]) -> None:
    folder, name = scratch
    value = {"b": [1, 2, {"c": None}], "a": "ü"}
    (folder / "data.json").write_text(json.dumps(value, separators=(",", ":")), encoding="utf-8")
    data = get(served, "/api/v1/squads/docs-site/file", path=f"{name}/data.json")
    assert data["kind"] == "json"
    assert data["text"] == json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def test_file_preview_of_a_large_file_is_partial_and_says_so(
    served: Served, scratch: tuple[Path, str]
) -> None:
    folder, name = scratch
    (folder / "big.log").write_text("x" * 2_000_000, encoding="ascii")
    data = get(served, "/api/v1/squads/docs-site/file", path=f"{name}/big.log")
    assert data["truncated"] is True
    assert data["size"] == 2_000_000
    assert len(data["text"]) == 128 * 1024
    assert "first 128.0 KB of 1.9 MB" in data["notice"]
    assert f"squad ws show docs-site {name}/big.log" in data["notice"]
    small = get(served, "/api/v1/squads/docs-site/file", path=f"{name}/big.log", max_bytes=10)
    assert (small["text"], small["truncated"]) == ("x" * 10, True)
    whole = get(served, "/api/v1/squads/docs-site/file", path=f"{name}/big.log", max_bytes=20)
    assert "first 20 B" in whole["notice"]


def test_file_preview_reads_and_redacts_no_more_than_its_cap(
    served: Served, scratch: tuple[Path, str]
) -> None:
    """A 2 MB file cost 12.9 s of server CPU to preview whole (issue 30): a preview is the
    first 128 KB, and asking for more is refused, naming the cap."""
    folder, name = scratch
    (folder / "big.log").write_text("x" * 2_000_000, encoding="ascii")
    response = served.client.get(
        "/api/v1/squads/docs-site/file", params={"path": f"{name}/big.log", "max_bytes": 2_000_000}
    )
    assert response.status_code == 422
    assert "131072" in response.text
    page = served.client.get("/squads/docs-site/preview", params={"path": f"{name}/big.log"})
    assert page.status_code == 200
    assert page.text.count("x") < 140_000
    assert "Showing the first 128.0 KB of 1.9 MB" in page.text
    assert f"squad ws show docs-site {name}/big.log" in page.text


def test_file_preview_of_a_small_file_has_no_notice(
    served: Served, scratch: tuple[Path, str]
) -> None:
    folder, name = scratch
    (folder / "small.log").write_text("hello\n", encoding="ascii")
    data = get(served, "/api/v1/squads/docs-site/file", path=f"{name}/small.log")
    assert (data["truncated"], data["notice"]) == (False, None)


def test_workspace_search_gives_the_span_of_every_match(
    served: Served, scratch: tuple[Path, str]
) -> None:
    folder, name = scratch
    (folder / "notes.md").write_text("Quokka here\nno match\nquokka, QUOKKA\n", encoding="utf-8")
    data = get(served, "/api/v1/squads/docs-site/search", q="quokka")
    assert data["squad"] == "docs-site"
    [found] = [f for f in data["files"] if f["path"] == f"{name}/notes.md"]
    assert [(m["line_number"], m["spans"]) for m in found["matches"]] == [
        (1, [[0, 6]]),
        (3, [[0, 6], [8, 14]]),
    ]
    exact = get(served, "/api/v1/squads/docs-site/search", q="quokka", case_sensitive=True)
    [found] = [f for f in exact["files"] if f["path"] == f"{name}/notes.md"]
    assert [(m["line_number"], m["spans"]) for m in found["matches"]] == [(3, [[0, 6]])]


def test_workspace_search_by_regex_with_context_lines(
    served: Served, scratch: tuple[Path, str]
) -> None:
    folder, name = scratch
    (folder / "notes.md").write_text("before\nwombat-42\nafter\n", encoding="utf-8")
    data = get(served, "/api/v1/squads/docs-site/search", q=r"wombat-\d+", regex=True, context=1)
    [found] = [f for f in data["files"] if f["path"] == f"{name}/notes.md"]
    [match] = found["matches"]
    assert (match["line"], match["spans"]) == ("wombat-42", [[0, 9]])
    assert match["before"] == [{"line_number": 1, "line": "before"}]
    assert match["after"] == [{"line_number": 3, "line": "after"}]


def test_workspace_health_counts_files_and_fills_memory_files_against_the_cap(
    served: Served,
) -> None:
    data = get(served, "/api/v1/squads/docs-site/health")
    cap = served.settings.memory_file_cap_bytes
    assert data["file_count"] >= 5
    assert "agents" in data["folders"]
    assert [m["cap"] for m in data["memory_files"]] == [cap, cap, cap]
    assert all(m["over_cap"] is False for m in data["memory_files"])


def test_agent_memory_has_the_sections_of_memory_md_and_the_agents_namespace(
    served: Served,
) -> None:
    data = get(served, "/api/v1/squads/docs-site/agents/planner/memory")
    assert [s["name"] for s in data["project"]["sections"]] == [
        "Project Context",
        "Coding Rules",
        "Decisions",
        "Insights",
    ]
    assert data["project"]["file"] == "agents/planner/memory.md"
    assert data["project"]["cap"] == served.settings.memory_file_cap_bytes
    assert data["namespace"]["identity"] == "profile:planner-v1"
    assert isinstance(data["facts"], list)


def test_agent_memory_lists_a_fact_with_where_it_came_from(served: Served) -> None:
    ctx = context_of(served, "code-review", "reviewer")
    fact = served.app.memory.remember(
        ctx, "Reviews go faster with a checklist", layer="experiential"
    )
    assert fact.fact is not None
    data = get(served, "/api/v1/squads/code-review/agents/reviewer/memory")
    [row] = [f for f in data["facts"] if f["id"] == fact.fact.id]
    assert row["text"] == "Reviews go faster with a checklist"
    assert (row["squad"], row["agent"], row["status"]) == ("code-review", "reviewer", "active")


@pytest.mark.parametrize(
    ("max_tokens", "experiential", "project"), [(None, 1200, 800), (1000, 600, 400)]
)
def test_context_preview_splits_the_token_budget_60_40(
    served: Served, max_tokens: int | None, experiential: int, project: int
) -> None:
    params: dict[str, Any] = {"message": "write the install page"}
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    data = get(served, "/api/v1/squads/docs-site/agents/planner/context", **params)
    assert data["budget"]["total"] == (2000 if max_tokens is None else max_tokens)
    assert (data["budget"]["experiential"], data["budget"]["project"]) == (experiential, project)
    assert data["message"] == "write the install page"
    assert data["supplementary"]["budget"] == 2000


def test_the_context_api_and_fragment_show_each_region_of_the_window(served: Served) -> None:
    url = "/api/v1/squads/docs-site/agents/planner/context"
    data = get(served, url, context_window=32_768)
    assert data["context_window"] == {"tokens": 32_768, "source": "option"}
    rows = {row["region"]: row for row in data["regions"]}
    assert (rows["memory"]["budget"], rows["memory"]["set_by"]) == (2000, "memory.max_tokens")
    assert (rows["recall"]["budget"], rows["recall"]["set_by"]) == (1614, None)
    assert sum(row["budget"] for row in rows.values()) == 32_768
    assert served.client.get(url, params={"context_window": 100}).status_code == 422

    response = served.client.get(
        "/squads/docs-site/agents/planner/context",
        params={"message": "write the install page"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200, response.text
    html = response.text
    assert "regions for a window of 8,192 tokens (offline)" in html
    assert '<tr data-region="memory"><td>memory</td><td class="num">2,000</td>' in html
    assert '<tr data-region="recall"><td>recall</td><td class="num">1,000</td>' in html
    assert html.count("<tr data-region=") == 8
    assert "memory.max_tokens" in html


def test_context_shows_the_working_memory_of_the_run_waiting_for_approval(
    served: Served,
) -> None:
    data = get(served, "/api/v1/squads/docs-site/agents/writer/context")
    page = served.client.get("/squads/docs-site/agents/writer/context")

    working = data["working_memory"]
    assert working["run_id"] == served.paused_run()
    assert working["done"] == ["draft: Write the guide following the outline."]
    assert working["remaining"] == ["publish: Apply the review's fixes and produce the final page."]
    assert page.status_code == 200
    assert '<section class="working-memory" id="working-memory">' in page.text
    assert f"run {served.paused_run()}" in page.text
    assert "&lt;untrusted-memory&gt;\nYour own state in this run" in page.text
    assert "- draft: Write the guide following the outline." in page.text


def test_namespaces_lists_one_per_agent_identity(served: Served) -> None:
    rows = get(served, "/api/v1/memory/namespaces")
    identities = {r["identity"] for r in rows}
    assert {
        "profile:planner-v1",
        "profile:tech-writer-v1",
        "profile:python-dev-v1",
        "squad:docs-site/reviewer",
        "squad:code-review/reviewer",
    } <= identities
    assert all(isinstance(r["enabled"], bool) and isinstance(r["facts"], int) for r in rows)


def test_boot_file_comes_with_the_version_an_edit_must_name(served: Served) -> None:
    data = get(served, "/api/v1/memory/boot/soul")
    on_disk = (served.settings.home / "SOUL.md").read_bytes()
    assert (data["file"], data["text"]) == ("SOUL.md", on_disk.decode())
    assert data["version"] == hashlib.sha256(on_disk).hexdigest()
    assert data["cap"] == served.settings.memory_file_cap_bytes


def test_memory_search_finds_a_line_of_memory_md_with_its_section(served: Served) -> None:
    ctx = context_of(served, "code-review", "developer")
    served.app.memory.remember(ctx, "Run the linter before each commit", layer="project")
    data = get(served, "/api/v1/memory/search", q="linter before", squad="code-review")
    [hit] = [h for h in data["hits"] if h["layer"] == "project"]
    assert (hit["squad"], hit["agent"], hit["section"]) == ("code-review", "developer", "Insights")
    assert hit["line"][slice(*hit["spans"][0])].lower() == "linter before"


def test_memory_search_finds_an_experiential_fact(served: Served) -> None:
    ctx = context_of(served, "code-review", "planner")
    made = served.app.memory.remember(ctx, "Plans past five tasks stall", layer="experiential")
    assert made.fact is not None
    data = get(served, "/api/v1/memory/search", q="five tasks", layer="experiential")
    assert [h["where"] for h in data["hits"]] == [f"fact:{made.fact.id}"]


def test_memory_search_of_the_conversation_layer_finds_earlier_messages_only(
    served: Served,
) -> None:
    ctx = context_of(served, "code-review", "planner")
    said = served.app.store.conversation.record_message(
        "code-review", "planner", "user", "the staging cluster is called heron-7"
    )
    served.app.memory.archive(ctx, [said])
    served.app.memory.remember(ctx, "heron-7 restarts nightly", layer="experiential")
    talk = get(served, "/api/v1/memory/search", q="heron-7", layer="conversation")
    assert [(h["layer"], h["where"]) for h in talk["hits"]] == [
        ("conversation", f"message:{said.seq}")
    ]
    page = served.client.get("/memory/find", params={"q": "heron-7", "layer": "conversation"})
    assert page.status_code == 200
    assert f"code-review/planner message:{said.seq} [earlier conversation]" in page.text
    assert "restarts nightly" not in page.text
    facts = served.client.get("/memory/find", params={"q": "heron-7", "layer": "experiential"})
    assert "restarts nightly" in facts.text and "earlier conversation" not in facts.text


def test_extraction_lists_a_pass_the_extractor_made(served: Served) -> None:
    from squad.extraction.job import AgentExtractor
    from squad.extraction.models import ExtractionModels

    app = served.app
    extractor = AgentExtractor(app.memory, ExtractionModels(app.model_factory), clock=app.clock)
    reports = extractor.run(context_of(served, "docs-site", "writer"), force=True)
    assert reports
    rows = get(served, "/api/v1/memory/extraction", squad="docs-site", agent="writer")
    assert rows
    assert (rows[0]["squad"], rows[0]["agent"]) == ("docs-site", "writer")
    assert rows[0]["messages"][1] >= rows[0]["messages"][0]
    assert get(served, "/api/v1/memory/extraction", squad="code-review", agent="writer") == []


def test_spend_has_one_entry_a_day_per_squad_and_tokens_per_run(served: Served) -> None:
    data = get(served, "/api/v1/spend", days=7)
    assert data["days"] == 7
    squads = {s["squad"]: s for s in data["squads"]}
    assert {"code-review", "docs-site"} <= set(squads)
    for squad in squads.values():
        assert len(squad["days"]) == 7
        assert squad["total_usd"] == 0.0
        assert all(r["tokens"] > 0 for r in squad["runs"] if r["status"] != "running")
    assert squads["docs-site"]["calls"] >= 3


# -- what is refused -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "body", "named"),
    [
        ("GET", "/api/v1/squads/no-such-squad", None, "no-such-squad"),
        ("GET", "/api/v1/squads/no-such-squad/files", None, "no-such-squad"),
        ("GET", "/api/v1/squads/no-such-squad/health", None, "no-such-squad"),
        ("GET", "/api/v1/squads/docs-site/agents/nobody/memory", None, "nobody"),
        ("GET", "/api/v1/squads/docs-site/agents/nobody/context", None, "nobody"),
        ("GET", "/api/v1/runs/nosuchrun", None, "nosuchrun"),
        ("GET", "/api/v1/runs/nosuchrun/events", None, "nosuchrun"),
        ("GET", "/api/v1/squads/docs-site/file?path=no/such.md", None, "no/such.md"),
        ("GET", "/api/v1/squads/docs-site/files?path=no-such-folder", None, "no-such-folder"),
        ("GET", "/api/v1/squads/docs-site?page=999", None, "999"),
        ("PUT", "/api/v1/memory/namespaces/999999", {"enabled": True}, "999999"),
        ("POST", "/api/v1/memory/facts/999999/forget", None, "999999"),
        ("POST", "/api/v1/memory/facts/999999/revive", None, "999999"),
        ("POST", "/api/v1/runs/nosuchrun/approval", {"task": "t", "approved": True}, "nosuchrun"),
        ("POST", "/api/v1/runs/nosuchrun/resume", None, "nosuchrun"),
        ("POST", "/api/v1/squads/no-such-squad/runs", None, "no-such-squad"),
    ],
)
def test_an_unknown_name_is_404_naming_it(
    served: Served, method: str, url: str, body: Any, named: str
) -> None:
    response = served.client.request(method, url, json=body)
    assert response.status_code == 404, response.text
    assert named in response.json()["detail"]


@pytest.mark.parametrize(
    "path", ["../docs-site/.squad-config.json", "agents/../../x", "/etc/passwd", "..", "a/../.."]
)
@pytest.mark.parametrize("endpoint", ["file", "files"])
def test_a_path_climbing_out_of_the_workspace_is_400(
    served: Served, endpoint: str, path: str
) -> None:
    response = served.client.get(f"/api/v1/squads/docs-site/{endpoint}", params={"path": path})
    assert response.status_code == 400, response.text
    assert "workspace" in response.json()["detail"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every workspace, holding a file nobody may read through the API."""
    (tmp_path / "secret.txt").write_text("outside-the-workspace-secret\n", encoding="utf-8")
    return tmp_path


def test_a_link_to_a_file_outside_the_workspace_is_not_followed(
    served: Served, scratch: tuple[Path, str], outside: Path
) -> None:
    folder, name = scratch
    os.symlink(outside / "secret.txt", folder / "innocent.md")
    response = served.client.get(
        "/api/v1/squads/docs-site/file", params={"path": f"{name}/innocent.md"}
    )
    assert response.status_code == 400
    assert "outside-the-workspace-secret" not in response.text
    listing = get(served, "/api/v1/squads/docs-site/files", path=name)
    assert [(e["name"], e["kind"], e["size"]) for e in listing["entries"]] == [
        ("innocent.md", "link", None)
    ]


def test_a_linked_folder_is_neither_listed_into_nor_read_through(
    served: Served, scratch: tuple[Path, str], outside: Path
) -> None:
    folder, name = scratch
    os.symlink(outside, folder / "docs", target_is_directory=True)
    for endpoint, path in (("files", f"{name}/docs"), ("file", f"{name}/docs/secret.txt")):
        response = served.client.get(f"/api/v1/squads/docs-site/{endpoint}", params={"path": path})
        assert response.status_code == 400, (endpoint, response.text)
        assert "secret" not in response.json()["detail"].replace(path, "")


def test_a_fifo_is_refused_at_once_not_waited_on(served: Served, scratch: tuple[Path, str]) -> None:
    folder, name = scratch
    os.mkfifo(folder / "pipe.md")
    response = served.client.get(
        "/api/v1/squads/docs-site/file", params={"path": f"{name}/pipe.md"}, timeout=10
    )
    assert response.status_code == 400
    assert "not a regular file" in response.json()["detail"]
    search = served.client.get("/api/v1/squads/docs-site/search", params={"q": "x"}, timeout=10)
    assert search.status_code == 200


def test_a_binary_file_is_refused_with_its_size(served: Served, scratch: tuple[Path, str]) -> None:
    folder, name = scratch
    (folder / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    response = served.client.get(
        "/api/v1/squads/docs-site/file", params={"path": f"{name}/image.md"}
    )
    assert response.status_code == 400
    assert "binary file (116 bytes)" in response.json()["detail"]


@pytest.mark.parametrize("endpoint", ["files", "file"])
def test_a_name_longer_than_the_system_allows_is_400_not_a_failure(
    served: Served, endpoint: str
) -> None:
    response = served.client.get(
        f"/api/v1/squads/docs-site/{endpoint}", params={"path": f"agents/{'n' * 300}"}
    )
    assert response.status_code == 400, response.text


def test_a_folder_is_not_previewed_as_a_file(served: Served) -> None:
    response = served.client.get("/api/v1/squads/docs-site/file", params={"path": "agents"})
    assert response.status_code == 400
    assert "is a folder" in response.json()["detail"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/squads/docs-site/search?q=x&context=-1", "query.context"),
        ("/api/v1/squads/docs-site/search?q=", "query.q"),
        ("/api/v1/squads/docs-site?page=0", "query.page"),
        ("/api/v1/squads/docs-site?per_page=500", "query.per_page"),
        ("/api/v1/squads/Docs-Site", "path.squad"),
        ("/api/v1/squads/%2E%2E/health", "path.squad"),
        ("/api/v1/squads/docs%5Csite/files", "path.squad"),
        ("/api/v1/squads/docs-site/agents/Planner/memory", "path.agent"),
        ("/api/v1/squads/docs-site/agents/planner/context?max_tokens=-1", "query.max_tokens"),
        ("/api/v1/squads/docs-site/file?path=x&max_bytes=0", "query.max_bytes"),
        ("/api/v1/runs/a.b", "path.run_id"),
        ("/api/v1/runs/x/events?after=-1", "query.after"),
        ("/api/v1/memory/boot/passwd", "path.name"),
        ("/api/v1/memory/search?q=x&squad=../etc", "query.squad"),
        ("/api/v1/memory/search?q=x&layer=all", "query.layer"),
        ("/api/v1/memory/extraction?limit=0", "query.limit"),
        ("/api/v1/spend?days=0", "query.days"),
        ("/api/v1/spend?days=soon", "query.days"),
    ],
)
def test_a_bad_query_value_is_422_naming_the_field(served: Served, url: str, field: str) -> None:
    response = served.client.get(url)
    assert response.status_code == 422, response.text
    body = response.json()
    assert [p["field"] for p in body["problems"]] == [field]
    assert body["detail"].startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("url", "name", "longest"),
    [
        ("/api/v1/squads/docs-site/agents/planner/context", "message", 1000),
        ("/api/v1/squads/docs-site/search", "q", 1000),
        ("/api/v1/memory/search", "q", 1000),
        ("/api/v1/squads/docs-site/files", "path", 1024),
        ("/api/v1/squads/docs-site/file", "path", 1024),
    ],
)
def test_the_longest_query_value_reaches_the_route_and_one_more_character_is_422(
    served: Served, url: str, name: str, longest: int
) -> None:
    widest = "\U0001f600"  # 12 bytes percent-encoded: the longest a character gets in a URL
    at_limit = served.client.get(url, params={name: widest * longest})
    # a path that long names no file: 404, or 400 when the system refuses a name that long
    assert at_limit.status_code in (200, 400, 404), at_limit.text
    over = served.client.get(url, params={name: widest * (longest + 1)})
    assert over.status_code == 422
    assert [p["field"] for p in over.json()["problems"]] == [f"query.{name}"]


def test_a_squad_name_with_a_slash_never_reaches_a_workspace(served: Served) -> None:
    response = served.client.get("/api/v1/squads/docs-site%2F..%2Fcode-review/health")
    assert response.status_code in (404, 422)
    assert "code-review" not in response.text


@pytest.mark.parametrize(
    ("method", "url", "body", "field"),
    [
        ("PUT", "/api/v1/memory/boot/user", {"text": "x"}, "version"),
        ("PUT", "/api/v1/memory/boot/user", {"text": "x", "version": "", "extra": 1}, "extra"),
        ("PUT", "/api/v1/memory/namespaces/1", {"enabled": "yes"}, "enabled"),
        ("PUT", "/api/v1/memory/namespaces/0", {"enabled": True}, "path.namespace_id"),
        ("POST", "/api/v1/runs/r1/approval", {"task": "t", "approved": 1}, "approved"),
        ("POST", "/api/v1/runs/r1/approval", {"task": "../t", "approved": True}, "task"),
        ("POST", "/api/v1/squads/docs-site/runs", {"goal": 7}, "goal"),
        ("POST", "/api/v1/memory/facts/0/forget", None, "path.fact_id"),
    ],
)
def test_a_bad_body_value_is_422_naming_the_field(
    served: Served, method: str, url: str, body: Any, field: str
) -> None:
    response = served.client.request(method, url, json=body)
    assert response.status_code == 422, response.text
    assert [p["field"] for p in response.json()["problems"]] == [field]


# -- acting ----------------------------------------------------------------------------------


def test_run_now_starts_a_run_with_the_goal_given_and_it_finishes(served: Served) -> None:
    run_id = start_run(served, "code-review", {"goal": "Add a --dry-run flag"})
    assert wait_status(served, run_id, *FINAL) == "succeeded"
    run = get(served, f"/api/v1/runs/{run_id}")
    assert (run["goal"], run["trigger"]) == ("Add a --dry-run flag", "web")
    assert run_id in [r["id"] for r in get(served, "/api/v1/squads/code-review")["runs"]]


def test_run_now_without_a_goal_runs_the_squads_own(served: Served) -> None:
    run_id = start_run(served, "code-review")
    wait_status(served, run_id, *FINAL)
    assert get(served, f"/api/v1/runs/{run_id}")["goal"].startswith("Add input validation")


def test_approving_a_paused_run_lets_it_succeed_and_a_second_answer_is_refused(
    served: Served, paused: str
) -> None:
    answer = {"task": "publish", "approved": True}
    response = served.client.post(f"/api/v1/runs/{paused}/approval", json=answer)
    assert response.status_code == 202
    assert response.json()["message"].startswith("approval queued")
    assert wait_status(served, paused, *FINAL) == "succeeded"
    tasks = {t["id"]: t["status"] for t in get(served, f"/api/v1/runs/{paused}")["tasks"]}
    assert tasks["publish"] == "done"
    again = served.client.post(f"/api/v1/runs/{paused}/approval", json=answer)
    assert again.status_code == 422
    assert "succeeded, not waiting for an approval" in again.json()["detail"]


def test_rejecting_fails_the_task_with_the_reason_given(served: Served, paused: str) -> None:
    answer = {"task": "publish", "approved": False, "reason": "  Add a troubleshooting part "}
    response = served.client.post(f"/api/v1/runs/{paused}/approval", json=answer)
    assert response.status_code == 202
    assert response.json()["message"].startswith("rejection queued")
    assert wait_status(served, paused, *FINAL) == "failed"
    [publish] = [t for t in get(served, f"/api/v1/runs/{paused}")["tasks"] if t["id"] == "publish"]
    assert publish["error"].endswith(": Add a troubleshooting part")


def test_credentials_posted_in_a_goal_a_rejection_or_a_boot_edit_never_reach_the_disk(
    served: Served,
) -> None:
    key, password = "sk-" + "proj-" + fake(URLSAFE, 40), "Blu3Whale$2024"
    run_id = start_run(served, "docs-site", {"goal": f"Publish with the key {key}."})
    wait_status(served, run_id, "awaiting_approval")
    answer = {"task": "publish", "approved": False, "reason": f"my password is {password}"}
    assert served.client.post(f"/api/v1/runs/{run_id}/approval", json=answer).status_code == 202
    assert wait_status(served, run_id, *FINAL) == "failed"
    version = get(served, "/api/v1/memory/boot/user")["version"]
    edit = {"text": f"My password is {password}", "version": version}
    refused = served.client.put("/api/v1/memory/boot/user", json=edit)

    assert refused.status_code == 422, refused.text
    run = get(served, f"/api/v1/runs/{run_id}")
    assert run["goal"] == "Publish with the key [REDACTED:openai_api_key]."
    [publish] = [t for t in run["tasks"] if t["id"] == "publish"]
    assert publish["error"].endswith("my password is [REDACTED:password_prose]")
    for value in (key, password):
        assert_nowhere_on_disk(value, served.settings.home.parent)


def test_an_answer_for_a_task_the_run_does_not_wait_on_is_refused(served: Served) -> None:
    run_id = served.paused_run()
    response = served.client.post(
        f"/api/v1/runs/{run_id}/approval", json={"task": "draft", "approved": True}
    )
    assert response.status_code == 422
    assert "does not wait on task 'draft'" in response.json()["detail"]
    assert run_status(served, run_id) == "awaiting_approval"


def test_only_an_interrupted_run_resumes(served: Served) -> None:
    response = served.client.post(f"/api/v1/runs/{served.paused_run()}/resume")
    assert response.status_code == 422
    assert "only an interrupted run resumes" in response.json()["detail"]


def _boot(served: Served) -> dict[str, Any]:
    return dict(get(served, "/api/v1/memory/boot/user"))


def _put_boot(served: Served, text: str, version: str) -> httpx.Response:
    return served.client.put("/api/v1/memory/boot/user", json={"text": text, "version": version})


def test_a_boot_edit_at_the_version_read_is_saved_and_audited_as_web(served: Served) -> None:
    read = _boot(served)
    text = f"Prefers British spelling. {uuid.uuid4().hex}\n"
    response = _put_boot(served, text, read["version"])
    assert response.status_code == 200, response.text
    saved = response.json()
    assert saved["text"] == text
    assert saved["version"] == hashlib.sha256(text.encode()).hexdigest() != read["version"]
    assert (served.settings.home / "USER.md").read_text(encoding="utf-8") == text
    assert _boot(served) == saved
    [record] = [
        r for r in AuditLog(served.settings.home).records() if r.new_sha256 == saved["version"]
    ]
    assert (record.actor, record.operation, record.file) == ("web", "write", "USER.md")


def test_a_boot_edit_on_a_stale_version_is_409_with_the_current_text(served: Served) -> None:
    stale = _boot(served)
    first = _put_boot(served, f"First edit {uuid.uuid4().hex}\n", stale["version"])
    assert first.status_code == 200
    late = _put_boot(served, "Second, late edit\n", stale["version"])
    assert late.status_code == 409
    body = late.json()
    assert "changed since it was read" in body["detail"]
    assert body["current"]["text"] == first.json()["text"]
    assert body["current"]["version"] == first.json()["version"]
    assert _boot(served)["text"] == first.json()["text"]


def test_a_boot_edit_over_the_cap_is_413_naming_the_cap_and_writes_nothing(
    served: Served,
) -> None:
    read = _boot(served)
    cap = served.settings.memory_file_cap_bytes
    response = _put_boot(served, "y" * (cap + 1), read["version"])
    assert response.status_code == 413
    assert f"{cap:,}-byte cap" in response.json()["detail"]
    assert _boot(served) == read


@pytest.mark.parametrize(
    "credential", ["AKIAZ7Q2XK9P4LMN8RTV", "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h"]
)
def test_a_boot_edit_holding_a_credential_is_422_and_writes_nothing(
    served: Served, credential: str
) -> None:
    read = _boot(served)
    audited = len(AuditLog(served.settings.home).records())
    response = _put_boot(served, f"My key is {credential} for deploys.\n", read["version"])
    assert response.status_code == 422
    assert credential not in response.text
    assert _boot(served) == read
    assert len(AuditLog(served.settings.home).records()) == audited


def test_switching_a_namespace_on_shares_its_facts_with_other_agents(served: Served) -> None:
    writer = context_of(served, "docs-site", "writer")
    made = served.app.memory.remember(writer, "Readers skim numbered steps", layer="experiential")
    assert made.fact is not None
    ns = get(served, "/api/v1/squads/docs-site/agents/writer/memory")["namespace"]
    url = f"/api/v1/memory/namespaces/{ns['id']}"
    planner = "/api/v1/squads/docs-site/agents/planner/context"
    try:
        on = served.client.put(url, json={"enabled": True})
        assert on.status_code == 200
        assert on.json()["enabled"] is True
        listed = {r["id"]: r for r in get(served, "/api/v1/memory/namespaces")}
        assert listed[ns["id"]]["enabled"] is True
        shared = get(served, planner, message="numbered steps")["supplementary"]["text"]
        assert "Readers skim numbered steps" in shared
    finally:
        off = served.client.put(url, json={"enabled": False})
    assert off.json()["enabled"] is False
    assert (
        "Readers skim"
        not in get(served, planner, message="numbered steps")["supplementary"]["text"]
    )


def audited(served: Served, file: str) -> list[tuple[str, str]]:
    """Who did what to ``file`` in the code-review workspace's memory audit log, in order
    (the extractor may write records of its own in between)."""
    records = AuditLog(workspace(served, "code-review")).records()
    return [(r.actor, r.operation) for r in records if r.file == file]


def test_forgetting_a_fact_marks_it_forgotten_for_good_audited_as_web(served: Served) -> None:
    ctx = context_of(served, "code-review", "developer")
    made = served.app.memory.remember(ctx, "Flaky tests hide in the CI cache", layer="experiential")
    assert made.fact is not None
    fact_id = made.fact.id
    forgot = served.client.post(f"/api/v1/memory/facts/{fact_id}/forget")
    assert forgot.status_code == 200
    assert (forgot.json()["id"], forgot.json()["status"]) == (fact_id, "forgotten")
    facts = get(served, "/api/v1/squads/code-review/agents/developer/memory")["facts"]
    assert [f["status"] for f in facts if f["id"] == fact_id] == ["forgotten"]
    found = get(served, "/api/v1/memory/search", q="CI cache", layer="experiential")
    assert f"fact:{fact_id}" not in [h["where"] for h in found["hits"]]
    assert audited(served, f"fact:{fact_id}") == [("cli", "remember"), ("web", "forget")]
    revived = served.client.post(f"/api/v1/memory/facts/{fact_id}/revive")
    assert revived.status_code == 409
    assert "only dormant facts can be revived" in revived.json()["detail"]


def test_reviving_a_dormant_fact_makes_it_active_audited_as_web(served: Served) -> None:
    ctx = context_of(served, "code-review", "developer")
    made = served.app.memory.remember(ctx, "Small diffs get reviewed first", layer="experiential")
    assert made.fact is not None
    fact_id = made.fact.id
    later = served.app.clock() + timedelta(days=1)
    served.app.store.maintenance.make_dormant([fact_id], unused_since=later)
    revived = served.client.post(f"/api/v1/memory/facts/{fact_id}/revive")
    assert revived.status_code == 200
    assert revived.json()["status"] == "active"
    assert audited(served, f"fact:{fact_id}")[-1] == ("web", "revive")


# -- the live run log ----------------------------------------------------------------------


def _frames(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        if fields:
            frames.append(fields)
    return frames


def _log_lines(served: Served, run_id: str) -> int:
    run = served.app.store.get_run(run_id)
    assert run is not None
    path = workspace(served, run.squad) / "logs" / f"run-{run_id}.jsonl"
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_log_of_a_finished_run_streams_every_event_numbered_then_ends(
    served: Served,
) -> None:
    run_id = served.app.store.list_runs("code-review")[-1].id
    response = served.client.get(f"/api/v1/runs/{run_id}/events")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = _frames(response.text)
    events = [f for f in frames if "id" in f]
    assert [int(f["id"]) for f in events] == list(range(1, _log_lines(served, run_id) + 1))
    assert events[0]["event"] == "run_start"
    assert json.loads(events[-1]["data"])["status"] == "succeeded"
    assert frames[-1] == {"event": "end", "data": "{}"}


@pytest.mark.parametrize("how", ["after", "last-event-id"])
def test_a_reconnecting_reader_gets_only_the_events_it_missed(served: Served, how: str) -> None:
    run_id = served.app.store.list_runs("code-review")[-1].id
    url = f"/api/v1/runs/{run_id}/events"
    if how == "after":
        response = served.client.get(url, params={"after": 5})
    else:
        response = served.client.get(url, headers={"Last-Event-ID": "5"})
    ids = [int(f["id"]) for f in _frames(response.text) if "id" in f]
    assert ids == list(range(6, _log_lines(served, run_id) + 1))


@pytest.mark.parametrize("header", ["²".encode("latin-1"), b"9" * 5000, b"3x", b"0x10"])
def test_a_last_event_id_that_is_no_number_this_server_sent_is_ignored(
    served: Served, header: bytes
) -> None:
    run_id = served.app.store.list_runs("code-review")[-1].id
    response = served.client.get(f"/api/v1/runs/{run_id}/events", headers={"Last-Event-ID": header})
    assert response.status_code == 200
    ids = [int(f["id"]) for f in _frames(response.text) if "id" in f]
    assert ids == list(range(1, _log_lines(served, run_id) + 1))


def test_the_log_of_a_paused_run_stays_open_until_the_approval_resumes_it(
    served: Served, paused: str
) -> None:
    received: list[str] = []
    done = threading.Event()
    seen_pause = threading.Event()

    def follow() -> None:
        with served.client.stream("GET", f"/api/v1/runs/{paused}/events", timeout=60) as stream:
            for chunk in stream.iter_text():
                received.append(chunk)
                if '"status":"awaiting_approval","error"' in "".join(received):
                    seen_pause.set()
        done.set()

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    assert seen_pause.wait(30), "the stream should send the run_end of the pause"
    assert not done.wait(1.0), "a paused run's stream must stay open"
    answer = {"task": "publish", "approved": True}
    assert served.client.post(f"/api/v1/runs/{paused}/approval", json=answer).status_code == 202
    assert done.wait(30), "the stream should end once the resumed run ends"
    frames = _frames("".join(received))
    kinds = [f.get("event") for f in frames]
    assert "run_resume" in kinds
    assert kinds[-1] == "end"
    assert json.loads(frames[-2]["data"])["status"] == "succeeded"
    assert served.app.store.get_run(paused).status is RunStatus.SUCCEEDED  # type: ignore[union-attr]


def test_the_workspace_rules_are_edited_with_a_version_check_and_audited_in_the_workspace(
    served: Served,
) -> None:
    from squad.memory.audit import AuditLog

    rules = served.client.get("/api/v1/squads/code-review/rules").json()
    assert rules["title"].startswith("Workspace rules") and rules["squad"] == "code-review"
    text = "Run the tests before a review.\n"
    saved = served.client.put(
        "/api/v1/squads/code-review/rules", json={"text": text, "version": rules["version"]}
    )
    assert saved.status_code == 200 and saved.json()["text"] == text
    workspace = served.app.squads.locate("code-review").path
    assert (workspace / "AGENTS.md").read_text() == text
    stale = served.client.put(
        "/api/v1/squads/code-review/rules", json={"text": "x\n", "version": rules["version"]}
    )
    assert stale.status_code == 409 and stale.json()["current"]["text"] == text
    assert [r.actor for r in AuditLog(workspace).records() if r.file == "AGENTS.md"][-1] == "web"
    restore = served.client.put(
        "/api/v1/squads/code-review/rules",
        json={"text": rules["text"], "version": saved.json()["version"]},
    )
    assert restore.status_code == 200


def test_the_approvals_inbox_answers_each_paused_task_in_place(served: Served) -> None:
    run = served.paused_run()
    page = served.client.get("/approvals")
    assert page.status_code == 200
    assert f'hx-post="/runs/{run}/decide"' in page.text
    assert 'name="task" value="publish"' in page.text
    assert f'hx-target="#answer-{run}"' in page.text


def test_decisions_are_listed_searched_and_shown_on_the_memory_page(served: Served) -> None:
    app = served.app
    workspace = app.squads.locate("docs-site").path
    first = app.decisions.record(
        "docs-site",
        workspace,
        title="Guides are one page each",
        decision="Each guide is a single page.",
        reasons=["Readers search within a page"],
        alternatives=["A chapter per step"],
        decided_by="person:alice",
    )
    second = app.decisions.record(
        "docs-site",
        workspace,
        title="Guides may span pages",
        decision="Long guides are split into pages of one step each.",
        reasons=["The install guide grew past 3,000 words"],
        decided_by="mcp:claude-code",
        supersedes=first.id,
    )
    listed = served.client.get("/api/v1/decisions", params={"squad": "docs-site"}).json()
    assert [d["id"] for d in listed[:2]] == [second.id, first.id]
    assert listed[1]["superseded_by"] == second.id
    current = served.client.get(
        "/api/v1/decisions", params={"q": "guides pages", "include_superseded": "false"}
    ).json()
    assert [d["id"] for d in current] == [second.id]
    assert served.client.get("/api/v1/decisions", params={"squad": "nope"}).status_code == 404
    page = served.client.get("/memory").text
    assert f"<s>{first.title}</s>" in page and f"superseded by #{second.id}" in page
    assert "The install guide grew past 3,000 words" in page and "mcp:claude-code" in page
