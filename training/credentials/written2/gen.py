"""Write the second set of hand-written credential rows: work contexts, English and Korean.

``python training/credentials/written2/gen.py training/credentials/data`` writes
``written2_credentials.jsonl.gz`` and ``written2_lookalikes.jsonl.gz`` there.

The sentences live in ``cred_en.py``, ``cred_ko.py`` (credentials) and ``look_en.py``,
``look_ko.py`` (look-alikes), each written by hand for one context: a log line, a CI job's
output, a config, a handover note (a tuple of lines when it has several). In a sentence
``⟦...⟧`` marks a secret, and ``{kind}`` (inside or outside the marks) becomes a fresh random
value of that kind (:data:`KINDS`); what ends up inside the marks is the row's values. Other
braces (``${DB_PASSWORD}``, ``{{ .Values.password }}``, JSON) are left as written. The seed
is fixed: a re-run writes the same bytes.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import string
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SEED = 4417
rng = random.Random(SEED)
USED: set[str] = set()

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
POD_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"
"""The letters Kubernetes uses in generated pod names."""
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

WORDS = [
    "amber",
    "anvil",
    "atlas",
    "aurora",
    "basalt",
    "bison",
    "blizzard",
    "bobcat",
    "boulder",
    "bristle",
    "canyon",
    "cargo",
    "catalyst",
    "chisel",
    "citadel",
    "cobalt",
    "comet",
    "condor",
    "copper",
    "corridor",
    "crimson",
    "dagger",
    "delta",
    "derby",
    "dune",
    "eagle",
    "echo",
    "elm",
    "ember",
    "fable",
    "fathom",
    "ferry",
    "fjord",
    "flare",
    "forge",
    "frost",
    "gale",
    "garnet",
    "geyser",
    "glider",
    "gorge",
    "granite",
    "gravel",
    "harbor",
    "hatchet",
    "hawk",
    "helix",
    "hornet",
    "hydra",
    "iceberg",
    "ingot",
    "iron",
    "jaguar",
    "jetty",
    "karma",
    "kelp",
    "kestrel",
    "keystone",
    "lagoon",
    "lancer",
    "ledger",
    "lever",
    "lumen",
    "magnet",
    "mantis",
    "marble",
    "mast",
    "meteor",
    "mirage",
    "monsoon",
    "mortar",
    "nebula",
    "needle",
    "nickel",
    "nomad",
    "oasis",
    "obsidian",
    "onyx",
    "orbit",
    "paddock",
    "panther",
    "parrot",
    "pylon",
    "quarry",
    "quiver",
    "radar",
    "rampart",
    "raptor",
    "reef",
    "relic",
    "ridge",
    "rover",
    "saber",
    "salvo",
    "scarab",
    "schooner",
    "sentry",
    "shale",
    "signal",
    "sleet",
    "spindle",
    "spire",
    "stallion",
    "steeple",
    "stingray",
    "summit",
    "talon",
    "tempest",
    "thunder",
    "timber",
    "torrent",
    "tractor",
    "trident",
    "tundra",
    "turbine",
    "valve",
    "vapor",
    "vector",
    "viper",
    "vortex",
    "walrus",
    "warden",
    "wharf",
    "zenith",
]

ROMAN = [
    "sarang",
    "haneul",
    "bada",
    "gureum",
    "nabi",
    "dubu",
    "kimchi",
    "hangang",
    "jeju",
    "busan",
    "seoul",
    "dokdo",
    "gaeul",
    "bomnal",
    "nuri",
    "saebyeok",
    "byeol",
    "dal",
    "sonamu",
    "hodu",
    "gamja",
    "bibim",
    "gimbap",
    "tteok",
    "mandu",
    "jjajang",
    "yeouido",
    "pangyo",
    "gangnam",
    "mapo",
    "jamsil",
    "suwon",
    "daejeon",
    "incheon",
    "hwaiting",
    "jinjja",
    "haengbok",
]

HANGUL = [
    "우리회사",
    "개발팀",
    "운영서버",
    "판교",
    "강남",
    "여의도",
    "봄날",
    "새벽",
    "별빛",
    "하늘",
    "바다",
    "사랑",
    "행복",
    "다람쥐",
    "호랑이",
    "고양이",
    "토끼",
    "도토리",
    "한강",
    "제주",
    "무지개",
    "해바라기",
    "감자",
    "만두",
]

USERS = [
    "deploy",
    "svc_batch",
    "ci-runner",
    "app_rw",
    "etl_user",
    "jenkins",
    "gitlab-ci",
    "reporter",
    "admin",
    "ops",
    "backup_svc",
    "analytics",
    "grafana",
    "airflow",
    "svc-payments",
    "kafka_connect",
]


def _fresh(make: Callable[[], str]) -> str:
    """A value no earlier slot produced."""
    for _ in range(1000):
        value = make()
        if value not in USED:
            USED.add(value)
            return value
    raise RuntimeError("ran out of fresh values")


def _pick(pool: list[str]) -> str:
    return rng.choice([w for w in pool if w not in USED] or pool)


def _chars(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _digits(n: int) -> str:
    return _chars(string.digits, n)


def _b64_of(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _b64url_of(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# passwords as people pick them at work


def _pw() -> str:
    """A human-made password: a word, digits, a symbol, in one of several habits."""
    w = _pick(WORDS)
    style = rng.randrange(7)
    if style == 0:
        return w.capitalize() + rng.choice("!@#$%&") + str(rng.randrange(2015, 2027))
    if style == 1:
        return w.translate(str.maketrans("aeiost", "@3105+")) + _digits(rng.randrange(2, 4))
    if style == 2:
        return (
            f"{w.capitalize()}{rng.choice('_.-')}{_pick(WORDS).capitalize()}{rng.randrange(1, 99)}"
        )
    if style == 3:
        return w.upper()[:3] + w[3:] + _digits(4) + rng.choice("!?#")
    if style == 4:
        env = rng.choice(["Prod", "Dev", "Stg", "Qa", "Ops"])
        return f"{env}{w.capitalize()}{rng.randrange(10, 99)}!"
    if style == 5:
        return f"{w}{rng.choice(['#', '@', '$'])}{_pick(WORDS)}{_digits(2)}"
    quarter = rng.choice(["Q1", "Q2", "Q3", "Q4"])
    return f"{w.capitalize()}{quarter}{rng.randrange(2022, 2027)}{rng.choice('!@#')}"


def _pws() -> str:
    """A generated password: letters, digits, symbols."""
    pool = ALNUM + "!@#$%^&*-_=+"
    while True:
        v = _chars(pool, rng.randrange(14, 22))
        if (
            any(c.isdigit() for c in v)
            and any(c.isupper() for c in v)
            and any(c in "!@#$%^&*-_=+" for c in v)
        ):
            return v


def _pwa() -> str:
    """A generated password of letters and digits only, as cloud consoles hand out."""
    while True:
        v = _chars(ALNUM, rng.randrange(16, 26))
        if any(c.isdigit() for c in v) and any(c.isupper() for c in v):
            return v


def _pwp() -> str:
    """A passphrase: three to five words."""
    sep = rng.choice(["-", " ", "_", "."])
    words = rng.sample(WORDS, rng.randrange(3, 6))
    return sep.join(words)


def _pwu() -> str:
    """A password as written in a URL: percent-encoded symbols."""
    w = _pick(WORDS)
    style = rng.randrange(4)
    if style == 0:
        return f"{w.capitalize()}%40{_digits(4)}"
    if style == 1:
        return f"{w}%23{_pick(WORDS)[:4]}{_digits(2)}%21"
    if style == 2:
        return f"{_chars(ALNUM, 10)}%2F{_chars(ALNUM, 6)}"
    return f"{w.upper()[:2]}{w[2:]}%3A{_digits(3)}%24"


def _pwk() -> str:
    """A password from a romanised Korean word, as Korean teams pick them."""
    w = _pick(ROMAN)
    style = rng.randrange(4)
    if style == 0:
        return w.capitalize() + _digits(rng.randrange(2, 5)) + rng.choice("!@#")
    if style == 1:
        return w + rng.choice(["!", "@", "#"]) + rng.choice(["1q2w3e", "1234", "qwer", "0909"])
    if style == 2:
        return f"{w.capitalize()}{rng.choice('_.')}{_pick(ROMAN)}{rng.randrange(10, 99)}"
    return f"{rng.choice(['Corp', 'Dev', 'Op', 'Tmp'])}{w}{rng.randrange(2020, 2027)}!!"


def _hpw() -> str:
    """A password in Hangul."""
    return (
        rng.choice(HANGUL)
        + rng.choice(["", "!", "2025", "123", "#1"])
        + rng.choice(HANGUL)
        + _digits(2)
    )


# codes


def _rc() -> str:
    """One recovery code."""
    style = rng.randrange(3)
    if style == 0:
        return f"{_chars(LOWER_ALNUM, 5)}-{_chars(LOWER_ALNUM, 5)}"
    if style == 1:
        return f"{_digits(4)} {_digits(4)}"
    return _chars(UPPER_ALNUM, 10)


# provider tokens and key material


def _jwt() -> str:
    header = _b64url_of(
        json.dumps(
            {"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}, separators=(",", ":")
        ).encode()
    )
    claims = {
        "sub": rng.choice(USERS) + "@" + rng.choice(["corp.example", "svc.local"]),
        "iat": 1760000000 + rng.randrange(10**7),
        "exp": 1770000000 + rng.randrange(10**7),
        "scope": rng.choice(["read write", "admin", "deploy", "api"]),
    }
    payload = _b64url_of(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{_chars(B64URL, 43)}"


def _basic() -> str:
    """The Basic-auth value of a user and a password."""
    return _b64_of(f"{rng.choice(USERS)}:{_pws()}".encode())


def _b64pw() -> str:
    """A password base64-encoded, as a Kubernetes Secret's data holds it."""
    return _b64_of(rng.choice([_pw, _pws, _pwk])().encode())


def _pem() -> str:
    """One 64-character line of a PEM body."""
    return _chars(B64, 64)


def _sess() -> str:
    style = rng.randrange(3)
    if style == 0:
        return "s%3A" + _chars(B64URL, 32) + "." + _chars(B64URL, 43)
    if style == 1:
        return _chars("0123456789ABCDEF", 32)
    return _chars(HEX, 64)


def _datago() -> str:
    """A public-data-portal service key as it sits url-encoded in a query string."""
    raw = _b64_of(bytes(rng.randrange(256) for _ in range(66)))
    return raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")


def _cursor() -> str:
    """A pagination cursor: base64 of a small JSON object (not a secret)."""
    obj = {"id": rng.randrange(10**6), "ts": 1760000000 + rng.randrange(10**7)}
    return _b64_of(json.dumps(obj, separators=(",", ":")).encode())


def _ulid() -> str:
    return "01" + _chars(CROCKFORD, 24)


def _uuid() -> str:
    return "-".join(_chars(HEX, k) for k in (8, 4, 4, 4, 12))


def _pod() -> str:
    name = rng.choice(["api", "worker", "web", "billing", "gateway", "scheduler", "auth-proxy"])
    return f"{name}-{_chars(POD_SUFFIX, 10)}-{_chars(POD_SUFFIX, 5)}"


KINDS: dict[str, Callable[[], str]] = {
    # secrets
    "pw": _pw,
    "pws": _pws,
    "pwa": _pwa,
    "pwp": _pwp,
    "pwu": _pwu,
    "pwk": _pwk,
    "hpw": _hpw,
    "pwl": lambda: _pick(WORDS) + _digits(rng.randrange(2, 5)),
    "otp": lambda: _digits(6),
    "rc": _rc,
    "app": lambda: " ".join(_chars(string.ascii_lowercase, 4) for _ in range(4)),
    "totp": lambda: _chars(BASE32, 32),
    "ghp": lambda: "ghp_" + _chars(ALNUM, 36),
    "ghpat": lambda: "github_pat_11" + _chars(UPPER_ALNUM, 20) + "_" + _chars(ALNUM, 59),
    "ghs": lambda: "ghs_" + _chars(ALNUM, 36),
    "glpat": lambda: "glpat-" + _chars(B64URL, 20),
    "xoxb": lambda: f"xoxb-{_digits(11)}-{_digits(13)}-{_chars(ALNUM, 24)}",
    "xoxp": lambda: f"xoxp-{_digits(11)}-{_digits(11)}-{_digits(13)}-{_chars(HEX, 32)}",
    "hook": lambda: f"T{_chars(UPPER_ALNUM, 8)}/B{_chars(UPPER_ALNUM, 10)}/{_chars(ALNUM, 24)}",
    "akid": lambda: rng.choice(["AKIA", "ASIA"]) + _chars(UPPER_ALNUM, 16),
    "awssk": lambda: _chars(B64, 40),
    "awsst": lambda: "IQoJb3JpZ2luX2Vj" + _chars(B64, 180),
    "sk": lambda: "sk-proj-" + _chars(B64URL, 48),
    "skant": lambda: "sk-ant-api03-" + _chars(B64URL, 80) + "-" + _chars(B64URL, 6) + "AA",
    "sklive": lambda: rng.choice(["sk_live_", "rk_live_"]) + _chars(ALNUM, 32),
    "tosssk": lambda: rng.choice(["live_sk_", "test_sk_"]) + _chars(ALNUM, 20),
    "npm": lambda: "npm_" + _chars(ALNUM, 36),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + _chars(B64URL, 60),
    "hvs": lambda: "hvs." + _chars(ALNUM, 24),
    "jwt": _jwt,
    "aiza": lambda: "AIza" + _chars(B64URL, 35),
    "sg": lambda: f"SG.{_chars(B64URL, 22)}.{_chars(B64URL, 43)}",
    "hex32": lambda: _chars(HEX, 32),
    "hex40": lambda: _chars(HEX, 40),
    "hex64": lambda: _chars(HEX, 64),
    "b40": lambda: _chars(ALNUM, 40),
    "b32": lambda: _chars(ALNUM, 32),
    "b20": lambda: _chars(ALNUM, 20),
    "b24": lambda: _chars(ALNUM, 24),
    "hex8": lambda: _chars(HEX, 8),
    "d11": lambda: _digits(11),
    "unseal": lambda: _b64_of(bytes(rng.randrange(256) for _ in range(33))),
    "azkey": lambda: _chars(B64, 86) + "==",
    "basic": _basic,
    "b64pw": _b64pw,
    "sess": _sess,
    "pem": _pem,
    "pemtail": lambda: _chars(B64, rng.randrange(20, 60)) + rng.choice(["", "=", "=="]),
    "age": lambda: "AGE-SECRET-KEY-1" + _chars("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "tfc": lambda: _chars(ALNUM, 14) + ".atlasv1." + _chars(ALNUM, 67),
    "datago": _datago,
    "dckr": lambda: "dckr_pat_" + _chars(B64URL, 27),
    "sntry": lambda: "sntrys_" + _chars(B64URL, 60),
    "dop": lambda: "dop_v1_" + _chars(HEX, 64),
    # not secrets
    "sha": lambda: _chars(HEX, 40),
    "sha7": lambda: _chars(HEX, 7),
    "sha256": lambda: _chars(HEX, 64),
    "trace": lambda: _chars(HEX, 32),
    "span": lambda: _chars(HEX, 16),
    "uuid": _uuid,
    "ulid": _ulid,
    "reqid": lambda: "req_" + _chars(ALNUM, 14),
    "ray": lambda: _chars(HEX, 16) + "-ICN",
    "cursor": _cursor,
    "pod": _pod,
    "acct": lambda: _digits(12),
    "ip": lambda: f"10.{rng.randrange(0, 255)}.{rng.randrange(0, 255)}.{rng.randrange(2, 254)}",
    "port": lambda: str(
        rng.choice([5432, 3306, 6379, 5672, 27017, 1521, 1433, 8080, 8443, 9092, 9200, 15672])
    ),
    "ver": lambda: f"{rng.randrange(0, 6)}.{rng.randrange(0, 40)}.{rng.randrange(0, 15)}",
    "build": lambda: str(rng.randrange(1000, 99999)),
    "pid": lambda: str(rng.randrange(300, 65000)),
    "ms": lambda: str(rng.randrange(3, 9000)),
    "n": lambda: str(rng.randrange(2, 500)),
    "d1": lambda: _digits(1),
    "d2": lambda: _digits(2),
    "d3": lambda: _digits(3),
    "d4": lambda: _digits(4),
    "d5": lambda: _digits(5),
    "d6": lambda: _digits(6),
    "d7": lambda: _digits(7),
    "d8": lambda: _digits(8),
    "d9": lambda: _digits(9),
    "d10": lambda: _digits(10),
    "d12": lambda: _digits(12),
    "last4": lambda: _chars(ALNUM, 4),
    "up6": lambda: _chars(UPPER_ALNUM, 6),
    "up8": lambda: _chars(UPPER_ALNUM, 8),
    "low8": lambda: _chars(LOWER_ALNUM, 8),
    "date": lambda: f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
    "time": lambda: (
        f"{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}"
    ),
    "sshpub": lambda: "AAAAC3NzaC1lZDI1NTE5AAAAI" + _chars(B64, 43),
    "fp": lambda: "SHA256:" + _chars(B64, 43),
    "gpgfp": lambda: " ".join(_chars("0123456789ABCDEF", 4) for _ in range(10)),
    "h1": lambda: _b64_of(bytes(rng.randrange(256) for _ in range(32))),
    "integrity": lambda: "sha512-" + _chars(B64, 86) + "==",
    "etag": lambda: '"' + _chars(HEX, 32) + '"',
    "cid": lambda: f"{_digits(12)}-{_chars(LOWER_ALNUM, 32)}.apps.googleusercontent.com",
    "tossck": lambda: rng.choice(["live_ck_", "test_ck_"]) + _chars(ALNUM, 20),
}

_SLOT = re.compile(r"\{(" + "|".join(sorted(KINDS, key=len, reverse=True)) + r")\}")
_MARK = re.compile("⟦(.*?)⟧", re.DOTALL)


def _fill(sentence: str) -> str:
    return _SLOT.sub(lambda m: _fresh(KINDS[m.group(1)]), sentence)


def realize(sentence: str) -> tuple[str, list[str]]:
    """The sentence with its slots filled, and the values inside its marks; each value occurs
    in the text only where it was placed."""
    for _ in range(200):
        filled = _fill(sentence)
        values = _MARK.findall(filled)
        text = _MARK.sub(lambda m: m.group(1), filled)
        if all(text.count(v) == values.count(v) for v in values):
            return text, values
    raise RuntimeError(f"a value keeps colliding with its text: {sentence!r}")


Sentence = str | tuple[str, ...]
"""One line, or a tuple of lines."""


def build(
    items: list[tuple[str, Sentence]], lang: str, credential: bool
) -> list[dict[str, object]]:
    """Rows of one module: credentials carry their values, look-alikes none."""
    rows: list[dict[str, object]] = []
    for form, sentence in items:
        text, values = realize(sentence if isinstance(sentence, str) else "\n".join(sentence))
        if credential != bool(values):
            raise ValueError(f"{'no' if credential else 'a'} marked value in {sentence!r}")
        row: dict[str, object] = {"text": text, "lang": lang}
        if credential:
            row["values"] = values
        row["form"] = form
        rows.append(row)
    return rows


def write(path: Path, rows: list[dict[str, object]]) -> None:
    """Gzipped JSON lines, with no timestamp in the header: the same rows give the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    with path.open("wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(body)


def main(out: Path) -> None:
    import cred_en
    import cred_ko
    import look_en
    import look_ko

    creds = build(cred_en.ROWS, "en", True) + build(cred_ko.ROWS, "ko", True)
    looks = build(look_en.ROWS, "en", False) + build(look_ko.ROWS, "ko", False)
    write(out / "written2_credentials.jsonl.gz", creds)
    write(out / "written2_lookalikes.jsonl.gz", looks)
    print(f"{len(creds)} credential rows, {len(looks)} look-alikes -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
