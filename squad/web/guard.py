"""The door of the web front end: every request passes here before any route sees it.

In this order: the Host header must name this server (a DNS-rebinding page cannot talk to it);
the request must carry the API token (``Authorization: Bearer``) or a session cookie that the
login link set; a state-changing request from a browser must also carry the session's CSRF
token in ``X-CSRF-Token`` and, when the browser says where it comes from, an ``Origin`` of this
server. Only ``/login`` is open, and it checks the token itself. Every response gets headers
that keep it out of frames, caches and other sites' referrers. WebSocket handshakes are
refused (HTTP 403): nothing here speaks WebSocket, so nothing may be reached that way.

A plain ASGI middleware, so server-sent event streams pass through unbuffered.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from squad.web.tokens import Session, Tokens

__all__ = ["COOKIE", "CSRF_HEADER", "Guard", "host_name"]

COOKIE = "squad_session"
CSRF_HEADER = "x-csrf-token"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_OPEN = frozenset({"/login", "/favicon.ico"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
        b"form-action 'self'; base-uri 'none'",
    ),
)


def host_name(value: str) -> str:
    """The name part of a Host header (``[::1]:8765`` -> ``::1``), lower-cased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") > 1:  # a bare IPv6 address
        return value
    return value.partition(":")[0]


class Guard:
    """ASGI middleware enforcing the rules in the module docstring."""

    def __init__(self, app: ASGIApp, *, tokens: Tokens, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.tokens = tokens
        self.allowed_hosts = frozenset(host_name(h) for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the app serves none; a refusal is a close
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        send = _with_security_headers(send)
        host = headers.get("host", "")
        if host_name(host) not in self.allowed_hosts:
            await _refuse(
                send,
                400,
                f"Host {host!r} is not this server's name; add it to daemon.http.allowed_hosts "
                "in settings.yaml if a proxy forwards it",
                headers,
            )
            return
        path = scope.get("path", "")
        if path in _OPEN:
            await self.app(scope, receive, send)
            return
        bearer = self.tokens.bearer_ok(headers.get("authorization"))
        session = None if bearer else self._session(headers.get("cookie"))
        if not bearer and session is None:
            await _refuse(
                send,
                401,
                "not logged in: open the login link that `squad daemon` or `squad dashboard` "
                "printed (`squad status` shows it), or send Authorization: Bearer <token from "
                "$SQUAD_HOME/api-token>",
                headers,
            )
            return
        if session is not None and scope.get("method", "GET") not in _SAFE:
            problem = self._csrf_problem(headers, session)
            if problem is not None:
                await _refuse(send, 403, problem, headers)
                return
        scope.setdefault("state", {})["session"] = session
        await self.app(scope, receive, send)

    def _session(self, cookie_header: str | None) -> Session | None:
        if not cookie_header:
            return None
        try:
            jar: SimpleCookie = SimpleCookie(cookie_header)
        except CookieError:
            return None
        morsel = jar.get(COOKIE)
        return None if morsel is None else self.tokens.session(morsel.value)

    def _csrf_problem(self, headers: dict[str, str], session: Session) -> str | None:
        origin = headers.get("origin")
        if (
            origin
            and origin != "null"
            and host_name(urlsplit(origin).netloc) not in self.allowed_hosts
        ):
            return f"cross-site request from {origin!r} refused"
        sent = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(sent.encode(), session.csrf.encode()):
            return "missing or wrong CSRF token (X-CSRF-Token); reload the page and try again"
        return None


def _headers(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        if name not in found:
            found[name] = raw_value.decode("latin-1")
    return found


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return sending


async def _refuse(send: Send, status: int, message: str, headers: dict[str, str]) -> None:
    wants_html = "text/html" in headers.get("accept", "") and "hx-request" not in headers
    if wants_html:
        from html import escape

        body = (
            "<!doctype html><meta charset=utf-8><title>squad</title>"
            f"<h1>{status}</h1><p>{escape(message)}</p>"
        ).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body = json.dumps({"detail": message}).encode()
        kind = b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
