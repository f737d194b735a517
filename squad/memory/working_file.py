"""Where working memory lives while its run works: ``agents/<agent>/working-memory/<run-id>.json``.

A file in the workspace, so a run resumed after a kill finds its working memory where it left
it, and a person opening the folder sees what each agent is doing. One file per run: a run
waiting for approval keeps its own while other runs of the squad come and go. It holds the
run's id, when it last changed and the state (:class:`~squad.memory.working.WorkingMemory`).
Tasks of one agent that run at once update it together: each update takes the agent's lock
(one ``agents/<agent>/.working-memory.lock``, so ended runs leave no lock files behind),
re-reads the file and replaces it atomically; the folder goes when its last file does. The
folder stays out of the workspace's history (it is transient: what a file held goes to the
daily log when its run ends).

A file that is not what squad writes (not JSON, hand-edited into another shape, another run's
id inside) reads as no working memory; the next update replaces it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from filelock import Timeout

from squad.clock import Clock, utc_now
from squad.errors import MemoryError_
from squad.fsutil import atomic_write
from squad.memory.file_io import locked
from squad.memory.working import WorkingMemory, WorkingMemoryDict
from squad.paths import check_name, contained

__all__ = [
    "WORKING_MEMORY_FOLDER",
    "WorkingMemoryFile",
    "WorkingRecord",
    "WorkingRecordDict",
    "working_runs",
]

WORKING_MEMORY_FOLDER = "working-memory"


class WorkingRecordDict(WorkingMemoryDict):
    """:meth:`WorkingRecord.to_dict`: whose run, when, the fields, and the text shown."""

    run_id: str
    updated_at: str
    text: str


@dataclass(frozen=True)
class WorkingRecord:
    """What a file holds: whose run, when it last changed, the state."""

    run_id: str
    updated_at: str
    state: WorkingMemory

    def to_dict(self) -> WorkingRecordDict:
        return {
            "run_id": self.run_id,
            "updated_at": self.updated_at,
            **self.state.to_dict(),
            "text": self.state.render(),
        }


def working_runs(workspace: Path, agent: str) -> list[str]:
    """The runs with a working memory file of ``agent``, in name order."""
    folder = contained(workspace, "agents", check_name(agent, what="agent id"))
    folder = folder / WORKING_MEMORY_FOLDER
    try:
        names = [p.name for p in folder.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise MemoryError_(f"cannot list {folder}: {exc.strerror}") from None
    return sorted(n.removesuffix(".json") for n in names if n.endswith(".json") and n[0] != ".")


class WorkingMemoryFile:
    """The working memory file of one agent in one run."""

    def __init__(self, workspace: Path, agent: str, run_id: str, *, clock: Clock = utc_now) -> None:
        self.workspace = workspace
        self.agent = check_name(agent, what="agent id")
        self.run_id = check_name(run_id, what="run id")
        self._clock = clock
        name = f"{self.run_id}.json"
        self.path = contained(workspace, "agents", self.agent, WORKING_MEMORY_FOLDER, name)
        self.relative = f"agents/{self.agent}/{WORKING_MEMORY_FOLDER}/{name}"

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
        if not isinstance(data, dict) or data.get("run_id") != self.run_id:
            return None
        state = data.get("state")
        return WorkingRecord(
            self.run_id,
            str(data.get("updated_at", "")),
            WorkingMemory.from_dict(state if isinstance(state, dict) else {}),
        )

    def update(self, change: Callable[[WorkingMemory], WorkingMemory]) -> WorkingMemory:
        """Apply ``change`` to the run's state and write it when it changed; the state after."""
        with self._locked():
            record = self.read()
            before = record.state if record is not None else None
            after = change(before or WorkingMemory())
            if after != before and not (before is None and after.empty):
                self._write(WorkingRecord(self.run_id, self._clock().isoformat(), after))
            return after

    def take(self) -> WorkingRecord | None:
        """Remove the file and return what it held."""
        with self._locked():
            record = self.read()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            with contextlib.suppress(OSError):  # not empty: other runs' files are there
                self.path.parent.rmdir()
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
            with locked(self.path.parent):  # agents/<agent>/.working-memory.lock
                yield
        except Timeout:
            raise MemoryError_(f"{self.relative} is locked; try again") from None
        except OSError as exc:
            raise MemoryError_(f"cannot write {self.relative}: {exc.strerror}") from None
