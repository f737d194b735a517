"""Credentials recognised by what names them: assignments, prose, user/password pairs, CLIs. Pure.

``password=...``, ``"api_key": "..."``, "the DB password is ...", "비번은 ...", "login is admin /
...", ``curl -u user:...``, ``mysql -p...``: the value is a credential because of the words or
the flag around it, whatever it looks like, unless it is a placeholder or a word of prose. A
plain word of prose counts only where it ends its clause and is no state or field name ("my
password is qwerty", not "... is expired").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from squad.text.secrets._values import (
    CODE,
    HANGUL,
    MARKER,
    NOT_A_PASSWORD,
    PROSE_AFTER,
    WORD,
    B,
    Candidate,
    basic,
    bearer,
    flag_value,
    high_entropy,
    passphrase,
    passphrase_words,
    password_like,
    placeholder,
    plain_password,
    secret_value,
    userinfo,
    word_set,
)

__all__ = ["KINDS", "PASSWORD_WORDS", "SECRET_WORDS", "candidates"]

PASSWORD_WORDS_EN = r"(?:password|passwd|passphrase|passcode|pw)"
PASSWORD_WORDS_KO = r"(?:비밀\s?번호|비번|암호|패스\s?워드)"
PASSWORD_WORDS = rf"(?:{PASSWORD_WORDS_EN}|{PASSWORD_WORDS_KO})"
"""Words that name a password, in English and Korean (``암호`` not in ``암호화``)."""
SECRET_WORDS_EN = (
    r"(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|signing[ _-]?secret"
    r"|(?:access|auth|api|bearer|bot|refresh|session)[ _-]?token|token|secret)"
)
SECRET_WORDS_KO = r"(?:(?:API|api)\s?키|액세스\s?키|시크릿(?:\s?키)?|비밀\s?키|인증\s?키|토큰)"
SECRET_WORDS = rf"(?:{SECRET_WORDS_EN}|{SECRET_WORDS_KO})"
"""Words that name a token or key."""
_NOT_HANGUL = rf"[^\s'\"`,;{HANGUL}]"
_VALUE_START = rf"[^\s'\"`,;:={HANGUL}]"
"""A value's first character: not the ``:`` or ``=`` of an assignment (those are below)."""
_QUALIFIER = r"(?:\s+(?:for|of|on|to|at)\s+[\w.@-]+(?:\s+[\w.@-]+){0,2}?)?"
"""``password for the staging box``: what the credential is for, up to three words."""

# -- headers, URLs and command lines that carry a credential ----------------------------------

_PATTERNS = (  # (kind, pattern); the value is group "v"
    (
        "bearer_token",
        r"(?i:(?<![\w-])bearer|authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?token)"
        r"[ \t]{1,8}(?P<v>[\w.~+/-]*[\w~+/-]=*)",
    ),
    ("basic_auth", B + r"(?i:basic)[ \t]{1,8}(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
    ("cli_password", B + r"(?:-u|--user)[ \t]{1,8}[\"']?[^\s:\"']{1,64}:(?P<v>[^\s\"']+)"),
    (  # sshpass -p hunter2, redis-cli -a hunter2, openssl ... -pass pass:hunter2
        "cli_password",
        r"(?<![\w-])(?:sshpass[ \t]+-p[ \t]*|redis-cli\b[^\n]{0,200}?[ \t]-a[ \t]+"
        r"|-pass(?:in|out)?[ \t]+pass:)[\"']?(?P<v>[^\s\"']{3,})",
    ),
    (  # mysql --password hunter2, vault login --token ..., deploy --api-key ...
        "cli_flag_secret",
        B + r"--(?:password|passwd|pass|pw|passphrase|token|api-key|apikey|secret|client-secret"
        r"|access-token|auth-token)[ \t]{1,8}[\"']?(?P<v>[^\s\"'-][^\s\"']{3,})",
    ),
    (
        "url_password",
        r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]{0,64}:(?P<v>[^\s/?#\"'<>]{1,256})@",
    ),
)
_CHECKS: dict[str, Callable[[str], bool]] = {
    "bearer_token": bearer,
    "basic_auth": basic,
    "cli_password": userinfo,  # curl -u user:password
    "cli_flag_secret": flag_value,
    "url_password": userinfo,
}
_RULES = [(kind, re.compile(pattern)) for kind, pattern in _PATTERNS]

_MYSQL_P = re.compile(  # mysql -u root -pHunter2: the password glued to -p
    r"(?<![\w-])-p(?:'(?P<sq>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<uq>[^\s'\"-][^\s'\"]*))"
)
_MYSQL_CONTEXT = re.compile(r"(?i:\b(?:mysql\w*|mariadb\w*|mycli)\b)")


def _commands(text: str) -> Iterator[Candidate]:
    for kind, pattern in _RULES:
        check = _CHECKS[kind]
        for m in pattern.finditer(text):
            if check(m["v"]):
                yield 1, *m.span("v"), kind
    for m in _MYSQL_P.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not _MYSQL_CONTEXT.search(text, max(line_start, m.start() - 200), m.start()):
            continue  # mkdir -p, docker run -p8080:80
        group = next(g for g in ("sq", "dq", "uq") if m[g] is not None)
        if userinfo(m[group]):
            yield 1, *m.span(group), "cli_password"


# -- prose: "the DB password is ...", "비번은 ...", "the API key is ..." -------------------------

_PROSE_VALUE = rf"""(?:"(?P<dq>[^"\n]{{1,100}})"|'(?P<sq>[^'\n]{{1,100}})'|`(?P<bt>[^`\n]{{1,100}})`
    |(?P<uq>{_VALUE_START}{_NOT_HANGUL}*))"""
# Case is ignored only around words: a case-insensitive Hangul range costs ~5 ms to compile.
_PASSWORD_PROSE = re.compile(
    rf"""(?i:(?<![\w-])(?P<word>{PASSWORD_WORDS_EN}|pwd){_QUALIFIER}
    [ \t]*+(?:(?:is|was|has\ been|will\ be)[ \t]+(?:changed|reset|set|updated)[ \t]+to
      |changed\ to|set\ to|reset\ to|(?:is|was)(?:[ \t]+(?:now|still))?:?|will\ be|would\ be|-|—)
    [ \t]*+)
    {_PROSE_VALUE}""",
    re.VERBOSE,
)
_PASSWORD_ARROW = re.compile(  # "root 암호 바꿈 -> N3wR00t#", "password changed => ..."
    rf"(?<![\w-])(?P<word>(?i:{PASSWORD_WORDS}|pwd))[^\n]{{0,20}}?(?:->|→|=>)[ \t]*+"
    rf"(?P<uq>{_VALUE_START}{_NOT_HANGUL}*)"
)
_PASSWORD_ASKED = re.compile(  # "what's the db password? hunter2x": asked and answered at once
    rf"(?<![\w-])(?P<word>(?i:{PASSWORD_WORDS_EN}|pwd){_QUALIFIER}|(?:{PASSWORD_WORDS_KO})[^\n?]{{0,12}})"
    rf"[?？][ \t]++(?P<uq>{_VALUE_START}{_NOT_HANGUL}*)"
)
_PASSWORD_THEN_VALUE = re.compile(  # "user admin, password hunter2x": no verb, password-shaped
    rf"(?<![\w-])(?P<word>(?i:{PASSWORD_WORDS_EN}))[ \t]++(?P<uq>{_VALUE_START}{_NOT_HANGUL}*)"
)
_PASSWORD_PROSE_KO = re.compile(
    rf"""(?:{PASSWORD_WORDS_KO})(?:은|는|이|가|을|를)?[ \t]*{_PROSE_VALUE}
    (?P<tail>[{HANGUL}]{{0,4}})""",
    re.VERBOSE,
)
_COPULA = word_set(
    "이에요 예요 에요 이에여 입니다 이야 야 이요 요 임 이고 고 이며 며 이라고 라고 이라 라"
)
"""Endings that make an ASCII word the complement: "비번은 qwerty예요" says what it is."""
_DETERMINER = re.compile(  # "my / the wifi / our shared office wifi" before "password"
    r"(?i:(?<![\w-])(?:my|our|your|the|his|her|their|its|this|that|a|an)(?:[ \t]+[\w.-]+){0,3}"
    r"[ \t]+)$"
)
_CLAUSE_END = re.compile(r"[ \t]*+(?:[.,;!()]|$)", re.MULTILINE)
"""What ends a one-word value's clause: the line's end, ``. , ; !`` or a parenthesis."""
_KO_CLAUSE_END = re.compile(
    rf"(?:[ \t]++(?P<tail>[{HANGUL}]{{1,4}}))?[ \t]*+(?:[.,;!)]|$)", re.MULTILINE
)
"""The same in Korean, where a copula may follow apart: "비번은 qwerty 예요"."""
_PASSPHRASE_WORDS = re.compile(  # "the passphrase is correct horse battery staple"
    rf"""(?:(?i:(?<![\w-])passphrase{_QUALIFIER}[ \t]*+(?:(?:is|was)(?:[ \t]+now)?:?|[:=]|-|—))
      |패스\s?프레이즈(?:은|는|이|가)?:?)[ \t]*+
    (?P<v>[A-Za-z0-9]++(?:[ \t]++[A-Za-z0-9]++){{2,}}+)
    (?:[ \t]*+(?P<tail>[{HANGUL}]{{1,4}}))?[ \t]*+(?:[.,;!)]|$)""",
    re.VERBOSE | re.MULTILINE,
)
_SECRET_PROSE = re.compile(
    rf"""(?:(?i:(?<![\w-])(?:{SECRET_WORDS_EN})s?{_QUALIFIER}[ \t]*+(?:is|was|are|were)[ \t]++)
    |(?:{SECRET_WORDS_KO})(?:은|는|이|가)?[ \t]+)['"`]?(?P<uq>{_VALUE_START}{_NOT_HANGUL}*)""",
    re.VERBOSE,
)


def _prose_group(m: re.Match[str]) -> str:
    return next(g for g in ("dq", "sq", "bt", "uq") if m.groupdict().get(g) is not None)


def _plain_word(text: str, m: re.Match[str], korean: bool = False) -> int:
    """The length of a one-word value that ends its clause ("my password is qwerty."), or 0."""
    value = m["uq"].rstrip(".,;:!?)")
    end = _KO_CLAUSE_END if korean else _CLAUSE_END
    after = end.match(text, m.start("uq") + len(value))
    if after is None or (korean and after["tail"] is not None and after["tail"] not in _COPULA):
        return 0
    return len(value) if plain_password(value) else 0


def _determined(text: str, m: re.Match[str]) -> bool:
    """Whether "password" has a possessive or article before it: "the wifi password is"."""
    line_start = text.rfind("\n", 0, m.start("word")) + 1
    start = max(line_start, m.start("word") - 80)
    return _DETERMINER.search(text, start, m.start("word")) is not None


def _prose(text: str) -> Iterator[Candidate]:
    found = (_PASSWORD_PROSE, _PASSWORD_ARROW, _PASSWORD_ASKED, _PASSWORD_THEN_VALUE)
    for m in (m for pattern in found for m in pattern.finditer(text)):
        group = _prose_group(m)
        value = m[group]
        size = len(_trim(value))
        if group != "uq":
            ok = not placeholder(value)
        else:
            shaped = m["word"].lower() == "passphrase" and passphrase(value)
            ok = password_like(value) or shaped or (value.isdigit() and len(value) >= 6)
            if not ok and m.re is _PASSWORD_PROSE and _determined(text, m):
                size = _plain_word(text, m)  # "my password is qwerty", not "... is expired"
                ok = size > 0
        if ok:
            yield 2, m.start(group), m.start(group) + size, "password_prose"
    for m in _PASSPHRASE_WORDS.finditer(text):
        if passphrase_words(m["v"].split()) and (m["tail"] is None or m["tail"] in _COPULA):
            yield 2, *m.span("v"), "password_prose"
    for m in _PASSWORD_PROSE_KO.finditer(text):
        group = _prose_group(m)
        value, tail = m[group], m["tail"]
        size = len(_trim(value))
        if group != "uq" or tail in _COPULA:
            ok = len(value) >= 4 and not placeholder(value)
        else:
            ok = password_like(value) and (not tail or tail in ("로", "으로"))
            if not ok and not tail:
                size = _plain_word(text, m, korean=True)  # "비번은 qwerty", not "비번은 OK"
                ok = size > 0
        if ok:
            yield 2, m.start(group), m.start(group) + size, "password_prose"
    for m in _SECRET_PROSE.finditer(text):
        if secret_value(m["uq"]):
            yield 2, m.start("uq"), m.start("uq") + len(_trim(m["uq"])), "secret_prose"


def _trim(value: str) -> str:
    """A value without the sentence's full stop or comma after it."""
    return value[:-1] if len(value) > 1 and value[-1] in ".,:;)" else value


# -- user / password pairs in prose: "login is admin / ...", "계정은 deploy / ..." -------------

_PAIR = re.compile(
    rf"""(?i:(?:(?<![\w-])(?:log[ -]?in|sign[ -]?in|credentials?|creds|account|user(?:name)?\s*/\s*
      pass(?:word)?|(?P<who>user(?:name)?)|id\s*/\s*pw|wi-?fi|wlan)|계정
      |아이디\s*/\s*(?:{PASSWORD_WORDS_KO})|(?P<id>아이디)
      |로그인(?:\s*정보)?|접속(?:\s*정보)?|와이파이)
    (?:\s+(?:for|on|to|of|at|as)\s+[\w.@-]+)?
    (?:\s*+(?:is|are|was|were|with|as|=|:|은|는|이|가)\s*+|\s++)[:=]?\s*+)
    (?P<user>[A-Za-z][\w.@+-]{{0,63}})(?:\s*+/\s*+|:)['"`]?(?P<v>{_NOT_HANGUL}+)""",
    re.VERBOSE,
)


_PAIR_END = re.compile(rf"[ \t]*+(?:[.,;!)]|$|[{HANGUL}]|\(|(?:for|on|at|to)\b)", re.MULTILINE)
"""After a one-word pair's password: the clause ends, Korean goes on, or what it is for."""


def _pairs(text: str) -> Iterator[Candidate]:
    for m in _PAIR.finditer(text):
        spaced = "/" in text[m.end("user") : m.start("v")] and text[m.start("v") - 1] in " \t"
        if not spaced and (m["who"] or m["id"]):
            continue  # "user: root:x:0:0:...": a bare "user" names a pair only as "a / b"
        value = _trim(m["v"])
        if (value.isdigit() and len(value) >= 6) or password_like(value):
            yield 1, m.start("v"), m.start("v") + len(value), "credential_pair"
            continue
        # "login is admin / sunshine": any one word, spaced apart from a user that is no field
        value = m["v"].rstrip(".,;:!?)")
        user = m["user"].lower()
        if not spaced or user in NOT_A_PASSWORD or placeholder(m["user"]):
            continue
        if plain_password(value) and _PAIR_END.match(text, m.start("v") + len(value)):
            yield 1, m.start("v"), m.start("v") + len(value), "credential_pair"


# -- named assignments: ``password=...``, ``"api_key": "..."``, ``STRIPE_KEY: ...`` -------------

_ASSIGN = re.compile(
    r"""(?<![A-Za-z0-9_.])["']?
    (?P<name>(?:[A-Za-z_][A-Za-z0-9_.-]{0,39}?)??
      (?:pass(?:word|wd|phrase|code)?|pwd|pw|secret|token|key|credentials?)[A-Za-z0-9_.-]{0,30}
      |비밀\s?번호|비번|암호|패스\s?워드|토큰|시크릿)
    ["']?\]?\*{0,2}[ \t]{0,8}
    (?::[ \t]{0,4}[A-Za-z_][\w.\[\]|]{0,30}(?:[ \t]{0,2}\|[ \t]{0,2}None)?[ \t]{0,4}(?==))?
    (?:=>|[:=]=?)(?![:=])\*{0,2}[ \t]{0,8}
    (?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>[^'\n]*)'|`(?P<bt>[^`\n]*)`|\{(?P<cb>[^{}\s"':=,]+)\}
      |["'`]?(?P<uq>[^\s"'`,;&]+))""",
    re.IGNORECASE | re.VERBOSE,
)
_ASSIGNED_KINDS = ("password_assignment", "secret_assignment", "generic_secret")
_WEAK = "weak_password"
"""``pass`` alone (``pass: ...``) is also an everyday word: only password-shaped values count."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_GLUED = ("password", "passwd", "passphrase", "passcode", "secret", "token", "key", "pw")
_PASSWORDS = frozenset({"password", "passwd", "pwd", "pw", "passphrase", "passcode"})
_KOREAN_NAMES = {"토큰": "secret_assignment", "시크릿": "secret_assignment"}


_PASS_PREV = word_set(
    "db user admin root smtp mail email ftp sftp proxy redis mysql pg ldap bind basic http auth "
    "login vpn wifi"
)
_KEY_PREV = word_set(  # NAME_KEY is a credential whatever its value looks like
    "api private secret access signing encryption master account client auth app service admin "
    "root shared storage subscription license webhook session hmac consumer"
)
_NOT_SECRET_PREV = word_set(  # sort_key, public_key, max_token, eos_token, next_page_token
    "public pub publishable sort primary foreign cache partition idempotency lookup dedup hash row "
    "routing shard group object i18n translation map dict unique composite natural gpg pgp max "
    "min eos bos pad unk sep cls mask next page continuation pagination sync cancel cancellation "
    "stop start end special"
)
_QUALIFIERS = word_set(  # DB_PASSWORD_PROD is still a password
    "prod production dev development staging stage test qa local new old current primary "
    "secondary backup main default value raw plain plaintext"
)
_DESCRIPTORS = word_set(  # PASSWORD_MIN_LENGTH, token_count, secret_name describe a secret
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
    ``generic_secret`` names only for random-looking ones; ``pass`` alone for password-shaped.
    """
    if name in _KOREAN_NAMES:
        return _KOREAN_NAMES[name]
    words = _words(name) or ["password"]  # 비밀번호, 비번, 암호, 패스워드
    while len(words) > 1 and (words[-1] in _QUALIFIERS or words[-1].isdigit()):
        words.pop()
    last, prev = words[-1], words[-2] if len(words) > 1 else ""
    if last in _PASSWORDS or (last == "pass" and prev in _PASS_PREV):
        return "password_assignment"
    if last == "pass" and not prev:
        return _WEAK
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


def _assignments(text: str) -> Iterator[Candidate]:
    for m in _ASSIGN.finditer(text):
        name = m["name"]
        kind = _kind_of_name(name)
        group = next(g for g in ("dq", "sq", "bt", "cb", "uq") if m[g] is not None)
        start, end = m.span(group)
        if group == "uq":
            end = start + len(m[group].rstrip(".,:;)]}>"))
        value = text[start:end]
        if kind is None or not value or MARKER.match(value) or placeholder(value):
            continue  # (a value that starts with an earlier redaction is that redaction)
        if placeholder(m[group]):
            continue  # sk-... before trimming the dots
        if re.sub(r"[\W_]", "", value.lower()) == re.sub(r"[\W_]", "", name.lower()):
            continue  # password=password, api_key: {api_key}
        prose = WORD.fullmatch(value) and (
            PROSE_AFTER.match(text, end) or text[end : end + 1] == ")"
        )
        if group == "uq" and (CODE.match(value) or prose):
            continue  # a variable, a call or a word of prose, not a literal
        if kind == _WEAK:
            ok, kind = password_like(value), "password_assignment"
        elif value.isdigit():
            ok = kind == "password_assignment" and len(value) >= 6
        else:
            ok = kind != "generic_secret" or high_entropy(value)
        if ok:
            yield 3 if kind == "generic_secret" else 2, start, end, kind


# -- public to the package ---------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *(kind for kind, _ in _PATTERNS),
            "password_prose",
            "secret_prose",
            "credential_pair",
            *_ASSIGNED_KINDS,
        ]
    )
)


def candidates(text: str) -> Iterator[Candidate]:
    yield from _commands(text)
    yield from _prose(text)
    yield from _pairs(text)
    yield from _assignments(text)
