"""``squad memory``: see, search, edit, enable and extract what agents remember."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from squad.cli.context import open_app
from squad.cli.output import Output
from squad.errors import UsageError

if TYPE_CHECKING:
    pass

__all__ = ["AgentArg", "JsonFlag", "SquadArg", "memory_app", "store_id"]

memory_app = typer.Typer(help="See, search and edit agent memory.", no_args_is_help=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
SquadArg = Annotated[str, typer.Argument(help="Squad name (or workspace folder).")]
AgentArg = Annotated[str, typer.Argument(help="Agent id within the squad.")]
LayerName = Literal["project", "experiential"]
SearchLayer = Literal["project", "experiential", "conversation"]

MAX_ID = 2**31 - 1
"""The largest id the store's key columns can hold: they are INTEGER, 32 bits on PostgreSQL
(64 on SQLite). A larger number is refused here, before it overflows a query parameter."""


def store_id(value: int, what: str, listing: str) -> int:
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
        rows = [ns.view().model_dump() for ns in app.store.memory.list_namespaces()]
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
    store_id(fact_id, "fact", "`squad memory show`")
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
    from squad.cli.model_client import preload
    from squad.errors import UsageError
    from squad.extraction.models import ExtractionModels
    from squad.extraction.transcript import extract_transcript, read_transcript
    from squad.spec.models import ModelSpec

    if output_format not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {output_format!r}")
    if (squad is None) != (agent is None):
        raise UsageError("give both --squad and --agent, or neither")
    messages = read_transcript(transcript)
    out, err = Output(json_mode=output_format == "json"), Output(stream=sys.stderr)
    with open_app() as app:
        now = app.clock()
        models = ExtractionModels(app.model_factory)
        if squad is None or agent is None:
            if model is not None:
                preload(app, [model], err)
            chosen = None if model is None else models.for_spec(ModelSpec(name=model))
            result = extract_transcript(messages, now=now, model=chosen)
            writes = False
        else:
            ctx = app.agent(squad, agent)
            preload(app, [model or (ctx.agent.model or ctx.squad.model).name], err)
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

    store_id(fact_id, "fact", "`squad memory show --all`")
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
