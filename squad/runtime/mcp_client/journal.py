"""The MCP call journal: ``logs/run-<run-id>.mcp.jsonl``, so a resumed run does not call again.

A tool call to another party's server may have effects squad cannot undo (a commit, a sent
message). The run's checkpoints redo an unfinished step whole, so every answer a server gives
is appended here, fsynced, *before* the model sees it; when the step is redone (``squad
resume`` after a crash or a kill) an identical call is answered from this file instead.

A call is identified by the turn it belongs to (its task and a digest of the turn's prompt),
the tool's name, its arguments as canonical JSON, and how many identical calls that turn made
before it, so a turn that asks the same thing twice replays two answers in order. Only answers
are kept, errors from the server included; a call that got none (a timeout, a crash) was never
answered and is made again.

Like the run log, the file holds no credential: the arguments are kept as a digest and the
answer with secrets redacted, so a replayed answer carries ``[REDACTED:...]`` where the first
one carried a key. An answer is cut to :data:`MAX_RESULT_CHARS` (:func:`bound_answer`) *before*
it is redacted, so a 50 MB answer costs milliseconds rather than minutes and the journal holds
at most that much per call, with how much was cut (``cut_chars``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from squad.eventlines import encode_event, open_for_append, scan_events
from squad.paths import check_name, contained
from squad.text.secrets import find_secrets, redact, redact_fields

__all__ = [
    "MAX_RESULT_CHARS",
    "CallKey",
    "JournalEntry",
    "McpJournal",
    "bound_answer",
    "canonical_arguments",
    "journal_path",
    "turn_identity",
]


MAX_RESULT_CHARS = 20_000
"""Longest tool answer kept, for the model and in the journal; the rest is cut with a notice."""
NOTICE_ROOM = 100
"""An answer at most this much over the limit is kept whole: the room a cut's notice takes, so
cutting an answer already cut changes nothing."""
CUT_MARGIN = 2_000
"""Characters either side of a cut searched for a credential crossing it."""


def bound_answer(
    text: str, limit: int = MAX_RESULT_CHARS, *, known: Collection[str] = ()
) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` characters with a notice, and how many were cut.

    The cut comes before any redaction (redacting runs at several seconds a megabyte), but it
    must not split a credential into a fragment a redactor no longer recognises, so the margin
    around it is searched and a credential crossing it is dropped whole: the cut moves back to
    where it starts. So is a ``known`` value (one found earlier in the run) crossing it. An
    answer already cut comes back unchanged.
    """
    if len(text) <= limit + NOTICE_ROOM:
        return text, 0
    start = max(0, limit - CUT_MARGIN)
    cut = limit
    for match in find_secrets(text[start : limit + CUT_MARGIN]):  # sorted, non-overlapping
        if start + match.start < cut < start + match.end:
            cut = start + match.start
    moved = True
    while moved:  # a value moved back over may cross another
        moved = False
        for value in known:
            at = text.find(value, max(0, cut - len(value) + 1), cut + len(value) - 1)
            if 0 <= at < cut:
                cut, moved = at, True
    dropped = len(text) - cut
    return f"{text[:cut]}\n[... {dropped:,} more characters cut]", dropped


def journal_path(workspace: Path, run_id: str) -> Path:
    return contained(workspace, "logs", f"run-{check_name(run_id, what='run id')}.mcp.jsonl")


def canonical_arguments(arguments: Any) -> str:
    """A digest of the arguments as JSON that does not depend on key order or spacing."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def turn_identity(task: str, agent: str, prompt: str) -> str:
    """Names one turn across a restart: its task, agent and a digest of what it was asked."""
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{task}/{agent}/{digest}"


@dataclass(frozen=True)
class CallKey:
    turn: str
    tool: str
    """The tool as shown, 'server.tool'."""
    arguments: str
    """:func:`canonical_arguments` of the call (a digest)."""
    ordinal: int
    """How many identical calls (same turn, tool, arguments) came before this one."""


@dataclass(frozen=True)
class JournalEntry:
    text: str
    is_error: bool


class McpJournal:
    """The answers of one run's MCP calls: read at the run's (re)start, appended durably."""

    def __init__(self, path: Path, *, known: Collection[str] = ()) -> None:
        """``known``: credential values found in the run (or chat) so far, kept in memory by
        its owner; redacted from every answer kept, wherever they occur."""
        self.path = path
        self._known = known
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._counts: dict[tuple[str, str, str], int] = {}
        self._entries: dict[CallKey, JournalEntry] = {}
        for record in scan_events(path, missing_ok=True).events:
            key = _key_of(record)
            if key is not None:
                self._entries[key] = JournalEntry(
                    str(record.get("text", "")), bool(record.get("is_error"))
                )

    def __len__(self) -> int:
        return len(self._entries)

    def next_key(self, turn: str, tool: str, arguments: Any) -> CallKey:
        """The key of a call about to be made (it takes the next ordinal of its kind)."""
        canonical = canonical_arguments(arguments)
        with self._lock:
            ordinal = self._counts.get((turn, tool, canonical), 0)
            self._counts[(turn, tool, canonical)] = ordinal + 1
        return CallKey(turn, tool, canonical, ordinal)

    def recorded(self, key: CallKey) -> JournalEntry | None:
        with self._lock:
            return self._entries.get(key)

    def record(self, key: CallKey, entry: JournalEntry, **extra: Any) -> None:
        """Append the answer (cut, then secrets redacted) and fsync it; only then may the model
        see it. Pass the answer already cut by :func:`bound_answer`, with ``cut_chars``."""
        text, cut = bound_answer(entry.text)
        if cut:
            extra = {**extra, "cut_chars": cut}
        entry = JournalEntry(redact(text, known=self._known)[0], entry.is_error)
        line = encode_event(
            {
                "turn": key.turn,
                "tool": key.tool,
                "arguments": key.arguments,
                "ordinal": key.ordinal,
                "text": entry.text,
                "is_error": entry.is_error,
                **redact_fields(extra, known=self._known),
            }
        )
        with self._lock:
            if self._fd is None:
                self._fd = open_for_append(self.path)
            os.write(self._fd, line)
            os.fsync(self._fd)
            self._entries[key] = entry

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                os.close(fd)


def _key_of(record: dict[str, Any]) -> CallKey | None:
    turn, tool, arguments, ordinal = (
        record.get("turn"),
        record.get("tool"),
        record.get("arguments"),
        record.get("ordinal"),
    )
    if not (isinstance(turn, str) and isinstance(tool, str) and isinstance(arguments, str)):
        return None
    if not isinstance(ordinal, int) or isinstance(ordinal, bool):
        return None
    return CallKey(turn, tool, arguments, ordinal)
