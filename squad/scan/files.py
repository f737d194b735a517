"""The files a scan reads: a workspace's memory and logs, the home's boot files and logs.

Which files are which place (:func:`workspace_places`, :func:`home_places`), how each form is
redacted (text, a JSON document, JSON Lines; bytes that are not UTF-8 kept as they are), and
the rewrite itself: under the lock that file's writers take, without losing a change a
person makes meanwhile (:func:`squad.memory.file_io.rewrite`). Files the workspace's history
tracks are rewritten inside one memory change, committed as ``memory scan: redacted N
credentials`` with its lines counted, not quoted; logs, working memory and caches are not
tracked and are only rewritten. A run log, MCP journal or MCP servers' stderr log of a run
that is live now is left for a later scan: its run appends to the file through a descriptor it
keeps open.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from squad.scan.report import Finding
from squad.text.scrub import Found, Scrubbed, scrub_json_lines, scrub_json_text, scrub_text

__all__ = ["FilePlace", "home_places", "scrub_bytes", "workspace_places"]

Form = Literal["text", "json", "jsonl"]
_BINARY_PROBE = 8192
_RUN_LOG = re.compile(r"^run-(?P<run>[A-Za-z0-9][A-Za-z0-9_.-]*?)(?P<mcp>\.mcp)?\.jsonl$")
_MCP_STDERR = re.compile(r"^run-(?P<run>[A-Za-z0-9][A-Za-z0-9_.-]*?)\.mcp-stderr\.log$")
_HOME_LOG = re.compile(r"^[a-z][a-z0-9_-]*\.jsonl(\.[0-9]+)?$")
_BOOT = ("SOUL.md", "USER.md", "AGENTS.md")


@dataclass(frozen=True)
class FilePlace:
    """One file a scan reads."""

    place: str
    path: Path
    relative: str
    """Relative to its workspace (or the home), with forward slashes."""
    form: Form
    lock: Path
    """The path whose :func:`~squad.memory.file_io.locked` lock the file's writers take."""
    tracked: bool = False
    """In the workspace's history: a fix is committed."""
    run_id: str | None = None
    """The run that appends to it (a run log or MCP journal)."""


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if not p.is_symlink())
    except OSError:  # missing, not a folder, unreadable
        return []


def workspace_places(workspace: Path) -> list[FilePlace]:
    """Every file of ``workspace`` a scan reads, in a stable order."""
    found: list[FilePlace] = []

    def add(place: str, path: Path, form: Form, *, lock: Path | None = None, **extra: Any) -> None:
        if _regular(path):
            relative = path.relative_to(workspace).as_posix()
            found.append(FilePlace(place, path, relative, form, lock or path, **extra))

    add("memory", workspace / "memory.md", "text", tracked=True)
    add("boot", workspace / "AGENTS.md", "text", tracked=True)
    add("decisions_file", workspace / "decisions.md", "text", tracked=True)
    for agent in _children(workspace / "agents"):
        add("memory", agent / "memory.md", "text", tracked=True)
        for day in _children(agent / "daily"):
            if day.suffix == ".md":
                add("daily_log", day, "text", tracked=True)
        working = agent / "working-memory"
        for state in _children(working):
            if state.suffix == ".json" and not state.name.startswith("."):
                add("working_memory", state, "json", lock=working)
        add("chat_summary", agent / "chat-summary.json", "json")
    for outputs in (workspace / "tasks", *(run / "tasks" for run in _children(workspace / "runs"))):
        for task in _children(outputs):
            add("task_output", task / "output.md", "text", tracked=True)
    for plan in _children(workspace / "plans"):
        if plan.suffix == ".md":
            add("plan", plan, "text", tracked=True)
    for log in _children(workspace / "logs"):
        match = _RUN_LOG.match(log.name)
        stderr = _MCP_STDERR.match(log.name)
        if match is not None:
            place = "mcp_journal" if match["mcp"] else "run_log"
            add(place, log, "jsonl", run_id=match["run"])
        elif stderr is not None:
            add("mcp_stderr", log, "text", run_id=stderr["run"])
        elif log.name == "memory-audit.jsonl":
            add("audit_log", log, "jsonl")
        elif log.suffix == ".jsonl":
            add("log", log, "jsonl")
    return found


def home_places(home: Path) -> list[FilePlace]:
    """The home's boot files and logs (the daemon's, the dashboard's, the MCP server's...)."""
    found: list[FilePlace] = []
    for name in _BOOT:
        if _regular(home / name):
            found.append(FilePlace("boot", home / name, name, "text", home / name))
    for path in _children(home):
        if _HOME_LOG.match(path.name) and _regular(path):
            found.append(FilePlace("log", path, path.name, "jsonl", path))
    for path in _children(home / "logs"):
        if path.suffix == ".jsonl" and _regular(path):
            place = "audit_log" if path.name == "memory-audit.jsonl" else "log"
            found.append(FilePlace(place, path, f"logs/{path.name}", "jsonl", path))
    return found


def _pretty(value: Any) -> str:
    """A JSON document as squad writes its JSON files (indented)."""
    return json.dumps(value, indent=2)


def scrub_bytes(form: Form, data: bytes) -> Scrubbed[bytes] | None:
    """``data`` (a file's bytes) redacted as ``form``; None for a binary file. Bytes that are
    not UTF-8 survive unchanged (decoded with ``surrogateescape``)."""
    if b"\0" in data[:_BINARY_PROBE]:
        return None
    text = data.decode("utf-8", "surrogateescape")
    if form == "jsonl":
        scrubbed = scrub_json_lines(text)
    elif form == "json":
        ending = "\n" if text.endswith("\n") else ""
        scrubbed = scrub_json_text(text.strip(), dump=_pretty)
        scrubbed = Scrubbed(scrubbed.value + ending, scrubbed.found)
    else:
        scrubbed = scrub_text(text)
    if not scrubbed.changed:
        return Scrubbed(data)
    return Scrubbed(scrubbed.value.encode("utf-8", "surrogateescape"), scrubbed.found)


def read_finds(place: FilePlace) -> tuple[Found, ...]:
    """What the file holds now (read without a lock: a look, not a write)."""
    try:
        data = place.path.read_bytes()
    except OSError:
        return ()
    scrubbed = scrub_bytes(place.form, data)
    return () if scrubbed is None else scrubbed.found


@dataclass(frozen=True)
class Rewritten:
    """A file a fix rewrote: its bytes before and after, and what was redacted."""

    before: bytes
    after: bytes
    found: tuple[Found, ...]


def fix_file(place: FilePlace) -> Rewritten | None:
    """Redact ``place`` in place as its writers write it; None when nothing changed now."""
    from squad.memory.file_io import rewrite

    redacted: list[tuple[Found, ...]] = []

    def make(raw: bytes) -> bytes:
        scrubbed = scrub_bytes(place.form, raw)
        if scrubbed is None:
            return raw
        redacted.append(scrubbed.found)
        return scrubbed.value

    done = rewrite(place.path, place.relative, make, lock=place.lock)
    if done is None or done[0] == done[1]:
        return None
    return Rewritten(done[0], done[1], redacted[-1] if redacted else ())


def findings_of(
    place: FilePlace,
    found: tuple[Found, ...],
    *,
    prefix: str,
    squad: str | None,
    fixed: bool = False,
    note: str | None = None,
    retry: bool = False,
) -> Iterator[Finding]:
    for one in found:
        yield Finding(
            place.place,
            f"{prefix}{place.relative} {one.where}",
            one.kind,
            fixed=fixed,
            squad=squad,
            note=note,
            retry=retry,
        )
