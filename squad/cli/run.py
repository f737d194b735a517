"""``squad run``, ``resume``, ``approve``, ``logs`` and ``chat``: squads at work."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from squad.cli.context import open_app
from squad.cli.output import Output
from squad.cli.signals import on_stop_signals

if TYPE_CHECKING:
    from squad.app import App
    from squad.chat.session import ChatSession
    from squad.eventlines import SkippedLine
    from squad.runtime.run_result import RunResult
    from squad.runtime.runner import SquadRunner
    from squad.spec.models import SquadSpec

__all__ = ["register"]

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
NoDaemon = Annotated[
    bool,
    typer.Option("--no-daemon", help="Run in this process even when a daemon serves this home."),
]


def _defer_library_inits() -> None:
    """Import LangGraph's graph without the package ``__init__`` files it runs for one small
    submodule each (langsmith's generated types, the LangGraph SDK's HTTP client: about 0.3 s
    of a run's start; :mod:`squad.deferred_init`)."""
    from squad.deferred_init import defer_package_inits

    defer_package_inits()


def _progress(err: Output) -> Any:
    def show(text: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        err.line(f"{stamp}  {text}", style="cyan" if err.rich else None)

    return show


@contextmanager
def _runner(err: Output, *, run_id: str | None = None) -> Iterator[tuple[App, SquadRunner]]:
    """This command's app and a runner on it; on the way out, queued fact extractions finish
    (closing the app drains them). For a ``run_id``, litellm's import starts first when that
    run's squad calls a real model."""
    _defer_library_inits()
    with open_app() as app:
        if run_id is not None:
            _preload_run(app, run_id, err)
        yield app, app.runner(progress=_progress(err))


def _preload_run(app: App, run_id: str, err: Output) -> None:
    """Start litellm's import when the run ``run_id`` calls a real model (its ``--model``, else
    its squad's); a run or squad not found is left for the runner to report."""
    from squad.cli.model_client import preload, preload_for
    from squad.errors import SquadError

    try:
        run = app.store.get_run(run_id)
        if run is None:
            return
        if run.model:
            preload(app, [run.model], err)
            return
        find = app.squads.registered if app.settings.clustered else app.squads.definition
        spec, _ = find(run.squad)
    except SquadError:
        return
    preload_for(app, spec, err)


def _graceful_stop(runner: SquadRunner, err: Output) -> AbstractContextManager[None]:
    """First SIGINT/SIGTERM: stop after the current step's checkpoint. Second: stop now."""

    def handle(_: signal.Signals) -> None:
        if runner.stop.is_set():
            raise KeyboardInterrupt
        runner.stop.set()
        err.line("stopping after the current step (again to stop at once)", style="yellow")

    return on_stop_signals(handle)


def _summary(out: Output, result: RunResult) -> None:
    if out.json_mode:
        out.json(result.to_dict())
        return
    done = [t for t, s in result.tasks.items() if s == "done"]
    failed = [t for t, s in result.tasks.items() if s in ("failed", "blocked")]
    style = "green" if result.succeeded else "red"
    out.line(f"run {result.run_id}: {result.status}", style=style)
    out.line(
        f"  tasks: {len(done)} done"
        + (f", {len(failed)} failed or blocked ({', '.join(failed)})" if failed else "")
    )
    took = "" if result.duration_s is None else f"  took: {result.duration_s}s"
    out.line(
        f"  turns: {result.turns} ({result.model_calls} model calls)  tokens: "
        f"{result.prompt_tokens:,} in, {result.completion_tokens:,} out  "
        f"cost: ${result.cost_usd:.4f}{took}"
    )
    out.line(f"  workspace: {result.workspace}")
    if result.error:
        out.line(f"  error: {result.error}", style="red")
    if result.awaiting:
        out.line(
            f"  waiting for approval: squad approve {result.run_id} {result.awaiting} "
            "[--reject --reason TEXT]",
            style="yellow",
        )


def _exit(result: RunResult) -> None:
    if not result.succeeded:
        raise typer.Exit(1)


def _spec_for(app: App, target: str, err: Output, model: str | None) -> tuple[SquadSpec, Path]:
    """The squad ``target`` names and its workspace; litellm's import starts as soon as the
    definition is read, when it (or ``model``) names a real model."""
    from squad.cli.model_client import preload_for

    path = Path(target)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        from squad.spec.loader import squad_from_file

        spec = squad_from_file(path)
        preload_for(app, spec, err, override=model)
        return spec, app.squads.create(spec, source=path).path
    spec, workspace = app.squads.definition(target)
    preload_for(app, spec, err, override=model)
    return spec, workspace


def run(
    target: Annotated[str, typer.Argument(help="A squad YAML file, or a squad name.")],
    model: Annotated[
        str | None,
        typer.Option("--model", help="Use this model for every agent (a litellm model string)."),
    ] = None,
    goal: Annotated[str | None, typer.Option("--goal", help="Override the squad's goal.")] = None,
    resume_latest: Annotated[
        bool,
        typer.Option(
            "--resume", help="Resume the squad's latest interrupted run instead of starting one."
        ),
    ] = False,
    auto_approve: Annotated[
        bool, typer.Option("--auto-approve", help="Approve every approval gate (unattended runs).")
    ] = False,
    json_output: JsonFlag = False,
    trigger: Annotated[
        str,
        typer.Option("--trigger", hidden=True, help="What asked for the run (mcp:HOST)."),
    ] = "manual",
    no_daemon: NoDaemon = False,
) -> None:
    """Run a squad once, with live progress and a summary; exit 0 only when it succeeded.

    With a daemon up for this home (``squad up``), the daemon runs it when it would run it
    exactly as this process would (the same settings, environment and definition, the squad
    idle, a run slot free): the run starts without this process's start-up, and Ctrl-C
    still stops it at its next checkpoint.
    """
    out, err = Output(json_mode=json_output), Output(stream=sys.stderr)
    if not (no_daemon or model or resume_latest or auto_approve or trigger != "manual"):
        from squad.cli.handoff import new_run

        handed = _hand_over(new_run(target, goal), err)
        if handed is not None:
            _summary(out, handed)
            _exit(handed)
            return
    _defer_library_inits()
    with open_app() as app:
        spec, workspace = _spec_for(app, target, err, model)
        runner = app.runner(progress=_progress(err))
        from squad.runtime.runlock import settle_dead_runs

        # A `running` run whose process died is interrupted; one still alive elsewhere makes
        # runner.run refuse with its id (SquadBusy), so it is never offered for resuming.
        settle_dead_runs(app.store, app.settings.locks_dir, squad=spec.name)
        interrupted = [
            r for r in app.store.interrupted_runs(spec.name) if r.status == "interrupted"
        ]
        with _graceful_stop(runner, err):
            if interrupted and (resume_latest or _ask_resume(interrupted[0].id)):
                result = runner.resume(interrupted[0].id)
            else:
                if interrupted:
                    err.line(
                        f"note: run {interrupted[0].id} was interrupted; "
                        f"`squad resume {interrupted[0].id}` continues it"
                    )
                result = runner.run(spec, workspace, goal=goal, model=model, trigger=trigger)
            while auto_approve and result.awaiting:
                err.line(f"auto-approving {result.awaiting}")
                result = runner.approve(result.run_id, result.awaiting, approved=True)
    _summary(out, result)
    _exit(result)


def _hand_over(request: dict[str, Any] | None, err: Output) -> RunResult | None:
    """The run, as the home's daemon carried ``request`` out for this command
    (:mod:`squad.cli.handoff`); None: carry it out here."""
    from squad.cli.handoff import hand_over
    from squad.settings import Settings

    def say(text: str) -> None:
        err.line(text, style="yellow")

    return hand_over(Settings.load(), request, progress=_progress(err), say=say)


def _ask_resume(run_id: str) -> bool:
    if not sys.stdin.isatty():
        return False
    return typer.confirm(f"Run {run_id} of this squad was interrupted. Resume it?", default=True)


def resume(
    run_id: Annotated[str, typer.Argument(help="The run to continue.")],
    json_output: JsonFlag = False,
    no_daemon: NoDaemon = False,
) -> None:
    """Continue an interrupted run from its last completed step (in the home's daemon when
    it is up and would run it as this process would: see ``squad run``)."""
    out, err = Output(json_mode=json_output), Output(stream=sys.stderr)
    if not no_daemon:
        from squad.cli.handoff import going_on

        handed = _hand_over(going_on(run_id), err)
        if handed is not None:
            _summary(out, handed)
            _exit(handed)
            return
    with _runner(err, run_id=run_id) as (_, runner), _graceful_stop(runner, err):
        result = runner.resume(run_id)
    _summary(out, result)
    _exit(result)


def approve(
    run_id: Annotated[str, typer.Argument(help="The paused run.")],
    task: Annotated[str, typer.Argument(help="The task waiting for approval.")],
    reject: Annotated[bool, typer.Option("--reject", help="Reject instead of approving.")] = False,
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the run log).")] = "",
    json_output: JsonFlag = False,
    no_daemon: NoDaemon = False,
) -> None:
    """Approve (or reject) a task waiting for a person; the run then goes on (in the home's
    daemon when it is up and would run it as this process would: see ``squad run``)."""
    out, err = Output(json_mode=json_output), Output(stream=sys.stderr)
    if not no_daemon:
        from squad.cli.handoff import going_on

        handed = _hand_over(going_on(run_id, (task, not reject, reason)), err)
        if handed is not None:
            _summary(out, handed)
            _exit(handed)
            return
    with _runner(err, run_id=run_id) as (_, runner), _graceful_stop(runner, err):
        result = runner.approve(run_id, task, approved=not reject, reason=reason)
    _summary(out, result)
    _exit(result)


def logs(
    squad: Annotated[str, typer.Argument(help="Squad name.")],
    run_id: Annotated[
        str | None, typer.Option("--run", help="This run (default: the latest).")
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events until the run ends.")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Show a run's event log (logs/run-<run-id>.jsonl).

    Lines that hold no event (not UTF-8, not JSON, torn) are left out and named on stderr.
    """
    from squad.errors import UsageError, WorkspaceError
    from squad.runtime.runlog import follow_events, run_log_path, scan_events

    out, err = Output(json_mode=json_output), Output(stream=sys.stderr)
    with open_app() as app:
        workspace = app.squads.locate(squad).path
        if run_id is None:
            found = sorted(
                (workspace / "logs").glob("run-*.jsonl"), key=lambda p: p.stat().st_mtime
            )
            if not found:
                raise UsageError(f"squad {squad!r} has no runs yet; start one with `squad run`")
            path = found[-1]
            run_id = path.stem.removeprefix("run-")
        else:
            path = run_log_path(workspace, run_id)
            if not path.is_file():
                raise UsageError(f"no log for run {run_id!r} in {workspace / 'logs'}")
        if not json_output:
            out.line(f"run {run_id} of {squad} ({path})")

    def note(skipped: SkippedLine) -> None:
        err.line(f"note: skipped {skipped.render(path)}", style="yellow")

    try:
        if follow:
            ended: list[bool] = []
            for event in follow_events(path, stop=lambda: bool(ended), on_skip=note):
                _print_event(out, event)
                if event.get("event") == "run_end":
                    ended.append(True)
            _approval_hint(out, run_id)
            return
        read = scan_events(path)
    except OSError as exc:  # a folder or an unreadable file where the log should be
        raise WorkspaceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if json_output:
        out.json(read.events)
    else:
        for event in read.events:
            _print_event(out, event)
    for skipped in read.skipped[:_SKIP_NOTES]:
        note(skipped)
    if len(read.skipped) > _SKIP_NOTES:
        err.line(
            f"note: skipped {len(read.skipped) - _SKIP_NOTES} more lines of {path}", style="yellow"
        )
    _approval_hint(out, run_id)


def _approval_hint(out: Output, run_id: str) -> None:
    """After a paused run's events: the task it waits for and the command that approves it
    (what the store says now, not what the log said last)."""
    if out.json_mode:
        return
    from squad.store.records import RunStatus, TaskStatus

    with open_app() as app:
        run = app.store.get_run(run_id)
        if run is None or run.status is not RunStatus.AWAITING_APPROVAL:
            return
        waiting = [
            t for t in app.store.run_state.tasks(run_id) if t.status is TaskStatus.AWAITING_APPROVAL
        ]
    task = waiting[0].task_id if waiting else "TASK"
    agent = f" ({waiting[0].agent})" if waiting else ""
    out.line(
        f"run {run_id} is waiting for approval of task {task}{agent}: "
        f"squad approve {run_id} {task}  (--reject --reason TEXT to refuse)",
        style="yellow" if out.rich else None,
    )


_SKIP_NOTES = 20
"""Skipped lines named one by one; past that, counted."""


def _print_event(out: Output, event: dict[str, Any]) -> None:
    if out.json_mode:
        out.stream.write(__import__("json").dumps(event) + "\n")
        return
    skip = {"time", "run_id", "event"}
    fields = " ".join(f"{k}={v}" for k, v in event.items() if k not in skip and v is not None)
    out.line(f"{str(event.get('time', ''))[11:19]}  {event.get('event')}  {fields}")


def chat(
    squad: Annotated[str, typer.Argument(help="Squad name.")],
    agent: Annotated[str, typer.Argument(help="Agent id.")],
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Send one message, print the reply, exit.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Use this model instead.")] = None,
) -> None:
    """Talk to one agent in its workspace context; its memory is rebuilt every turn."""
    from squad.chat.session import ChatSession

    err = Output(stream=sys.stderr)
    with _runner(err) as (app, runner):
        _preload_chat(app, squad, agent, model, err)
        with ChatSession.open(runner, squad, agent, model=model) as chat:
            _converse(chat, squad, agent, message, err)


def _preload_chat(app: App, squad: str, agent: str, model: str | None, err: Output) -> None:
    """Start litellm's import when the agent talks through a real model; a squad not found is
    left for the session to report."""
    from squad.cli.model_client import preload
    from squad.errors import SquadError
    from squad.model.factory import squad_models

    try:
        spec, _ = app.squads.definition(squad)
    except SquadError:
        return
    preload(app, squad_models(spec, override=model, agents=(agent,)), err)


def _converse(
    session: ChatSession, squad: str, agent: str, message: str | None, err: Output
) -> None:
    """One message and its reply, or a conversation until an empty line or Ctrl-D; a turn
    whose model call fails is reported and the conversation goes on."""
    from squad.errors import LimitReached, ModelError

    if message is not None:
        sys.stdout.write(session.say(message).rstrip() + "\n")
        return
    err.line(f"chatting with {agent} of {squad} (empty line or Ctrl-D to leave)")
    while True:
        try:
            text = input("you> ")
        except (EOFError, KeyboardInterrupt):
            sys.stdout.write("\n")
            return
        if not text.strip():
            return
        sys.stdout.write(f"{agent}> ")
        sys.stdout.flush()
        streamed: list[str] = []

        def show(delta: str, streamed: list[str] = streamed) -> None:
            streamed.append(delta)
            sys.stdout.write(delta)
            sys.stdout.flush()

        try:
            reply = session.say(text, on_token=show)
        except (ModelError, LimitReached) as exc:
            # One failed turn (the model refused, timed out, the spend cap) ends that turn,
            # not the conversation: say why and wait for the next message.
            sys.stdout.write("\n")
            sys.stdout.flush()
            err.line(f"error: {exc}", style="red" if err.rich else None)
            err.line("(the conversation goes on: send another message, or an empty line to leave)")
            continue
        if not streamed:  # the model did not stream: print the whole reply
            sys.stdout.write(reply.rstrip())
        sys.stdout.write("\n")


def register(app: typer.Typer) -> None:
    for command in (run, resume, approve, logs, chat):
        app.command()(command)
