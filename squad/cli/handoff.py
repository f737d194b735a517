"""``squad run`` through the home's running daemon: the daemon has LangGraph, the store and
the rest loaded, so the run starts at once instead of after the command's own start-up
(:mod:`squad.daemon.handoff` says when the daemon takes a run; ``squad.web.handoff`` is its
endpoint).

:func:`hand_over` asks, and follows the run to its end, printing what a run of the command's
own prints; it returns None, having printed nothing, whenever the command should run the
squad itself: no daemon up for this home and squads folder, no dashboard to reach, a refusal,
or a daemon that does not answer before the run starts. Only stdlib HTTP here: nothing of
the store, the graph or the web stack is imported.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from squad.paths import RUN_ID_PATTERN, SLUG_PATTERN

if TYPE_CHECKING:
    from squad.runtime.run_result import RunResult
    from squad.settings import Settings

__all__ = ["Daemon", "going_on", "hand_over", "new_run", "reachable_daemon"]

CONNECT_TIMEOUT_S = 10.0
"""How long the daemon has to accept or refuse a run; past it the command runs it itself."""
_SLUG = re.compile(SLUG_PATTERN)
_RUN_ID = re.compile(RUN_ID_PATTERN)


class Daemon:
    """The home's daemon as the command reaches it: its API's address and token."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host = host
        self.port = port
        self.token = token

    def post(
        self, path: str, body: dict[str, Any], *, timeout: float | None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        connection.request(
            "POST",
            path,
            body=json.dumps(body),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        return connection, connection.getresponse()


def reachable_daemon(settings: Settings) -> Daemon | None:
    """The daemon holding ``settings``' home, on its squads folder, beating and serving its
    API (as it published itself), with the API's token; None otherwise."""
    from squad.daemon.published import served_at
    from squad.web.tokens import TOKEN_FILE

    served = served_at(settings.home, settings.squads_dir)
    if served is None:
        return None
    try:
        token = (settings.home / TOKEN_FILE).read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    return Daemon(*served, token) if token else None


def new_run(target: str, goal: str | None) -> dict[str, Any] | None:
    """``squad run TARGET``'s request: the squad or file as the command reads ``target``;
    None for a target only the command's own process resolves (a workspace folder, say)."""
    path = Path(target)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        try:
            raw = path.read_bytes()
        except OSError:
            return None  # the command's own reading says what is wrong
        found: dict[str, Any] = {"file": str(path.resolve())}
        found["digest"] = hashlib.sha256(raw).hexdigest()
    elif _SLUG.match(target):
        found = {"squad": target}
    else:
        return None
    return {**found, "goal": goal}


def going_on(run_id: str, answer: tuple[str, bool, str] | None = None) -> dict[str, Any]:
    """``squad resume RUN``'s request, or ``squad approve RUN TASK``'s with its ``answer``
    (task, approved, reason)."""
    if answer is None:
        return {"run_id": run_id}
    task, approved, reason = answer
    return {"run_id": run_id, "task": task, "approved": approved, "reason": reason}


def hand_over(
    settings: Settings,
    request: dict[str, Any] | None,
    *,
    progress: Callable[[str], None],
    say: Callable[[str], None],
) -> RunResult | None:
    """Have the home's daemon carry out ``request`` (:func:`new_run`, :func:`going_on`) and
    follow the run to its end (its result), or None when the command should run it itself
    (nothing printed then). ``progress`` gets the run's lines, ``say`` what the command
    itself has to say (a stop asked). Errors the run meets are raised as the command's own
    would be."""
    from squad.daemon.handoff import environment_digest, settings_digest

    if request is None:
        return None
    known = request.get("run_id")
    if known is not None and not _RUN_ID.match(known):
        return None  # the command's own look-up says there is no such run
    daemon = reachable_daemon(settings)
    if daemon is None:
        return None
    body = {
        **request,
        "settings": settings_digest(settings),
        "environment": environment_digest(os.environ),
    }
    try:
        connection, response = daemon.post("/api/v1/handed-runs", body, timeout=CONNECT_TIMEOUT_S)
    except (OSError, http.client.HTTPException):
        return None
    if response.status != 200:
        connection.close()
        return None
    try:
        if connection.sock is not None:
            connection.sock.settimeout(None)  # a model call may take minutes
        return _follow(daemon, response, known, progress=progress, say=say)
    finally:
        connection.close()


def _lines(response: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
    while True:
        raw = response.readline()
        if not raw:
            return
        item = json.loads(raw)
        if isinstance(item, dict):
            yield item


def _follow(
    daemon: Daemon,
    response: http.client.HTTPResponse,
    run_id: str | None,
    *,
    progress: Callable[[str], None],
    say: Callable[[str], None],
) -> RunResult:
    from squad.cli.signals import on_stop_signals
    from squad.errors import SquadError

    run: dict[str, str | None] = {"ticket": None, "run_id": run_id}
    stopping = False

    def stop(_: object) -> None:
        nonlocal stopping
        if stopping:
            raise KeyboardInterrupt
        stopping = True
        say("stopping after the current step (again to leave it to the daemon)")
        ticket = run["ticket"]
        if ticket is not None:
            _ask_stop(daemon, ticket)

    try:
        with on_stop_signals(stop):
            for item in _lines(response):
                if "ticket" in item:
                    run["ticket"] = ticket = str(item["ticket"])
                    if stopping:
                        _ask_stop(daemon, ticket)
                elif "run_id" in item:
                    run["run_id"] = str(item["run_id"])
                elif "progress" in item:
                    progress(str(item["progress"]))
                elif "result" in item:
                    from squad.runtime.run_result import RunResult

                    return RunResult.from_dict(item["result"])
                elif "error" in item:
                    raise _raised(item["error"])
    except KeyboardInterrupt:
        say(_left(run["run_id"]))
        raise
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        pass  # the stream broke off, or was torn
    raise SquadError(_lost(run["run_id"]))


def _ask_stop(daemon: Daemon, ticket: str) -> None:
    try:
        connection, _ = daemon.post(f"/api/v1/handed-runs/{ticket}/stop", {}, timeout=5.0)
        connection.close()
    except (OSError, http.client.HTTPException):
        pass  # the run's stream says how it ends either way


def _left(run_id: str | None) -> str:
    named = f"run {run_id}" if run_id else "the run"
    return (
        f"{named} goes on in the daemon until its next checkpoint, then stops; "
        "`squad status` shows it"
    )


def _lost(run_id: str | None) -> str:
    if run_id is None:
        return "the daemon stopped answering before the run started; `squad status` says why"
    return (
        f"the daemon stopped answering while run {run_id} went on: the daemon resumes it at "
        f"its next start, or `squad resume {run_id}` continues it"
    )


def _raised(data: dict[str, Any]) -> Exception:
    """The error the run met in the daemon, as the command's own run would have raised it."""
    from squad import errors

    kind = getattr(errors, str(data.get("kind")), None)
    message = str(data.get("message"))
    if not (isinstance(kind, type) and issubclass(kind, errors.SquadError)):
        kind = errors.SquadError
    error: errors.SquadError = kind.__new__(kind)
    Exception.__init__(error, message)
    error.exit_code = int(data.get("exit_code") or 1)
    if issubclass(kind, errors.SquadBusy):
        error.run_id = data.get("run_id")  # type: ignore[attr-defined]
    return error
