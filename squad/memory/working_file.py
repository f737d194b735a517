"""Where an agent's working memory lives during its run: ``agents/<agent>/working-memory.json``.

A file in the workspace, so a run resumed after a kill finds its working memory where it left
it, and a person opening the folder sees what the agent is doing. It holds the run's id, when
it last changed and the state (:class:`~squad.memory.working.WorkingMemory`). Tasks of one
agent that run at once update it together: each update takes the file's lock, re-reads it and
replaces it atomically. The file stays out of the workspace's history (it is transient: what
it held goes to the daily log when the run ends).

A file that is not what squad writes (not JSON, hand-edited into another shape) reads as no
working memory; the next update replaces it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import Timeout

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_
from squad.fsutil import atomic_write
from squad.memory.files import locked
from squad.memory.working import WorkingMemory
from squad.paths import check_name, contained

__all__ = ["WORKING_MEMORY_FILE", "WorkingMemoryFile", "WorkingRecord"]

WORKING_MEMORY_FILE = "working-memory.json"


@dataclass(frozen=True)
class WorkingRecord:
    """What the file holds: whose run, when it last changed, the state."""

    run_id: str
    updated_at: str
    state: WorkingMemory

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "updated_at": self.updated_at,
            **self.state.to_dict(),
            "text": self.state.render(),
        }


class WorkingMemoryFile:
    """The working memory file of one agent in one workspace."""

    def __init__(self, workspace: Path, agent: str, *, clock: Clock = utc_now) -> None:
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self._clock = clock
        self.path = contained(workspace, "agents", self.agent, WORKING_MEMORY_FILE)
        self.relative = f"agents/{self.agent}/{WORKING_MEMORY_FILE}"

    def read(self) -> WorkingRecord | None:
        """The record in the file; None when there is none (or none squad can read)."""
        try:
            raw = self.path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as exc:
            raise MemoryError_(f"cannot read {self.relative}: {exc.strerror}") from None
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("run_id"), str):
            return None
        state = data.get("state")
        return WorkingRecord(
            data["run_id"],
            str(data.get("updated_at", "")),
            WorkingMemory.from_dict(state if isinstance(state, dict) else {}),
        )

    def update(
        self, run_id: str, change: Callable[[WorkingMemory], WorkingMemory]
    ) -> WorkingMemory:
        """Apply ``change`` to run ``run_id``'s state (a file of another run is not this
        run's: it starts from nothing) and write it when it changed; the state after."""
        with self._locked():
            record = self.read()
            before = record.state if record is not None and record.run_id == run_id else None
            after = change(before or WorkingMemory())
            if after != before and not (before is None and after.empty):
                self._write(WorkingRecord(run_id, self._clock().isoformat(), after))
            return after

    def take(self, run_id: str | None = None) -> WorkingRecord | None:
        """Remove the file and return what it held: only run ``run_id``'s (None: whoever's)."""
        with self._locked():
            record = self.read()
            if record is not None and run_id is not None and record.run_id != run_id:
                return None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return record

    def _write(self, record: WorkingRecord) -> None:
        data = {
            "run_id": record.run_id,
            "updated_at": record.updated_at,
            "state": record.state.to_dict(),
        }
        try:
            # A view of the run's state: atomic, but not worth an fsync per file touched.
            atomic_write(self.path, (json.dumps(data, indent=2) + "\n").encode(), durable=False)
        except OSError as exc:
            raise MemoryError_(f"cannot write {self.relative}: {exc.strerror}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked(self.path):
                yield
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked; try again") from None
