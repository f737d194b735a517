"""Credentials known by the file format that holds them, pasted into chat whole or a line. Pure.

A ``.npmrc``'s ``_auth`` / ``_password`` (base64 of the login), a ``.pgpass`` line
(``host:port:db:user:password``), the private lines of a PuTTY key file, a Terraform variable
whose name or ``sensitive = true`` says it is secret and whose ``default`` holds a literal,
and Oracle's ``user/password@db`` connect string (``sqlplus``, ``jdbc:oracle:thin:``). Each
format names its credential by position, so no password word is needed; each needs the
format's own marks, so prose that merely resembles one passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from squad.text.secrets._named import kind_of_name, vouches
from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import Candidate, placeholder

__all__ = ["KINDS", "candidates"]

KINDS = ("npmrc_auth", "pgpass_password", "connect_string_password", "variable_default")

_NPMRC = re.compile(  # _auth=..., //registry.example/:_password=...
    r"^[ \t]*+(?://[^\s=]{1,200}:)?_(?:auth|password)[ \t]*+=[ \t]*+[\"']?(?P<v>[^\s\"']{4,})",
    re.MULTILINE,
)
_PGPASS = re.compile(  # one line of ~/.pgpass: hostname:port:database:username:password
    r"(?:^|(?<=[ \t]))(?P<host>\*|[A-Za-z0-9][\w.-]{0,252}|\[[0-9A-Fa-f:]+\])"
    r":(?:\d{2,5}|\*):(?:[^:\s\\]|\\.){1,63}:(?:[^:\s\\]|\\.){1,63}"
    r":(?P<v>(?:[^:\s\\]|\\.){4,})[ \t]*$",
    re.MULTILINE,
)
_HOST = re.compile(r"\*|localhost|.*[.\[]")
"""A ``.pgpass`` host: ``*``, ``localhost``, a dotted name or an address; ``INFO`` is a log.
The line may follow a short lead-in on the same line ("pgpass: db:5432:...", "fyi db...")."""
_PGPASS_NAMED = re.compile(r"(?i:pgpass)")
_PUTTY = re.compile(r"^Private-Lines:[ \t]*+(?P<n>\d{1,2})[ \t]*\r?\n", re.MULTILINE)
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}[ \t]*(?:\r?\n|$)")
_ORACLE = re.compile(  # sqlplus scott/tiger@ORCL, jdbc:oracle:thin:scott/tiger@//host:1521/x
    r"(?:(?i:jdbc:oracle:(?:thin|oci8?):)|(?<![\w-])(?i:sqlplus|sqlldr|expdp|impdp|rman|exp|imp)"
    r"(?:[ \t]+-\w+)*[ \t]+)[\"']?(?P<user>[A-Za-z][\w$#]{0,127})/(?P<v>[^\s/@\"']{2,128})"
    r"(?=@|[\"']|[ \t]|$)",
    re.MULTILINE,
)
_VARIABLE = re.compile(  # variable "db_password" { type = string  default = "..." }
    r"(?<![\w-])variable[ \t]+\"(?P<name>[\w-]{1,100})\"[ \t]*\{(?P<body>[^{}]{0,2000}?)"
    r"(?<![\w-])default[ \t]*=[ \t]*\"(?P<v>[^\"\n]{1,200})\"(?P<rest>[^{}]{0,2000}?)\}"
)
_SENSITIVE = re.compile(r"(?<![\w-])sensitive[ \t]*=[ \t]*true\b")


def _npmrc(scan: Scan) -> Iterator[Candidate]:
    for m in scan.finditer(_NPMRC):
        if not placeholder(m["v"]):
            yield 1, *m.span("v"), "npmrc_auth"


def _pgpass(scan: Scan) -> Iterator[Candidate]:
    lines = list(scan.finditer(_PGPASS))
    named = bool(lines) and scan.search(_PGPASS_NAMED) is not None
    for m in lines:
        if (named or _HOST.match(m["host"])) and not placeholder(m["v"]):
            yield 1, *m.span("v"), "pgpass_password"


def _putty(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for m in scan.finditer(_PUTTY):
        pos = end = m.end()
        for _ in range(int(m["n"])):
            line = _BASE64_LINE.match(text, pos)
            if line is None:
                break
            pos, end = line.end(), line.start() + len(line[0].rstrip())
        if end > m.end():
            yield 0, m.end(), end, "private_key"


def _oracle(scan: Scan) -> Iterator[Candidate]:
    for m in scan.finditer(_ORACLE):
        if not placeholder(m["v"]) and not placeholder(m["user"]):
            yield 1, *m.span("v"), "connect_string_password"


def _variables(scan: Scan) -> Iterator[Candidate]:
    for m in scan.finditer(_VARIABLE):
        value, kind = m["v"], kind_of_name(m["name"])
        sensitive = _SENSITIVE.search(m["body"] + m["rest"]) is not None
        if not placeholder(value) and (sensitive or (kind is not None and vouches(kind, value))):
            yield 1, *m.span("v"), "variable_default"


RULES = Rules(_NPMRC, _PGPASS, _PGPASS_NAMED, _PUTTY, _ORACLE, _VARIABLE)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` holds in a file format; ``scan`` is ``text``'s :class:`Scan`
    when the caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return  # no pattern here can match: most messages
    yield from _npmrc(scan)
    yield from _pgpass(scan)
    yield from _putty(scan)
    yield from _oracle(scan)
    yield from _variables(scan)
