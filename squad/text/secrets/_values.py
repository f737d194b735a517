"""Judgments on one candidate value: a literal or a placeholder, random or words. Pure.

Every finder of the package proposes a span; these say whether the text in it is a credential
rather than a variable, a reference, a word of prose or an identifier.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

Candidate = tuple[int, int, int, str]
"""``(priority, start, end, kind)``: on overlap the lower priority wins, then the longer span."""
BY_CONTEXT = 5
"""The priority of a value known only by its context or layout: it loses to every other kind
over the same span, since those name the value better."""

HANGUL = "\uac00-\ud7a3"
"""Hangul syllables, for character classes: a Korean particle ends an ASCII value."""
B = r"(?<![A-Za-z0-9_-])"
"""A token starts here: no word character or dash before it."""
W = r"(?<![A-Za-z0-9_])"
U = r"[A-Za-z0-9_-]"
"""URL-safe base64."""

ALNUM = re.compile(r"[^\W_]")  # a letter or digit of any script
MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
LOGIN_WORDS_EN = r"log[ -]?in|creds?|credentials|account|sign[ -]?in"
LOGIN_WORDS_KO = r"계정|로그인|접속\s?정보"
"""Words that announce an account's user and password (case-insensitive in English)."""
_PASSWORD_MANAGERS = r"1password|bitwarden|lastpass|keepass(?:xc)?|dashlane"
_PASSWORD_MANAGER = re.compile(_PASSWORD_MANAGERS, re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"example|placeholder|change[_-]?me|redacted|dummy|x{6,}|^x{3,}(?:[-_. ]x{3,})+$|\*\*\*"
    r"|\.\.\.|…|^your[_-]|[_-]here$|^\*\*|sensitive|^\[[A-Za-z][A-Za-z _-]*\]$"  # "[PROTECTED]"
    r"|입력$|입력하세요|^여기에|^발급받은"  # "여기에_입력", "발급받은_키_입력"
    rf"|^(.)\1*$|{_PASSWORD_MANAGERS}|^vault:",  # where it lives is not a secret
    re.IGNORECASE,
)
_PLACEHOLDER_WORD = re.compile(
    r"none|null|nil|true|false|yes|no|on|off|undefined|empty|unset|required|optional|str|string"
    r"|passphrase|passcode|pwd|pw"
    r"|bytes|int|bool|boolean|secretstr|password|passwd|secret|token|key|apikey|api_key"
    r"|credentials?|hidden|masked|todo|tbd|n/?a|default",
    re.IGNORECASE,
)
_REFERENCE = re.compile(  # matched at the start of a value
    r"\$[A-Za-z_{(]|%[A-Za-z_(]|[{<]|#\{|![A-Za-z_]+$|(?:~|\.\.?)/|[A-Za-z]:\\"
    r"|/(?:etc|home|run|var|usr|opt|tmp|root|srv|mnt|Users|secrets|data|app|workspace)/"
    r"|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-"
    r"|\$(?:2[abxy]?|5|6|y|argon2(?:id|i|d)|scrypt|pbkdf2[\w-]*)\$"  # a password's hash
)
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
WORD = re.compile(r"[^\W\d]+")  # letters of any script
PROSE_AFTER = re.compile(r"[ \t]+[^\s#]")
_TOKENISH = re.compile(r"[A-Za-z0-9+/=_.~-]{16,}")
_SEG = r"(?:[a-z]+|[A-Z][a-z]*|[A-Z]+|\d+)"
WORDY = re.compile(rf"{_SEG}(?:[-_./]{_SEG})*")
"""Words and numbers joined by ``-_./``: ``task-management-2024``, ``app.kubernetes.io``."""
_LOWER_WORDS = re.compile(r"[a-z]+(?:[-_.][a-z]+)*")
_ALGORITHM = re.compile(
    r"sha-?(?:1|2|3|224|256|384|512)?|md5|bcrypt|scrypt|argon2(?:id|i|d)?|pbkdf2(?:-sha\d+)?"
    r"|aes(?:-?\d+(?:-?[a-z]+)?)?|rsa(?:-?\d+)?|hmac(?:-?sha\d+)?|utf-?8|base64|ascii|hex"
    r"|v?\d+(?:\.\d+)+",
    re.IGNORECASE,
)
_VALUE_PUNCTUATION = ".,;:!?"
_HEX_COLOUR = re.compile(r"#(?:[0-9a-fA-F]{3,4}){1,2}")
ADDRESS = re.compile(r"(?:[\w.+-]+@)?(?:[\w-]+\.)+[A-Za-z]{2,}(?:/\S*)?")
"""An e-mail address, a host or a URL without its scheme: ``bob@acme.dev``, ``acme.dev/x``."""


def word_set(words: str) -> frozenset[str]:
    """The space-separated words of ``words``."""
    return frozenset(words.split())


REPLIES = word_set(
    "yes no nope yep yeah sure ok okay idk dunno later why what how none skip wait hmm thanks "
    "thx sorry nothing unknown forgot forgotten same 몰라 몰라요 모름 모르겠어요 없어 없어요 "
    "없음 나중에 잠깐 글쎄 글쎄요 네 아니 아니요 아뇨 응"
)
"""One-word replies to a question: never the credential it asked for."""


def password_manager(value: str) -> bool:
    """``1Password``, ``Bitwarden``...: where a password lives, never the password."""
    return _PASSWORD_MANAGER.fullmatch(value) is not None


def placeholder(value: str) -> bool:
    return (
        not ALNUM.search(value)
        or _PLACEHOLDER.search(value) is not None
        or _PLACEHOLDER_WORD.fullmatch(value) is not None
        or _REFERENCE.match(value) is not None
        or _CONSTANT.fullmatch(value) is not None
    )


def varied(value: str) -> bool:
    """At least two of lower case, upper case and digits, as random tokens have."""
    classes = (any(c.islower() for c in value), any(c.isupper() for c in value))
    return sum(classes) + any(c.isdigit() for c in value) >= 2


def random_token(value: str) -> bool:
    return varied(value) and not placeholder(value)


def not_placeholder(value: str) -> bool:
    return not placeholder(value)


def flag_value(value: str) -> bool:
    """After ``--password``: a value, not prose ("the --password flag"): it has a digit, a
    capital or a symbol besides its spaces (a quoted passphrase), and is no placeholder."""
    compact = value.replace(" ", "")
    return not_placeholder(value) and (not compact.isalpha() or not compact.islower())


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def high_entropy(value: str) -> bool:
    if not _TOKENISH.fullmatch(value) or not varied(value) or WORDY.fullmatch(value):
        return False
    return entropy(value) >= 3.0 and not placeholder(value)


def bearer(value: str) -> bool:
    has = (any(c.isdigit() for c in value), any(c.isalpha() for c in value))
    return len(value) >= 12 and all(has) and not placeholder(value)


def basic(value: str) -> bool:
    """HTTP Basic credentials are base64 of ``user:password``; prose words do not decode so."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _, colon, password = decoded.partition(":")
    return bool(colon and password and decoded.isprintable()) and userinfo(password)


def userinfo(value: str) -> bool:
    """A password in a URL or ``user:pass`` pair: a literal, not a port, uid or placeholder."""
    if value.isdigit():
        return len(value) >= 6
    return not placeholder(value)


def password_like(value: str) -> bool:
    """Shaped like a password where a bare word would more often be prose ("the password is
    wrong"): 6+ characters, a letter, and a digit or a symbol inside other than ``-_./``; not
    lower-case words and numbers joined by ``-_./``, an algorithm, a version, a path, an
    e-mail address or a colour (``#e11d48``)."""
    core = value.rstrip(_VALUE_PUNCTUATION)
    if len(core) < 6 or placeholder(core) or core[0] in "/~." or ADDRESS.fullmatch(core):
        return False
    if _HEX_COLOUR.fullmatch(core):
        return False
    if not any(c.isalpha() for c in core) or _ALGORITHM.fullmatch(core):
        return False
    parts = re.split(r"[-_./]", core)
    if all(_ALGORITHM.fullmatch(p) or p.isdigit() or (p.isalpha() and p.islower()) for p in parts):
        return False  # sha256-hashed, task-management-2024, case-sensitive
    symbol = any(not c.isalnum() and c not in "-_./" for c in core[1:-1])
    return symbol or any(c.isdigit() for c in core)


def passphrase(value: str) -> bool:
    """Three or more words joined by ``-_.`` (``tangerine-dream-1974``), after "passphrase"."""
    core = value.rstrip(_VALUE_PUNCTUATION)
    return len(core) >= 12 and len(re.split(r"[-_.]", core)) >= 3 and not placeholder(core)


def secret_value(value: str) -> bool:
    """A token named in prose ("the API key is ..."): 12+ characters, letters and digits, not
    words joined by ``-_./``."""
    core = value.rstrip(_VALUE_PUNCTUATION)
    return bearer(core) and varied(core) and not WORDY.fullmatch(core)


def lower_words(value: str) -> bool:
    """Lower-case words joined by ``-_.``: ``your-token-here``, not a random body."""
    return _LOWER_WORDS.fullmatch(value) is not None


def bare_reply(value: str) -> bool:
    """A one-word reply that can be the credential a message before asked for or announced."""
    core = value.rstrip(_VALUE_PUNCTUATION)
    return len(core) >= 4 and core.lower() not in REPLIES and not placeholder(core)


def wordish(value: str) -> bool:
    """Mostly words (``Users/Me/Projects/Acme2024``, ``AbstractProxyFactoryBean``): its runs of
    letters and digits average three or more characters, where random text averages under two."""
    segments = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", value)
    return bool(segments) and sum(map(len, segments)) / len(segments) >= 3.0


_STATES = word_set(  # "the password is expired / wrong / correct"
    "expired expiring wrong incorrect correct right invalid valid weak strong required needed "
    "mandatory optional empty blank missing set reset unset changed same different new old long "
    "short simple complex secure insecure safe unsafe temporary temp permanent unknown known "
    "forgotten lost locked unlocked rejected accepted visible invisible hidden shown stored saved "
    "encrypted hashed salted encoded ok okay fine good bad great terrible awful working broken "
    "case sensitive insensitive active inactive disabled enabled revoked rotated compromised "
    "leaked exposed stolen pwned public private secret shared personal unique random generated "
    "default common obvious easy hard difficult guessable predictable memorable weird fake real "
    "gone done ready pending due sent attached below above here there elsewhere somewhere inside "
    "included enclosed pinned listed written printed masked obscured plaintext cleartext "
    "readable unreadable useless irrelevant important unchanged identical similar longer shorter "
    "stronger weaker better worse safer easier harder fixed outdated obsolete stale current "
    "unavailable available taken given chosen spoken mine yours hers theirs ours ancient fancy "
    "horrible lame cute clever silly stupid dumb crazy tricky nice cool solid ugly sketchy legit "
    "overkill unusual excellent perfect awesome special generic standard basic typical global "
    "local strict fresh rubbish garbage trash junk today tomorrow yesterday daily weekly monthly "
    "quarterly yearly annually soon"
)
FUNCTION_WORDS = word_set(  # "the passphrase is stored in the vault", "... at least 12 long"
    "too not the a an in on at from to for of by with as via under within into behind between "
    "after before over across through without about against around near off out up down it its "
    "this that these those my your his her their our you we they me us them what which who where "
    "when how why also still now just only always never usually probably actually really very so "
    "quite pretty like exactly supposed meant enough no none nothing something anything "
    "everything one two three four five six seven eight nine ten several many some any all "
    "multiple much more less most least either neither both each every and or but if than then "
    "since per until while because be been being is are was were has have had should must can "
    "could will would may might does did btw fyi lol"
)
_INSTRUCTIONS = word_set(  # "passphrase: ask Dana in ops", "passphrase: see vault entry"
    "ask see check use type enter pick choose get find look contact call ping try do dont make "
    "leave keep kept read write store save go change update rotate send paste tell whatever"
)
_FIELDS = word_set(  # "login is email / password", "login: Google / GitHub", "read / write"
    "foo bar baz qux user username login email mail name pass passwd pwd pw id pin otp code phone "
    "number sso ldap saml oauth oauth2 oidc okta kerberos mfa totp sms 2fa passkey passkeys google "
    "github gitlab apple microsoft facebook twitter azure slack vault dm keychain keyring env "
    "config file readonly rw ro member members viewer editor owner business work home team free "
    "paid premium trial aws gcp gcloud heroku vercel docker npm pypi prod production staging "
    "stage dev development uat sandbox preview demo web mobile desktop app cli api browser "
    "console ui"
)
NOT_A_PASSWORD = _STATES | FUNCTION_WORDS | _INSTRUCTIONS | _FIELDS
"""What follows "password is" (or a pair's slash) and is not a password. Hangul never starts a
value, so "비번은 만료됐어요" needs no entry here."""
_STATE_SUFFIX = re.compile(r"(?:[^e]ed|ing|able|ible|less|ive|ous)$")
"""Participles and adjectives ("compromised", "taped", "expiring", "guessable", "dangerous"):
open-ended word classes that describe a password, checked on words of five or more letters
(``speed``, ``king``, ``ring`` are passwords as often as not)."""


def _state(word: str) -> bool:
    return len(word) >= 5 and _STATE_SUFFIX.search(word) is not None


def plain_password(value: str) -> bool:
    """One plain word given as a password where it ends the clause ("my password is qwerty"):
    4+ ASCII letters and digits, not digits alone, a state, an algorithm or a field name."""
    word = value.lower()
    if not (4 <= len(value) <= 64 and value.isascii() and value.isalnum()) or value.isdigit():
        return False
    if word in NOT_A_PASSWORD or word in REPLIES or _ALGORITHM.fullmatch(word):
        return False
    return not _state(word) and not placeholder(value)


def passphrase_words(words: list[str]) -> bool:
    """Three or more words given as a passphrase ("correct horse battery staple"), not a
    description: no function word anywhere ("required for login"), not opened by an
    instruction, a field name or a participle ("stored offline securely")."""
    lower = [w.lower() for w in words]
    first = lower[0]
    return (
        len(words) >= 3
        and not any(w in FUNCTION_WORDS for w in lower)
        and first not in _INSTRUCTIONS | _FIELDS | REPLIES
        and not _state(first)
        and not placeholder(" ".join(words))
    )


_TECH_VERSION = re.compile(  # python3, node18, arm64, x86_64, oauth2, utf8mb4, ubuntu2204, es2022
    r"(?:[a-z]{1,3}|python|node|java|jdk|jre|ruby|php|perl|rust|gcc|clang|llvm|ubuntu|debian"
    r"|centos|rhel|alpine|fedora|windows|macos|ios|android|arm|amd|aarch|ipv|http|https|tls|ssl"
    r"|oauth|sha|utf|ecma|ecmascript|html|mysql|postgres|postgresql|redis|mongo|mongodb|dotnet"
    r"|vue|react|angular|django|rails|log4j|deno|gradle|maven|scala|kotlin|swift|xcode|openssl"
    r"|openjdk|temurin|corretto|graviton|cuda|gpt|llama|webpack|vite|nextjs|nuxt|bootstrap"
    r"|tailwind|luajit|lua|server|office|visual|studio|win|nginx|kafka|spark|hadoop|elastic"
    r"|opensearch|jenkins|terraform|helm|docker|compose|k8s|cgroup|cgroups|ext|fat|ntfs|raid)"
    r"[-_]?v?\d{1,4}(?:[._-]\d+)*(?:[a-z]{1,3}\d*)?",
    re.IGNORECASE,
)


def strong_password(value: str) -> bool:
    """Shaped like a password where nothing names it as one, only the words around it ("use
    hunter2 for the staging box", "log in as demo with Welcome2026!"): :func:`password_like`,
    and not a tool or version with a number (``python3``, ``arm64``, ``oauth2``, ``es2022``) nor
    dotted or slashed words and numbers (``t3.large``, ``feature/x2``)."""
    core = value.rstrip(_VALUE_PUNCTUATION)
    if not password_like(core) or _TECH_VERSION.fullmatch(core):
        return False
    symbol = any(not c.isalnum() and c not in "-_./" for c in core)
    return symbol or not ("." in core or "/" in core)


def pin_code(value: str) -> bool:
    """A PIN or door code named as one: 4 to 8 digits, not all one digit (``0000`` is a
    placeholder)."""
    return value.isdigit() and 4 <= len(value) <= 8 and not placeholder(value)


_CAMEL_PART = re.compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+|\d+)(?:[A-Z][a-z]*|\d+)*")


def identifier(value: str) -> bool:
    """Camel-cased words and numbers, joined by ``-_.`` or not: ``customerIdAndRegion2024``,
    ``user_profile_settings_v2``, ``maxTokens2``; a random token has a lower-case letter after
    a digit."""
    return all(_CAMEL_PART.fullmatch(part) for part in re.split(r"[-_.]", value))
