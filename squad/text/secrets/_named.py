"""Credentials recognised by what names them: assignments, prose, user/password pairs, CLIs. Pure.

``password=...``, ``"api_key": "..."``, "the DB password is ...", "비번은 ...", "login is admin /
...", ``curl -u user:...``, ``mysql -p...``: the value is a credential because of the words or
the flag around it, whatever it looks like, unless it is a placeholder or a word of prose. A
plain word of prose counts only where it ends its clause and is no state or field name ("my
password is qwerty", not "... is expired"). Casual chat ("use hunter2 for the staging box",
"log in as demo with Welcome2026!", "도어락 번호 482213이에요") counts only a password-shaped value
or a PIN named as one, and loses to every other kind over the same span.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import (
    CODE,
    FUNCTION_WORDS,
    HANGUL,
    LOGIN_WORDS_EN,
    LOGIN_WORDS_KO,
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
    identifier,
    passphrase,
    passphrase_words,
    password_like,
    pin_code,
    placeholder,
    plain_password,
    secret_value,
    strong_password,
    userinfo,
    word_set,
    wordish,
)

__all__ = ["KINDS", "PASSWORD_WORDS", "SECRET_WORDS", "candidates", "kind_of_name", "vouches"]

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

_SECRET_FLAG = (
    r"--(?:password|passwd|pass|pw|passphrase|token|api-key|apikey|secret|client-secret"
    r"|access-token|auth-token)"
)
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
        B + _SECRET_FLAG + r"[ \t]{1,8}(?![\"'][^\s\"']+[ \t][^\"'\n]*[\"'])"
        r"[\"']?(?P<v>[^\s\"'-][^\s\"']{3,})",
    ),
    (  # gpg --passphrase 'cereal dragon cushion 759': a quoted value is whole, spaces and all
        "cli_flag_secret",
        B + _SECRET_FLAG + r"[ \t]{1,8}(?P<q>[\"'])(?P<v>[^\s\"'-][^\"'\n]{3,200})(?P=q)",
    ),
    (
        "url_password",
        # a '#' belongs percent-encoded, but people paste it raw: "app:Xv9#pLq2@db:5432"
        r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]{0,64}:(?P<v>[^\s/?\"'<>]{1,256})@",
    ),
    (  # Go's MySQL DSN: "svc:pass@tcp(10.1.2.3:3306)/app"
        "url_password",
        r"(?<![\w./:-])[\w.-]{1,64}:(?P<v>[^\s:/@\"'<>]{1,128})@(?:tcp|unix)\(",
    ),
    (  # htpasswd -b(c) FILE USER PASSWORD: batch mode takes the password as an argument
        "cli_password",
        r"(?<![\w-])htpasswd(?:[ \t]+-[A-Za-z]*b[A-Za-z]*)(?:[ \t]+-[A-Za-z]+)*[ \t]+[^\s-]\S*"
        r"[ \t]+[^\s-]\S*[ \t]+[\"']?(?P<v>[^\s\"']+)",
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


def _commands(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for kind, pattern in _RULES:
        check = _CHECKS[kind]
        for m in scan.finditer(pattern):
            if check(m["v"]):
                yield 1, *m.span("v"), kind
    for m in scan.finditer(_MYSQL_P):
        reach = max(0, m.start() - 200)  # only as far back as "mysql" is looked for
        line_start = text.rfind("\n", reach, m.start()) + 1
        if not _MYSQL_CONTEXT.search(text, max(line_start, reach), m.start()):
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
      |changed\ to|set\ to|reset\ to|(?:is|was)(?:[ \t]+(?:now|still|literally|just|simply))?:?
      |will\ be|would\ be|-|—)
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
    (?:[ \t]*+(?P<tail>[{HANGUL}]{{1,4}}))?[ \t]*+(?:[.,;!()]|$)""",
    re.VERBOSE | re.MULTILINE,
)
_SECRET_PROSE = re.compile(
    rf"""(?:(?i:(?<![\w-])(?:{SECRET_WORDS_EN})s?{_QUALIFIER}[ \t]*+(?:is|was|are|were)[ \t]++)
    |(?:{SECRET_WORDS_KO})[ \t]?(?:은|는|이|가)?[ \t]+)['"`]?
    (?P<uq>{_VALUE_START}{_NOT_HANGUL}*)""",
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
    reach = max(0, m.start("word") - 80)  # only as far back as the determiner is looked for
    line_start = text.rfind("\n", reach, m.start("word")) + 1
    start = max(line_start, reach)
    return _DETERMINER.search(text, start, m.start("word")) is not None


def _prose(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    found = (_PASSWORD_PROSE, _PASSWORD_ARROW, _PASSWORD_ASKED, _PASSWORD_THEN_VALUE)
    for m in (m for pattern in found for m in scan.finditer(pattern)):
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
    for m in scan.finditer(_PASSPHRASE_WORDS):
        if passphrase_words(m["v"].split()) and (m["tail"] is None or m["tail"] in _COPULA):
            yield 2, *m.span("v"), "password_prose"
    for m in scan.finditer(_PASSWORD_PROSE_KO):
        group = _prose_group(m)
        value, tail = m[group], m["tail"]
        size = len(_trim(value))
        if group != "uq" or tail in _COPULA:
            ok = len(value) >= 4 and not placeholder(value)
        else:
            shaped = password_like(value) or (value.isdigit() and len(value) >= 6)
            ok = shaped and (not tail or tail in ("로", "으로"))
            if not ok and not tail:
                size = _plain_word(text, m, korean=True)  # "비번은 qwerty", not "비번은 OK"
                ok = size > 0
        if ok:
            yield 2, m.start(group), m.start(group) + size, "password_prose"
    for m in scan.finditer(_SECRET_PROSE):
        if secret_value(m["uq"]) or _quoted_secret(text, m):
            yield 2, m.start("uq"), m.start("uq") + len(_trim(m["uq"])), "secret_prose"


def _quoted_secret(text: str, m: re.Match[str]) -> bool:
    """A quoted single token after a secret's name ("the shared secret is 'north-star-blue'"):
    8+ characters with a digit, a joiner or mixed case, not "the secret is 'consistency'"."""
    start, value = m.start("uq"), m["uq"]
    quote = text[start - 1 : start]
    if quote not in ("'", '"', "`") or text[start + len(value) : start + len(value) + 1] != quote:
        return False
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    shaped = any(c.isdigit() or c in "-_" for c in value) or mixed
    words = {w.lower() for w in re.split(r"[-_]", value)}
    return len(value) >= 8 and shaped and not words & FUNCTION_WORDS and not placeholder(value)


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


def _pairs(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for m in scan.finditer(_PAIR):
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
    "login vpn wifi become sudo"
)
_KEY_PREV = word_set(  # NAME_KEY is a credential whatever its value looks like
    "api private secret access signing encryption master account client auth app service admin "
    "root shared storage subscription license webhook session hmac consumer"
)
_NOT_SECRET_PREV = word_set(  # sort_key, public_key, max_token, eos_token, next_page_token
    "public pub publishable sort primary foreign cache partition idempotency lookup dedup hash row "
    "routing shard group object i18n translation map dict unique composite natural gpg pgp max "
    "min eos bos pad unk sep cls mask next page continuation pagination sync cancel cancellation "
    "stop start end special existing"
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


def kind_of_name(name: str) -> str | None:
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


def vouches(kind: str, value: str) -> bool:
    """Whether a name of ``kind`` (:func:`kind_of_name`) makes the literal ``value`` a credential:
    any value for a password or secret name, but digits only from six and only for a password;
    a random-looking one for a generic name; a password-shaped one for ``pass`` alone."""
    if kind == _WEAK:
        return password_like(value)
    if value.isdigit():
        return kind == "password_assignment" and len(value) >= 6
    return kind != "generic_secret" or high_entropy(value)


def _assignments(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for m in scan.finditer(_ASSIGN):
        name = m["name"]
        kind = kind_of_name(name)
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
        if vouches(kind, value):
            kind = "password_assignment" if kind == _WEAK else kind
            yield 3 if kind == "generic_secret" else 2, start, end, kind


# -- casual prose: the value somewhere after its name, or named by what it opens -----------------
# Each of these needs a value shaped like a password (:func:`strong_password`) or, for a PIN, a
# code of digits named as one: the words around it name no field, so a plain word never counts.

_QUOTED_OR_BARE = rf"""(?:"(?P<dq>[^"\s]{{4,100}})"|'(?P<sq>[^'\s]{{4,100}})'
    |`(?P<bt>[^`\s]{{4,100}})`|(?P<uq>{_VALUE_START}{_NOT_HANGUL}*))"""
_LATER_WORD = re.compile(rf"(?<![\w-])(?:(?i:{PASSWORD_WORDS_EN}|pwd)|{PASSWORD_WORDS_KO})")
_LATER_WINDOW = 80
_LATER_VALUE = re.compile(  # "password for that box: the usual, Winter2024!", "pw ..., still X"
    rf"""(?=(?:[:,](?=[ \t])|(?i:(?<![\w'])(?:is|was|still|now|it'?s|its|use|try|one)(?![\w']))
      |→|->|=>|(?<![{HANGUL}])(?:이제|지금은|현재는|새\ ?(?:거|것)(?:은|는)|새로)(?![{HANGUL}]))
    [ \t]*+{_QUOTED_OR_BARE})""",
    re.VERBOSE,
)
_NAMED_QUOTED = re.compile(  # "use the password 'tigerlily' when it prompts"
    r"""[ \t]+(?:"(?P<dq>[^"\s]{4,100})"|'(?P<sq>[^'\s]{4,100})'|`(?P<bt>[^`\s]{4,100})`)"""
)
_NAMED_PARENTHESES = re.compile(r"[ \t]*+\((?P<uq>[^\s()]{6,100})\)")  # "비번(Marlin!88)은"
_KO_LATER_VALUE = re.compile(  # "비번 오늘 아침에 Tempest#42로 초기화했어요"
    rf"(?<!\S)(?P<uq>{_VALUE_START}{_NOT_HANGUL}*+)(?=[ \t]*+(?:으로|로)[ \t]*+"
    r"(?:초기화|바꿨|바꿔|변경|설정|리셋|재설정)|(?:예요|이에요|에요|입니다|이야)(?![\w]))"
)
_ASKED_ITS = re.compile(  # "oh the password? it's Pa55word_staging"
    rf"""[?？][ \t]*+(?i:it'?s|it\ is|that'?s|use|try)[ \t]+{_QUOTED_OR_BARE}""", re.VERBOSE
)
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)|\n")
_USE_VALUE = re.compile(  # "use hunter2 for the staging box", "try Qwerty!23 on the admin account"
    rf"""(?i:(?<![\w-])(?:use|try|enter|type|it'?s)[ \t]+)['"`]?
    (?P<uq>{_VALUE_START}{_NOT_HANGUL}*+)['"`]?
    [ \t]+(?i:(?:for|on|to|at|with|when|as|if)\b)[^\n.!?]{{0,40}}?
    (?i:\b(?:box|server|host|machine|vm|instance|account|login|router|wi-?fi|network|vpn|admin
      |root|db|database|tenant|portal|console|prompt|user|nas|laptop|sudo|ssh|jump\ ?host
      |bastion|dashboard|panel|site|staging|prod)s?\b)""",
    re.VERBOSE,
)
_VALUE_TO_ENTER = (
    re.compile(  # "젠킨스 박스는 sunflower88 로 로그인하세요", "hunter2로 들어가시면 돼요"
        rf"(?<![^\s'\"`])(?P<uq>{_VALUE_START}{_NOT_HANGUL}*+)[ \t]*+(?:으로|로)[ \t]*"
        r"(?:로그인|들어가|들어오|접속|접근|인증|잠금\s?해제|풀)"
    )
)
_LOGIN_AS = re.compile(  # "log in as demo@acme.io with Welcome2026!", "login as root with toor123"
    rf"""(?i:(?<![\w-])(?:log(?:ged)?[ -]?in(?:to)?|sign(?:ed)?[ -]?in|ssh(?:[ \t]+in)?|connect)
      [ \t]+(?:as|with)[ \t]+)(?P<user>[\w.@+-]{{1,64}})
    (?i:[ \t]*,[ \t]*|[ \t]+(?:with|using|and|pw|password|pass)[ \t]+)
    (?i:(?:pw|pass(?:word)?)[ \t]+)?{_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_CREDS_AND = re.compile(  # "creds are bob and Bobby#2024", "account: root, pw Tr0ub4dor"
    rf"""(?i:(?<![\w-])(?:creds?|credentials|log[ -]?in|account)[ \t]*+(?:is|are|:|=)?[ \t]*+)
    (?P<user>[\w.@+-]{{1,64}})(?i:[ \t]*,[ \t]*|[ \t]+(?:and|with)[ \t]+)
    (?i:(?:pw|pwd|pass(?:word)?)[ \t]*(?:is|:|=)?[ \t]*)?{_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_PASS_IS = re.compile(  # "the pass is dolphin77": "pass" alone is a password with an article
    rf"""(?i:(?<![\w-])(?:the|my|our|your|its|their|his|her)[ \t]+(?:[\w-]+[ \t]+){{0,2}}pass
      [ \t]+(?:is|was|=|:)[ \t]*+){_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_NETWORK_KEY = (
    re.compile(  # "guest wifi is Acme-Guest and the key is bluebird2020", "ssid X, pass Y"
        rf"""(?i:(?<![\w-])(?:wi-?fi|wlan|ssid|wpa2?|router|hotspot|network)\b[^\n.!?]{{0,60}}?
      (?<![\w-])(?:key|pass|pw|code)[ \t]*+(?:is|was|:|=)?[ \t]*+){_QUOTED_OR_BARE}""",
        re.VERBOSE,
    )
)
_VALUE_AS_PASSWORD = re.compile(  # "the jump host takes tangerine42 as the password"
    rf"""(?<![^\s'"`])['"`]?(?P<uq>{_VALUE_START}{_NOT_HANGUL}*+)['"`]?[ \t]+(?i:as|for|is)[ \t]+
    (?i:the|my|our|your|its|a|an)[ \t]+(?:[\w-]+[ \t]+){{0,2}}
    (?i:{PASSWORD_WORDS_EN}|pwd|passcode)\b""",
    re.VERBOSE,
)
_PAIR_STILL = re.compile(  # "the router login is still admin / admin123"
    rf"""(?i:(?<![\w-])(?:log[ -]?in|account|creds?|credentials)[ \t]+(?:is|are|was|were)[ \t]+
      (?:still|now|just|always)[ \t]+)(?P<user>[\w.@+-]{{1,64}})[ \t]*+/[ \t]*+{_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_USER_THEN_PASS = re.compile(  # "staging creds: user seed, pass Seedling2024!"
    rf"""(?i:(?<![\w-])(?:user(?:name)?|login|creds?|credentials|account|ssid|id)\b)[^\n]{{1,60}}?
    (?i:(?<![\w-])(?:pass|pw|pwd)[ \t]*+[:=]?[ \t]*+){_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_PAIR_STILL_KO = re.compile(  # "공유기 로그인은 아직도 admin / admin123이에요"
    rf"""(?:로그인|계정|접속)(?:[ \t]*정보)?[ \t]*(?:은|는|이|가)[ \t]+
    (?:아직도|아직|여전히|지금도|지금은|이제|그냥|계속)[ \t]+
    (?P<user>[A-Za-z][\w.@+-]{{0,63}})[ \t]*+/[ \t]*+{_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_SPACED_PAIR = re.compile(  # "ssh to the box with ops / Gr4nite!Peak", "mailer@acme.io / Qu1ckSend"
    rf"(?<![\w/@.+-])(?P<user>[A-Za-z][\w.@+-]{{0,63}})[ \t]+/[ \t]+{_QUOTED_OR_BARE}"
)
"""A spaced ``user / password`` pair with no login word: only a strongly shaped password
(:func:`_unnamed_pair_password`), since ``TCP / UDP`` and ``iOS / Android12`` are pairs too;
any password-shaped one when a login word came shortly before, on this line or the one above
("what's the login for figma?\nnvm found it, design@studio.io / Pixel-Perfect-22")."""
_LOGIN_BEFORE = re.compile(rf"(?i:(?<![\w-])(?:{LOGIN_WORDS_EN})(?![\w-]))|{LOGIN_WORDS_KO}")
_LOGIN_REACH = 120
_CODE_IS_KO = re.compile(  # "볼트 언실 코드는 7Hq2-Lm9X-4Rt8이에요", "복구 키: ..."
    rf"""(?:언실|복구|백업|마스터|활성화|라이선스|라이센스|등록|초대|일회용|(?i:otp|2fa|mfa))
    [ \t]?(?:코드|키)[ \t]*+(?:은|는|이|가|:|=)?[ \t]*+{_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_KEY_VALUE = re.compile(  # "just use the key abcd1234EFGH5678ijkl", "공용 키 abcd1234EFGH5678ijkl"
    r"""(?:(?<![\w-])(?P<prev>[\w-]+)[ \t]+)?(?<![\w-])(?i:key|키)[ \t]*+(?:은|는|:)?[ \t]*+
    ['"`]?(?P<uq>[A-Za-z0-9_-]{16,})(?![\w-])""",
    re.VERBOSE,
)
"""A random token right after the word "key" with no name before it: not hex or a UUID (a
commit, a digest, a row's id), not camel-cased words (``customerIdAndRegion2024``) and not after
``sort``, ``primary``, ``public``..."""
_HEXISH = re.compile(r"[0-9a-f-]+|[0-9A-F-]+")


def _unnamed_pair_password(value: str) -> bool:
    """A pair's password with no login word to vouch for it: 8+ characters shaped like a
    password with a symbol inside, or upper case, lower case and a digit not only at its end,
    not mostly words (``Release2024Q1``)."""
    if len(value) < 8 or not strong_password(value):
        return False
    if any(not c.isalnum() and c not in "-_./" for c in value[1:-1]):
        return True
    inner_digit = any(c.isdigit() for c in value.rstrip("0123456789"))
    cases = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return inner_digit and cases and not wordish(value)


_CODE_IS = re.compile(  # "the vault unseal code is 7Hq2-Lm9X-4Rt8", "recovery key: ..."
    rf"""(?i:(?<![\w-])(?:unseal|recovery|backup|master|activation|licen[cs]e|registration|invite
      |2fa|mfa|otp|one-time|root)[ \t-]?(?:code|key)s?[ \t]*+(?:is|was|:|=)[ \t]*+)
    {_QUOTED_OR_BARE}""",
    re.VERBOSE,
)
_TYPE_VALUE = re.compile(  # "잠금 화면에서 Maple#771 치시면 돼요", "Pl4nkton77 넣고 로그인"
    rf"(?<![^\s'\"`])['\"`]?(?P<uq>{_VALUE_START}{_NOT_HANGUL}*+)['\"`]?[ \t]*+(?:을|를)?[ \t]*+"
    r"(?:치시|치면|치세요|쳐|입력하|입력해|넣고|넣으|넣어)"
)
_PIN = re.compile(  # "the alarm pin is 904412", "door code: 4471", "도어락 번호 482213이에요"
    rf"""(?:(?i:(?<![\w-])(?:pin(?:[ \t]?code|[ \t]?number)?|(?:door|alarm|gate|lock|unlock|entry
      |keypad|safe|garage)[ \t]?(?:code|pin)|passcode){_QUALIFIER}[ \t]*+(?:is|was|:|=|-)[ \t]*+)
      |(?:핀[ \t]?번호|PIN(?:[ \t]?번호)?|도어락(?:[ \t]?(?:번호|비번|비밀번호))?
        |현관(?:문)?[ \t]?(?:비번|번호)|출입[ \t]?(?:코드|번호)|잠금[ \t]?(?:번호|코드))
      [ \t]*+(?:은|는|이|가)?[ \t]*+:?[ \t]*+)
    (?P<uq>\d{{4,8}})(?![\d.:,]\d|\d)""",
    re.VERBOSE,
)
_VALUE_THEN_NAME = re.compile(  # "3hd8Fk2LqZ9xWm4TyB7c, that's the api key for sandbox"
    rf"""(?<![\w-])(?P<uq>[A-Za-z0-9_-]{{16,}}+)[,;]?[ \t]+(?:(?i:that'?s|this\ is|it'?s|is|was)
      [ \t]+(?i:the|my|our|your|an?)[ \t]+(?:[\w-]+[ \t]+){{0,2}}(?i:{SECRET_WORDS_EN})
      |(?:이게|이건|이거|가|이)?[ \t]*(?:{SECRET_WORDS_KO})(?:예요|이에요|입니다|야|임))""",
    re.VERBOSE,
)


_CASUAL = 4
HANGUL_RE = re.compile(f"[{HANGUL}]")
_STRUCTURE = re.compile(r"[=:\[\]{}<>()]")
"""A casual find loses to every other kind over the same span: those name the value better."""


def _casual_value(m: re.Match[str]) -> tuple[int, int] | None:
    """The span of a casual finder's value when it is shaped like a password, else None."""
    group = _prose_group(m)
    value = m[group]
    if group == "uq":
        value = _trim(value.rstrip(".,;:?)"))  # a password may end with "!"
        if not strong_password(value) or _STRUCTURE.search(value):
            return None  # ENC[AES256_GCM,data:...], key=value, call(...): data, not a password
    elif placeholder(value) or not (strong_password(value) or len(value) >= 8):
        return None
    return m.start(group), m.start(group) + len(value)


def _casual(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for word in scan.finditer(_LATER_WORD):
        quoted = _NAMED_QUOTED.match(text, word.end())
        if quoted is not None and not placeholder(quoted[_prose_group(quoted)]):
            yield _CASUAL, *quoted.span(_prose_group(quoted)), "password_prose"
        asked = _ASKED_ITS.match(text, word.end())
        if asked is not None and (span := _casual_value(asked)) is not None:
            yield _CASUAL, *span, "password_prose"
        parenthesised = _NAMED_PARENTHESES.match(text, word.end())
        if parenthesised is not None and (span := _casual_value(parenthesised)) is not None:
            yield _CASUAL, *span, "password_prose"
        end = _SENTENCE_END.search(text, word.end(), word.end() + _LATER_WINDOW)
        stop = end.start() + 1 if end else min(len(text), word.end() + _LATER_WINDOW)
        later = [_LATER_VALUE] + ([_KO_LATER_VALUE] if HANGUL_RE.match(word[0]) else [])
        for m in (m for pattern in later for m in pattern.finditer(text, word.end(), stop)):
            span = _casual_value(m)
            if span is not None:
                yield _CASUAL, *span, "password_prose"
    casual = (_USE_VALUE, _VALUE_TO_ENTER, _PASS_IS, _NETWORK_KEY, _VALUE_AS_PASSWORD, _CODE_IS)
    for pattern in (*casual, _CODE_IS_KO, _TYPE_VALUE, _USER_THEN_PASS):
        for m in scan.finditer(pattern):
            span = _casual_value(m)
            if span is not None:
                yield _CASUAL, *span, "password_prose"
    for pattern in (_LOGIN_AS, _CREDS_AND, _PAIR_STILL, _PAIR_STILL_KO):
        for m in scan.finditer(pattern):
            span = _casual_value(m)
            if span is not None and not placeholder(m["user"]):
                yield _CASUAL, *span, "credential_pair"
    for m in scan.finditer(_SPACED_PAIR):
        span = _casual_value(m)
        user = m["user"].lower()
        if span is None or user in NOT_A_PASSWORD or placeholder(m["user"]):
            continue
        value = text[span[0] : span[1]]
        asked = _LOGIN_BEFORE.search(text, max(0, m.start() - _LOGIN_REACH), m.start())
        if _unnamed_pair_password(value) or (asked and password_like(value)):
            yield _CASUAL, *span, "credential_pair"
    for m in scan.finditer(_KEY_VALUE):
        value, prev = m["uq"], (m["prev"] or "").lower()
        if prev in _NOT_SECRET_PREV or _HEXISH.fullmatch(value) or identifier(value):
            continue
        if high_entropy(value):
            yield _CASUAL, *m.span("uq"), "secret_prose"
    for m in scan.finditer(_PIN):
        if pin_code(m["uq"]):
            yield _CASUAL, *m.span("uq"), "password_prose"
    for m in scan.finditer(_VALUE_THEN_NAME):
        if high_entropy(m["uq"]) or secret_value(m["uq"]):
            yield _CASUAL, *m.span("uq"), "secret_prose"


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


RULES = Rules(
    *(p for _, p in _RULES),
    _MYSQL_P,
    _PASSWORD_PROSE,
    _PASSWORD_ARROW,
    _PASSWORD_ASKED,
    _PASSWORD_THEN_VALUE,
    _PASSPHRASE_WORDS,
    _PASSWORD_PROSE_KO,
    _SECRET_PROSE,
    _PAIR,
    _LATER_WORD,
    _USE_VALUE,
    _VALUE_TO_ENTER,
    _PASS_IS,
    _NETWORK_KEY,
    _VALUE_AS_PASSWORD,
    _CODE_IS,
    _CODE_IS_KO,
    _TYPE_VALUE,
    _USER_THEN_PASS,
    _LOGIN_AS,
    _CREDS_AND,
    _PAIR_STILL,
    _PAIR_STILL_KO,
    _SPACED_PAIR,
    _KEY_VALUE,
    _PIN,
    _VALUE_THEN_NAME,
    _ASSIGN,
)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` names; ``scan`` is ``text``'s :class:`Scan` when the caller
    shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return  # no pattern here can match: most messages
    yield from _commands(scan)
    yield from _prose(scan)
    yield from _pairs(scan)
    yield from _casual(scan)
    yield from _assignments(scan)
