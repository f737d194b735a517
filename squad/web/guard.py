"""The door of the web front end: every request passes here before any route sees it.

In this order: the Host header must name this server (a DNS-rebinding page cannot talk to it);
the request must carry the API token (``Authorization: Bearer``) or a session cookie that the
login link set; a state-changing request from a browser must also carry the session's CSRF
token in ``X-CSRF-Token`` and, when the browser says where it comes from, an ``Origin`` of this
server. Only ``/login`` is open, and it checks the token itself. Every response gets headers
that keep it out of frames, caches and other sites' referrers. WebSocket handshakes are
refused (HTTP 403): nothing here speaks WebSocket, so nothing may be reached that way.

Host and Origin are parsed, not matched as text: a Host is a name and an optional port of
digits (``127.0.0.1:8765.evil.example`` is neither), and an Origin is exactly
``http(s)://host[:port]``. An Origin must be the origin the request was sent to, the scheme's
default port standing in for one the Host leaves out: another port on this machine is
another site, and ``null`` (a sandboxed frame, a ``file:`` page, a cross-site redirect) or
anything malformed is refused. A reverse proxy must therefore pass the browser's Host on
(nginx: ``proxy_set_header Host $host;``) and list it in ``daemon.http.allowed_hosts``.

A plain ASGI middleware, so server-sent event streams pass through unbuffered.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

from squad.web.i18n import COOKIE as LANG_COOKIE
from squad.web.i18n import N_, choose, translations
from squad.web.tokens import Session, Tokens

__all__ = ["COOKIE", "CSRF_HEADER", "Guard", "host_name", "parse_host", "parse_origin"]

COOKIE = "squad_session"
CSRF_HEADER = "x-csrf-token"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_OPEN = frozenset({"/login", "/favicon.ico"})

NOT_LOGGED_IN = N_(
    "not logged in: open the login link that `squad daemon` or `squad dashboard` "
    "printed (`squad status` shows it), or send Authorization: Bearer <token from "
    "$SQUAD_HOME/api-token>"
)
"""The refusal a browser meets before logging in; its page is in the browser's language."""

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


_HOST = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>[0-9]{1,5}))?")
_ORIGIN = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>.*)", re.DOTALL)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_host(value: str) -> tuple[str, int | None] | None:
    """The name (lower-cased, IPv6 without brackets) and port of a Host header, or None when
    it is not ``name[:port]`` (``127.0.0.1:8765.evil.example``, ``a@b``, ``x:99999``)."""
    found = _HOST.fullmatch(value.strip())
    if found is None:
        return None
    port = None if found["port"] is None else int(found["port"])
    if port is not None and port > 65_535:
        return None
    return host_name(found["name"]), port


def parse_origin(value: str) -> tuple[str, str, int] | None:
    """The scheme, host and port of an ``Origin`` header (``http://[::1]:8765`` ->
    ``("http", "::1", 8765)``, the scheme's default port if none), or None for anything but
    an http(s) origin exactly as browsers send it: ``null``, a path, user info, no host."""
    found = _ORIGIN.fullmatch(value)
    if found is None or found["scheme"].lower() not in _DEFAULT_PORTS:
        return None
    scheme = found["scheme"].lower()
    host = parse_host(found["host"]) if found["host"] == found["host"].strip() else None
    if host is None:
        return None
    name, port = host
    return scheme, name, _DEFAULT_PORTS[scheme] if port is None else port


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
        authority = parse_host(host)
        if authority is None or authority[0] not in self.allowed_hosts:
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
            await _refuse(send, 401, NOT_LOGGED_IN, headers)
            return
        if session is not None and scope.get("method", "GET") not in _SAFE:
            problem = self._csrf_problem(headers, session, authority)
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

    def _csrf_problem(
        self, headers: dict[str, str], session: Session, authority: tuple[str, int | None]
    ) -> str | None:
        origin = headers.get("origin")
        if origin is not None and not _same_origin(origin, authority):
            return (
                f"cross-site request from {origin!r} refused: only a page of this server "
                f"({headers.get('host', '')!r}) may change anything"
            )
        sent = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(sent.encode(), session.csrf.encode()):
            return "missing or wrong CSRF token (X-CSRF-Token); reload the page and try again"
        return None


def _same_origin(origin: str, authority: tuple[str, int | None]) -> bool:
    """Whether ``origin`` names the server the request was sent to (``authority``, from its
    Host header); a Host without a port is on the default port of the origin's scheme."""
    parsed = parse_origin(origin)
    if parsed is None:
        return False
    scheme, name, port = parsed
    host, host_port = authority
    return name == host and port == (_DEFAULT_PORTS[scheme] if host_port is None else host_port)


def _cookie(headers: dict[str, str], name: str) -> str | None:
    try:
        morsel = SimpleCookie(headers.get("cookie", "")).get(name)
    except CookieError:
        return None
    return None if morsel is None else morsel.value


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

        locale = choose(None, _cookie(headers, LANG_COOKIE), headers.get("accept-language"))
        shown = translations(locale).gettext(message)
        body = (
            f"<!doctype html><html lang={locale}><meta charset=utf-8><title>squad</title>"
            f"<h1>{status}</h1><p>{escape(shown)}</p>"
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
