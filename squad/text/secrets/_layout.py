"""Credentials laid out rather than said: a table with a password column, a user and a password
on the lines after a login word. Pure.

People paste accounts from a spreadsheet or a note::

    username	password            | user | pw |          login for the support inbox:
    svc_etl	mmbJNve5RnMTsv       |------|----|          support@acme.io
                                  | ci   | x  |          Love2021@

A table's header names the column, so every value under it counts whatever it looks like (as an
assignment's name does); the lines after a login word count only with a user alone on the first
and a password-shaped value alone on the second.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import (
    BY_CONTEXT,
    LOGIN_WORDS_EN,
    LOGIN_WORDS_KO,
    Candidate,
    high_entropy,
    password_like,
    placeholder,
    secret_value,
)

__all__ = ["KINDS", "candidates"]

KINDS = ("password_table", "credential_pair")
_PASSWORD_CELL = re.compile(
    r"(?i:pass(?:word|wd)?|pwd?|passphrase)|비밀\s?번호|비번|암호|패스\s?워드"
)
_SECRET_CELL = re.compile(r"(?i:secret|token|api[ _-]?key|access[ _-]?key)|토큰|시크릿")
_SEPARATOR = re.compile(r"[\t|]|,(?=\S)")
_RULE_CELL = re.compile(r":?-{2,}:?")


def _cells(line: str, sep: str) -> list[tuple[int, int]]:
    """The spans of ``line``'s cells split by ``sep``, stripped, outer pipes dropped."""
    spans, start = [], 0
    for part in line.split(sep):
        lead = len(part) - len(part.lstrip())
        spans.append((start + lead, start + len(part.rstrip())))
        start += len(part) + len(sep)
    if sep == "|" and spans and spans[0][0] == spans[0][1]:
        spans = spans[1:]
    if sep == "|" and spans and spans[-1][0] == spans[-1][1]:
        spans = spans[:-1]
    return spans


def _tables(scan: Scan) -> Iterator[Candidate]:
    if not (scan.search(_PASSWORD_CELL) or scan.search(_SECRET_CELL)):
        return  # no header can name a password column: most messages, on every redaction
    text = scan.text
    headers = scan.line_spans(_PASSWORD_CELL, _SECRET_CELL)  # a header has one of their words
    if headers is None:
        headers, start = [], 0
        while start <= len(text):
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            headers.append((start, end))
            start = end + 1
    done = 0  # the rows of a table are no header
    for start, end in headers:
        if start < done:
            continue
        line = text[start:end]
        sep_found = _SEPARATOR.search(line)
        if sep_found is None:
            continue
        sep = sep_found[0]
        header = _cells(line, sep)
        columns = {  # column -> whether it holds passwords (else tokens or secrets)
            n: bool(_PASSWORD_CELL.fullmatch(line[a:b]))
            for n, (a, b) in enumerate(header)
            if _PASSWORD_CELL.fullmatch(line[a:b]) or _SECRET_CELL.fullmatch(line[a:b])
        }
        if len(header) < 2 or not columns:
            continue
        row_start = end + 1
        while row_start <= len(text):
            row_end = text.find("\n", row_start)
            row_end = len(text) if row_end < 0 else row_end
            row = text[row_start:row_end]
            cells = _cells(row, sep)
            if not row.strip() or len(cells) != len(header):
                break
            for n, password in columns.items():
                a, b = cells[n]
                if _cell_value(row[a:b], password=password):
                    yield BY_CONTEXT, row_start + a, row_start + b, "password_table"
            row_start = done = row_end + 1


def _cell_value(value: str, *, password: bool) -> bool:
    """A value under a password column: one word of 4+ characters, not a placeholder, digits
    only from six; under a token or secret column, random-looking (``8192`` is a budget)."""
    if len(value) < 4 or " " in value or _RULE_CELL.fullmatch(value) or placeholder(value):
        return False
    if password:
        return not value.isdigit() or len(value) >= 6
    return secret_value(value) or high_entropy(value)


_LOGIN = re.compile(rf"(?i:(?<![\w-])(?:{LOGIN_WORDS_EN}))|{LOGIN_WORDS_KO}")
_USER_THEN_VALUE = re.compile(
    r"[ \t]*:?[ \t]*\n[ \t]*[A-Za-z0-9][\w.@+-]{0,63}[ \t]*\n"
    r"[ \t]*(?P<v>[^\s'\"`]{6,64})[ \t]*(?:\n|$)"
)


def _lines(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for cue in scan.finditer(_LOGIN):
        line_end = text.find("\n", cue.end(), cue.end() + 61)  # no further: see below
        if line_end < 0 or line_end - cue.end() > 60:
            continue
        m = _USER_THEN_VALUE.match(text, line_end)
        if m is not None and password_like(m["v"]):
            yield BY_CONTEXT, *m.span("v"), "credential_pair"


RULES = Rules(_PASSWORD_CELL, _SECRET_CELL, _LOGIN)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` lays out in a table or on the lines after a login word;
    ``scan`` is ``text``'s :class:`Scan` when the caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return  # no pattern here can match: most messages
    yield from _tables(scan)
    yield from _lines(scan)
