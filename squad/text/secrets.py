"""Find, redact or refuse credentials in text bound for agent memory.

Memory files and facts are pasted into prompts and kept for weeks, so a credential must never
enter them: every write path either refuses the text (:func:`refuse_secrets`) or stores a
redacted copy (:func:`redact`). Pure: precompiled stdlib ``re`` patterns over a string, no I/O.
No pattern nests quantifiers over overlapping classes and every open-ended run starts after a
literal or a boundary, so matching stays linear on hostile input.

Judgment calls, each pinned by ``tests/text/secrets_corpus.py``:

- Provider tokens with a known shape (``sk-proj-``, ``ghp_``, ``AKIA``, PEM blocks, JWTs...)
  count anywhere. A random-looking string with no prefix and no name (commit SHA, digest,
  UUID) does not: without context it is far more often an identifier than a key.
- A value assigned to a password, secret, token or API-key name (also ``비밀번호``) counts
  whatever it looks like (``password: hunter2``). Any other name containing KEY, TOKEN, SECRET
  or CREDENTIAL (``STRIPE_KEY``, ``SECRET_KEY_BASE``) counts only for random-looking values:
  16+ token characters, two of lower/upper/digit, not words joined by ``-_./``, >= 3 bits of
  entropy per character.
- A name is judged by its words: ``PASSWORD_MIN_LENGTH``, ``token_count``, ``max_tokens``,
  ``password_file``, ``public_key``, ``sort_key``, ``aws_access_key_id`` are not secrets.
- Digits alone are never a credential (lengths, budgets, ports, uid:gid), except 6+ digits
  given as a password.
- Placeholders and references are not credentials: ``$VAR``, ``${VAR}``, ``%VAR%``,
  ``{{ x }}``, ``<your password>``, ``os.environ[...]``, ``settings.token``, ``YOUR_API_KEY``
  (any ALL_CAPS_NAME), ``***``, ``sk-...``, ``xxxx``, ``changeme``, the bare words ``password``,
  ``secret``, ``token``, ``null``, ``true``..., AWS's documented ``...EXAMPLE`` keys, YAML tags
  (``!secret x``), file paths, public keys and password managers (``1Password``).
- An unquoted single word of letters followed by more words is prose (``Password: ask Bob``),
  not a value; the same word quoted or ending the line is a password.
- Overlapping finds keep the most specific kind (provider > header/URL > named assignment),
  then the longer; only the value is replaced, never the name, user or host. A value that
  starts with an earlier ``[REDACTED:...]`` is that redaction, so :func:`redact` is idempotent.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from squad.errors import SecretInMemoryError

__all__ = [
    "KINDS",
    "SecretMatch",
    "contains_secret",
    "find_secrets",
    "redact",
    "redact_fields",
    "refuse_secrets",
]


@dataclass(frozen=True)
class SecretMatch:
    """One credential: its kind and the character span of the value to remove."""

    kind: str
    start: int
    end: int


_Candidate = tuple[int, int, int, str]  # (priority: lower wins, start, end, kind)

_ALNUM = re.compile(r"[^\W_]")  # a letter or digit of any script
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_PLACEHOLDER = re.compile(
    r"example|placeholder|change[_-]?me|redacted|dummy|x{6,}|\*\*\*|\.\.\.|…|^your[_-]|[_-]here$"
    r"|^(.)\1*$|1password|bitwarden|lastpass|keepass|^vault:",  # where it lives is not a secret
    re.IGNORECASE,
)
_PLACEHOLDER_WORD = re.compile(
    r"none|null|nil|true|false|yes|no|on|off|undefined|empty|unset|required|optional|str|string"
    r"|bytes|int|bool|boolean|secretstr|password|passwd|secret|token|key|apikey|api_key"
    r"|credentials?|hidden|masked|todo|tbd|n/?a|default",
    re.IGNORECASE,
)
_REFERENCE = re.compile(  # matched at the start of a value
    r"\$[A-Za-z_{(]|%[A-Za-z_(]|[{<]|#\{|![A-Za-z_]+$|(?:~|\.\.?)/|[A-Za-z]:\\"
    r"|/(?:etc|home|run|var|usr|opt|tmp|root|srv|mnt|Users|secrets|data|app|workspace)/"
    r"|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-"
)
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_WORD = re.compile(r"[^\W\d]+")  # letters of any script
_PROSE_AFTER = re.compile(r"[ \t]+[^\s#]")
_TOKENISH = re.compile(r"[A-Za-z0-9+/=_.~-]{16,}")
_SEG = r"(?:[a-z]+|[A-Z][a-z]*|[A-Z]+|\d+)"
_WORDY = re.compile(rf"{_SEG}(?:[-_./]{_SEG})*")


def _placeholder(value: str) -> bool:
    return (
        not _ALNUM.search(value)
        or _PLACEHOLDER.search(value) is not None
        or _PLACEHOLDER_WORD.fullmatch(value) is not None
        or _REFERENCE.match(value) is not None
        or _CONSTANT.fullmatch(value) is not None
    )


def _varied(value: str) -> bool:
    """At least two of lower case, upper case and digits, as random tokens have."""
    classes = (any(c.islower() for c in value), any(c.isupper() for c in value))
    return sum(classes) + any(c.isdigit() for c in value) >= 2


def _random_token(value: str) -> bool:
    return _varied(value) and not _placeholder(value)


def _not_placeholder(value: str) -> bool:
    return not _placeholder(value)


def _flag_value(value: str) -> bool:
    """After ``--password``: a value, not prose ("the --password flag"): it has a digit, a
    capital or a symbol, and is no placeholder."""
    return _not_placeholder(value) and (not value.isalpha() or not value.islower())


def _high_entropy(value: str) -> bool:
    if not _TOKENISH.fullmatch(value) or not _varied(value) or _WORDY.fullmatch(value):
        return False
    n = len(value)
    bits = -sum(c / n * math.log2(c / n) for c in Counter(value).values())
    return bits >= 3.0 and not _placeholder(value)


def _bearer(value: str) -> bool:
    has = (any(c.isdigit() for c in value), any(c.isalpha() for c in value))
    return len(value) >= 12 and all(has) and not _placeholder(value)


def _basic(value: str) -> bool:
    """HTTP Basic credentials are base64 of ``user:password``; prose words do not decode so."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _, colon, password = decoded.partition(":")
    return bool(colon and password and decoded.isprintable()) and _userinfo(password)


def _userinfo(value: str) -> bool:
    """A password in a URL or ``user:pass`` pair: a literal, not a port, uid or placeholder."""
    if value.isdigit():
        return len(value) >= 6
    return not _placeholder(value)


_B = r"(?<![A-Za-z0-9_-])"  # a token starts here: no word character or dash before it
_W = r"(?<![A-Za-z0-9_])"
_U = r"[A-Za-z0-9_-]"  # URL-safe base64
_PATTERNS = (  # (kind, pattern); the value is group "v" if the pattern has one, else the match
    ("anthropic_api_key", _B + r"sk-ant-[a-z]{2,10}\d{2}-" + _U + "{40,}"),
    ("openai_api_key", _B + r"sk-(?:(?:proj|svcacct|admin)-" + _U + "{20,}|[A-Za-z0-9]{32,})"),
    ("aws_access_key_id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    (  # "the prod DB password is Tr0ub4dor&3", "비밀번호는 Abcd1234!": letters and digits, 8+
        "password_prose",
        r"(?i:(?<![\w-])(?:password|passwd|passphrase|비밀번호|패스워드)"
        r"(?:\s+(?:for|of|on|to)\s+[\w.-]+(?:\s+[\w.-]+){0,2}?)?\s*(?:is|was|은|는)\s+"
        r"['\"`]?)(?P<v>(?=[^\s'\"`]*\d)(?=[^\s'\"`]*[A-Za-z])[^\s'\"`,;]{8,})",
    ),
    (
        "aws_secret_access_key",
        r"(?i:aws_?secret(?:_?access)?(?:_?key)?|secret_?access_?key)[\"']?[ \t]{0,8}"
        r"(?:=>|[:=])?[ \t]{0,8}[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    ),
    ("github_token", _W + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})"),
    ("gitlab_token", _B + r"glpat-" + _U + "{20,}"),
    ("slack_token", _B + r"(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[\w/-]{20,})"),
    ("stripe_secret_key", _W + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe_webhook_secret", _W + r"whsec_[A-Za-z0-9+/=]{24,}"),
    ("google_api_key", _B + r"AIza" + _U + "{35}(?!" + _U + ")"),
    ("google_oauth_token", _B + r"ya29\." + _U + "{20,}"),
    ("huggingface_token", _W + r"hf_[A-Za-z0-9]{30,}"),
    ("npm_token", _W + r"npm_[A-Za-z0-9]{36,}"),
    ("pypi_token", _B + r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)" + _U + "{40,}"),
    ("sendgrid_api_key", r"(?<![\w.-])SG\." + _U + r"{16,32}\." + _U + "{16,64}(?!" + _U + ")"),
    ("twilio_api_key", r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])"),
    (
        "azure_storage_key",
        r"(?<![A-Za-z0-9])(?:Account|SharedAccess)Key=(?P<v>[A-Za-z0-9+/=]{20,})",
    ),
    ("azure_sas_signature", _W + r"sig=(?P<v>[A-Za-z0-9%+/=]{20,})"),
    ("telegram_bot_token", r"(?<!\d)\d{8,10}:AA" + _U + "{33}(?!" + _U + ")"),
    (
        "discord_bot_token",
        _B + "[MNO]" + _U + r"{23,27}\." + _U + r"{6,7}\." + _U + "{27,40}(?!" + _U + ")",
    ),
    ("jwt", _B + r"eyJ" + _U + r"{5,}\.eyJ" + _U + r"{5,}\." + _U + "{8,}"),
    (
        "bearer_token",
        r"(?i:(?<![\w-])bearer|authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?token)"
        r"[ \t]{1,8}(?P<v>[\w.~+/-]*[\w~+/-]=*)",
    ),
    ("basic_auth", _B + r"(?i:basic)[ \t]{1,8}(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
    ("cli_password", _B + r"(?:-u|--user)[ \t]{1,8}[\"']?[^\s:\"']{1,64}:(?P<v>[^\s\"']+)"),
    (  # mysql --password hunter2, vault login --token ..., deploy --api-key ...
        "cli_flag_secret",
        _B + r"--(?:password|passwd|token|api-key|apikey|secret|client-secret"
        r"|access-token|auth-token)[ \t]{1,8}[\"']?(?P<v>[^\s\"'-][^\s\"']{3,})",
    ),
    (
        "url_password",
        r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]{0,64}:(?P<v>[^\s/?#\"'<>]{1,256})@",
    ),
)
_CHECKS: dict[str, Callable[[str], bool]] = {  # default: _random_token
    "aws_access_key_id": _not_placeholder,
    "google_api_key": _not_placeholder,
    "twilio_api_key": _not_placeholder,
    "telegram_bot_token": _not_placeholder,
    "jwt": _not_placeholder,
    "password_prose": _not_placeholder,
    "bearer_token": _bearer,
    "basic_auth": _basic,
    "cli_password": _userinfo,  # curl -u user:password
    "cli_flag_secret": _flag_value,
    "url_password": _userinfo,
}
# Priority 0 (the default) is a provider's own shape; 1 a header, URL or command line that can
# carry one; 2 and 3 named assignments (see below). On overlap the lower number wins.
_PRIORITY = dict.fromkeys(
    ("bearer_token", "basic_auth", "cli_password", "cli_flag_secret", "url_password"), 1
)
_RULES = [(kind, re.compile(pattern)) for kind, pattern in _PATTERNS]

# -- named assignments: ``password=...``, ``"api_key": "..."``, ``STRIPE_KEY: ...`` -------------

_ASSIGN = re.compile(
    r"""(?<![A-Za-z0-9_.])["']?
    (?P<name>(?:[A-Za-z_][A-Za-z0-9_.-]{0,39}?)??
      (?:pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?)[A-Za-z0-9_.-]{0,30}
      |비밀번호|패스워드)
    ["']?\]?\*{0,2}[ \t]{0,8}
    (?::[ \t]{0,4}[A-Za-z_][\w.\[\]|]{0,30}(?:[ \t]{0,2}\|[ \t]{0,2}None)?[ \t]{0,4}(?==))?
    (?:=>|[:=]=?)(?![:=])\*{0,2}[ \t]{0,8}
    (?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|`(?P<bt>[^`\n]*)`|\{(?P<cb>[^{}\s"':=,]+)\}
      |["'`]?(?P<uq>[^\s"'`,;&]+))""",
    re.IGNORECASE | re.VERBOSE,
)
_ASSIGNED_KINDS = ("password_assignment", "secret_assignment", "generic_secret")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_GLUED = ("password", "passwd", "passphrase", "secret", "token", "key")
_PASSWORDS = frozenset({"password", "passwd", "pwd", "passphrase"})


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PASS_PREV = _set(
    "db user admin root smtp mail email ftp sftp proxy redis mysql pg ldap bind basic http auth "
    "login vpn wifi"
)
_KEY_PREV = _set(  # NAME_KEY is a credential whatever its value looks like
    "api private secret access signing encryption master account client auth app service admin "
    "root shared storage subscription license webhook session hmac consumer"
)
_NOT_SECRET_PREV = _set(  # sort_key, public_key, max_token, eos_token, next_page_token
    "public pub publishable sort primary foreign cache partition idempotency lookup dedup hash row "
    "routing shard group object i18n translation map dict unique composite natural gpg pgp max "
    "min eos bos pad unk sep cls mask next page continuation pagination sync cancel cancellation "
    "stop start end special"
)
_QUALIFIERS = _set(  # DB_PASSWORD_PROD is still a password
    "prod production dev development staging stage test qa local new old current primary "
    "secondary backup main default value raw plain plaintext"
)
_DESCRIPTORS = _set(  # PASSWORD_MIN_LENGTH, token_count, secret_name describe a secret
    "id ids hash digest sha fingerprint arn url uri endpoint path file filename dir name env var "
    "ref type kind length len count size limit max min ttl expiry expires expiration days prefix "
    "suffix policy rotation format header salt version scope scopes usage budget enabled mode "
    "provider source store vault location region command cmd field label"
)


def _words(name: str) -> list[str]:
    words: list[str] = []
    for word in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()):
        glued = next((n for n in _GLUED if word.endswith(n) and word != n), None)
        words += [word[: -len(glued)], glued] if glued else [word] if word else []
    return words


def _kind_of_name(name: str) -> str | None:
    """The kind a name gives its value, or None when the name does not hold a secret.

    ``password_assignment`` and ``secret_assignment`` names vouch for any literal value;
    ``generic_secret`` names only for random-looking ones.
    """
    words = _words(name) or ["password"]  # 비밀번호, 패스워드
    while len(words) > 1 and (words[-1] in _QUALIFIERS or words[-1].isdigit()):
        words.pop()
    last, prev = words[-1], words[-2] if len(words) > 1 else ""
    if last in _PASSWORDS or (last == "pass" and prev in _PASS_PREV):
        return "password_assignment"
    if last in ("secret", "token", "key", "credential", "credentials"):
        if prev in _NOT_SECRET_PREV:
            return None
        vouches = last in ("secret", "token") or (last == "key" and prev in _KEY_PREV)
        return "secret_assignment" if vouches else "generic_secret"
    if last in _DESCRIPTORS or not any(w in _GLUED or w == "pwd" for w in words):
        return None
    return (
        "generic_secret"  # the noun is followed by an unknown word: API_KEY_VALUE, SECRET_KEY_BASE
    )


def _assignments(text: str) -> Iterator[_Candidate]:
    for m in _ASSIGN.finditer(text):
        name = m["name"]
        kind = _kind_of_name(name)
        group = next(g for g in ("dq", "sq", "bt", "cb", "uq") if m[g] is not None)
        start, end = m.span(group)
        if group == "uq":
            end = start + len(m[group].rstrip(".,:;)]}>"))
        value = text[start:end]
        if kind is None or not value or _MARKER.match(value) or _placeholder(value):
            continue  # (a value that starts with an earlier redaction is that redaction)
        if _placeholder(m[group]):
            continue  # sk-... before trimming the dots
        if re.sub(r"[\W_]", "", value.lower()) == re.sub(r"[\W_]", "", name.lower()):
            continue  # password=password, api_key: {api_key}
        prose = _WORD.fullmatch(value) and (
            _PROSE_AFTER.match(text, end) or text[end : end + 1] == ")"
        )
        if group == "uq" and (_CODE.match(value) or prose):
            continue  # a variable, a call or a word of prose, not a literal
        if value.isdigit():
            ok = kind == "password_assignment" and len(value) >= 6
        else:
            ok = kind != "generic_secret" or _high_entropy(value)
        if ok:
            yield 3 if kind == "generic_secret" else 2, start, end, kind


# -- PEM private keys: the whole block, or to the first blank line when it was cut off ----------

_PEM = re.compile(r"-----(?P<edge>BEGIN|END)[ A-Z0-9]{0,30} PRIVATE KEY(?: BLOCK)?-----")
_PEM_TAIL = re.compile(r"[^\"'\n]*(?:\r?\n[^\"'\n\r]+)*")


def _private_keys(text: str) -> Iterator[_Candidate]:
    opened: re.Match[str] | None = None
    for m in _PEM.finditer(text):
        if opened is not None and m["edge"] == "END":
            yield 0, opened.start(), m.end(), "private_key"
            opened = None
            continue
        if opened is not None:  # a second BEGIN: the first block was cut off
            tail = _PEM_TAIL.match(text, opened.end(), m.start())
            yield 0, opened.start(), tail.end() if tail else opened.end(), "private_key"
        opened = m if m["edge"] == "BEGIN" else None
    if opened is not None:
        tail = _PEM_TAIL.match(text, opened.end())
        yield 0, opened.start(), tail.end() if tail else opened.end(), "private_key"


# -- public API ------------------------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(["private_key", *(kind for kind, _ in _PATTERNS), *_ASSIGNED_KINDS])
)


def _candidates(text: str) -> Iterator[_Candidate]:
    yield from _private_keys(text)
    for kind, pattern in _RULES:
        check, priority = _CHECKS.get(kind, _random_token), _PRIORITY.get(kind, 0)
        group = "v" if "v" in pattern.groupindex else 0
        for m in pattern.finditer(text):
            if check(m[group]):
                yield priority, *m.span(group), kind
    yield from _assignments(text)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every credential in ``text``, sorted and non-overlapping.

    Where finds overlap, the most specific kind wins (a provider token over the bearer header or
    ``api_key=`` assignment that carries it), then the longer span.
    """
    markers = [m.span() for m in _MARKER.finditer(text)]

    def in_marker(pos: int) -> bool:
        i = bisect.bisect_right(markers, (pos, pos)) - 1
        return i >= 0 and markers[i][0] < pos < markers[i][1]

    starts: list[int] = []
    chosen: list[SecretMatch] = []
    for _, start, end, kind in sorted(_candidates(text), key=lambda c: (c[0], c[1] - c[2], c[1])):
        if (
            in_marker(start)
            or in_marker(end)
            or not _ALNUM.search(_MARKER.sub("", text[start:end]))
        ):
            continue  # part of, or only, an earlier redaction
        i = bisect.bisect_right(starts, start)
        if (i and chosen[i - 1].end > start) or (i < len(chosen) and chosen[i].start < end):
            continue
        starts.insert(i, start)
        chosen.insert(i, SecretMatch(kind, start, end))
    return chosen


def redact(text: str) -> tuple[str, list[SecretMatch]]:
    """``text`` with each credential value replaced by ``[REDACTED:<kind>]``, and the finds."""
    matches = find_secrets(text)
    parts: list[str] = []
    pos = 0
    for m in matches:
        parts += [text[pos : m.start], f"[REDACTED:{m.kind}]"]
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), matches


def redact_fields(value: Any) -> Any:
    """``value`` (a log event's fields: strings, dicts, lists) with every string redacted."""
    if isinstance(value, str):
        return _redacted_short(value) if len(value) <= _SHORT else redact(value)[0]
    if isinstance(value, dict):
        return {str(k): redact_fields(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_fields(v) for v in value]
    return value


_SHORT = 128


@functools.lru_cache(maxsize=4096)
def _redacted_short(text: str) -> str:
    """Redaction of a short field: ids, statuses and model names repeat on every event."""
    return redact(text)[0]


def refuse_secrets(text: str, *, what: str = "text") -> None:
    """Raise :class:`SecretInMemoryError` if ``text`` carries a credential.

    The message names kinds and lines only; it never repeats the credential.
    """
    matches = find_secrets(text)
    if not matches:
        return
    found = [f"{m.kind} on line {text.count(chr(10), 0, m.start) + 1}" for m in matches[:5]]
    if len(matches) > 5:
        found.append(f"{len(matches) - 5} more")
    raise SecretInMemoryError(
        f"{what} was not stored: it contains a credential ({', '.join(found)}). Remove the "
        "credential; store where it lives instead, e.g. 'the key is in $OPENAI_API_KEY'."
    )


def contains_secret(text: str) -> bool:
    """Whether ``text`` carries anything :func:`find_secrets` would report."""
    return bool(find_secrets(text))
