"""The API token, browser sessions and CSRF tokens of the web front end (pure but for the file).

One secret, kept in ``$SQUAD_HOME/api-token`` (mode 0600, created at first start), opens
everything: API clients send it as ``Authorization: Bearer``; a browser trades it once, through
the login link, for a session cookie. The cookie and the CSRF token are derived from the
secret with HMAC, so the server keeps no session table, a restart keeps people logged in, and
replacing the file logs every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from squad.errors import UsageError
from squad.fsutil import private_dir

__all__ = [
    "TOKEN_FILE",
    "Session",
    "Tokens",
    "load_or_create_token",
    "login_url",
    "read_token",
]

TOKEN_FILE = "api-token"
_NONCE_BYTES = 16


def load_or_create_token(home: Path) -> str:
    """The home's API token, created (0600, atomically, never two) when there is none.

    A token file others can read is tightened to 0600, since it grants everything."""
    path = home / TOKEN_FILE
    token = _read(path)
    if token is not None:
        return token
    private_dir(home)
    fresh = secrets.token_urlsafe(32)
    temporary = home / f".{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (fresh + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)  # fails if another process made one first: theirs wins
    except FileExistsError:
        pass
    finally:
        temporary.unlink(missing_ok=True)
    token = _read(path)
    if token is None:
        raise UsageError(f"{path} is empty; delete it and start again to make a new token")
    return token


def read_token(home: Path) -> str | None:
    """The home's API token, or None when none was made yet (nothing is created)."""
    return _read(home / TOKEN_FILE)


def _read(path: Path) -> str | None:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path} is not a regular file; remove it so a token can be made")
    if st.st_mode & 0o077:
        path.chmod(0o600)
    text = path.read_text(encoding="ascii", errors="replace").strip()
    return text or None


@dataclass(frozen=True)
class Session:
    """A browser session: its cookie value and the CSRF token its forms carry."""

    cookie: str
    csrf: str


@dataclass(frozen=True)
class Tokens:
    """Checks made with one API token; comparisons take constant time."""

    token: str

    def bearer_ok(self, header: str | None) -> bool:
        if not header:
            return False
        scheme, _, value = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self.token.encode()
        )

    def token_ok(self, value: str | None) -> bool:
        return bool(value) and hmac.compare_digest(str(value).encode(), self.token.encode())

    def new_session(self) -> Session:
        nonce = secrets.token_hex(_NONCE_BYTES)
        return Session(f"{nonce}.{self._sign('session', nonce)}", self._sign("csrf", nonce))

    def session(self, cookie: str | None) -> Session | None:
        """The session a cookie stands for, or None when it is not one of ours."""
        if not cookie or "." not in cookie:
            return None
        nonce, _, signature = cookie.partition(".")
        if len(nonce) != 2 * _NONCE_BYTES or not hmac.compare_digest(
            signature.encode(), self._sign("session", nonce).encode()
        ):
            return None
        return Session(cookie, self._sign("csrf", nonce))

    def _sign(self, purpose: str, nonce: str) -> str:
        message = f"{purpose}:{nonce}".encode()
        return hmac.new(self.token.encode(), message, hashlib.sha256).hexdigest()


def login_url(base_url: str, token: str) -> str:
    """The one link a browser needs: it trades the token for a session cookie."""
    return f"{base_url}login?token={token}"
