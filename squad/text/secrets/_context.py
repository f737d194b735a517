"""Credentials known by the context around them rather than by a name and a verb. Pure.

People drop credentials into chat without "is": "the staging box is root and the usual
Summer2025!", "same as before: Blue2022$", "client secret 9QpUVRFa7x", "auth token <hex>",
"recovery code for the admin account: VWUB-3NRV-80K3-MFA9", "앱 비밀번호 iosw oymn qxey
lalu", a Discord webhook, a presigned URL's signature, a session cookie, ``keytool -storepass
...``. Each finder here proposes a value only in its context and only in its shape, and loses
to every other kind over the same span (:data:`._values.BY_CONTEXT`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from squad.text.secrets._named import PASSWORD_WORDS_KO, SECRET_WORDS_EN, SECRET_WORDS_KO
from squad.text.secrets._scan import NextNewline, Rules, Scan
from squad.text.secrets._values import (
    ADDRESS,
    BY_CONTEXT,
    FUNCTION_WORDS,
    HANGUL,
    WORDY,
    Candidate,
    identifier,
    placeholder,
    random_token,
    strong_password,
)

__all__ = ["KINDS", "candidates"]

KINDS = (
    "password_context", "secret_context", "recovery_code", "webhook_secret", "url_signature",
    "cli_password",
)  # fmt: skip

_CONTEXT = re.compile(
    rf"""(?P<strong>(?i:(?<![\w-])(?:pass(?:word|wd|wrod|owrd|wor)?|pasword|pssword|pwd?|creds?
      |credentials|the\ usual|same\ (?:as\ )?(?:before|always|usual|last\ time|one)|changed\ it\ to
      |reset\ it\ to)(?![\w-]))|{PASSWORD_WORDS_KO}|예전이랑\ 같)
    |(?i:(?<![\w-])(?:log[ -]?in|account|admin|root|sudo|still)(?![\w-]))
    |계정|로그인|아이디|관리자""",
    re.VERBOSE,
)
"""Words after which a password-shaped value, in the same line, is one. After the weaker ones
(a login word, "admin", "still"), which prose uses as often ("the admin page is built with
React18!"), a "!" or "?" that only ends the value is punctuation, not its symbol."""
_WINDOW = 60
_TOKEN = re.compile(rf"[^\s'\"`,;{HANGUL}()]{{6,64}}")
_SYMBOL = re.compile(r"[!#$%^&*+?~@]")
_STRUCTURE = re.compile(r"[\[\]{}<>:=|\\]")
"""``ENC[AES256_GCM,...``, ``key=value``, ``a|b``: data, not a password."""
_ISSUE_REF = re.compile(r"#\d{1,6}$")


def human_password(value: str, *, strong_cue: bool = True) -> bool:
    """Shaped as people make passwords: 8-64 characters with a letter, a digit and a symbol
    (``Summer2025!``, ``qwer1234!@``, ``L3tm3in&426``); not an address, a URL, a path, a
    reference, an issue (``PR#482``), ``user@host`` or structured data (``ENC[...``, ``k=v``).
    Without ``strong_cue`` a trailing "!" or "?" is punctuation: ``Summer2025!`` needs a
    password word or "the usual" before it."""
    core = value.rstrip(".,:;)")
    if not 8 <= len(core) <= 64 or placeholder(core) or "://" in core or "/" in core:
        return False
    if ADDRESS.fullmatch(core) or not any(c.isalpha() for c in core):
        return False
    if not strong_cue:
        core = core.rstrip("!?")
    symbols = _SYMBOL.findall(core)
    if not symbols or not any(c.isdigit() for c in core) or _STRUCTURE.search(core):
        return False
    if _ISSUE_REF.search(core) or core[0] in "@#$%":
        return False
    if strong_cue and not _SYMBOL.search(core.rstrip("!?")) and not strong_password(core):
        return False  # "React18!": a version with an exclamation mark
    return symbols != ["@"] or core.endswith("@")  # deploy@web01 is a user at a host


def _line_end(text: str, start: int, width: int) -> int:
    """Where the window of ``width`` characters after ``start`` ends: at the line's end."""
    end = text.find("\n", start, start + width)
    return end if end >= 0 else min(len(text), start + width)


_USER_SLASH = re.compile(r"[A-Za-z][\w.@+-]{0,31}/(?=[^/]+$)")


def _passwords(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for cue in scan.finditer(_CONTEXT):
        for m in _TOKEN.finditer(text, cue.end(), _line_end(text, cue.end(), _WINDOW)):
            value, start = m[0].rstrip(".,:;)"), m.start()
            pair = _USER_SLASH.match(value)  # "젠킨스 admin/Falcon2020#": after its user
            if pair is not None:
                value, start = value[pair.end() :], start + pair.end()
            elif value.startswith("/"):  # the cue was the user: "admin" of "admin/..."
                value, start = value[1:], start + 1
            if human_password(value, strong_cue=cue["strong"] is not None):
                yield BY_CONTEXT, start, start + len(value), "password_context"


_NAMED = re.compile(
    rf"""(?:(?i:(?<![\w-])(?:{SECRET_WORDS_EN}|admin[ _-]?key|rest[ _-]?api[ _-]?(?:key|secret)
      |api[ _-]?secret))|{SECRET_WORDS_KO}|어드민\ ?키|관리자\ ?키)
    [ \t]*+:?[ \t]*+(?P<v>[A-Za-z0-9][A-Za-z0-9_-]{{9,200}}+)(?![\w-])""",
    re.VERBOSE,
)
"""A secret's name and, with no verb between, its value: "client secret 9QpUVRFa7x"."""
_HEX32 = re.compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")


def _secret_shaped(value: str) -> bool:
    """Random rather than a name: 10+ characters, hex of 32+ or two of lower, upper and digits,
    not words joined by ``-_`` nor camel-cased words and numbers (``maxTokens2``)."""
    if _HEX32.fullmatch(value):
        return True
    return random_token(value) and not WORDY.fullmatch(value) and not identifier(value)


_APP_PASSWORD_CUE = re.compile(
    r"(?i:(?<![\w-])app[ -]?(?:specific[ -])?password)|앱\ ?(?:비밀\s?번호|비번|암호)"
)
_APP_PASSWORD = re.compile(  # Google's app passwords: four groups of four letters
    r"(?<![A-Za-z])[a-z]{4}(?: [a-z]{4}){3}(?![A-Za-z])"
)
_CODES_CUE = re.compile(
    r"(?i:(?<![\w-])(?:backup|recovery|unseal|2fa|mfa|otp)[ \t]?(?:codes?|keys?))"
    r"|(?:백업|복구|언실)\ ?(?:코드|키)"
)
_CODE = re.compile(
    r"(?<![\w-])(?:\d{4}[ -]\d{4}|[a-z0-9]{5}-[a-z0-9]{5}|[A-Z0-9]{4}(?:-[A-Z0-9]{4}){2,})"
    r"(?![\w-])"
)
_SEED_CUE = re.compile(r"(?i:(?<![\w-])(?:totp|otp|2fa|mfa)[ \t]?(?:seed|secret))|OTP\ ?시드")
_OTP_CUE = re.compile(r"(?i:(?<![\w-])(?:authenticator|otp)(?![\w-]))")
"""An authenticator named with no word for its seed ("구글 OTP ... 이 키 넣으세요: ...")."""
_SEED = re.compile(r"(?<![\w-])(?:[A-Z2-7]{16,}|[a-z2-7]{4}(?: [a-z2-7]{4}){3,})(?![\w-])")
"""A TOTP seed as apps show it: base32, whole or in groups of four."""
_WEBHOOK = re.compile(
    r"https://(?:discord(?:app)?\.com|[\w-]+\.webhook\.office\.com)/api/webhooks/\d+/"
    r"(?P<v>[\w-]{30,})"
)
_SIGNATURE = re.compile(  # a presigned URL is a key for as long as it lives
    r"[?&](?:X-Amz-Signature|X-Goog-Signature|Signature|sig)=(?P<v>[A-Za-z0-9%+/_-]{20,}=*)"
)
_COOKIE = re.compile(
    r"(?i:(?<![\w-])(?:session_?id|sessid|sid|phpsessid|jsessionid|connect\.sid|_session)=)"
    r"(?P<v>[A-Za-z0-9%._-]{16,})"
)
_STOREPASS = re.compile(  # keytool -storepass x, docker login -u me -p x
    r"(?<![\w-])(?:-(?:src|dest)?(?:storepass|keypass)[ \t]+"
    r"|(?:docker|podman|nerdctl)[ \t]+login\b[^\n]{0,120}?[ \t]-p[ \t]+)"
    r"(?P<v>[^\s'\"-][^\s'\"]{3,})"
)


_LIST_WINDOW = 240
"""Backup codes come ten at a time: the rest of the line after their name."""


def _windowed(scan: Scan, cue: re.Pattern[str], value: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The ``value`` matches that start within the window after each ``cue``, each run to its
    own end (so a redacted copy, shorter, brings no more of it into the window)."""
    text = scan.text
    done, next_newline = 0, NextNewline(text)
    for m in scan.finditer(cue):
        pos, window = max(m.end(), done), _line_end(text, m.end(), _LIST_WINDOW)
        while pos < window and (found := value.search(text, pos, window)) is not None:
            line = next_newline(found.start())
            whole = value.match(text, found.start(), line if line >= 0 else len(text))
            found = whole or found
            yield found
            pos = done = max(found.end(), pos + 1)


RULES = Rules(
    _CONTEXT,
    _NAMED,
    _APP_PASSWORD_CUE,
    _CODES_CUE,
    _SEED_CUE,
    _OTP_CUE,
    _WEBHOOK,
    _SIGNATURE,
    _COOKIE,
    _STOREPASS,
)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` holds in a context that names it; ``scan`` is ``text``'s
    :class:`Scan` when the caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return  # no pattern here can match: most messages
    yield from _passwords(scan)
    for m in scan.finditer(_NAMED):
        if _secret_shaped(m["v"]):
            yield BY_CONTEXT, *m.span("v"), "secret_context"
    for m in _windowed(scan, _APP_PASSWORD_CUE, _APP_PASSWORD):
        if not set(m[0].split()) & FUNCTION_WORDS:  # "app password: make sure your mail"
            yield BY_CONTEXT, *m.span(), "password_context"
    for m in _windowed(scan, _CODES_CUE, _CODE):
        yield BY_CONTEXT, *m.span(), "recovery_code"
    for m in _windowed(scan, _SEED_CUE, _SEED):
        yield BY_CONTEXT, *m.span(), "recovery_code"
    for m in _windowed(scan, _OTP_CUE, _SEED):
        if any(c.isdigit() for c in m[0]):  # four-letter words after "otp" are prose
            yield BY_CONTEXT, *m.span(), "recovery_code"
    for m in scan.finditer(_WEBHOOK):
        yield BY_CONTEXT, *m.span("v"), "webhook_secret"
    for m in scan.finditer(_SIGNATURE):
        yield BY_CONTEXT, *m.span("v"), "url_signature"
    for m in scan.finditer(_COOKIE):
        if not placeholder(m["v"]):
            yield BY_CONTEXT, *m.span("v"), "secret_context"
    for m in scan.finditer(_STOREPASS):
        if not placeholder(m["v"]):
            yield BY_CONTEXT, *m.span("v"), "cli_password"
