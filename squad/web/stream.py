"""A run's log, live, as server-sent events (``/api/v1/runs/{id}/events``).

Each event of ``logs/run-<id>.jsonl`` is sent as it is appended, numbered by its line so a
browser that reconnects (``Last-Event-ID``, or ``?after=N``) gets only what it missed. The
stream ends after a ``run_end`` event that ends the run for good (succeeded, failed,
stopped); a run paused for approval keeps its stream open, since the answer resumes it.
Following costs one ``stat`` per poll and nothing when nobody listens, however many streams
follow the same run (they share one reader of its log); a comment every 15 seconds keeps
proxies from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from squad.runtime.runlog import read_from
from squad.web.api import ERRORS, RunId

__all__ = ["POLL_S", "event_stream", "router"]

POLL_S = 0.25
KEEPALIVE_S = 15.0
_FINAL = frozenset({"succeeded", "failed", "stopped"})
MAX_READ_BYTES = 4 * 1024 * 1024
"""What one poll reads of a log at most; a long log streams over several polls."""

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)


def _frame(number: int, event: dict[str, Any], raw: bytes) -> bytes:
    """The event as a frame whose data is its line as the log has it (JSON on one line), or
    written again if the line holds a carriage return, which would end an SSE line."""
    if b"\r" in raw:
        raw = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    name = str(event.get("event", "message")).replace("\r", " ").replace("\n", " ")
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (number, name.encode(), raw)


class _Tail:
    """One run log, read once for every stream that follows it: a poll reads what the file
    gained and frames its events, and each stream sends the frames it has not sent yet, so
    50 followers of a busy run cost one read and one decode of each line, not 50."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.frames: list[bytes] = []
        """The frame of line ``n`` at index ``n - 1`` (empty for a line that holds no event)."""
        self.ended = False
        """Whether the lines so far end the run for good."""
        self.users = 0
        self._offset = 0
        self._pending = b""
        self._read_at: float | None = None
        self._lock = asyncio.Lock()

    async def refresh(self, fresh_s: float) -> None:
        """Read what the log gained, unless a stream read it less than ``fresh_s`` ago."""
        loop = asyncio.get_running_loop()
        async with self._lock:
            if self._read_at is not None and loop.time() - self._read_at < fresh_s:
                return
            chunk = await asyncio.to_thread(
                read_from, self.path, self._offset, limit=MAX_READ_BYTES
            )
            self._read_at = loop.time()
            self._offset += len(chunk)
            *complete, self._pending = (self._pending + chunk).split(b"\n")
            for raw in complete:
                self._add(raw)

    def _add(self, raw: bytes) -> None:
        from squad.eventlines import SkippedLine, decode_event

        number = len(self.frames) + 1
        decoded = decode_event(raw, number)
        if decoded is None or isinstance(decoded, SkippedLine):
            self.frames.append(b"")
            return
        if decoded.get("event") == "run_end":
            self.ended = str(decoded.get("status")) in _FINAL
        elif decoded.get("event") in ("run_resume", "run_start"):
            self.ended = False
        self.frames.append(_frame(number, decoded, raw))


async def event_stream(
    path: Path,
    *,
    after: int,
    disconnected: Any,
    poll_s: float = POLL_S,
    keepalive_s: float = KEEPALIVE_S,
    tails: dict[Path, _Tail] | None = None,
) -> AsyncIterator[bytes]:
    """Frames for the events after line ``after`` of ``path``, following the file; streams
    given the same ``tails`` share one reader of each file (the server's streams do)."""
    tails = {} if tails is None else tails
    tail = tails.get(path)
    if tail is None:
        tail = tails[path] = _Tail(path)
    tail.users += 1
    try:
        sent = after
        idle = 0.0
        yield b"retry: 2000\n\n"
        while True:
            await tail.refresh(poll_s / 2)
            ended = tail.ended
            if len(tail.frames) > sent:
                # One write per poll, however many events it found.
                chunk = b"".join(tail.frames[sent:])
                sent = len(tail.frames)
                if chunk:
                    idle = 0.0
                    yield chunk
            if ended:
                yield b"event: end\ndata: {}\n\n"
                return
            if await disconnected():
                return
            await asyncio.sleep(poll_s)
            idle += poll_s
            if idle >= keepalive_s:
                idle = 0.0
                yield b": keep-alive\n\n"
    finally:
        tail.users -= 1
        if not tail.users and tails.get(path) is tail:
            del tails[path]


@router.get(
    "/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    request: Request,
    run_id: RunId,
    after: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> StreamingResponse:
    """The run log as server-sent events, live until the run ends."""
    from squad.errors import NotFound
    from squad.runtime.runlog import run_log_path

    app = request.app.state.web.app
    run = await asyncio.to_thread(lambda: app.store.get_run(run_id))
    if run is None:
        raise NotFound(f"no run {run_id!r}")
    found = await asyncio.to_thread(app.squads.locate, run.squad)
    last = request.headers.get("last-event-id", "").strip()
    if last.isascii() and last.isdigit() and len(last) <= 10:  # a number this server sent
        after = max(after, int(last))  # isdigit alone passes "²", and int() refuses it
    tails = getattr(request.app.state, "log_tails", None)
    if tails is None:  # the streams of this server share one reader of each run log
        tails = request.app.state.log_tails = {}
    stream = event_stream(
        run_log_path(found.path, run_id),
        after=after,
        disconnected=request.is_disconnected,
        tails=tails,
    )
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"X-Accel-Buffering": "no"},
    )
