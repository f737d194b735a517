"""A bare value sent right after a line or message that asks for or announces a credential. Pure.

"what's the db password?" / "hunter2x", "my password is" / "hunter2x", ``password:`` / next
line ``hunter2x``: alone, the value is a word; after its cue it is the password. A line counts
when it is nothing but one value (a lead-in like "it's" and a Korean copula aside) and the
line before it, or when it is the text's first line the tail of one of the last
:data:`CUE_MESSAGES` messages before it, ends with a cue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from squad.text.secrets import CUE_MESSAGES
from squad.text.secrets._named import (
    PASSWORD_WORDS_EN,
    PASSWORD_WORDS_KO,
    SECRET_WORDS_EN,
    SECRET_WORDS_KO,
)
from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import HANGUL, Candidate, bare_reply, random_token, word_set

__all__ = ["CUE_MESSAGES", "KINDS", "candidates", "needs_previous"]

KIND = "followup_secret"
KINDS = (KIND,)

_CUE_EN = rf"(?:{PASSWORD_WORDS_EN}|pwd|{SECRET_WORDS_EN}|credentials?|creds)"
_CUE_KO = rf"(?:{PASSWORD_WORDS_KO}|{SECRET_WORDS_KO})"
_QUALIFIER = r"(?:\s+(?:for|of|on|to|at)\s+[\w.@-]+(?:\s+[\w.@-]+){0,2}?)?"
_ANNOUNCE = re.compile(  # case is ignored around words only: a folded Hangul range is slow
    rf"""(?:(?i:(?<![\w-]){_CUE_EN}{_QUALIFIER}\s*+(?:(?:is|was|will\ be|would\ be)\s*+:?|[:=]|->|→
        |—|-))
      |(?i:(?<![\w-])here(?:'s|\ is|\ are|\ it\ is)?\s+(?:the|my|our|your|its)\s+
        (?:[\w.-]+\s+){{0,3}}{_CUE_EN}{_QUALIFIER}\s*[:.]?)
      |{_CUE_KO}\s*(?:은|는|이|가)?\s*[:=]?
      |{_CUE_KO}\s*(?:은|는|을|를)?\s*(?:이거|이것|다음|아래)[{HANGUL}\s]{{0,12}}[:.]?)$""",
    re.VERBOSE,
)
_ASK = re.compile(
    rf"""(?:(?i:\b(?:what(?:'s|s|\ is|\ was|\ are)?|which|tell|send|give|share|need|know|remind
        |paste|provide|type|enter|remember)\b[^?\n]{{0,60}}?(?<![\w-])(?<!\ba\s)(?<!\ban\s)
        {_CUE_EN}{_QUALIFIER}(?:\s+(?:again|please|pls|now|here|then))?\s*\?+)
      |(?i:{_CUE_KO})\s*(?:은|는|이|가|을|를)?\s*(?:좀\s*)?(?:뭐|뭔|뭘|알려|보내|줘|주세요|주실|불러|공유)
        [{HANGUL}\s]{{0,12}}[?？]*
      |(?i:^(?:[\w.@-]+\s+){{0,3}}(?<![\w-])(?<!\ba\s)(?<!\ban\s){_CUE_EN}\s*\?+)
      |(?i:{_CUE_KO})\s*(?:은|는|이|가)?\s*[?？]+)$""",
    re.VERBOSE,
)
_PASSWORD_CUE = re.compile(rf"(?i:{PASSWORD_WORDS_EN}|pwd|{PASSWORD_WORDS_KO})")
_BARE = re.compile(  # matched against a stripped line
    rf"""(?:[-*>][ \t]++)?
    (?i:(?:it'?s|it\ is|that'?s|sure|ok(?:ay)?|yes|yeah|here(?:'s|\ it\ is|\ you\ go)?|use|try)
      [,:]?[ \t]++)?
    (?:"(?P<dq>[^"\n]{{1,100}})"|'(?P<sq>[^'\n]{{1,100}})'|`(?P<bt>[^`\n]{{1,100}})`
      |(?P<uq>[^\s"'`{HANGUL}]{{4,200}}))
    (?:[ \t]*+(?P<tail>[{HANGUL}]{{1,4}}))?[.!]?""",
    re.VERBOSE,
)
_COPULA = word_set("이에요 예요 에요 입니다 이요 요 임 이야 야 이고 고")
_TAIL_CHARS = 160


def _cue(line: str) -> str | None:
    """``password`` or ``token`` when ``line`` ends by asking for or announcing one."""
    tail = line[-_TAIL_CHARS:].rstrip(" \t*_`")
    m = _ANNOUNCE.search(tail) or _ASK.search(tail)
    if m is None:
        return None
    return "password" if _PASSWORD_CUE.search(m[0]) else "token"


def _last_line(text: str) -> str:
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1 :]


def _value(m: re.Match[str], cue: str) -> tuple[int, int] | None:
    group = next(g for g in ("dq", "sq", "bt", "uq") if m[g] is not None)
    value = m[group]
    if m["tail"] and m["tail"] not in _COPULA:
        return None  # "vault에": where it is, not what it is
    if not bare_reply(value) or (cue == "token" and not (len(value) >= 8 and random_token(value))):
        return None
    if group == "uq" and value.endswith(".") and len(value) > 4:
        value = value[:-1]  # the sentence's full stop
    return m.start(group), m.start(group) + len(value)


def needs_previous(text: str) -> bool:
    """Whether ``text``'s first line is a bare value, whose cue could be in the messages before."""
    rest = text.lstrip()
    newline = rest.find("\n")
    first = (rest if newline < 0 else rest[:newline]).strip()
    return bool(first) and _BARE.fullmatch(first) is not None


def _bare_value(line: str, pos: int, cues: list[str]) -> Candidate | None:
    """The value ``line`` (at ``pos``) is when it is nothing else and one of ``cues`` (the
    lines before it, nearest first) ends by asking for or announcing a credential."""
    m = _BARE.fullmatch(line.strip())
    cue = next((c for c in map(_cue, cues) if c), None) if m else None
    span = _value(m, cue) if m is not None and cue is not None else None
    if span is None:
        return None
    offset = pos + len(line) - len(line.lstrip())
    return 2, offset + span[0], offset + span[1], KIND


def _next_line(text: str, pos: int) -> tuple[int, str] | None:
    """The first line from ``pos`` on that is not blank, and where it starts."""
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if text[pos:end].strip():
            return pos, text[pos:end]
        pos = end + 1
    return None


RULES = Rules(_ANNOUNCE, _ASK)
"""The cues a line after the first needs on the line above it."""


def candidates(
    text: str, previous: Sequence[str] = (), scan: Scan | None = None
) -> Iterator[Candidate]:
    """Every line of ``text`` that is a bare value after its cue: the line before it, or for
    the first line the last of ``previous``; ``scan`` is ``text``'s :class:`Scan` when the
    caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    before = [_last_line(p) for p in previous[-CUE_MESSAGES:] if p.strip()][::-1]
    if not before and not scan.admits(RULES):
        return  # no cue before the first line, and none in the text for the others
    cues = scan.line_spans(_ANNOUNCE, _ASK)  # a line after the first needs a cue word above
    if cues is None:
        yield from _every_line(text, before)
        return
    first = _next_line(text, 0)
    if first is None:
        return
    if (found := _bare_value(first[1], first[0], before)) is not None:
        yield found
    for start, end in cues:  # the line after each cue line, with that line as its cue
        line = _next_line(text, end + 1)
        if line is not None and (found := _bare_value(line[1], line[0], [text[start:end]])):
            yield found


def _every_line(text: str, before: list[str]) -> Iterator[Candidate]:
    """:func:`candidates` line by line, each with the line before it as its cue."""
    pos, prior = 0, None
    while pos <= len(text):
        newline = text.find("\n", pos)
        end = len(text) if newline < 0 else newline
        line = text[pos:end]
        if line.strip():
            found = _bare_value(line, pos, [prior] if prior is not None else before)
            if found is not None:
                yield found
            prior = line
        pos = end + 1
