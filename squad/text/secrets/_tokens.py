"""Credentials recognised by their own shape: provider tokens, private keys, base64 blobs. Pure.

A provider token whose prefix is its provider's alone (``sk-proj-``, ``ghp_``, ``xoxb-``...)
counts whatever its body, even cut short, mistyped or with spaces inserted; a token whose
prefix is also an everyday word or identifier (``sk-``, ``hf_``, ``npm_``) only in its
provider's own length and alphabet.

Many of the prefixes and shapes come from gitleaks' rule set (``config/gitleaks.toml``,
github.com/gitleaks/gitleaks, MIT licence, Copyright (c) 2019 Zachary Rice), written again
here as our own rules: those marked "gitleaks" below.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Callable, Iterator

from squad.text.secrets._scan import Rules, Scan
from squad.text.secrets._values import (
    B,
    Candidate,
    U,
    W,
    entropy,
    lower_words,
    not_placeholder,
    placeholder,
    random_token,
    wordish,
)

__all__ = ["KINDS", "candidates", "in_public_block"]

# -- distinctive prefixes: the body may be any run of token characters ------------------------

_STRONG: tuple[tuple[str, str], ...] = (
    ("anthropic_api_key", r"sk-ant-(?:[a-z]{2,10}\d{2}-)?"),
    ("openai_api_key", r"sk-(?:proj|svcacct|admin)-"),
    ("github_token", r"gh[pousr]_|github_pat_"),
    ("gitlab_token", r"gl(?:pat|dt|rt|ptt|ft|cbt|ffct|imt|agent|oas|soat)-|GR1348941"),
    ("slack_token", r"xox[abposre]-|xapp-"),
    ("stripe_secret_key", r"[sr]k_(?:live|test)_"),
    ("stripe_webhook_secret", r"whsec_"),
    ("google_oauth_token", r"ya29\."),
    ("google_client_secret", r"GOCSPX-"),
    ("pypi_token", r"pypi-AgE"),
    (  # Groq, xAI, Perplexity, Replicate, Shopify, DigitalOcean, Linear, Vault, Sentry...
        "provider_token",
        r"gsk_|xai-|pplx-|r8_|shp(?:at|ss|ca|pa)_|do[opr]_v1_|lin_api_|hv[sbr]\.|sntry[su]_"
        r"|glsa_|figd_|ntn_|sq0(?:atp|csp)-|pat-(?:na|eu)1-|tvly-|dckr_(?:pat|oat)_"
        r"|AGE-SECRET-KEY-1|(?:live|test)_g?sk_"  # ... and Toss Payments
        # gitleaks: Adobe, Artifactory, Clojars, Doppler, Duffel, EasyPost, Flutterwave, Fly.io,
        # Frame.io, Heroku, 42 Intra, PlanetScale, Postman, Prefect, ReadMe, Scalingo, Brevo,
        # SettleMint, Shippo, Typeform, Defined Networking
        r"|p8e-|AKCp|CLOJARS_|dp\.pt\.|duffel_(?:live|test)_|EZ[AT]K|FLWSECK(?:_TEST)?-|fo1_"
        r"|fio-u-|HRKU-|s-s4t2(?:ud|af)-|pscale_(?:tkn|oauth|pw)_|PMAK-|pnu_|rdme_|tk-us-"
        r"|xkeysib-|sm_[aps]at_|shippo_(?:live|test)_|tfp_|dnkey-",
    ),
)
_STRONG_BODY = 8
_CANONICAL_BODY = 30
"""A body this long is a provider's own (hf_ 34 letters, npm_ 36): random, whatever its mix."""
_STRONG_RULE = re.compile(
    B + "(?:" + "|".join(f"(?P<k{i}>{prefix})" for i, (_, prefix) in enumerate(_STRONG)) + ")"
    r"(?P<body>[A-Za-z0-9_-]*)"
)


def _strong_body(body: str, kind: str = "") -> bool:
    body = body.rstrip("-_")
    if kind == "provider_token":  # shorter prefixes, some also seen in identifiers
        long = len(body) >= _CANONICAL_BODY
        return len(body) >= 16 and random_token(body) and (long or not wordish(body))
    return (
        len(body) >= _STRONG_BODY
        and not lower_words(body)
        and not placeholder(body)
        and (any(c.isdigit() or c.isupper() for c in body) or len(body) >= 24)
    )


def _strong(scan: Scan) -> Iterator[Candidate]:
    for m in scan.finditer(_STRONG_RULE):
        group = next(g for g in m.groupdict() if g.startswith("k") and m[g] is not None)
        kind = _STRONG[int(group[1:])][0]
        token = m[0] if len(m["body"].rstrip("-_")) >= _CANONICAL_BODY else m[0].rstrip("-_")
        if _strong_body(m["body"], kind) and not placeholder(token):
            yield 0, m.start(), m.start() + len(token), kind


# -- prefixes that are also identifiers: the provider's own length and alphabet ------------


def _identifier_body(value: str) -> bool:
    """``hf_``/``npm_`` followed by a random body, not ``hf_HubDownloadHelperClass``."""
    body = value.split("_", 1)[1]
    return random_token(value) and (len(body) >= _CANONICAL_BODY or not wordish(body))


def _wordless_body(value: str) -> bool:
    """A random body after a prefix that names also start with, whatever its length: not
    ``ico-ArrowLeftCircleOutlineLargeIcon2`` (a CSS class), ``s.DefaultConnectionTimeout``."""
    body = _PREFIX_END.split(value, maxsplit=1)[-1]
    return random_token(value) and not wordish(body)


_PREFIX_END = re.compile(r"[_.-]")


def _cased(value: str) -> bool:
    """A random token with a capital: not a lower-case hex digest of the same length."""
    return random_token(value) and any(c.isupper() for c in value)


def _upper_random(value: str) -> bool:
    """Capitals and digits drawn at random (``API-`` and 26), not an identifier in capitals
    (``API-V2ENDPOINTCONFIGURATIONSET``): capitals run as long as words do, the digits tell."""
    return random_token(value) and sum(c.isdigit() for c in value) >= 2


_AWS_ID = "(?:AKIA|ASIA|ABIA|ACCA)"
"""How AWS access key ids start: long-lived, temporary (STS), bearer, context-specific."""
_Check = Callable[[str], bool]
_PATTERNS: tuple[tuple[str, str] | tuple[str, str, _Check], ...] = (
    # (kind, pattern[, check]); the value is group "v" if the pattern has one, else the match;
    # the check is the kind's in _CHECKS unless the entry names its own
    ("openai_api_key", B + r"sk-[A-Za-z0-9]{32,}"),
    ("aws_access_key_id", rf"(?<![A-Za-z0-9]){_AWS_ID}[A-Z0-9]{{16}}(?![A-Za-z0-9])"),
    (
        "aws_secret_access_key",
        r"(?i:aws_?secret(?:_?access)?(?:_?key)?|secret_?access_?key)[\"']?[ \t]{0,8}"
        r"(?:=>|[:=])?[ \t]{0,8}[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    ),
    ("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[\w/-]{20,})"),
    ("google_api_key", B + r"AIza" + U + "{35}(?!" + U + ")"),
    ("huggingface_token", W + r"hf_[A-Za-z0-9]{16,}(?![A-Za-z0-9_])"),
    ("npm_token", W + r"npm_[A-Za-z0-9]{16,}(?![A-Za-z0-9_])"),
    ("sendgrid_api_key", r"(?<![\w.-])SG\." + U + r"{16,32}\." + U + "{16,64}(?!" + U + ")"),
    ("twilio_api_key", r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])"),
    (
        "azure_storage_key",
        r"(?<![A-Za-z0-9])(?:Account|SharedAccess)Key=(?P<v>[A-Za-z0-9+/=]{20,})",
    ),
    ("azure_sas_signature", W + r"sig=(?P<v>[A-Za-z0-9%+/=]{20,})"),
    ("telegram_bot_token", r"(?<!\d)\d{8,10}:AA" + U + "{33}(?!" + U + ")"),
    (
        "discord_bot_token",
        B + "[MNO]" + U + r"{23,27}\." + U + r"{6,7}\." + U + "{27,40}(?!" + U + ")",
    ),
    ("jwt", B + r"eyJ" + U + r"{5,}\.eyJ" + U + r"{5,}\." + U + "{8,}"),
    ("sentry_dsn_key", r"https?://(?P<v>[0-9a-f]{32})(?::[0-9a-f]{32})?@[\w.-]*sentry"),
    ("atlassian_api_token", B + r"ATATT3x[A-Za-z0-9_=-]{100,}"),
    ("mapbox_secret_token", B + r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}"),
    ("firebase_server_key", B + r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
    (  # an Entra ID (Azure AD) client secret: three characters, a digit, "Q~", then 31-34
        "azure_client_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
    ),
    # gitleaks: a prefix shared with words or identifiers, a body with dots or base64's + and /
    ("huggingface_token", W + r"api_org_[A-Za-z]{34}(?![A-Za-z0-9_])"),  # an organisation's
    ("gitlab_token", r"_gitlab_session=(?P<v>[0-9a-z]{32})(?![A-Za-z0-9])"),
    (  # a 1Password account's secret key
        "provider_token",
        r"(?<![\w-])A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
        r"(?:-[A-Z0-9]{5}){3}(?![\w-])",
    ),
    ("provider_token", B + r"ops_eyJ[A-Za-z0-9+/]{64,}={0,3}"),  # 1Password service account
    ("provider_token", B + r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}(?![A-Za-z0-9])"),  # Airtable
    ("provider_token", r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])"),  # Alibaba
    ("provider_token", r"(?<![\w+/])cmVmd[A-Za-z0-9]{59}(?![\w+/=])"),  # Artifactory reference
    (  # Authress
        "provider_token",
        r"(?<![\w.-])(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]"
        r"[A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}(?![\w+/=-])",
    ),
    ("provider_token", r"(?<![\w+/])ABSK[A-Za-z0-9+/]{100,}={0,2}"),  # Amazon Bedrock, long-lived
    (  # Amazon Bedrock, short-lived: base64 of a presigned bedrock.amazonaws.com URL
        "provider_token",
        B + r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/]{20,}={0,2}",
    ),
    ("provider_token", r"(?<![A-Za-z0-9])4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])", _cased),  # ClickHouse
    ("provider_token", B + r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}(?![A-Za-z0-9])"),  # Cloudflare CA
    ("provider_token", B + r"dapi[0-9a-f]{32}(?:-\d)?(?![A-Za-z0-9-])"),  # Databricks
    ("provider_token", B + r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}(?![A-Za-z0-9])"),  # Dynatrace
    ("provider_token", B + r"EAA[CM][A-Za-z0-9]{100,}"),  # Facebook page
    ("provider_token", B + r"EAAA" + U + "{22,60}(?!" + U + ")"),  # Square
    ("provider_token", B + r"FLWSECK_TEST-?[0-9a-hA-H]{12}(?![\w-])"),  # Flutterwave encryption
    ("provider_token", B + r"(?:fm1[ar]|fm2)_[A-Za-z0-9+/]{100,}={0,3}"),  # Fly.io macaroon
    ("provider_token", B + r"eyJrIjoi[A-Za-z0-9]{70,}={0,3}"),  # Grafana API key
    ("provider_token", W + r"glc_[A-Za-z0-9+/]{32,}={0,3}(?![\w+/=])"),  # Grafana Cloud
    (  # Harness
        "provider_token",
        B + r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}(?![A-Za-z0-9])",
    ),
    (  # Terraform Cloud
        "provider_token",
        r"(?<![\w.-])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![\w=-])",
    ),
    ("provider_token", B + r"ico-[A-Za-z0-9]{32}(?![\w-])", _wordless_body),  # Infracost
    ("provider_token", W + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])"),  # MaxMind
    ("provider_token", B + r"API-[A-Z0-9]{26}(?![\w-])", _upper_random),  # Octopus Deploy
    ("provider_token", B + r"NRAK-[A-Za-z0-9]{27}(?![\w-])", _upper_random),  # New Relic user key
    ("provider_token", B + r"NRII-[A-Za-z0-9-]{32}(?![\w-])"),  # New Relic insert key
    ("provider_token", B + r"sha256~[A-Za-z0-9_-]{43}(?![\w-])"),  # OpenShift
    ("provider_token", B + r"pul-[0-9a-f]{40}(?![\w-])"),  # Pulumi
    ("provider_token", W + r"rubygems_[0-9a-f]{48}(?![A-Za-z0-9_])"),
    (  # Sourcegraph
        "provider_token",
        W + r"sgp_(?:[0-9a-fA-F]{16}_|local_)?[0-9a-fA-F]{40}(?![A-Za-z0-9_])",
    ),
    ("provider_token", W + r"sq[apu]_[0-9a-f]{40}(?![A-Za-z0-9_])"),  # SonarQube
    ("provider_token", B + r"AQVN" + U + "{35,38}(?!" + U + ")"),  # Yandex API key
    (  # Plaid
        "provider_token",
        B
        + r"access-(?:sandbox|development|production)-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}",
    ),
    (  # a Microsoft Teams incoming webhook
        "provider_token",
        r"\.webhook\.office\.com/webhookb2/(?P<v>[A-Za-z0-9@/_-]{60,})",
    ),
    # Vault's legacy service tokens, s. and 24 more; the literal first, so sre finds it fast
    ("provider_token", r"s\.(?<![\w.$@/-]s\.)[A-Za-z0-9]{24}(?![\w.(-])", _wordless_body),
)


_CHECKS: dict[str, _Check] = {  # default: random_token
    "aws_access_key_id": not_placeholder,
    "google_api_key": not_placeholder,
    "twilio_api_key": not_placeholder,
    "telegram_bot_token": not_placeholder,
    "jwt": not_placeholder,
    "sentry_dsn_key": not_placeholder,
    "firebase_server_key": not_placeholder,
    "atlassian_api_token": not_placeholder,
    "mapbox_secret_token": not_placeholder,
    "huggingface_token": _identifier_body,
    "npm_token": _identifier_body,
}
_RULES = [(kind, re.compile(pattern), own) for kind, pattern, *own in _PATTERNS]
_SHAPED = [
    (
        kind,
        rule,
        own[0] if own else _CHECKS.get(kind, random_token),
        "v" if "v" in rule.groupindex else 0,
    )
    for kind, rule, own in _RULES
]


def _shaped(scan: Scan) -> Iterator[Candidate]:
    for kind, pattern, check, group in _SHAPED:
        if scan.may(pattern):
            for m in scan.finditer(pattern):
                if check(m[group]):
                    yield 0, *m.span(group), kind


# -- tokens with spaces inserted: "sk-proj- Ab12 Cd34 ...", "AKIA 4F7Q 2XZ9 ..." -----------------

_SPACED_START = re.compile(
    B + "(?:" + "|".join(f"(?:{prefix})" for _, prefix in _STRONG) + ")|(?<![A-Za-z0-9])" + _AWS_ID
)
_CHUNK = re.compile(r"[A-Za-z0-9_-]+")
_SEPARATOR = " \u00a0\u200b\u200c\u200d\u2060\t"
_SPACED_MIN = 16
_GROUP_MAX = 12
"""Groups written for reading are short: a longer run after a visible space is the next word,
or a whole key of its own; after a zero-width character it is the rest of the key."""


def _random_chunk(chunk: str) -> bool:
    """A piece of a random body, not the next word of prose ("ghp_ is the prefix")."""
    return any(c.isdigit() for c in chunk) or any(c.isupper() for c in chunk[1:])


def _grouped(text: str, end: int, first: str) -> tuple[str, int]:
    """The body continued past single separators in groups of one width, as keys are written
    for reading ("Ab12 Cd34 Ef56 Gh7"): the first group sets the width, at least as long as
    the part before the first gap (and, after a visible space, at most :data:`_GROUP_MAX`); a
    shorter group ends it."""
    body, width = first, 0
    while end < len(text) and text[end] in _SEPARATOR:
        chunk = _CHUNK.match(text, end + 1)
        if chunk is None or not _random_chunk(chunk[0]):
            break
        size = len(chunk[0])
        if not width:
            long = size > _GROUP_MAX and text[end] in " \t\u00a0"
            if size < 4 or size < len(first) or (first and long):
                break
            width = size
        elif size > width:
            break
        body, end = body + chunk[0], chunk.end()
        if size < width:
            break
    return body, end


def _spaced(scan: Scan) -> Iterator[Candidate]:
    text, pos = scan.text, 0
    while (m := scan.search(_SPACED_START, pos)) is not None:
        first = _CHUNK.match(text, m.end())
        start_body = first[0] if first else ""
        body, end = _grouped(text, first.end() if first else m.end(), start_body)
        pos = max(end, m.end())
        if body == start_body:
            continue  # no space inside: the rules above judge it
        prefix = m[0]
        if re.fullmatch(_AWS_ID, prefix):
            ok = re.fullmatch(r"[A-Z0-9]{16}", body) is not None and any(c.isdigit() for c in body)
            kind = "aws_access_key_id"
        else:
            kind = next(k for k, p in _STRONG if re.fullmatch(p, prefix))
            long = len(body) >= _SPACED_MIN and any(c.isdigit() for c in body)
            ok = long and _strong_body(body, kind)
        if ok:
            yield 0, m.start(), end, kind


# -- private keys: PEM blocks, or their base64 body pasted without the header ---------------

_PEM = re.compile(r"-----(?P<edge>BEGIN|END)[ A-Z0-9]{0,30} PRIVATE KEY(?: BLOCK)?-----")
_PEM_TAIL = re.compile(  # the blank line after PGP armor's header is part of the block
    r"[^\"'\n]*(?:\r?\n[A-Za-z-]+: [^\n]*)*(?:\r?\n(?=\r?\n))?(?:\r?\n[^\"'\n\r]+)*"
)
_B64 = "[A-Za-z0-9+/]"
_DER_KEY = re.compile(  # how the DER of each private key format starts, in base64
    rf"(?<![A-Za-z0-9+/])(?:MII{_B64}{{3}}IBAAK"  # PKCS#1 RSA
    rf"|MII{_B64}{{3}}IBADANBgkqhkiG9w0BAQEFAASC"  # PKCS#8 RSA
    rf"|MIG{_B64}AgEAMB{_B64}GByqGSM49AgEG"  # PKCS#8 EC
    r"|MHcCAQEEI|MIGkAgEBBD|MIHcAgEBBEI"  # SEC1 EC P-256, P-384, P-521
    r"|MC4CAQAwBQYDK2VwBCIEI|MEcCAQAwBQYDK2VxBDsEO"  # PKCS#8 Ed25519, Ed448
    rf"|MII{_B64}{{5}}BgkqhkiG9w0BBQ0w"  # PKCS#8 encrypted (PBES2)
    r"|b3BlbnNzaC1rZXktdjE)"  # OpenSSH ("openssh-key-v1")
    r"[A-Za-z0-9+/=]*(?:(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{8,})*"
)


_JWK_PRIVATE = re.compile(r'"(?:d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*"(?P<v>[A-Za-z0-9_-]{16,})"')


def _private_keys(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    opened: re.Match[str] | None = None
    for m in scan.finditer(_PEM):
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
    if '"kty"' in text:  # a JSON Web Key's private members
        for m in scan.finditer(_JWK_PRIVATE):
            yield 0, *m.span("v"), "private_key"
    for m in scan.finditer(_DER_KEY):
        if m.end() - m.start() >= 40:
            yield 0, m.start(), m.end(), "private_key"


# -- base64 blobs: standing alone, random, with base64's own +, / or = padding ----------------

_BLOB = re.compile(
    r"(?<![^\s\"'`(\[{<>])(?P<v>[A-Za-z0-9+/]{20,}={0,2})"
    r"(?=$|[\s\"'`)\]}>,;!?]|[.:](?:\s|$))",
    re.MULTILINE,
)
_NOT_SECRET_DATA = re.compile(  # public keys, certificates, file signatures, zero bytes
    rf"AAAA|MII{_B64}{{3}}CCA|MI{_B64}{{2,4}}ANBgkqhkiG9w0BAQEFAAO|MFkwEwYHKoZIzj0CAQ|MHYwEAYHKoZI"
    r"|MCowBQYDK2Vw|MEMwBQYDK2Vx|iVBORw0KGgo|/9j/|R0lGOD|UklGR|UEsDB|JVBER|PD94bW|PHN2Zy|H4sI"
)
_DATA_NAME = re.compile(  # the name before a digest, id or public value
    r"(?i:(?:md5|sha\d*|hash|digest|checksum|integrity|etag|fingerprint|nonce|salt|iv|uuid|id"
    r"|signature|cert(?:ificate)?|public[ _-]?key|pubkey|base64|b64|encoded|image|data))"
    r"[\"']?[ \t]*+[:=]?[ \t]*+[\"'`]?$"
)


def _base64_blob(value: str) -> bool:
    core = value.rstrip("=")
    if not ("+" in core or "/" in core or value.endswith("=")):
        return False
    if not all(any(test(c) for c in core) for test in (str.islower, str.isupper, str.isdigit)):
        return False
    if _NOT_SECRET_DATA.match(core) or wordish(core) or _encodes_words(value):
        return False
    return entropy(core) >= 3.5


_WORDS_TEXT = re.compile(r"[A-Za-z][\w .,/-]*")


def _encodes_words(value: str) -> bool:
    """Base64 of plain words (``cmVwb3J0X2ZpbmFsLnBkZg==``, a file name): no key, no
    ``user:password`` pair. A key or token decodes to binary or to a random string."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    letters = sum(c.isalpha() for c in decoded)
    return (
        _WORDS_TEXT.fullmatch(decoded) is not None
        and letters >= 0.7 * len(decoded)
        and (wordish(re.sub(r"[^A-Za-z]+", "-", decoded).strip("-")))
    )


_NAME_REACH = 40
"""How far before a blob its name (``sha256``, ``etag``, ``id``...) is looked for."""


def _blobs(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    blocks = _PemBlocks(text)
    for m in scan.finditer(_BLOB):
        if not _base64_blob(m["v"]):
            continue
        reach = max(0, m.start() - _NAME_REACH)  # only as far back as the name may be
        line_start = text.rfind("\n", reach, m.start()) + 1
        if _DATA_NAME.search(text, max(line_start, reach), m.start()):
            continue
        if _public_before(text, m.start()) or blocks.public(m.start()):
            continue
        yield 3, m.start(), m.end(), "base64_token"


_PUBLIC_BEGIN = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*(?:PUBLIC KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?)-----"
)
_PUBLIC_BEFORE = re.compile(
    r"(?i:(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-[\w-]+|sk-ssh-[\w@.-]+)[ \t]+"
    r"|(?:sha(?:1|256|384|512)|md5):)$"
    r'|"(?:n|e|x|y|x5c|x5t|x5t#S256)"[ \t]*:[ \t]*\[?[ \t]*"$'  # a JWK's public members
)


def in_public_block(text: str, pos: int) -> bool:
    """Whether ``pos`` starts public data: the body of a PEM public key or certificate, an SSH
    public key, a key fingerprint (``SHA256:...``)."""
    if _public_before(text, pos):
        return True
    begin = text.rfind(_BEGIN, 0, pos)
    if begin < 0 or text.find(_END, begin, pos) >= 0:
        return False
    return _PUBLIC_BEGIN.match(text, begin) is not None


def _public_before(text: str, pos: int) -> bool:
    return _PUBLIC_BEFORE.search(text, max(0, pos - 40), pos) is not None


_BEGIN, _END = "-----BEGIN ", "-----END "


class _PemBlocks:
    """The PEM block each position of one text is in, as :func:`in_public_block` finds it,
    from the text's ``-----BEGIN``/``-----END`` lines found once: asking for each blob of a
    long text would scan back through all of it every time (quadratic)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._begins = _starts(text, _BEGIN)
        self._ends = _starts(text, _END) if self._begins else []

    def public(self, pos: int) -> bool:
        """Whether ``pos`` is inside a PEM public key or certificate (its BEGIN line before
        ``pos``, and no END line between the two)."""
        i = bisect.bisect_right(self._begins, pos - len(_BEGIN)) - 1
        if i < 0:
            return False
        begin = self._begins[i]
        j = bisect.bisect_left(self._ends, begin)
        if j < len(self._ends) and self._ends[j] <= pos - len(_END):
            return False
        return _PUBLIC_BEGIN.match(self._text, begin) is not None


def _starts(text: str, marker: str) -> list[int]:
    """Where ``marker`` occurs in ``text``, overlapping occurrences too, in order."""
    found: list[int] = []
    at = text.find(marker)
    while at >= 0:
        found.append(at)
        at = text.find(marker, at + 1)
    return found


# -- public to the package ---------------------------------------------------------------

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            "private_key",
            *(kind for kind, _ in _STRONG),
            *(kind for kind, *_ in _PATTERNS),
            "base64_token",
        ]
    )
)


RULES = Rules(_PEM, _JWK_PRIVATE, _DER_KEY, _STRONG_RULE, *(p for _, p, _ in _RULES), _SPACED_START)
"""Every pattern :func:`candidates` runs over the whole text but the blobs' (which needs no
literal, only 20 characters of base64)."""
_BLOB_RULES = Rules(_BLOB)


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` holds by its own shape; ``scan`` is ``text``'s :class:`Scan`
    when the caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if scan.admits(RULES):  # most messages hold no prefix, no key header, no "Q~"...
        yield from _private_keys(scan)
        yield from _strong(scan)
        yield from _shaped(scan)
        yield from _spaced(scan)
    yield from _blobs(scan)
