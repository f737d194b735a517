"""The one exception tree of squad.

Every error a user can cause or meet derives from :class:`SquadError` and carries the exit
code the CLI returns for it, so the CLI maps errors to exit codes in one place::

    SquadError                      exit 1: the operation failed
    ├── ConfigError                 exit 2: a YAML definition or settings file is invalid
    ├── UsageError                  exit 2: a command was called with arguments that cannot work
    │   ├── SquadBusy               exit 2: another process is running this squad (its run id)
    │   └── NotFound                exit 2: no squad, agent, run, task, fact or file of that name
    ├── WorkspaceError              exit 1: a workspace cannot be read or written
    │   ├── PathEscapeError         exit 2: a path would leave its workspace (or the root)
    │   └── HistoryUnavailable      exit 1: the workspace's history cannot be written now
    │                                       (corrupt or foreign .git): paused, work goes on
    ├── StoreError                  exit 1: the state database failed or is out of date
    │   ├── RunFenced               exit 1: a cluster node claimed the run after this one did:
    │   │                                   the database refused this one's write
    │   └── DiskFull                exit 2: the disk holding it is full (named, with its free
    │                                       space); reading commands still work
    ├── ModelError                  exit 1: a model call failed for good (after any retries)
    ├── AnswerError                 exit 1: a model's answer is not what was asked for
    │   ├── PlanError               exit 1: the lead's plan is unusable (invalid twice: the run
    │   │                                   goes on with squad's own; with strict_plan it fails)
    │   └── ExtractionFailed        exit 1: the extraction answer was invalid twice (batch skipped)
    ├── LimitReached                exit 1: a run limit (turns, spend, time) stops the work cleanly
    └── MemoryError_                exit 1: a memory write was refused or conflicted
        ├── StaleWriteError         exit 1: the file changed after it was read; re-read, retry
        ├── MemoryFullError         exit 1: the write would pass the size cap; consolidate
        ├── SecretInMemoryError     exit 2: the text carries a credential; it is never stored
        └── MemoryFileError         exit 2: the file on disk cannot be edited safely; fix it by hand

Errors never log or print themselves; the edge that catches them decides how to show them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AnswerError",
    "ConfigError",
    "DiskFull",
    "ExtractionFailed",
    "HistoryUnavailable",
    "LimitReached",
    "MemoryError_",
    "MemoryFileError",
    "MemoryFullError",
    "ModelError",
    "NotFound",
    "PathEscapeError",
    "PlanError",
    "Problem",
    "RunFenced",
    "SecretInMemoryError",
    "SquadBusy",
    "SquadError",
    "StaleWriteError",
    "StoreError",
    "UsageError",
    "WorkspaceError",
]


class SquadError(Exception):
    """Base of every error squad raises on purpose."""

    exit_code: int = 1


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input, located as precisely as the input allows.

    ``path`` is the key path inside the document (``("agents", 1, "id")``); ``line`` and
    ``column`` are 1-based and present when the input came from text.
    """

    message: str
    source: str | None = None
    line: int | None = None
    column: int | None = None
    path: tuple[str | int, ...] = ()
    hint: str | None = None

    @property
    def dotted_path(self) -> str:
        """``agents[1].id`` style rendering of :attr:`path` (empty for the document root)."""
        out = ""
        for part in self.path:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else str(part)
        return out

    def render(self) -> str:
        """``file:line:col: key.path: message (hint)`` — the form editors and terminals link."""
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: "
        if self.path:
            text += f"{self.dotted_path}: "
        text += self.message
        if self.hint:
            text += f"; {self.hint}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "line": self.line,
            "column": self.column,
            "path": self.dotted_path,
            "message": self.message,
            "hint": self.hint,
        }


class ConfigError(SquadError):
    """An input definition is invalid; carries every problem found, in document order."""

    exit_code = 2

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("ConfigError needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(p.render() for p in self.problems))


class UsageError(SquadError):
    """A command got arguments that cannot work (unknown squad, bad option value)."""

    exit_code = 2


class SquadBusy(UsageError):
    """A run of the squad is already going in another process (or thread) of this home;
    ``run_id`` names it."""

    def __init__(self, message: str, *, squad: str, run_id: str | None) -> None:
        super().__init__(message)
        self.squad = squad
        self.run_id = run_id


class NotFound(UsageError):
    """A squad, agent, run, task, fact or file named by the caller does not exist (an HTTP
    front end answers 404 for it)."""


class WorkspaceError(SquadError):
    """A workspace folder cannot be created, read or trusted."""


class PathEscapeError(WorkspaceError):
    """A name, path or symbolic link would lead outside the folder it must stay in."""

    exit_code = 2


class HistoryUnavailable(WorkspaceError):
    """The workspace's history (its ``.git``) cannot be written: corrupt, foreign (not made
    by squad), or unreadable. History is paused for that workspace, loudly; runs and memory
    writes go on. ``state`` is ``broken`` or ``foreign``."""

    def __init__(self, message: str, *, state: str = "broken") -> None:
        super().__init__(message)
        self.state = state


class StoreError(SquadError):
    """The state database cannot be opened, migrated or written."""


class RunFenced(StoreError):
    """The database refused a write to a run because a newer claim of it exists: another
    cluster node took the run over (this node was frozen or cut off past the stall timeout).
    ``epoch`` is the claim the write carried; the writer stops without marking anything."""

    def __init__(self, message: str, *, run_id: str, epoch: int) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.epoch = epoch


class DiskFull(StoreError):
    """The disk squad writes to is full: ``path`` is what could not be written, ``mount`` the
    filesystem holding it, ``free`` its free bytes (for this user) and ``total`` its size."""

    exit_code = 2

    def __init__(self, message: str, *, path: str, mount: str, free: int, total: int) -> None:
        super().__init__(message)
        self.path = path
        self.mount = mount
        self.free = free
        self.total = total


class ModelError(SquadError):
    """A model call failed for good: refused, malformed, or still failing after the retries.

    ``model`` is the model string from the spec, ``status`` the HTTP status when there was
    one, ``attempts`` how many requests were made (0 when none could be made), ``cost_usd``
    what the attempts that got an (unusable) answer cost, so the spend ledger can count it.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        status: int | None = None,
        attempts: int = 0,
        cost_usd: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.status = status
        self.attempts = attempts
        self.cost_usd = cost_usd


class AnswerError(SquadError):
    """A model answered, but not with what was asked for (bad JSON, a schema it broke); the
    message says what to fix, so it can go back to the model as the retry's correction."""


class PlanError(AnswerError):
    """The lead's plan is not usable: not JSON, not the plan schema, or unknown agents/tasks."""


class ExtractionFailed(AnswerError):
    """The extraction model's answer was invalid twice; the batch is skipped (``reason``).

    ``spent`` holds each call's spend (``ModelReply.spend()``), so it is still recorded."""

    def __init__(self, reason: str, spent: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.spent: tuple[Mapping[str, Any], ...] = tuple(spent)


class LimitReached(SquadError):
    """A run limit would be passed (``kind``: ``max_turns``, ``max_cost_usd``, ``timeout_s``);
    a run stops cleanly with ``kind`` as its reason, a chat turn is not taken."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class MemoryError_(SquadError):  # trailing "_": not the builtin MemoryError
    """A memory write was refused or conflicted; nothing was written."""


class StaleWriteError(MemoryError_):
    """The memory file changed after it was read; the write was based on old content."""


class MemoryFullError(MemoryError_):
    """The write would take a memory file past its size cap; consolidate it first."""


class SecretInMemoryError(MemoryError_):
    """The text carries a credential (API key, token, password, private key)."""

    exit_code = 2


class MemoryFileError(MemoryError_):
    """The memory file on disk cannot be edited safely as it is: bytes that are not UTF-8,
    read-only, a folder or other non-file, an unclosed code fence. A person fixes the file."""

    exit_code = 2
