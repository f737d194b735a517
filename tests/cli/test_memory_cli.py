"""``squad memory`` through the console script: in process where the subject is the output, the
installed script in a subprocess where it is the process (an editor, a pipe)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_cli import SQUAD, Cli
from tests.conftest import EXAMPLES


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """In process: these tests are about what the commands print and store."""
    return Cli(tmp_path, in_process=True)


DOCS = next(p for p in EXAMPLES if p.stem == "docs-site")


@pytest.fixture
def docs(cli: Cli) -> Cli:
    cli.json("create", DOCS)
    return cli


def test_remember_show_and_forget(docs: Cli) -> None:
    project = docs(
        "memory", "remember", "docs-site", "writer", "The site uses MkDocs", "--layer", "project"
    )
    assert project.returncode == 0, project.stderr
    fact = docs.json(
        "memory",
        "remember",
        "docs-site",
        "writer",
        "User likes examples first",
        "--layer",
        "experiential",
    )
    shown = docs.json("memory", "show", "docs-site", "writer")
    assert "- The site uses MkDocs (" in shown["project"]["text"]
    assert [f["text"] for f in shown["experiential"]["facts"]] == ["User likes examples first"]
    assert shown["experiential"]["name"] == "Agent Experience: Writer"
    assert shown["experiential"]["enabled"] is False
    assert docs("memory", "forget", str(fact["id"])).returncode == 0
    assert docs.json("memory", "show", "docs-site", "writer")["experiential"]["facts"] == []
    audit = (docs.workspaces / "docs-site" / "logs" / "memory-audit.jsonl").read_text()
    assert [json.loads(line)["operation"] for line in audit.splitlines()] == [
        "append",
        "remember",
        "forget",
    ]


def test_remembering_a_known_fact_again_stores_nothing_and_says_where_it_is(docs: Cli) -> None:
    def remember(text: str, layer: str) -> dict[str, object]:
        return docs.json("memory", "remember", "docs-site", "writer", text, "--layer", layer)

    first = remember("The site uses MkDocs", "project")
    again = remember("the site uses mkdocs.", "project")
    assert first["stored"] is True and first["already"] is None
    assert again["stored"] is False
    assert str(again["already"]).startswith("- The site uses MkDocs (")
    fact = remember("User likes examples first", "experiential")
    repeat = remember("User likes examples first!", "experiential")
    assert repeat == {**fact, "stored": False, "already": f"fact:{fact['id']}"}
    plain = docs(
        "memory", "remember", "docs-site", "writer", "The site uses MkDocs", "--layer", "project"
    )
    assert plain.returncode == 0 and "already remembered, nothing stored" in plain.stdout
    shown = docs.json("memory", "show", "docs-site", "writer")
    assert shown["project"]["text"].count("The site uses MkDocs") == 1
    assert [f["text"] for f in shown["experiential"]["facts"]] == ["User likes examples first"]


def test_secrets_and_bad_input_exit_2_without_storing(docs: Cli) -> None:
    secret = docs(
        "memory",
        "remember",
        "docs-site",
        "writer",
        "db is postgresql://app:S3cretPassw0rd@db.internal/app",
        "--layer",
        "project",
    )
    assert secret.returncode == 2 and "S3cretPassw0rd" not in secret.stderr
    assert "credential" in secret.stderr
    unknown = docs("memory", "show", "docs-site", "nobody")
    assert unknown.returncode == 2 and "has no agent 'nobody'" in unknown.stderr
    bad_layer = docs("memory", "remember", "docs-site", "writer", "x", "--layer", "global")
    assert bad_layer.returncode == 2
    memory = (docs.workspaces / "docs-site" / "agents" / "writer" / "memory.md").read_text()
    assert "postgresql" not in memory


def test_context_json_has_the_documented_shape(docs: Cli) -> None:
    memory = docs.workspaces / "docs-site" / "agents" / "writer" / "memory.md"
    memory.write_text(
        memory.read_text() + "".join(f"- Insight {i} about the guide\n" for i in range(40))
    )
    data = docs.json("memory", "context", "docs-site", "writer", "--max-tokens", "200")
    assert data["budget"] == {
        "total": 200,
        "experiential": 120,
        "project": 80,
        "flow": False,
        "recall": 1000,
    }
    assert data["recalled"] == []  # no message, nothing to recall
    assert set(data["tokens"]) >= {"experiential", "project", "total"}
    assert data["tokens"]["total"] <= 200
    assert data["dropped_lines"]["project"] > 0 and data["dropped_lines"]["experiential"] == 0
    assert "lines dropped to fit the memory budget" in data["text"]
    plain = docs("memory", "context", "docs-site", "writer", "--max-tokens", "200")
    block, regions = plain.stdout.split("\n\n# regions for a window of ", 1)
    assert block.strip() == data["text"]
    assert regions.startswith("8,192 tokens (offline)\nboot ")


def test_context_shows_the_working_memory_of_a_run_under_way(docs: Cli) -> None:
    from squad.memory.working import WorkingUpdate, apply, start_task
    from squad.memory.working_file import WorkingMemoryFile

    assert docs.json("memory", "context", "docs-site", "writer")["working_memory"] is None
    file = WorkingMemoryFile(docs.workspaces / "docs-site", "writer", "run-1")
    file.update(lambda s: start_task(s, "draft: Write the guide.", ["publish: Publish it."]))
    file.update(lambda s: apply(s, WorkingUpdate(add={"decisions": ["Use MkDocs"]})))

    data = docs.json("memory", "context", "docs-site", "writer")
    plain = docs("memory", "context", "docs-site", "writer").stdout

    working = data["working_memory"]
    assert working["run_id"] == "run-1" and working["tasks"] == ["draft: Write the guide."]
    assert working["remaining"] == ["publish: Publish it."]
    assert working["decisions"] == ["Use MkDocs"] and working["blockers"] == []
    assert working["text"].startswith("## Working memory\n<untrusted-memory>")
    assert plain.split("# regions for a window")[0].rstrip().endswith(working["text"])


def test_namespaces_enable_and_supplementary_context(docs: Cli) -> None:
    docs(
        "memory",
        "remember",
        "docs-site",
        "planner",
        "Estimate in half days",
        "--layer",
        "experiential",
    )
    (ns,) = docs.json("memory", "namespaces")
    assert ns["identity"] == "profile:planner-v1" and ns["enabled"] is False
    assert docs("memory", "enable", "profile:planner-v1").returncode == 0
    data = docs.json("memory", "context", "docs-site", "writer")
    assert "Estimate in half days" in data["supplementary"]["text"]
    assert docs("memory", "disable", str(ns["id"])).returncode == 0
    assert docs.json("memory", "context", "docs-site", "writer")["supplementary"]["text"] == ""
    missing = docs("memory", "enable", "Agent Experience: Plannr")
    assert missing.returncode == 2 and "Agent Experience: Planner" in missing.stderr


def test_search_spans_files_and_facts_with_filters(docs: Cli) -> None:
    docs(
        "memory",
        "remember",
        "docs-site",
        "writer",
        "Use MkDocs admonitions",
        "--layer",
        "project",
        "--section",
        "Coding Rules",
    )
    docs(
        "memory",
        "remember",
        "docs-site",
        "reviewer",
        "MkDocs strict mode catches links",
        "--layer",
        "experiential",
    )
    found = docs.json("memory", "search", "mkdocs")
    assert {(h["layer"], h["agent"]) for h in found["hits"]} == {
        ("project", "writer"),
        ("experiential", "reviewer"),
    }
    rules = docs.json("memory", "search", "mkdocs", "--section", "coding rules")
    assert [h["section"] for h in rules["hits"]] == ["Coding Rules"]
    assert docs.json("memory", "search", "MKDOCS", "--case-sensitive")["hits"] == []
    none = docs("memory", "search", "nothing-like-this")
    assert none.returncode == 1
    talk = docs("memory", "search", "mkdocs", "--layer", "conversation")
    assert (talk.returncode, talk.stderr) == (1, "")  # a layer it knows, with nothing said yet


@pytest.mark.slow
def test_edit_boot_files_from_a_file_and_from_stdin(docs: Cli) -> None:
    rules = docs.tmp / "rules.md"
    rules.write_text("Always run the link checker.\n")
    assert docs("memory", "edit", "agents", "--file", rules).returncode == 0
    assert (docs.home / "AGENTS.md").read_text() == "Always run the link checker.\n"
    piped = subprocess.run(
        [str(SQUAD), "memory", "edit", "user"],
        input="Likes tables.\n",
        env=docs.env,
        cwd=docs.tmp,
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 0, piped.stderr
    assert (docs.home / "USER.md").read_text() == "Likes tables.\n"
    too_big = docs.tmp / "big.md"
    too_big.write_text("x" * 60_000)
    result = docs("memory", "edit", "soul", "--file", too_big)
    assert result.returncode == 1 and "cap" in result.stderr
    assert docs("memory", "edit", "memory", "--file", rules).returncode == 2


def test_context_prints_the_same_through_the_sqlite_reader_as_through_the_full_store(
    docs: Cli,
) -> None:
    """``memory context`` reads a current SQLite store with plain sqlite3 (issue 35); the
    same file named with a query in its URL takes the full store: same output, every form."""
    for agent, fact in (("planner", "Estimate in half days"), ("writer", "Cite the RFC")):
        docs("memory", "remember", "docs-site", agent, fact, "--layer", "experiential")
    assert docs("memory", "enable", "profile:planner-v1").returncode == 0
    forms = (
        ["docs-site", "writer"],
        ["docs-site", "writer", "--json"],
        ["docs-site", "planner", "--max-tokens", "50"],
        ["docs-site", "writer", "-m", "How do we cite an RFC?", "--json"],
        ["docs-site", "reviewer", "--json"],  # no namespace yet: the full store makes it
    )
    read = [docs("memory", "context", *form) for form in forms]
    docs.env["SQUAD_DATABASE_URL"] = f"sqlite:///{docs.home / 'squad.db'}?timeout=5"
    full = [docs("memory", "context", *form) for form in forms]
    for form, fast, slow in zip(forms, read, full, strict=True):
        assert fast.returncode == slow.returncode == 0, (form, fast.stderr, slow.stderr)
        assert fast.stdout == slow.stdout, form
    assert "Estimate in half days" in read[0].stdout and "Cite the RFC" in read[0].stdout


def test_context_reports_each_region_of_the_models_window_or_of_the_one_given(
    docs: Cli,
) -> None:
    data = docs.json("memory", "context", "docs-site", "writer", "-m", "How do we deploy?")
    assert data["context_window"] == {"tokens": 8192, "source": "offline"}
    rows = {row["region"]: row for row in data["regions"]}
    assert list(rows) == [
        "boot",
        "memory",
        "recall",
        "supplementary",
        "working",
        "history",
        "turn",
        "reserve",
    ]
    assert sum(row["budget"] for row in rows.values()) == 8192
    # docs-site sets memory.max_tokens and supplementary_max_tokens: they win
    assert rows["memory"] == {
        "region": "memory",
        "budget": 2000,
        "used": data["tokens"]["experiential"] + data["tokens"]["project"],
        "set_by": "memory.max_tokens",
        "capped": False,
    }
    assert rows["supplementary"]["set_by"] == "memory.supplementary_max_tokens"
    assert (rows["recall"]["budget"], rows["recall"]["set_by"]) == (1000, None)
    assert data["budget"]["recall"] == 1000
    assert 0 < rows["boot"]["used"] <= rows["boot"]["budget"]  # header and the default SOUL.md
    assert rows["working"]["used"] == 0 and rows["history"]["used"] is None
    assert rows["turn"]["used"] > 0  # the message

    wide = docs.json("memory", "context", "docs-site", "writer", "--context-window", "128000")
    assert wide["context_window"] == {"tokens": 128_000, "source": "option"}
    wide_rows = {row["region"]: row for row in wide["regions"]}
    assert (wide_rows["memory"]["budget"], wide_rows["recall"]["budget"]) == (2000, 3995)
    assert wide["budget"]["recall"] == 3995

    text = docs("memory", "context", "docs-site", "writer", "--context-window", "4096")
    assert text.returncode == 0, text.stderr
    assert "# regions for a window of 4,096 tokens (option)" in text.stdout
    table = [line.split() for line in text.stdout.splitlines()[-8:]]
    assert table[1] == ["memory", "2,000", "0", "(memory.max_tokens)"]
    # the two budgets docs-site sets take half the window: the sized regions give way
    assert table[2][:2] == ["recall", "64"] and table[5][:3] == ["history", "256", "-"]

    small = docs("memory", "context", "docs-site", "writer", "--context-window", "100")
    assert small.returncode == 2 and "--context-window" in small.stderr
    assert "Traceback" not in small.stderr


LITELLM_PROBE = """\
import sys
from squad.cli import main


sys.argv = ["squad", "memory", "context", "docs-site", "writer", "--json"]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print("litellm" in sys.modules, file=sys.stderr)
"""


@pytest.mark.slow
def test_planning_an_offline_prompt_never_imports_litellm(docs: Cli) -> None:
    """The offline model declares its window: litellm's model map is read only for a real
    model (and litellm takes seconds to import)."""
    import sys

    result = subprocess.run(
        [sys.executable, "-c", LITELLM_PROBE],
        env=docs.env,
        cwd=docs.tmp,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["context_window"]["source"] == "offline"
    assert result.stderr.strip().splitlines()[-1] == "False"


def test_a_credential_given_to_remember_or_a_run_never_reaches_the_disk(docs: Cli) -> None:
    from tests.support.leaks import assert_nowhere_on_disk
    from tests.text.secrets_corpus import URLSAFE, fake

    key, password = "sk-" + "proj-" + fake(URLSAFE, 40), "Blu3Whale$2024"
    for text in (f"the deploy key is {key}", f"my password is {password}"):
        for layer in ("project", "experiential"):
            refused = docs("memory", "remember", "docs-site", "writer", text, "--layer", layer)
            assert refused.returncode == 2 and "contains a credential" in refused.stderr
            assert key not in refused.stderr + refused.stdout
    run = docs("run", "docs-site", "--goal", f"Publish the site with {key}", "--json")
    paused = json.loads(run.stdout)
    assert paused["status"] == "awaiting_approval", run.stderr
    reason = f"my password is {password}"
    rejected = docs(
        "approve", paused["run_id"], "publish", "--reject", "--reason", reason, "--json"
    )
    assert json.loads(rejected.stdout)["status"] == "failed", rejected.stderr
    for value in (key, password):
        assert_nowhere_on_disk(value, docs.tmp)


IMPORTS_PROBE = """\
import sys
from squad.cli import main

sys.argv = ["squad", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
unwanted = (
    "langgraph",
    "langchain_core",
    "langsmith",
    "alembic",
    "sqlalchemy",
    "sqlmodel",
    "squad.text.secrets._named",
    "squad.text.chatter",
    "markdown_it",
    "typer._adapters",
)
print(sorted(name for name in unwanted if name in sys.modules), file=sys.stderr)
"""


@pytest.mark.slow
def test_memory_context_and_status_on_a_current_database_import_no_graph_orm_or_rules(
    docs: Cli,
) -> None:
    """Reading commands start fast (issue 35): the run graph (LangGraph, langchain_core and
    langsmith) is imported when a run starts, alembic only when the database needs a
    migration, SQLAlchemy and SQLModel not at all on a current SQLite database (plain
    sqlite3 reads it, once the agent's namespace exists: the first look makes it), the
    credential detector's rule tables on its first search, the chatter filter's cue tables
    on the first message recall asks about, markdown-it only for a memory.md that is not
    plain (this one, squad's seed, is), and no pydantic adapter for a parameter left at its
    default (:mod:`squad.cli.params`)."""
    import sys

    assert docs("memory", "context", "docs-site", "writer").returncode == 0  # its namespace
    for command in (["memory", "context", "docs-site", "writer"], ["status"]):
        done = subprocess.run(
            [sys.executable, "-c", IMPORTS_PROBE, *command],
            env=docs.env,
            cwd=docs.tmp,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), command  # it did its work
        assert done.stderr.strip().splitlines()[-1] == "[]", (command, done.stderr[-500:])
