"""``squad run`` handed to a running daemon: what both sides check, and the ticket the person
waiting on the run holds.

A run started from the command line costs the command's start-up (LangGraph, SQLAlchemy, the
store's open: about 2 s of a 4-task offline run, issue 35); a daemon serving the same home has
all of it loaded. ``squad run`` therefore asks the daemon to run the squad for it, and follows
the run, when doing so changes nothing the run would see:

- the same settings (a digest of both sides' settings, as loaded) and the same environment
  (:func:`environment_digest`: every variable but the shell's own bookkeeping, so a provider
  key exported since the daemon started keeps the run in the command's process);
- the same definition: the squad file's bytes, or for a squad named, its workspace manifest
  agreeing with the file the daemon loaded (``squad resume`` and ``squad approve`` go on with
  the definition the workspace holds either way, as the dashboard's resume and answers do:
  the daemon only has to run the squad);
- the squad idle (no run of it going, waiting or interrupted, for a new run) and a run slot
  free now, so the run starts at once as it would in the command's process;
- for a resume, a run interrupted; for an answer, a run waiting on that task.

Anything else (a refusal, a daemon that does not answer) runs the squad in the command's own
process as before. A run handed over is the daemon's run like any other: it is in its log and
its history, and it goes on if the command goes away; Ctrl-C asks it to stop at its next
checkpoint, as it does for a run of the command's own.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from squad.runtime.run_result import RunResult
    from squad.runtime.runner import SquadRunner
    from squad.settings import Settings

__all__ = [
    "SHELL_VARIABLES",
    "HandOver",
    "Ticket",
    "Tickets",
    "environment_digest",
    "settings_digest",
]

SHELL_VARIABLES = frozenset(
    {
        "_",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "COLUMNS",
        "LINES",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PROMPT_COMMAND",
        "HISTFILE",
        "HISTSIZE",
        "HISTFILESIZE",
        "HISTCONTROL",
        "TERM",
        "COLORTERM",
        "TERM_PROGRAM",
        "TERM_PROGRAM_VERSION",
        "TERM_SESSION_ID",
        "WINDOWID",
        "TMUX",
        "TMUX_PANE",
        "STY",
        "WINDOW",
        "SSH_TTY",
        "SSH_CONNECTION",
        "SSH_CLIENT",
        "GPG_TTY",
        "LS_COLORS",
        "MAIL",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "NOTIFY_SOCKET",
        # What squad sets before it imports litellm (the same in every process of it).
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "LITELLM_OFFLINE_MODE",
    }
)
"""Variables a shell or terminal sets for its own use, which no run reads: they differ between
the shell that started the daemon and the one that runs ``squad run`` without changing the run."""


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def environment_digest(environ: Mapping[str, str]) -> str:
    """A digest of every variable of ``environ`` but :data:`SHELL_VARIABLES`: equal digests,
    the same environment for a run (provider keys, proxies, ``SQUAD_*``, locale...)."""
    kept = sorted((k, v) for k, v in environ.items() if k not in SHELL_VARIABLES)
    return _digest(json.dumps(kept, ensure_ascii=False))


def settings_digest(settings: Settings) -> str:
    """A digest of what of ``settings`` a run reads: every field as loaded (paths resolved)
    but the ``daemon:`` section, which the daemon's own flags may change (its port, say) and
    no run reads."""
    from dataclasses import fields

    from pydantic import BaseModel

    kept: dict[str, Any] = {}
    for item in fields(settings):
        if item.name == "daemon":
            continue
        value = getattr(settings, item.name)
        kept[item.name] = (
            value.model_dump(mode="json") if isinstance(value, BaseModel) else str(value)
        )
    return _digest(json.dumps(kept, sort_keys=True, ensure_ascii=False))


@dataclass(frozen=True)
class HandOver:
    """What ``squad run`` says of itself when it hands a run over, for the daemon to check."""

    settings: str
    """:func:`settings_digest` of the command's settings."""
    environment: str
    """:func:`environment_digest` of the command's environment."""
    squad: str | None = None
    """``squad run NAME``: the squad named."""
    file: str | None = None
    """``squad run FILE``: the squad file the command was given (absolute)."""
    digest: str | None = None
    """SHA-256 of that file's bytes, as the command read them."""
    goal: str | None = None
    """The run's goal (None: the squad's own)."""
    run_id: str | None = None
    """``squad resume RUN`` and ``squad approve RUN TASK``: the run to go on with."""
    decision: tuple[str, bool, str] | None = None
    """``squad approve``: (task, approved, reason), the answer to the run's gate."""


class Ticket:
    """One handed-over run as its daemon runs it, for the request that waits on it: the run's
    progress lines, its id once it has one, and how it ended, delivered in order to
    ``deliver`` (from the run's thread; the web server passes them to its event loop).

    Exactly one final item is delivered: ``("result", RunResult)`` or ``("error", exception)``,
    whatever happens to the run (:meth:`close` says the run never started otherwise).
    """

    def __init__(self, deliver: Callable[[tuple[str, Any]], None]) -> None:
        self.id = secrets.token_urlsafe(12)
        self._deliver = deliver
        self._lock = threading.Lock()
        self._runner: SquadRunner | None = None
        self._stop = False
        self._ended = False

    # -- the daemon's side ------------------------------------------------------------------

    def progress(self, text: str) -> None:
        self._send(("progress", text))

    def started(self, run_id: str) -> None:
        self._send(("run_id", run_id))

    def bind(self, runner: SquadRunner) -> None:
        """The runner that runs this ticket's run; a stop asked before it existed applies."""
        with self._lock:
            self._runner = runner
            if self._stop:
                runner.stop.set()

    def ended(self, result: RunResult) -> None:
        self._final(("result", result))

    def failed(self, error: BaseException) -> None:
        self._final(("error", error))

    def close(self, reason: str) -> None:
        """The run's work is over: an error saying ``reason`` unless it ended or failed."""
        from squad.errors import SquadError

        self._final(("error", SquadError(reason)))

    # -- the waiting side -------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the run after its current step's checkpoint (Ctrl-C's first press)."""
        with self._lock:
            self._stop = True
            if self._runner is not None:
                self._runner.stop.set()

    # -- internals --------------------------------------------------------------------------

    def _send(self, item: tuple[str, Any]) -> None:
        with self._lock:
            if self._ended:
                return
        self._deliver(item)

    def _final(self, item: tuple[str, Any]) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._deliver(item)


class Tickets:
    """The tickets of runs in progress, by id (for a stop asked on another connection)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Ticket] = {}

    def add(self, ticket: Ticket) -> None:
        with self._lock:
            self._open[ticket.id] = ticket

    def remove(self, ticket: Ticket) -> None:
        with self._lock:
            self._open.pop(ticket.id, None)

    def get(self, ticket_id: str) -> Ticket | None:
        with self._lock:
            return self._open.get(ticket_id)
