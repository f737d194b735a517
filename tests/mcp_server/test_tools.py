"""squad's MCP tools and resources through the SDK's own client, in memory."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import Implementation

from squad.app import App
from tests.conftest import propose
from tests.mcp_server.conftest import audit_lines, call, error_text, ok, payload, with_client
from tests.support.leaks import assert_nowhere_on_disk
from tests.text.secrets_corpus import URLSAFE, fake

READS = {
    "squads",
    "memory_search",
    "memory_read",
    "memory_context",
    "memory_history",
    "decision_search",
    "run_status",
}
WRITES = {
    "remember",
    "forget",
    "memory_revert",
    "memory_review",
    "decision_record",
    "run_start",
    "run_approve",
}
CLIENT = Implementation(name="claude-code", version="2.1")


def _client_named(app: App, body: Any, **scope: Any) -> Any:
    """``with_client`` whose client introduces itself as Claude Code."""
    import anyio
    from mcp import Client

    from squad.mcp.server import build_server
    from squad.mcp.tools import Scope

    server = build_server(app, scope=Scope(**scope))

    async def main() -> Any:
        async with Client(server, client_info=CLIENT) as client:
            return await body(client)

    return anyio.run(main)


def test_every_tool_has_a_description_and_a_schema_for_each_argument(home: App) -> None:
    async def body(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = with_client(home, body)
    assert {t.name for t in tools} == READS | WRITES
    for tool in tools:
        assert tool.description and len(tool.description) > 30, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object"
        for name, prop in schema.get("properties", {}).items():
            assert "type" in prop or "anyOf" in prop or "enum" in prop, (tool.name, name)
        assert tool.annotations.read_only_hint is (tool.name in READS)
    remember = next(t for t in tools if t.name == "remember")
    assert set(remember.input_schema["required"]) == {"squad", "agent", "text", "layer"}
    assert remember.input_schema["properties"]["layer"]["enum"] == ["project", "experiential"]


def test_each_read_answers_its_json_object_as_structured_content_too(home: App) -> None:
    """The text and the structured content are the same object, never ``{"result": ...}``;
    a tool with one view publishes its schema, and the answer keeps to it."""
    calls = {
        "squads": {},
        "memory_search": {"query": "the"},
        "memory_read": {"squad": "docs-site", "agent": "writer"},
        "memory_context": {"squad": "docs-site", "agent": "writer"},
        "memory_history": {"squad": "docs-site", "agent": "writer"},
        "decision_search": {"query": "the"},
        "run_status": {"squad": "docs-site"},
    }

    async def body(client: Any) -> Any:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools, {name: await call(client, name, **args) for name, args in calls.items()}

    tools, answers = with_client(home, body)
    assert set(calls) == READS
    for name, result in answers.items():
        assert result.structured_content == payload(result), name
        schema = tools[name].output_schema
        if name != "run_status":  # one of two views: no single schema
            assert schema is not None and set(payload(result)) <= set(schema["properties"]), name


def test_squads_lists_each_squad_with_its_agents(home: App) -> None:
    async def body(client: Any) -> Any:
        return await ok(client, "squads")

    data = with_client(home, body)
    by_name = {s["name"]: s for s in data["squads"]}
    assert set(by_name) == {"code-review", "docs-site"}
    assert {a["id"] for a in by_name["docs-site"]["agents"]} == {"planner", "writer", "reviewer"}
    assert all(a["role"] and a["model"] for a in by_name["docs-site"]["agents"])
    assert data["read_only"] is False


def test_memory_read_gives_the_file_or_one_section_and_names_the_sections(home: App) -> None:
    async def body(client: Any) -> Any:
        whole = payload(await call(client, "memory_read", squad="docs-site", agent="writer"))
        one = payload(
            await client.call_tool(
                "memory_read", {"squad": "docs-site", "agent": "writer", "section": "Decisions"}
            )
        )
        missing = await client.call_tool(
            "memory_read", {"squad": "docs-site", "agent": "writer", "section": "Nope"}
        )
        return whole, one, missing

    whole, one, missing = with_client(home, body)
    on_disk = home.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"
    assert whole["text"] == on_disk.read_text()
    assert "Decisions" in whole["sections"] and len(whole["version"]) == 64
    assert one["section"] == "Decisions"
    text = error_text(missing)
    assert "no section 'Nope'" in text and "'Insights'" in text


def test_remember_writes_memory_md_audited_as_the_client(home: App) -> None:
    workspace = home.squads.locate("docs-site").path

    async def body(client: Any) -> Any:
        args = {"squad": "docs-site", "agent": "writer", "layer": "project"}
        saved = payload(await client.call_tool("remember", {**args, "text": "Docs use MkDocs"}))
        read = payload(
            await client.call_tool(
                "memory_read", {"squad": "docs-site", "agent": "writer", "section": "Insights"}
            )
        )
        return saved, read

    saved, read = _client_named(home, body)
    assert saved == {
        "layer": "project",
        "where": "agents/writer/memory.md#Insights",
        "fact_id": None,
        "stored": True,
        "already": None,
    }
    assert "Docs use MkDocs" in read["text"]
    assert "Docs use MkDocs" in (workspace / "agents" / "writer" / "memory.md").read_text()
    assert audit_lines(workspace)[-1]["actor"] == "mcp:claude-code"


def test_an_experiential_fact_is_found_then_forgotten_with_its_reason(home: App) -> None:
    workspace = home.squads.locate("docs-site").path

    async def body(client: Any) -> Any:
        saved = payload(
            await client.call_tool(
                "remember",
                {
                    "squad": "docs-site",
                    "agent": "reviewer",
                    "layer": "experiential",
                    "text": "Reviewers want examples that run as written",
                },
            )
        )
        found = payload(
            await client.call_tool(
                "memory_search", {"query": "examples that run", "layer": "experiential"}
            )
        )
        gone = payload(await call(client, "forget", fact_id=saved["fact_id"], reason="duplicate"))
        after = payload(
            await client.call_tool(
                "memory_search", {"query": "examples that run", "layer": "experiential"}
            )
        )
        again = await call(client, "forget", fact_id=999_999, reason="x")
        return saved, found, gone, after, again

    saved, found, gone, after, again = _client_named(home, body)
    assert [h["where"] for h in found["hits"]] == [f"fact:{saved['fact_id']}"]
    assert gone == {"fact_id": saved["fact_id"], "forgotten": True, "reason": "duplicate"}
    assert after["hits"] == []
    assert "no experiential fact with id 999999" in error_text(again)
    last = audit_lines(workspace)[-1]
    assert (last["actor"], last["operation"], last["note"]) == (
        "mcp:claude-code",
        "forget",
        "duplicate",
    )


def test_a_credential_is_refused_and_nothing_is_written(home: App) -> None:
    memory = home.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"
    before = memory.read_bytes()

    async def body(client: Any) -> Any:
        return await client.call_tool(
            "remember",
            {
                "squad": "docs-site",
                "agent": "writer",
                "layer": "project",
                "text": "the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            },
        )

    text = error_text(with_client(home, body))
    assert "contains a credential" in text and "sk-proj" not in text
    assert memory.read_bytes() == before


def test_no_write_tool_lets_a_credential_or_a_forget_reason_carrying_one_reach_the_disk(
    home: App,
) -> None:
    key, password = "sk-" + "proj-" + fake(URLSAFE, 40), "Blu3Whale$2024"
    where = {"squad": "docs-site", "agent": "writer"}

    async def body(client: Any) -> Any:
        refused = []
        for text in (f"the deploy key is {key}", f"my password is {password}"):
            for layer in ("project", "experiential"):
                refused.append(await call(client, "remember", **where, layer=layer, text=text))
            refused.append(
                await call(
                    client,
                    "decision_record",
                    squad="docs-site",
                    title="Deploys",
                    decision=text,
                    reasons=["it works"],
                )
            )
        fact = await ok(
            client, "remember", **where, layer="experiential", text="Titles stay under 60 chars"
        )
        await ok(client, "forget", fact_id=fact["fact_id"], reason=f"it leaked {key}")
        return refused

    refused = _client_named(home, body)
    assert all("contains a credential" in error_text(answer) for answer in refused)
    note = audit_lines(home.squads.locate("docs-site").path)[-1]["note"]
    assert note == "it leaked [REDACTED:openai_api_key]"
    for value in (key, password):
        assert_nowhere_on_disk(value, home.settings.home.parent)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"squad": "docs-site", "agent": "writer", "text": "x", "layer": "proj"},
            "layer: Input should be 'project' or 'experiential'",
        ),
        ({"squad": "docs-site", "agent": "writer", "text": "x"}, "layer: Field required"),
        (
            {"squad": "docs-site", "agent": "writer", "text": "x", "layer": "project", "colour": 1},
            "remember has no argument colour; it takes: agent, layer, section, squad, text",
        ),
        (
            {"squad": "Docs Site", "agent": "writer", "text": "x", "layer": "project"},
            "squad: String should match pattern",
        ),
        (
            {"squad": "docs-site", "agent": "writer", "text": "x" * 2001, "layer": "project"},
            "text: String should have at most 2000 characters",
        ),
        (
            {"squad": "no-such", "agent": "writer", "text": "x", "layer": "project"},
            "no squad or workspace named 'no-such'",
        ),
        ({"squad": "docs-site", "agent": "nobody", "text": "x", "layer": "project"}, "nobody"),
        (
            {"squad": "docs-site", "agent": "writer", "text": "   ", "layer": "project"},
            "nothing to remember",
        ),
    ],
)
def test_bad_arguments_are_a_tool_error_saying_what_is_wrong_and_write_nothing(
    home: App, arguments: dict[str, Any], expected: str
) -> None:
    memory = home.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"
    before = memory.read_bytes()

    async def body(client: Any) -> Any:
        return await client.call_tool("remember", arguments)

    text = error_text(with_client(home, body))
    assert expected in text
    assert "Traceback" not in text and "errors.pydantic.dev" not in text
    assert memory.read_bytes() == before


def test_memory_context_is_the_block_the_agent_would_get(home: App) -> None:
    message = "what do reviewers want in the getting-started guide?"

    async def body(client: Any) -> Any:
        args = {"squad": "docs-site", "agent": "writer", "message": message}
        return payload(await client.call_tool("memory_context", args))

    data = with_client(home, body)
    ctx = home.agent("docs-site", "writer")
    block = home.memory.memory_block(ctx, message=message, touch=False).to_dict()
    assert data["text"] == block["text"]
    assert data["tokens"] == block["tokens"] and data["budget"] == block["budget"]
    assert data["budget"]["experiential"] + data["budget"]["project"] == data["budget"]["total"]
    assert "supplementary" in data


def test_run_status_lists_a_squads_runs_and_shows_one_waiting_for_approval(home: App) -> None:
    async def body(client: Any) -> Any:
        runs = await ok(client, "run_status", squad="docs-site")
        one = await ok(client, "run_status", run_id=runs["runs"][0]["id"])
        both = await call(client, "run_status", squad="docs-site", run_id="x")
        unknown = await call(client, "run_status", run_id="nope")
        return runs, one, both, unknown

    runs, one, both, unknown = with_client(home, body)
    assert runs["runs"][0]["status"] == "awaiting_approval"
    assert one["awaiting"] == "publish"
    assert {t["id"] for t in one["tasks"]} >= {"outline", "draft", "review"}
    assert "give either run_id" in error_text(both)
    assert "no run 'nope'" in error_text(unknown)


def test_without_a_run_queue_run_start_says_it_cannot_start_runs(home: App) -> None:
    async def body(client: Any) -> Any:
        return await call(client, "run_start", squad="docs-site")

    assert "cannot start runs" in error_text(with_client(home, body))


def test_resources_list_the_workspace_and_read_back_its_files(home: App) -> None:
    workspace = home.squads.locate("docs-site").path

    async def body(client: Any) -> Any:
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        memory = await client.read_resource("squad://docs-site/agents/writer/memory.md")
        run_uri = next(
            str(r.uri) for r in listed if "/runs/" in str(r.uri) and "docs-site" in str(r.uri)
        )
        log = await client.read_resource(run_uri)
        return listed, templates, memory, log

    listed, templates, memory, log = with_client(home, body)
    uris = {str(r.uri) for r in listed}
    assert {
        "squad://docs-site/manifest",
        "squad://docs-site/agents/writer/memory.md",
        "squad://docs-site/tasks/outline/output.md",
        "squad://code-review/plans/plan-001.md",
    } <= uris
    assert {t.uri_template for t in templates} >= {"squad://{squad}/runs/{run_id}/log"}
    assert memory.contents[0].text == (workspace / "agents" / "writer" / "memory.md").read_text()
    assert memory.contents[0].mime_type == "text/markdown"
    assert '"event"' in log.contents[0].text.splitlines()[0]


def test_a_large_resource_is_cut_before_its_redaction_and_says_so(home: App) -> None:
    """A 2 MB task output: what is read (and redacted, the costly part) is the first 128 KiB,
    with a key at its start still redacted and a note saying where the rest is."""
    from squad.mcp.resources import MAX_BYTES

    output = home.squads.locate("docs-site").path / "tasks" / "outline" / "output.md"
    key = "sk-" + "Ab3dE" * 8
    output.write_text(f"token {key}\n" + "the build uses make and a config value\n" * 55_000)

    async def body(client: Any) -> Any:
        return await client.read_resource("squad://docs-site/tasks/outline/output.md")

    text = with_client(home, body).contents[0].text
    assert MAX_BYTES == 128 * 1024
    assert len(text.encode()) <= MAX_BYTES + 200
    assert key not in text and "[REDACTED" in text.splitlines()[0]
    assert text.rstrip().endswith("read tasks/outline/output.md in the workspace for the rest]")


@pytest.mark.parametrize(
    "uri",
    [
        "squad://docs-site/agents/nobody/memory.md",
        "squad://no-such/manifest",
        "squad://docs-site/../../etc/passwd",
        "file:///etc/passwd",
        "squad://docs-site/runs/nope/log",
    ],
)
def test_a_resource_that_is_not_there_is_an_error_naming_it(home: App, uri: str) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(client: Any) -> Any:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        return caught.value

    error = with_client(home, body)
    assert "no resource" in str(error) or "no squad" in str(error)
    assert "Traceback" not in str(error)


def test_credentials_written_into_memory_by_hand_leave_redacted(home: App) -> None:
    memory = home.squads.locate("code-review").path / "agents" / "reviewer" / "memory.md"
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    original = memory.read_text()
    memory.write_text(original + f"\n- the CI token is {secret}\n")
    try:

        async def body(client: Any) -> Any:
            read = payload(await call(client, "memory_read", squad="code-review", agent="reviewer"))
            resource = await client.read_resource("squad://code-review/agents/reviewer/memory.md")
            found = await ok(client, "memory_search", query="CI token")
            return read, resource, found

        read, resource, found = with_client(home, body)
    finally:
        memory.write_text(original)
    assert secret not in read["text"] and "[REDACTED" in read["text"]
    assert secret not in resource.contents[0].text
    assert found["hits"] and all(secret not in h["line"] for h in found["hits"])


def test_a_client_limited_to_one_squad_reaches_nothing_of_the_others(home: App) -> None:
    other_run = home.store.list_runs("code-review")[0].id

    async def body(client: Any) -> Any:
        squads = await ok(client, "squads")
        read = await call(client, "memory_read", squad="code-review", agent="developer")
        status = await call(client, "run_status", run_id=other_run)
        runs = await call(client, "run_status", squad="code-review")
        remember = await client.call_tool(
            "remember",
            {"squad": "code-review", "agent": "developer", "text": "x", "layer": "project"},
        )
        context = await client.call_tool(
            "memory_context", {"squad": "code-review", "agent": "developer"}
        )
        search = await ok(client, "memory_search", query="a")
        listed = (await client.list_resources()).resources
        return squads, read, status, runs, remember, context, search, listed

    squads, read, status, runs, remember, context, search, listed = with_client(
        home, body, squads=frozenset({"docs-site"})
    )
    assert [s["name"] for s in squads["squads"]] == ["docs-site"]
    for result in (read, runs, remember, context):
        text = error_text(result)
        assert "no squad 'code-review'" in text and "docs-site" not in text
    assert f"no run {other_run!r}" in error_text(status)
    assert all(h["squad"] == "docs-site" for h in search["hits"])
    assert listed and all(str(r.uri).startswith("squad://docs-site/") for r in listed)


def test_a_read_only_server_offers_only_the_reading_tools(home: App) -> None:
    memory = home.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"
    before = memory.read_bytes()

    async def body(client: Any) -> Any:
        tools = {t.name for t in (await client.list_tools()).tools}
        remember = await client.call_tool(
            "remember", {"squad": "docs-site", "agent": "writer", "text": "x", "layer": "project"}
        )
        squads = await ok(client, "squads")
        return tools, remember, squads

    tools, remember, squads = with_client(home, body, read_only=True)
    assert tools == READS
    assert "Unknown tool: remember" in error_text(remember)
    assert squads["read_only"] is True
    assert memory.read_bytes() == before


def test_decisions_recorded_over_mcp_are_searchable_superseded_and_in_decisions_md(
    home: App,
) -> None:
    workspace = home.squads.locate("code-review").path

    async def body(client: Any) -> Any:
        first = await ok(
            client,
            "decision_record",
            squad="code-review",
            title="Validate export input with pydantic",
            decision="The export command validates its arguments with a pydantic model.",
            reasons=["One place for the rules", "Errors name the field"],
            alternatives=["Hand-written checks"],
        )
        second = await ok(
            client,
            "decision_record",
            squad="code-review",
            title="Validate export input with attrs",
            decision="Export arguments are validated with attrs validators.",
            reasons=["pydantic is too heavy for the CLI start-up"],
            supersedes=first["id"],
        )
        found = await ok(client, "decision_search", query="validate export")
        everything = await ok(
            client, "decision_search", query="validate export", include_superseded=True
        )
        reasonless = await call(
            client, "decision_record", squad="code-review", title="t", decision="d", reasons=[]
        )
        twice = await call(
            client,
            "decision_record",
            squad="code-review",
            title="Again",
            decision="Something else.",
            reasons=["r"],
            supersedes=first["id"],
        )
        mirror = await client.read_resource("squad://code-review/decisions.md")
        return first, second, found, everything, reasonless, twice, mirror

    first, second, found, everything, reasonless, twice, mirror = _client_named(home, body)
    assert (
        first["decided_by"] == "mcp:claude-code" and first["reasons"][1] == "Errors name the field"
    )
    assert second["supersedes"] == first["id"]
    assert [d["id"] for d in found["decisions"]] == [second["id"]]
    assert {d["id"] for d in everything["decisions"]} == {first["id"], second["id"]}
    assert "reasons" in error_text(reasonless)
    assert "superseded" in error_text(twice)
    text = mirror.contents[0].text
    assert text == (workspace / "decisions.md").read_text()
    assert f"~~{first['id']}. Validate export input with pydantic~~" in text
    assert f"Superseded by [decision {second['id']}](#decision-{second['id']})" in text


def test_decisions_of_another_squad_stay_out_of_reach_of_a_limited_client(home: App) -> None:
    home.decisions.record(
        "docs-site",
        home.squads.locate("docs-site").path,
        title="Screenshots come from the browser tests",
        decision="README screenshots are taken by the browser tests.",
        reasons=["They stay current"],
        decided_by="cli",
    )

    async def body(client: Any) -> Any:
        found = await ok(client, "decision_search", query="screenshots")
        named = await call(client, "decision_search", query="screenshots", squad="docs-site")
        return found, named

    found, named = with_client(home, body, squads=frozenset({"code-review"}))
    assert found["decisions"] == []
    assert "no squad 'docs-site'" in error_text(named)


def test_memory_history_and_revert_over_mcp_name_the_client(home: App) -> None:
    memory = home.squads.locate("docs-site").path / "agents" / "writer" / "memory.md"
    args = {"squad": "docs-site", "agent": "writer"}

    async def body(client: Any) -> Any:
        await ok(client, "remember", **args, text="Docs build with Zensical", layer="project")
        history = await ok(client, "memory_history", **args)
        change = history["changes"][0]
        reverted = await ok(client, "memory_revert", **args, change=change["id"])
        again = await call(client, "memory_revert", **args, change=change["id"])
        unknown = await call(client, "memory_revert", **args, change="0000000000")
        after = await ok(client, "memory_history", **args, limit=1)
        return change, reverted, again, unknown, after

    change, reverted, again, unknown, after = _client_named(home, body)
    assert change["who"] == "mcp:claude-code"
    assert any("Zensical" in line for line in change["added"])
    assert reverted["reverted"]["id"] == change["id"]
    assert "Zensical" not in memory.read_text()
    assert "nothing to undo" in error_text(again)
    assert "no commit" in error_text(unknown)
    newest = after["changes"][0]
    assert newest["who"] == "mcp:claude-code" and newest["reverts"] == change["commit"]


def test_run_status_gives_a_runs_commit_and_its_diff(home: App) -> None:
    async def body(client: Any) -> Any:
        runs = await ok(client, "run_status", squad="code-review")
        return await ok(client, "run_status", run_id=runs["runs"][0]["id"])

    one = with_client(home, body)
    assert one["commit"] and len(one["commit"]) == 40
    assert one["changes"] and all("path" in c for c in one["changes"])
    assert one["diff"].startswith("diff --git")


def test_memory_search_labels_recalled_messages_as_conversation_with_their_seq(
    home: App,
) -> None:
    ctx = home.agent("docs-site", "writer")
    said = home.store.conversation.record_message(
        "docs-site", "writer", "user", "the glossary of billing words lives in docs/terms.md"
    )
    home.memory.archive(ctx, [said])

    async def body(client: Any) -> Any:
        every = await ok(client, "memory_search", query="glossary of billing words")
        talk = await ok(
            client, "memory_search", query="glossary of billing words", layer="conversation"
        )
        facts = await ok(
            client, "memory_search", query="glossary of billing words", layer="experiential"
        )
        return every, talk, facts

    every, talk, facts = with_client(home, body)
    (hit,) = every["hits"]
    assert (hit["layer"], hit["where"]) == ("conversation", f"message:{said.seq}")
    assert hit["squad"] == "docs-site" and hit["agent"] == "writer"
    assert hit["line"] == "user: the glossary of billing words lives in docs/terms.md"
    assert talk["hits"] == every["hits"] and facts["hits"] == []


def test_memory_review_over_mcp_lists_approves_and_rejects_as_the_client(home: App) -> None:
    ids = [
        propose(home.store, "docs-site", "reviewer", text, confidence=0.6)
        for text in ("Diagrams are drawn with Mermaid.", "The glossary lives in docs/terms.md.")
    ]
    args = {"squad": "docs-site", "agent": "reviewer"}

    async def body(client: Any) -> Any:
        listed = await ok(client, "memory_review", **args)
        approved = await ok(client, "memory_review", **args, action="approve", ids=[ids[0]])
        rejected = await ok(client, "memory_review", **args, action="reject", ids=[ids[1]])
        again = await call(client, "memory_review", **args, action="reject", ids=[ids[1]])
        return listed, approved, rejected, again

    listed, approved, rejected, again = _client_named(home, body)
    assert [i["id"] for i in listed["items"]] == ids and listed["mode"] == "off"
    decided = approved["decided"][0]
    assert decided["written"] and decided["item"]["decided_by"] == "mcp:claude-code"
    memory = home.squads.locate("docs-site").path / "agents" / "reviewer" / "memory.md"
    assert "Mermaid" in memory.read_text() and "docs/terms.md" not in memory.read_text()
    assert rejected["decided"][0]["item"]["status"] == "rejected"
    assert "rejected already" in error_text(again)
    workspace = home.squads.locate("docs-site").path
    operations = [(a["actor"], a["operation"]) for a in audit_lines(workspace)]
    assert ("mcp:claude-code", "review-approve") in operations
    assert ("mcp:claude-code", "review-reject") in operations

    async def read_only(client: Any) -> Any:
        return {t.name for t in (await client.list_tools()).tools}

    assert "memory_review" not in with_client(home, read_only, read_only=True)
