"""``squad memory``: see, search, edit, enable and extract what agents remember."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from squad.cli.context import open_app
from squad.cli.options import TimeoutOption
from squad.cli.output import Output, skip_notes
from squad.errors import UsageError
from squad.spec.window import MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW

if TYPE_CHECKING:
    from squad.app import App
    from squad.history.log import MemoryEntry
    from squad.memory.search import MemoryHit
    from squad.memory.service import AgentContext
    from squad.views import ReviewResult

__all__ = ["memory_app"]

memory_app = typer.Typer(help="See, search and edit agent memory.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
SquadArg = Annotated[str, typer.Argument(help="Squad name (or workspace folder).")]
AgentArg = Annotated[str, typer.Argument(help="Agent id within the squad.")]
LayerName = Literal["project", "experiential"]
SearchLayer = Literal["project", "experiential", "conversation"]

MAX_ID = 2**31 - 1
"""The largest id the store's key columns can hold: they are INTEGER, 32 bits on PostgreSQL
(64 on SQLite). A larger number is refused here, before it overflows a query parameter."""


def _store_id(value: int, what: str, listing: str) -> int:
    """``value`` if it can be a stored id, else a UsageError saying so."""
    if not 1 <= value <= MAX_ID:
        raise UsageError(
            f"{what} id {value} is out of range: ids run from 1 to {MAX_ID}; {listing} lists them"
        )
    return value


def _namespace_ref(ref: str) -> int | str:
    """A namespace id as a number (checked like any id), anything else as given."""
    text = ref.strip()
    if not text.isdigit():
        return ref
    if not text.isascii():  # "²" is a digit to str.isdigit, not to int()
        raise UsageError(
            f"no memory namespace {ref!r}; `squad memory namespaces` shows the namespaces"
        )
    # Past 10 digits it is out of range anyway, and int() refuses 4,300 of them.
    value = int(text) if len(text) <= 10 else MAX_ID + 1
    if value > MAX_ID:
        raise UsageError(
            f"namespace id {text} is out of range: ids run from 1 to {MAX_ID}; "
            "`squad memory namespaces` lists them"
        )
    return value


@memory_app.command()
def namespaces(json_output: JsonFlag = False) -> None:
    """List experiential (Layer A) namespaces and whether other agents see them."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        rows = [ns.to_dict() for ns in app.store.memory.list_namespaces()]
    if json_output:
        out.json(rows)
        return
    if not rows:
        out.line("no namespaces yet; they appear when an agent first uses memory")
    for row in rows:
        state = "enabled " if row["enabled"] else "disabled"
        out.line(
            f"{row['id']:>4}  {state}  {row['facts']:>5} facts  {row['name']}  ({row['identity']})"
        )


def _set_enabled(ref: str, enabled: bool) -> None:
    out = Output()
    key = _namespace_ref(ref)
    with open_app() as app:
        ns = app.store.memory.set_namespace_enabled(key, enabled)
    state = "enabled: other agents' chats now get it" if enabled else "disabled"
    out.line(f"{ns.name} ({ns.identity}) {state}")


@memory_app.command()
def enable(
    namespace: Annotated[str, typer.Argument(help="Namespace id, identity or name.")],
) -> None:
    """Let a namespace's facts into other agents' chats ([Supplementary Context])."""
    _set_enabled(namespace, True)


@memory_app.command()
def disable(
    namespace: Annotated[str, typer.Argument(help="Namespace id, identity or name.")],
) -> None:
    """Keep a namespace's facts to its own agent (the default)."""
    _set_enabled(namespace, False)


@memory_app.command()
def remember(
    squad: SquadArg,
    agent: AgentArg,
    text: Annotated[str, typer.Argument(help="The fact, one line.")],
    layer: Annotated[
        LayerName,
        typer.Option("--layer", help="project (memory.md) or experiential (follows the agent)"),
    ],
    section: Annotated[
        str | None, typer.Option("--section", help="memory.md section (default Insights).")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Store a fact in an agent's memory yourself; a fact it already holds is not stored again."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        result = app.memory.remember(
            app.agent(squad, agent), text, layer=layer, section=section, actor="cli"
        )
    if json_output:
        out.json(
            {
                "layer": result.layer,
                "where": result.where,
                "id": result.fact.id if result.fact else None,
                "stored": result.already is None,
                "already": result.already,
            }
        )
    elif result.already is not None:
        out.line(f"already remembered, nothing stored: {result.already}", style="yellow")
    else:
        out.line(f"remembered in {result.where}", style="green")


@memory_app.command()
def forget(
    fact_id: Annotated[int, typer.Argument(help="Experiential fact id (see `memory show`).")],
    purge: Annotated[
        bool,
        typer.Option(
            "--purge", help="Delete it for good instead of keeping it, hidden, for audit."
        ),
    ] = False,
) -> None:
    """Take an experiential fact out of memory."""
    _store_id(fact_id, "fact", "`squad memory show`")
    out = Output()
    with open_app() as app:
        fact = app.store.memory.get_fact(fact_id)
        workspace = None
        if fact is not None:
            try:
                workspace = app.squads.locate(fact.squad).path
            except UsageError:  # the squad is gone; the fact still goes, unaudited there
                workspace = None
        app.memory.forget(fact_id, purge=purge, workspace=workspace)
    out.line(f"fact {fact_id} {'purged' if purge else 'forgotten'}")


@memory_app.command()
def extract(
    transcript: Annotated[
        Path, typer.Argument(help="JSON Lines of {role, content}, or a JSON list of them.")
    ],
    squad: Annotated[
        str | None, typer.Option("--squad", help="Check against (and write to) this squad.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="The squad's agent.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be written; write nothing.")
    ] = False,
    output_format: Annotated[
        str, typer.Option("--format", help="text or json.", show_default=True)
    ] = "text",
    model: Annotated[
        str | None,
        typer.Option("--model", help="Extract with this model (default: the agent's; offline)."),
    ] = None,
) -> None:
    """Run the fact extractor over a transcript file.

    With --squad and --agent the facts are checked against that agent's memory (duplicates,
    near-duplicates, superseded facts) and written, unless --dry-run. Without them nothing is
    written. `--format json` prints {"facts": [...], "dropped": [...]}, with source_turns as
    zero-based indexes of the file's messages.
    """
    from squad.errors import UsageError
    from squad.extraction.models import ExtractionModels
    from squad.extraction.transcript import extract_transcript, read_transcript
    from squad.spec.models import ModelSpec

    if output_format not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {output_format!r}")
    if (squad is None) != (agent is None):
        raise UsageError("give both --squad and --agent, or neither")
    messages = read_transcript(transcript)
    out = Output(json_mode=output_format == "json")
    with open_app() as app:
        now = app.clock()
        models = ExtractionModels(app.model_factory)
        if squad is None or agent is None:
            chosen = None if model is None else models.for_spec(ModelSpec(name=model))
            result = extract_transcript(messages, now=now, model=chosen)
            writes = False
        else:
            ctx = app.agent(squad, agent)
            chosen = models(ctx) if model is None else models.for_spec(ModelSpec(name=model))
            result = extract_transcript(
                messages,
                now=now,
                model=chosen,
                memory=app.memory,
                ctx=ctx,
                dry_run=dry_run,
                source=f"transcript:{transcript.name}",
            )
            writes = not dry_run
    data = result.to_dict(dry_run=not writes)
    err = Output(stream=sys.stderr)
    for warning in data["warnings"]:
        err.line(f"warning: {warning}", style="yellow" if err.rich else None)
    if out.json_mode:
        out.json(data)
        return
    for fact in data["facts"]:
        where = f" [{fact['section']}]" if fact["section"] else ""
        turns = ",".join(map(str, fact["source_turns"]))
        out.line(f"{fact['action']:5} {fact['scope']}{where}: {fact['text']}  (turns {turns})")
    for fact in data["dropped"]:
        out.line(f"drop  {fact['reason']}: {fact['text']}", style="dim")
    if not writes:
        out.line("(nothing written)", style="dim")


@memory_app.command()
def gc(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
    ] = False,
    half_life_days: Annotated[
        float | None,
        typer.Option(
            "--half-life-days",
            min=0.01,
            max=36_500,  # a century; far past it, the dates gc derives overflow
            help="Days unused that halve a fact's score (30).",
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Consolidate memory: expire facts past their TTL, make long-unused ones dormant, and
    propose promoting project facts seen in three runs or sessions. Nothing is deleted."""
    from squad.memory.gc import GcPolicy, run_gc

    out = Output(json_mode=json_output)
    policy = GcPolicy() if half_life_days is None else GcPolicy(half_life_days=half_life_days)
    with open_app() as app:
        report = run_gc(app.store, app.squads.workspace_paths(), dry_run=dry_run, policy=policy)
    if json_output:
        out.json(report.to_dict())
    else:
        out.stream.write(report.render() + "\n")


@memory_app.command()
def revive(
    fact_id: Annotated[int, typer.Argument(help="A dormant fact's id (see `memory show --all`).")],
) -> None:
    """Bring a dormant experiential fact back into retrieval."""
    from squad.memory.audit import AuditLog, AuditRecord

    _store_id(fact_id, "fact", "`squad memory show --all`")
    out = Output()
    with open_app() as app:
        fact = app.store.maintenance.revive(fact_id)
        try:
            workspace = app.squads.locate(fact.squad).path
        except UsageError:  # the squad is gone: the store row keeps status and time
            workspace = None
        if workspace is not None:
            AuditLog(workspace).append(
                AuditRecord(
                    time=app.clock().isoformat(),
                    actor="cli",
                    operation="revive",
                    file=f"fact:{fact_id}",
                )
            )
    out.line(f"fact {fact_id} is active again: {fact.text}")


@memory_app.command()
def promote(
    squad: SquadArg,
    agent: AgentArg,
    key: Annotated[str, typer.Argument(help="The proposal's key (or the fact's text).")],
    json_output: JsonFlag = False,
) -> None:
    """Copy a project fact memory gc proposed into the agent's experiential memory."""
    from squad.errors import UsageError
    from squad.memory.sightings import fact_text, sighting_key

    out = Output(json_mode=json_output)
    with open_app() as app:
        ctx = app.agent(squad, agent)
        maintenance = app.store.maintenance
        found = maintenance.sighting(ctx.squad.name, ctx.agent.id, key)
        found = found or maintenance.sighting(ctx.squad.name, ctx.agent.id, sighting_key(key))
        if found is None:
            raise UsageError(
                f"no project fact {key!r} was seen for {ctx.squad.name}/{ctx.agent.id}; "
                "`squad memory gc --dry-run` lists the proposals"
            )
        namespace = app.memory.namespace(ctx)
        text = fact_text(found.text)
        for fact in app.store.memory.search_facts(text, namespace_ids=[namespace.id]):
            if sighting_key(fact.text) == found.key:
                raise UsageError(f"already in experiential memory as fact {fact.id}")
        result = app.memory.remember(ctx, text, layer="experiential", actor="promote")
    if json_output:
        out.json({"key": found.key, "where": result.where, "id": result.fact and result.fact.id})
    else:
        out.line(f"promoted to {result.where}: {text}", style="green")


@memory_app.command()
def show(
    squad: SquadArg,
    agent: AgentArg,
    include_all: Annotated[
        bool,
        typer.Option(
            "--all", help="Also list inactive facts: dormant, expired, forgotten, superseded."
        ),
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Show an agent's project memory (memory.md) and its experience (Layer A facts)."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        ctx = app.agent(squad, agent)
        snapshot = app.memory.memory_file(ctx).snapshot()
        ns = app.memory.namespace(ctx)
        facts = app.store.memory.facts(ns.id, include_inactive=include_all)
    if json_output:
        out.json(
            {
                "squad": ctx.squad.name,
                "agent": ctx.agent.id,
                "project": {
                    "file": f"agents/{ctx.agent.id}/memory.md",
                    "size": snapshot.size,
                    "text": snapshot.document.render(),
                    "sections": snapshot.document.names,
                },
                "experiential": {
                    **ns.to_dict(),
                    "facts": [
                        {
                            "id": f.id,
                            "text": f.text,
                            "squad": f.squad,
                            "created_at": f.created_at.isoformat(),
                            "access_count": f.access_count,
                            "status": f.status.value,
                        }
                        for f in facts
                    ],
                },
            }
        )
        return
    out.line(
        f"# {ctx.agent.display_name} in {ctx.squad.name}: agents/{ctx.agent.id}/memory.md "
        f"({snapshot.size:,} bytes)",
        style="bold",
    )
    out.stream.write(snapshot.document.render() or "(empty)\n")
    state = "enabled" if ns.enabled else "disabled for other agents"
    listed = (
        ("fact" if len(facts) == 1 else "facts")
        if include_all
        else ("active fact" if len(facts) == 1 else "active facts")
    )
    out.line(f"# {ns.name} [{ns.identity}] ({state}): {len(facts)} {listed}", style="bold")
    for fact in facts:
        status = "" if fact.status.value == "active" else f"[{fact.status.value}] "
        out.line(
            f"{fact.id:>5}  {status}{fact.text}  ({fact.created_at.date().isoformat()}, "
            f"from {fact.squad}/{fact.agent})"
        )


@memory_app.command()
def context(
    squad: SquadArg,
    agent: AgentArg,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=0, help="Budget T (default: the squad's memory region's)"),
    ] = None,
    message: Annotated[
        str, typer.Option("--message", "-m", help="The user message the facts are ranked against.")
    ] = "",
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window",
            min=MIN_CONTEXT_WINDOW,
            max=MAX_CONTEXT_WINDOW,
            help="Plan the prompt for a model with this many tokens of context (default: the "
            "agent's model's window).",
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Print exactly the memory part the agent's next prompt would get (with its working
    memory when a run of it is under way), and its regions."""
    out = Output(json_mode=json_output)
    with open_app() as app:
        prompt = app.memory.preview(
            app.agent(squad, agent),
            message=message,
            max_tokens=max_tokens,
            context_window=context_window,
        )
    if json_output:
        out.json(prompt.to_dict())
        return
    working = prompt.working.state.render() if prompt.working is not None else ""
    shown = (prompt.block.text, prompt.supplementary.text, working)
    text = "\n\n".join(t for t in shown if t)
    out.stream.write((text or "(no memory would be injected)") + "\n")
    window = prompt.window
    out.line()
    out.line(f"# regions for a window of {window.tokens:,} tokens ({window.source})", style="bold")
    for row in prompt.regions.report(prompt.used):
        used = "-" if row.used is None else f"{row.used:,}"
        note = f"  ({row.set_by}{', capped' if row.capped else ''})" if row.set_by else ""
        out.line(f"{row.region:<14}{row.budget:>10,}{used:>10}{note}")


@memory_app.command()
def search(
    query: Annotated[str, typer.Argument(help="Text to find (a regex with --regex).")],
    squad: Annotated[str | None, typer.Option("--squad", help="Only this squad.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent.")] = None,
    section: Annotated[
        str | None, typer.Option("--section", help="Only this memory.md section.")
    ] = None,
    layer: Annotated[
        SearchLayer | None,
        typer.Option(
            "--layer",
            help="Only one layer: project (memory.md), experiential or conversation (the "
            "earlier messages recall draws on).",
        ),
    ] = None,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", "-s")] = False,
    regex: Annotated[bool, typer.Option("--regex", "-e", help="QUERY is a regex.")] = False,
    context_lines: Annotated[int, typer.Option("-C", "--context", min=0, max=50)] = 0,
    timeout: TimeoutOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Search all agents' memory files and the experiential store.

    Memory files not searched (links, too large, not regular files) are listed after the hits.
    """
    from squad.memory.search import MAX_MEMORY_FILE_BYTES, search_all_memory
    from squad.text.search import DEFAULT_TIMEOUT_S, compile_query

    out = Output(json_mode=json_output)
    pattern = compile_query(query, regex=regex, case_sensitive=case_sensitive)
    with open_app() as app:
        targets = [app.squads.locate(squad)] if squad else app.squads.all_workspaces()
        found = search_all_memory(
            [(t.squad, t.path) for t in targets],
            app.store.memory if app.database_exists() else None,
            pattern,
            squad=targets[0].squad if squad else None,
            agent=agent,
            section=section,
            layer=layer,
            context=context_lines,
            timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
            literal=None if regex else query,
            case_sensitive=case_sensitive,
        )
    hits, skipped = found.hits, found.skipped
    if json_output:
        out.json(
            {
                "query": query,
                "hits": [h.to_dict() for h in hits],
                "skipped": [s.to_dict() for s in skipped],
            }
        )
        return
    _print_hits(out, hits)
    for line in skip_notes(skipped, max_file_bytes=MAX_MEMORY_FILE_BYTES, noun="memory file"):
        out.line(line, style="yellow")
    if not hits:
        raise typer.Exit(1)


def _print_hits(out: Output, hits: list[MemoryHit]) -> None:
    for hit in hits:
        where = f"{hit.squad}/{hit.where}" if hit.layer == "project" else hit.where
        label = f"[{hit.section}]" if hit.section else f"[{hit.namespace}]"
        out.line(f"{where} {label}", style="bold magenta")
        for number, text in hit.match.before:
            out.line(f"{number:>5}- {text}", style="dim")
        if out.rich:
            from rich.text import Text

            body = Text(hit.match.line)
            for start, end in hit.match.spans:
                body.stylize("bold red", start, end)
            out.console.print(Text(f"{hit.match.line_number:>5}: ", style="green") + body)
        else:
            out.line(f"{hit.match.line_number:>5}: {hit.match.line}")
        for number, text in hit.match.after:
            out.line(f"{number:>5}- {text}", style="dim")
    out.line(f"{len(hits)} matches", style="dim")


@memory_app.command()
def edit(
    which: Annotated[str, typer.Argument(help="soul, user or agents")],
    file: Annotated[
        str | None, typer.Option("--file", help="Take the text from this file ('-' for stdin).")
    ] = None,
    squad: Annotated[
        str | None, typer.Option("--squad", help="Edit this squad's workspace AGENTS.md instead.")
    ] = None,
) -> None:
    """Edit a boot memory file (SOUL.md, USER.md, AGENTS.md) in $EDITOR, from a file or stdin."""
    from squad.errors import UsageError
    from squad.history.history import NO_HISTORY
    from squad.memory.boot import boot_path, write_boot_file

    which = which.lower()
    app = open_app()
    settings = app.settings
    found = None if squad is None else app.squads.locate(squad)
    workspace = None if found is None else found.path
    history = None if found is None else app.history(found.path, found.squad)
    path = boot_path(settings.home, which, workspace)
    if file == "-" or (file is None and not sys.stdin.isatty()):
        text = sys.stdin.read()
    elif file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {file}: {exc}") from None
    else:
        text = _edit_in_editor(path)
    try:
        written = write_boot_file(
            settings.home,
            which,
            text,
            cap_bytes=settings.memory_file_cap_bytes,
            workspace=workspace,
            history=history if history is not None and history.enabled else NO_HISTORY,
        )
    finally:
        app.close()
    Output(stream=sys.stderr).line(
        f"saved {written} ({len(text.encode()):,} bytes); agents read it at their next turn"
    )


def _edit_in_editor(path: Path) -> str:
    import os
    import shlex
    import subprocess
    import tempfile

    from squad.errors import UsageError

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path} is not valid UTF-8 (byte offset {exc.start}); fix that byte in it, or "
            "replace the file with --file"
        ) from None
    with tempfile.TemporaryDirectory() as folder:
        draft = Path(folder) / path.name
        draft.write_text(current, encoding="utf-8")
        try:
            result = subprocess.run([*shlex.split(editor), str(draft)], check=False)
        except FileNotFoundError:
            raise UsageError(f"editor {editor!r} not found; set $EDITOR or use --file") from None
        if result.returncode != 0:
            raise UsageError(f"the editor exited with {result.returncode}; nothing was saved")
        try:
            return draft.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"the edited text is not valid UTF-8 (byte offset {exc.start}); nothing was saved"
            ) from None


def _entry_dict(entry: MemoryEntry) -> dict[str, object]:
    return {
        "id": entry.id,
        "commit": entry.commit,
        "time": entry.time.isoformat(),
        "who": entry.who,
        "kind": entry.kind,
        "subject": entry.subject,
        "run": entry.run_id,
        "pass": entry.pass_id,
        "reverts": entry.reverts,
        "removed": list(entry.removed),
        "added": list(entry.added),
        "facts": [{"op": f.op.value, "fact_id": f.fact_id, "text": f.text} for f in entry.facts],
    }


@memory_app.command()
def history(
    squad: SquadArg,
    agent: AgentArg,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="At most this many, newest first.")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Every change to an agent's memory: who, when, which run or pass, and the text.

    memory.md lines and experiential facts alike, from the workspace's history; each has an
    id that `squad memory revert` takes.
    """
    out = Output(json_mode=json_output)
    with open_app() as app:
        entries = app.memory.history_of(app.agent(squad, agent), limit=limit)
    if json_output:
        out.json([_entry_dict(e) for e in entries])
        return
    if not entries:
        out.line(f"no memory changes of {agent} yet", style="dim")
        return
    for entry in entries:
        where = f"run {entry.run_id[:12]}" if entry.run_id else ""
        if entry.pass_id:
            where = f"pass {entry.pass_id}" + (f" of {where}" if where else "")
        stamp = entry.time.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        out.line(f"{entry.id}  {stamp}  {entry.who}  {where}".rstrip(), style="bold")
        out.line(f"    {entry.subject}", style="dim")
        for line in entry.removed:
            out.line(f"    - {line}", style="red")
        for line in entry.added:
            out.line(f"    + {line}", style="green")
        for fact in entry.facts:
            out.line(f"    fact {fact.fact_id} {fact.op.value}: {fact.text}", style="cyan")


@memory_app.command()
def revert(
    squad: SquadArg,
    agent: AgentArg,
    change: Annotated[str, typer.Argument(help="The change's id (see `squad memory history`).")],
    json_output: JsonFlag = False,
) -> None:
    """Undo one change to an agent's memory, as a new change (history is never rewritten).

    The memory.md lines it added are removed and those it removed put back; facts it added
    are forgotten, facts it forgot or superseded come back. Reverting a revert redoes it.
    """
    out = Output(json_mode=json_output)
    with open_app() as app:
        done = app.memory.revert(app.agent(squad, agent), change, actor="cli")
    if json_output:
        out.json(
            {
                "reverted": _entry_dict(done.change),
                "removed": list(done.removed),
                "restored": list(done.restored),
                "facts": [
                    {"op": f.op.value, "fact_id": f.fact_id, "text": f.text} for f in done.facts
                ],
            }
        )
        return
    out.line(f"reverted {done.change.id} ({done.change.subject})", style="green")
    for line in done.removed:
        out.line(f"  - {line}")
    for line in done.restored:
        out.line(f"  + {line}")
    for fact in done.facts:
        out.line(f"  fact {fact.fact_id} {fact.op.value}: {fact.text}")


review_app = typer.Typer(
    help="The review queue: facts the extractor proposed that wait for a person "
    "(memory.review: low_confidence or all).",
    no_args_is_help=True,
)
memory_app.add_typer(review_app, name="review")
ReviewIds = Annotated[list[int] | None, typer.Argument(help="Review item ids (see `list`).")]


def _review_ids(ids: list[int] | None, every: bool, app: App, ctx: AgentContext) -> list[int]:
    """The ids given, or with ``--all`` every pending one; each checked like any stored id."""
    if every and ids:
        raise UsageError("give review item ids or --all, not both")
    if every:
        found = [r.id for r in app.review.items(ctx)]
        if not found:
            raise UsageError(f"nothing awaits review for {ctx.squad.name}/{ctx.agent.id}")
        return found
    if not ids:
        raise UsageError(
            "give the review item ids (or --all); "
            f"`squad memory review list {ctx.squad.name} {ctx.agent.id}` lists them"
        )
    listing = f"`squad memory review list {ctx.squad.name} {ctx.agent.id}`"
    return [_store_id(i, "review item", listing) for i in ids]


def _print_decided(out: Output, result: ReviewResult) -> None:
    if out.json_mode:
        out.json(result.model_dump())
        return
    for d in result.decided:
        verb = d.item.status
        style = "green" if d.written else ("yellow" if verb == "approved" else None)
        out.line(f"#{d.item.id} {verb}: {d.item.edited_text or d.item.text}", style=style)
        out.line(f"    {d.note}", style="dim")


@review_app.command("list")
def review_list_command(
    squad: SquadArg,
    agent: AgentArg,
    status: Annotated[
        Literal["pending", "approved", "rejected", "all"],
        typer.Option("--status", help="Which items: pending (default), approved, rejected, all."),
    ] = "pending",
    json_output: JsonFlag = False,
) -> None:
    """List the facts proposed for an agent's memory that wait for review (or were decided)."""
    from squad.web.review import review_list

    out = Output(json_mode=json_output)
    with open_app() as app:
        listed = review_list(app, squad, agent, status=status)
    if json_output:
        out.json(listed.model_dump())
        return
    if listed.mode == "off" and not listed.items:
        out.line(
            f"review is off for {listed.squad}/{listed.agent}: facts are written as extracted "
            "(set memory.review to low_confidence or all)",
            style="dim",
        )
        return
    if not listed.items:
        out.line(f"nothing {status if status != 'all' else 'in the queue'}", style="dim")
    for item in listed.items:
        where = f"[{item.section}]" if item.section else "[experiential]"
        out.line(f"#{item.id:<5} {where} {item.text}", style="bold")
        seen = f"    confidence {item.confidence:.2f} · {item.extractor} · from {item.source}"
        if item.status != "pending":
            seen += f" · {item.status} by {item.decided_by}"
            if item.edited_text:
                seen += f" as: {item.edited_text}"
            if item.outcome:
                seen += f" · {item.outcome}"
        out.line(seen, style="dim")


@review_app.command("approve")
def review_approve_command(
    squad: SquadArg,
    agent: AgentArg,
    ids: ReviewIds = None,
    every: Annotated[bool, typer.Option("--all", help="Approve every pending item.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Write proposed facts to the agent's memory, as the extractor would have written them."""
    _review_decide("approve", squad, agent, ids, every=every, json_output=json_output)


@review_app.command("reject")
def review_reject_command(
    squad: SquadArg,
    agent: AgentArg,
    ids: ReviewIds = None,
    every: Annotated[bool, typer.Option("--all", help="Reject every pending item.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Turn proposed facts down: kept as rejected, so the same text is not proposed again."""
    _review_decide("reject", squad, agent, ids, every=every, json_output=json_output)


def _review_decide(
    action: Literal["approve", "reject"],
    squad: str,
    agent: str,
    ids: list[int] | None,
    *,
    every: bool,
    json_output: bool,
) -> None:
    from squad.web.review import review_decide

    out = Output(json_mode=json_output)
    with open_app() as app:
        chosen = _review_ids(ids, every, app, app.agent(squad, agent))
        result = review_decide(app, squad, agent, action, chosen, actor="cli")
    _print_decided(out, result)


@review_app.command("edit")
def review_edit_command(
    squad: SquadArg,
    agent: AgentArg,
    review_id: Annotated[int, typer.Argument(help="The review item's id (see `list`).")],
    text: Annotated[str, typer.Argument(help="The fact as it should be kept, one line.")],
    json_output: JsonFlag = False,
) -> None:
    """Approve a proposed fact with your wording instead (checked for credentials)."""
    from squad.web.review import review_decide

    out = Output(json_mode=json_output)
    listing = f"`squad memory review list {squad} {agent}`"
    chosen = [_store_id(review_id, "review item", listing)]
    with open_app() as app:
        result = review_decide(app, squad, agent, "edit", chosen, actor="cli", text=text)
    _print_decided(out, result)
