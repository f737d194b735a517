"""``squad status``: a summary line, then what needs a person, then each squad's schedule
and last run; ``--json`` prints the :class:`~squad.views.Status` view."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from squad.cli.context import open_app
from squad.cli.options import ConfigsOption
from squad.cli.output import Output

__all__ = ["ago", "status"]


def ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    whole = int(seconds)
    if whole < 120:
        return f"{whole}s"
    if whole < 7200:
        return f"{whole // 60}m {whole % 60}s"
    return f"{whole // 3600}h {whole % 3600 // 60}m"


def _warning_line(problem: dict[str, Any]) -> str:
    """A warning of the status JSON as ``file:line:col: warning: key.path: message; hint``."""
    where = str(problem.get("source") or "<input>")
    if problem.get("line") is not None:
        where += f":{problem['line']}"
        if problem.get("column") is not None:
            where += f":{problem['column']}"
    text = f"{where}: warning: "
    if problem.get("path"):
        text += f"{problem['path']}: "
    text += str(problem.get("message"))
    return text + (f"; {problem['hint']}" if problem.get("hint") else "")


FULL_LIST_UP_TO = 20
"""Up to this many squads, ``squad status`` lists them all; past it only those with
something to say (``--all`` lists every one)."""


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _summary_line(summary: dict[str, Any]) -> str:
    """``100 squads, 2 running, 1 queued, 4 waiting for approval, ...``."""
    parts = [
        _plural(summary["squads"], "squad"),
        f"{summary['running']} running",
        f"{summary['queued']} queued",
        f"{summary['waiting_approvals']} waiting for approval",
        _plural(summary["failed_files"], "failed file"),
        _plural(summary["failed_runs"], "failed run"),
    ]
    if summary.get("history_paused"):
        parts.append(_plural(summary["history_paused"], "paused history", "paused histories"))
    if summary["backlog_messages"]:
        parts.append(
            f"extraction backlog {summary['backlog_messages']:,} messages "
            f"({_plural(summary['backlog_agents'], 'agent')})"
        )
    else:
        parts.append("extraction backlog none")
    return ", ".join(parts)


def _noteworthy(squad: dict[str, Any]) -> bool:
    """A squad with something to say: busy, waiting, its last run not a success, a warning,
    or a broken file it runs the last good definition of."""
    last = squad.get("last_run") or {}
    return bool(
        squad["running"]
        or squad["queued"]
        or squad.get("warnings")
        or squad.get("file_error")
        or last.get("status") in ("failed", "awaiting_approval", "interrupted", "stopped")
    )


def _render_problems(out: Output, status: dict[str, Any]) -> None:
    """What needs a person, first: broken files, failed runs, paused histories, approvals."""
    red = "red" if out.rich else None
    yellow = "yellow" if out.rich else None
    if status["failed_files"]:
        out.line(f"files that failed to load ({len(status['failed_files'])}):", style=red)
        for failed in status["failed_files"]:
            kept = failed.get("running_last_good")
            note = f"  (squad {kept} runs its last good definition)" if kept else ""
            out.line(f"  {failed['file']}{note}")
            for line in str(failed["error"]).splitlines():
                out.line(f"    {line}")
    broken = [s for s in status["squads"] if s.get("file_error")]
    if broken:
        out.line(f"squads running their last good definition ({len(broken)}):", style=yellow)
        for squad in broken:
            since = squad.get("invalid_since")
            when = f" since {str(since)[:16].replace('T', ' ')} UTC" if since else ""
            out.line(f"  {squad['name']}: {squad['file']} is invalid{when}; fix or remove it")
    failed_runs = [
        s for s in status["squads"] if (s.get("last_run") or {}).get("status") == "failed"
    ]
    if failed_runs:
        out.line(f"failed runs ({len(failed_runs)}, each squad's last):", style=red)
        for squad in failed_runs:
            last = squad["last_run"]
            error = str(last.get("error") or "").splitlines()
            out.line(
                f"  {squad['name']} run {last['id']}: {error[0] if error else 'failed'}"
                f"  (squad logs {squad['name']} --run {last['id']})"
            )
    for paused in status.get("history_paused") or []:
        out.line(
            f"history paused for {paused['squad']} ({paused['state']}): {paused['reason']}",
            style=red,
        )
    approvals = status.get("waiting_approvals") or []
    if approvals:
        out.line(f"waiting for approval ({len(approvals)}):", style=yellow)
        for waiting in approvals:
            since = str(waiting.get("since") or "")[:16].replace("T", " ")
            task = waiting.get("task") or "TASK"
            agent = f" ({waiting['agent']})" if waiting.get("agent") else ""
            out.line(
                f"  {waiting['squad']} run {waiting['run_id']} task {task}{agent}, since "
                f"{since} UTC: squad approve {waiting['run_id']} {task}  (--reject to refuse)"
            )
    restart = status.get("settings_restart_needed") or []
    if restart:
        out.line(
            f"settings.yaml changed {', '.join(restart)}: restart the daemon to apply",
            style=yellow,
        )
    kept = (status.get("checkpoints") or {}).get("left_behind")
    if kept:
        out.line(f"checkpoints: {kept['note']}", style=yellow)


def _render_squad(out: Output, squad: dict[str, Any], width: int) -> None:
    flags = " [running]" if squad["running"] else " [queued]" if squad["queued"] else ""
    if squad.get("file_error"):
        flags += " [file invalid: last good definition]"
    nxt = f"  next {squad['next_fire'][:16].replace('T', ' ')} UTC" if squad["next_fire"] else ""
    out.line(f"  {squad['name']:<{width}}  {squad['schedule']}{nxt}{flags}")
    last = squad["last_run"]
    if last is not None:
        took = f" in {last['duration_s']}s" if last["duration_s"] is not None else ""
        tokens = last["tokens_in"] + last["tokens_out"]
        out.line(
            f"  {'':<{width}}  last run {last['id']}: {last['status']}{took}, "
            f"{tokens:,} tokens, ${last['cost_usd']:.4f}"
        )
    for warning in squad.get("warnings") or []:
        out.line(f"  {'':<{width}}  {_warning_line(warning)}", style="yellow")


def _render(
    out: Output, status: dict[str, Any], *, login: str | None = None, every: bool = False
) -> None:
    """A summary line, then what needs a person, then the squads: past
    :data:`FULL_LIST_UP_TO` squads only those with something to say unless ``every``."""
    info = status["daemon"]
    if info["state"] == "up":
        out.line(
            f"daemon: up (pid {info['pid']} on {info['host']}, up {ago(info['uptime_s'])}, "
            f"heartbeat {ago(info['heartbeat_age_s'])} ago)",
            style="green",
        )
    else:
        out.line(f"daemon: down ({info['reason']})", style="yellow")
    out.line(f"  {_summary_line(status['summary'])}")
    out.line(f"  squads folder: {info['configs']}")
    http = status.get("http")
    if http and http.get("url"):
        out.line(f"  dashboard: {http['url']}")
        if login:
            out.line(f"    log in: {login}")
    if info.get("configs_missing"):
        out.line(
            "  the squads folder is missing: no squad is scheduled until it is back",
            style="red" if out.rich else None,
        )
    jobs = [
        f"{name} {job['next_fire'][:16].replace('T', ' ')} UTC"
        for name, job in status.get("jobs", {}).items()
        if job.get("next_fire")
    ]
    if jobs:
        out.line(f"  next jobs: {', '.join(jobs)}")
    _render_problems(out, status)
    cluster = status.get("cluster")
    if cluster is not None:
        from squad.cli.cluster import render_cluster

        if "error" in cluster:
            out.line(f"cluster: unreachable ({cluster['error']})", style="red")
        else:
            render_cluster(out, cluster)
    squads = status["squads"]
    shown = squads if every or len(squads) <= FULL_LIST_UP_TO else list(filter(_noteworthy, squads))
    if not squads:
        out.line("squads: none")
    elif len(shown) == len(squads):
        out.line(f"squads ({len(squads)}):")
    else:
        out.line(f"squads ({len(squads)}; {len(shown)} with something to say):")
    width = max((len(s["name"]) for s in shown), default=0)
    for squad in shown:
        _render_squad(out, squad, width)
    hidden = len(squads) - len(shown)
    if hidden:
        out.line(
            f"  and {_plural(hidden, 'more squad')} with nothing to report "
            "(`squad status --all` lists every squad)"
        )
    backlog = status["extraction_backlog"]
    if backlog:
        out.line(f"extraction backlog: {len(backlog)} agents (--json lists them)")


def status(
    configs: ConfigsOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON instead of text (every squad).")
    ] = False,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help=f"List every squad (past {FULL_LIST_UP_TO}, only those with something to say).",
        ),
    ] = False,
) -> None:
    """A summary, then what needs a person (failed files and runs, paused histories,
    approvals waiting), then each squad's schedule and last run.

    With the daemon up it answers from what the daemon published; down, from the configs
    folder and the store.
    """
    from squad.daemon.status import published_status
    from squad.settings import Settings

    out = Output(json_mode=json_output)
    settings = Settings.load()
    folder = configs.resolve() if configs is not None else None
    # A running daemon published what it knows: no store to open, no file to validate.
    report = None if settings.clustered else published_status(settings.home, squads_dir=folder)
    if report is None:
        from squad.daemon.status import collect_status

        with open_app(reading=True) as app:
            report = collect_status(app, squads_dir=folder)
    if json_output:
        out.json(report)
        return
    login = None
    http = report.http
    if http and http.get("url"):
        from squad.web.tokens import login_url, read_token

        token = read_token(settings.home)
        login = login_url(str(http["url"]), token) if token else None
    _render(out, report.model_dump(mode="json"), login=login, every=every)
