"""``squad run`` (and ``resume``, ``approve``) handing its run to the daemon: ``POST
/api/v1/handed-runs`` starts it and streams it back, ``POST /api/v1/handed-runs/{ticket}/stop``
is Ctrl-C's first press.

The start is refused (HTTP 409, ``{"detail": why}``, nothing queued) unless the run would
start at once as in the command's own process (:mod:`squad.daemon.handoff`); the command
then runs the squad itself. Accepted, the response is the run as it goes, one JSON object a
line (``application/x-ndjson``), in order:

    {"ticket": "..."}                       first: what a stop names
    {"run_id": "..."}                       once the run has its id
    {"progress": "draft: writer working"}   each line ``squad run`` prints as it works
    {"result": {...}}                       last: ``squad run --json``'s object
    {"error": {"kind", "message", "exit_code", "run_id"}}   or last: what stopped it

A command that goes away leaves the run going, as any of the daemon's runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from squad.daemon.handoff import HandOver, Ticket
from squad.paths import SLUG_PATTERN
from squad.web.api import ERRORS, RUN_ID, _web

__all__ = ["HandedRun", "router"]

router = APIRouter(prefix="/api/v1", tags=["api"], responses=ERRORS)

_DIGEST = r"^[0-9a-f]{32}$"


class HandedRun(BaseModel):
    """What ``squad run`` says of the run it hands over (:class:`HandOver`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    settings: Annotated[str, Field(pattern=_DIGEST)]
    environment: Annotated[str, Field(pattern=_DIGEST)]
    squad: Annotated[str | None, Field(pattern=SLUG_PATTERN)] = None
    file: Annotated[str | None, Field(min_length=1, max_length=4096)] = None
    digest: Annotated[str | None, Field(pattern=r"^[0-9a-f]{64}$")] = None
    goal: Annotated[str | None, Field(max_length=20_000)] = None
    run_id: Annotated[str | None, Field(pattern=RUN_ID)] = None
    task: Annotated[str | None, Field(pattern=SLUG_PATTERN)] = None
    """With ``run_id``: the task whose gate ``approved`` answers (``squad approve``)."""
    approved: bool | None = None
    reason: Annotated[str, Field(max_length=5_000)] = ""

    def hand_over(self) -> HandOver | None:
        """What the daemon checks; None for a body that names no one thing to run."""
        named = [self.squad is not None, self.file is not None, self.run_id is not None]
        if sum(named) != 1 or (self.file is None) != (self.digest is None):
            return None
        if (self.task is None) != (self.approved is None) or (
            self.run_id is None and self.task is not None
        ):
            return None
        decision = None
        if self.task is not None and self.approved is not None:
            decision = (self.task, self.approved, self.reason.strip())
        return HandOver(
            settings=self.settings,
            environment=self.environment,
            squad=self.squad,
            file=self.file,
            digest=self.digest,
            goal=self.goal,
            run_id=self.run_id,
            decision=decision,
        )


def _line(item: dict[str, Any]) -> bytes:
    return json.dumps(item, ensure_ascii=False).encode() + b"\n"


def _error(error: BaseException) -> dict[str, Any]:
    from squad.errors import SquadError

    if isinstance(error, SquadError):
        kind, code = type(error).__name__, error.exit_code
    else:
        kind, code = "SquadError", 1
        error = SquadError(f"the run failed in the daemon: {type(error).__name__}: {error}")
    return {
        "kind": kind,
        "message": str(error),
        "exit_code": code,
        "run_id": getattr(error, "run_id", None),
    }


def _framed(kind: str, value: Any) -> dict[str, Any]:
    if kind == "result":
        return {"result": value.to_dict()}
    if kind == "error":
        return {"error": _error(value)}
    return {kind: value}


@router.post(
    "/handed-runs",
    response_model=None,
    responses={
        200: {
            "description": "The run as it goes, one JSON object a line (the module docstring)",
            "content": {"application/x-ndjson": {}},
        }
    },
)
async def hand_over(request: Request, body: HandedRun) -> StreamingResponse | JSONResponse:
    """Run a squad for ``squad run`` now, and stream it back (the module docstring)."""
    check = body.hand_over()
    if check is None:
        detail = "name a squad, a file with its digest, or a run (with a task and an answer)"
        return JSONResponse({"detail": detail}, 409)
    web = _web(request)
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def deliver(item: tuple[str, Any]) -> None:
        with suppress(RuntimeError):  # the server's loop has closed: nobody is listening
            loop.call_soon_threadsafe(items.put_nowait, item)

    ticket = Ticket(deliver)
    refused = await run_in_threadpool(web.control.hand_off, check, ticket)
    if refused is not None:
        return JSONResponse({"detail": refused}, 409)
    web.tickets.add(ticket)

    async def lines() -> AsyncIterator[bytes]:
        try:
            yield _line({"ticket": ticket.id})
            while True:
                kind, value = await items.get()
                yield _line(_framed(kind, value))
                if kind in ("result", "error"):
                    return
        finally:
            web.tickets.remove(ticket)

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.post("/handed-runs/{ticket}/stop", status_code=202, response_model=None)
def stop_handed(
    request: Request,
    ticket: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
) -> JSONResponse:
    """Stop a handed-over run after its current step's checkpoint (Ctrl-C in ``squad run``)."""
    found = _web(request).tickets.get(ticket)
    if found is None:
        return JSONResponse({"detail": "no such run in progress"}, 404)
    found.stop()
    return JSONResponse({"stopping": True}, 202)
