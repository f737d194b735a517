"""The ASGI application: the JSON API under ``/api/v1`` (with its OpenAPI schema), the
dashboard pages, the live run log, and the vendored static files, behind :class:`Guard`.

Errors squad raises on purpose become the HTTP status that says what happened, with the
message as ``detail``: an unknown squad, agent, run, task, fact or file is 404; a path that
would leave its workspace, a file that is not text or a bad value is 400 or 422; a stale edit
is 409 (with the current version); an edit over its cap is 413.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from squad.daemon.handoff import Tickets
from squad.errors import (
    ConfigError,
    HistoryUnavailable,
    MemoryFileError,
    MemoryFullError,
    NotFound,
    PathEscapeError,
    SecretInMemoryError,
    SquadBusy,
    SquadError,
    StaleWriteError,
    StoreError,
    UsageError,
    WorkspaceError,
)
from squad.web.guard import Guard
from squad.web.tokens import Tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    from starlette.routing import BaseRoute

    from squad.app import App
    from squad.web.control import RunControl

__all__ = ["WebContext", "create_app", "status_of"]


@dataclass
class WebContext:
    """What every route reaches through ``request.app.state.web``."""

    app: App
    control: RunControl
    tokens: Tokens
    started_at: datetime
    extra: dict[str, Any] = field(default_factory=dict)
    tickets: Tickets = field(default_factory=Tickets)
    """The runs ``squad run`` handed over and still follows (:mod:`squad.web.handoff`)."""

    @property
    def mode(self) -> str:
        return self.control.mode


def status_of(exc: SquadError) -> int:
    """The HTTP status for an error squad raised on purpose."""
    table: tuple[tuple[type[SquadError], int], ...] = (
        (NotFound, 404),
        (PathEscapeError, 400),
        (StaleWriteError, 409),
        (SquadBusy, 409),
        (MemoryFullError, 413),
        (SecretInMemoryError, 422),
        (MemoryFileError, 409),
        (ConfigError, 422),
        (UsageError, 422),
        (HistoryUnavailable, 409),
        (WorkspaceError, 400),
        (StoreError, 503),
    )
    for kind, status in table:
        if isinstance(exc, kind):
            return status
    return 409


def create_app(
    app: App,
    control: RunControl,
    *,
    token: str,
    allowed_hosts: tuple[str, ...] = (),
    routes: Sequence[BaseRoute] = (),
) -> Guard:
    """The whole web front end of ``app``, guarded; ``allowed_hosts`` are added to the
    loopback names a browser may use, and ``routes`` (the MCP endpoint) are served behind
    the same guard."""
    from importlib.metadata import version

    from squad.web import (
        actions,
        api,
        files_api,
        handoff,
        history_pages,
        pages,
        review_pages,
        stream,
    )

    web = FastAPI(
        title="squad",
        version=version("squad"),
        description="The squad daemon's API: squads, runs, approvals, workspaces, memory. "
        "Every request needs `Authorization: Bearer <$SQUAD_HOME/api-token>`.",
        docs_url=None,  # Swagger UI loads scripts from a CDN, which the CSP (rightly) refuses
        redoc_url=None,
        openapi_url="/api/v1/openapi.json",
    )
    web.state.web = WebContext(app, control, Tokens(token), app.clock())
    web.include_router(api.router)
    web.include_router(files_api.router)
    web.include_router(actions.router)
    web.include_router(handoff.router)
    web.include_router(stream.router)
    web.include_router(pages.router)
    web.include_router(history_pages.router)
    web.include_router(review_pages.router)
    web.mount("/static", StaticFiles(directory=str(files("squad.web") / "static")), name="static")
    web.router.routes.extend(routes)

    @web.exception_handler(SquadError)
    async def squad_error(request: Request, exc: SquadError) -> Response:
        status = status_of(exc)
        extra: dict[str, Any] = dict(getattr(exc, "web_detail", {}) or {})
        return _error(request, status, str(exc), extra)

    @web.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """No route (404) or method (405) here: an error page for a browser, as others are."""
        message = str(exc.detail)
        if not request.url.path.startswith("/api/"):
            message = _page_phrase(request, exc.status_code, message)
        response = _error(request, exc.status_code, message, {})
        response.headers.update(exc.headers or {})
        return response

    @web.exception_handler(RequestValidationError)
    @web.exception_handler(ValidationError)  # a page's form checked by a body model
    async def bad_request(
        request: Request, exc: RequestValidationError | ValidationError
    ) -> Response:
        problems = [
            {
                "field": ".".join(str(p) for p in e.get("loc", ()) if p != "body"),
                "message": e.get("msg", ""),
            }
            for e in exc.errors()
        ]
        message = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        return _error(request, 422, message, {"problems": problems})

    hosts = {"127.0.0.1", "localhost", "::1", *allowed_hosts}
    if "0.0.0.0" in hosts or "::" in hosts:
        import socket

        hosts.add(socket.gethostname())
    return Guard(web, tokens=Tokens(token), allowed_hosts=hosts)


def _error(request: Request, status: int, message: str, extra: dict[str, Any]) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": message, **extra}, status_code=status)
    from squad.web.i18n import remember
    from squad.web.pages import render_error

    return remember(
        request, HTMLResponse(render_error(request, status, message), status_code=status)
    )


def _page_phrase(request: Request, status: int, detail: str) -> str:
    """Starlette's bare "Not Found" / "Method Not Allowed" as a sentence in the page's
    language; any other detail as it is."""
    from http import HTTPStatus

    from squad.web.pages import translator

    if detail != HTTPStatus(status).phrase:
        return detail
    _ = translator(request)
    if status == 404:
        return _("There is no page at this address.")
    if status == 405:
        return _("This address does not take that method.")
    return detail
