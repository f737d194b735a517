"""Synthetic chat messages with and without credentials, for training the learned detector.

Written from the kinds of message people send (a password in a sentence, a code read out, a
key spelled for a colleague) and the kinds that only look like them (policies, order numbers,
error codes, versions), in English and Korean. Seeded: every run writes the same rows. None of
it comes from an evaluation set.

Each row: ``{"text", "lang", "values", "form"}``; ``values`` is empty for a look-alike.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator

Row = dict[str, object]

_WORDS = [
    "tiger",
    "lamp",
    "orbit",
    "velvet",
    "harbor",
    "pencil",
    "canyon",
    "maple",
    "river",
    "silver",
    "winter",
    "sunset",
    "falcon",
    "ocean",
    "copper",
    "garden",
    "rocket",
    "meadow",
    "thunder",
    "violet",
    "marble",
    "puzzle",
    "cactus",
    "lemon",
    "forest",
    "shadow",
    "amber",
    "panda",
    "comet",
    "willow",
    "crystal",
    "dragon",
    "summer",
    "autumn",
    "spring",
    "cobalt",
    "hazel",
    "pepper",
    "nova",
    "echo",
    "delta",
]
_HANGUL_WORDS = [
    "사과",
    "하늘",
    "바다",
    "별빛",
    "나무",
    "고양이",
    "강아지",
    "노을",
    "구름",
    "바람",
    "호수",
    "달빛",
    "봄날",
    "여름",
    "가을",
    "겨울",
    "토끼",
    "무지개",
]
_NAMES = [
    "maria",
    "jin",
    "tom",
    "alice",
    "bob",
    "minsu",
    "jiyeon",
    "ops",
    "deploy",
    "admin",
    "root",
    "svc-backup",
    "ci-bot",
    "kim",
    "lee",
]
_SYSTEMS_EN = [
    "staging box",
    "prod db",
    "jenkins",
    "router",
    "wifi",
    "vpn",
    "nas",
    "grafana",
    "the shared mailbox",
    "the build server",
    "the office printer",
    "netflix",
    "the bank app",
    "the laptop",
    "the kiosk",
    "the old wiki",
    "postgres",
    "redis",
    "the admin panel",
    "the camera",
    "the test phone",
]
_SYSTEMS_KO = [
    "스테이징 서버",
    "운영 DB",
    "공유기",
    "와이파이",
    "사내 VPN",
    "NAS",
    "젠킨스",
    "관리자 페이지",
    "노트북",
    "테스트폰",
    "메일 계정",
    "그라파나",
    "회사 금고",
    "도어락",
]


def _password(rng: random.Random) -> str:
    style = rng.randrange(7)
    word = rng.choice(_WORDS)
    if style == 0:
        return word.capitalize() + str(rng.randrange(10, 9999)) + rng.choice("!@#$%&*?")
    if style == 1:
        leet = word.translate(str.maketrans("aeio", "4310"))
        return leet + rng.choice(["", "!", "#", "2024", "99"])
    if style == 2:
        chars = string.ascii_letters + string.digits + "!@#$%^&*"
        return "".join(rng.choice(chars) for _ in range(rng.randrange(8, 16)))
    if style == 3:
        first, second = rng.choice(_WORDS).capitalize(), rng.choice(_WORDS).capitalize()
        return f"{first}-{second}-{rng.randrange(10, 99)}"
    if style == 4:
        return word + str(rng.randrange(1, 999))
    if style == 5:
        return rng.choice(_NAMES).capitalize() + rng.choice(["1234", "123!", "2023", "0000", "!!"])
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(6, 10)))


def _hangul_password(rng: random.Random) -> str:
    return (
        rng.choice(_HANGUL_WORDS)
        + rng.choice(_HANGUL_WORDS)
        + rng.choice(["", "123", "7", "2024", "!"])
    )


def _digits(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(rng.randrange(lo, hi + 1)))


def _passphrase(rng: random.Random) -> str:
    sep = rng.choice([" ", " ", "-", "."])
    return sep.join(rng.sample(_WORDS, rng.randrange(3, 6)))


def _spelled(value: str, rng: random.Random) -> str:
    return rng.choice([" ", "-", ", ", " - ", ". "]).join(value)


def _groups(rng: random.Random, width: int = 4, count: int = 4) -> str:
    return " ".join(
        "".join(rng.choice(string.ascii_lowercase) for _ in range(width)) for _ in range(count)
    )


_NAMES_EN = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "kilo",
    "lima",
    "tango",
    "capital",
    "lowercase",
    "seven",
    "three",
    "nine",
    "two",
    "dash",
]
_NAMES_KO = [
    "에이",
    "비",
    "씨",
    "디",
    "케이",
    "엘",
    "엠",
    "대문자",
    "소문자",
    "일",
    "이",
    "삼",
    "칠",
    "구",
    "느낌표",
    "골뱅이",
]


def _spelled_names(rng: random.Random, lang: str) -> str:
    names = _NAMES_EN if lang == "en" else _NAMES_KO
    parts = [
        rng.choice(names) if rng.random() < 0.7 else rng.choice("abkmqx27!")
        for _ in range(rng.randrange(5, 9))
    ]
    return rng.choice([" ", ", "]).join(parts)


def _dial(rng: random.Random, lang: str) -> str:
    sides = ["right", "left"] if lang == "en" else ["오른쪽으로", "왼쪽으로"]
    turns = [f"{sides[i % 2]} {rng.randrange(1, 99)}" for i in range(rng.randrange(3, 5))]
    return ", ".join(turns)


def _combo(rng: random.Random) -> str:
    return rng.choice([" ", "-", "-"]).join(str(rng.randrange(1, 60)) for _ in range(3))


def _share(rng: random.Random) -> str:
    body = "".join(rng.choice("0123456789abcdef") for _ in range(rng.randrange(40, 66)))
    return rng.choice([f"{rng.randrange(1, 6)}-{body}", body])


_EN: list[tuple[str, Callable[[random.Random], str], list[str]]] = [
    (
        "password in prose",
        _password,
        [
            "the {sys} password is {v}",
            "pw for {sys}: {v}",
            "{sys} login is {name} and the password {v}",
            "I set the {sys} password to {v} for now",
            "use {v} to get into {sys}",
            "password? it's {v}",
            "log in as {name} with {v}",
            "{name} / {v} works on {sys}",
            "creds for {sys} are {name} {v}",
            "new pass for {sys} is {v}, old one is dead",
            "passcode: {v}",
            "the {sys} one is {v} btw (password)",
            "changed it to {v} after the audit, that's the {sys} password",
            "try {v} on {sys}, that should be the password",
            "username {name}, password {v}",
            "login {name} pass {v}",
            "{sys} pwd -> {v}",
            "fyi the master password is now {v}",
            "the password for the zip is {v}",
            "archive pw is {v}",
            "unzip it with {v}",
            "the 7z file is protected with {v}",
            "mot de passe for {sys}: {v}",
            "can you set it to {v}",
            "wrong one before, it's {v}",
            "oops typo, the real one is {v}",
            "the {sys} credentials: {name} and {v}",
            "sign in to {sys} as {name}, pass is {v}",
            "it opens with: {v}",
            "{sys} admin: {name} {v}",
            "reset done, temp password {v}",
            "the {sys} key is {v}",
            "secret for {sys}: {v}",
            "{sys} login — {name} / {v}",
        ],
    ),
    (
        "passphrase",
        _passphrase,
        [
            "passphrase: {v}",
            "phrase is {v}",
            "the key passphrase is {v}",
            "unlock phrase {v}",
            "backup phrase for the wallet: {v}",
            "the gpg passphrase is '{v}'",
            "pass phrase = {v}",
        ],
    ),
    (
        "one-time code",
        lambda r: _digits(r, 6, 8),
        [
            "your verification code is {v}",
            "code {v} expires in 5 min",
            "the OTP is {v}",
            "2fa code: {v}",
            "enter {v} on the login screen, it's the sms code",
            "MFA token {v}",
            "auth code just came in: {v}",
            "use this one-time code {v}",
            "the magic code was {v}",
            "backup code {v} still unused",
            "recovery code: {v}",
            "code came in: {v} quick",
        ],
    ),
    (
        "pin or security code",
        lambda r: _digits(r, 3, 6),
        [
            "card pin is {v}",
            "my PIN: {v}",
            "the cvv is {v}",
            "security code on the back: {v}",
            "CVC {v}, exp 09/27",
            "door code {v}",
            "alarm code is {v}",
            "the phone unlock pin is {v}",
            "locker combo {v}",
            "the garage keypad code is {v}",
        ],
    ),
    (
        "safe combination",
        _combo,
        [
            "the safe combination is {v}",
            "safe opens on {v}",
            "combo for the safe: {v}",
            "lock combination {v}",
            "the padlock combo is {v}",
        ],
    ),
    (
        "spelled password",
        lambda r: _spelled(_password(r)[:8], r),
        [
            "spelling it out: {v}",
            "the password, letter by letter: {v}",
            "it's {v} (password)",
            "pw spelled {v}",
            "type exactly {v} for the password",
        ],
    ),
    (
        "app password in groups",
        _groups,
        [
            "app password: {v}",
            "the gmail app password is {v}",
            "generated app password {v}",
            "use the app-specific password {v}",
            "here's the app pw {v}",
        ],
    ),
    (
        "unseal share",
        _share,
        [
            "unseal key 1: {v}",
            "my vault unseal share is {v}",
            "recovery share {v}",
            "shamir share #2 = {v}",
            "keep this unseal key safe: {v}",
        ],
    ),
    (
        "pgpass line",
        lambda r: f"db.internal:5432:app:{r.choice(_NAMES)}:{_password(r)}",
        [
            "pgpass: {v}",
            "here's my .pgpass {v}",
            "add this line {v}",
            "the pgpass entry is {v}",
        ],
    ),
    (
        "unseal share more",
        _share,
        [
            "unseal share 3 of 5: {v}",
            "here's my key shard for the vault: {v}",
            "recovery key share (mine): {v}",
            "the unseal key they gave me is {v}",
            "key share {v} — don't post it anywhere",
        ],
    ),
    (
        "spelled by name",
        lambda r: _spelled_names(r, "en"),
        [
            "the password, spelled: {v}",
            "it's {v} (that's the wifi pw)",
            "read it back to me: {v}",
            "pw is {v}",
        ],
    ),
    (
        "safe dial",
        lambda r: _dial(r, "en"),
        [
            "the safe: {v}, then pull",
            "to open the safe turn {v}",
            "dial it {v} and it opens",
        ],
    ),
    (
        "split password",
        lambda r: _password(r),
        [
            "first half is {v} and the second half I'll DM you",
            "the password starts with {v}",
            "it's two parts, the first is {v}",
        ],
    ),
]

_KO: list[tuple[str, Callable[[random.Random], str], list[str]]] = [
    (
        "password in prose ko",
        _password,
        [
            "{sys} 비번은 {v}예요",
            "{sys} 비밀번호 {v} 입니다",
            "{sys} 암호: {v}",
            "패스워드는 {v}이에요",
            "{sys} 접속 암호 {v}",
            "로그인은 {name} / {v}",
            "아이디 {name} 비번 {v}",
            "{v}로 로그인하세요",
            "{sys} 비번 {v}로 바꿨어요",
            "압축 파일 비번은 {v}",
            "압축 풀 때 {v} 넣으세요",
            "계정 정보: {name} {v}",
            "접속 비번이 {v}이에요",
            "새 비번 {v} 입니다",
            "비번 알려드릴게요 {v}",
            "마스터 비번 {v}",
        ],
    ),
    (
        "hangul password",
        _hangul_password,
        [
            "{sys} 비번은 {v}예요",
            "비밀번호는 {v}",
            "암호는 {v}입니다",
            "와이파이 비번 {v}",
            "패스워드 {v}로 했어요",
        ],
    ),
    (
        "code ko",
        lambda r: _digits(r, 4, 8),
        [
            "인증번호는 {v}입니다",
            "인증 코드 {v}",
            "OTP {v} 입력하세요",
            "카드 비밀번호 {v}",
            "도어락 번호 {v}이에요",
            "현관 비번 {v}",
            "보안코드 {v}",
            "CVC는 {v}",
            "금고 번호는 {v}",
            "핀 번호 {v}",
        ],
    ),
    (
        "spelled ko",
        lambda r: _spelled(_password(r)[:8], r),
        [
            "비번 한 글자씩: {v}",
            "비밀번호 철자는 {v}",
            "{v} 이렇게 치면 돼요 (비번)",
        ],
    ),
    (
        "safe dial ko",
        lambda r: _dial(r, "ko"),
        [
            "금고는 {v} 맞추면 열려요",
            "금고 다이얼 {v} 순서예요",
            "{v} 돌리면 금고 열려요",
        ],
    ),
    (
        "digits with particle ko",
        lambda r: _digits(r, 4, 6),
        [
            "사물함 비밀번호 {v}로 바꿨어요",
            "현관 비번 {v}로 해놨어",
            "도어락 {v}으로 변경",
            "폰 잠금 {v}이야",
        ],
    ),
    (
        "spelled by name ko",
        lambda r: _spelled_names(r, "ko"),
        [
            "비번 불러드릴게요 {v}",
            "비밀번호는 {v} 이에요",
            "한 글자씩: {v}",
        ],
    ),
    ("unseal share ko", _share, ["언실 키 {v}", "복구 키 조각 {v} 입니다", "볼트 언실 쉐어: {v}"]),
    (
        "app password ko",
        _groups,
        ["앱 비밀번호는 {v}", "앱 전용 비번 {v} 이에요", "지메일 앱 비번 {v}"],
    ),
    ("passphrase ko", _passphrase, ["복구 문구는 {v}", "패스프레이즈 {v}", "니모닉: {v}"]),
]

_LOOKALIKES_EN = [
    "the password must be at least {n} characters",
    "reset your password at the portal, link expires in {n} minutes",
    "order number {d} shipped today",
    "error code {e} on the login page",
    "ticket {d} is about the {sys} password reset",
    "version {ver} fixed the pin bug",
    "room {n} at 3pm for the code review",
    "the safe bet is {w}",
    "use {w} instead of the old helper",
    "combination of {w} and {w2} works",
    "the passphrase policy needs {n} words",
    "pin the dependency to {ver}",
    "the code is in {w}/{w2}.py",
    "password field shows {w} now",
    "call me at 010-{n4}-{n4}",
    "invoice {d} is due",
    "my login is fine, the {sys} is down",
    "the pgpass file lives at ~/.pgpass",
    "app password support is {w} in the new release",
    "door code changes every month, ask {name}",
    "OTP delivery takes {n} seconds",
    "the cvv field is optional",
    "spell it out for the docs: r-e-a-d-m-e",
    "groups of {n} per batch",
    "code {e} means rate limited",
    "password: see 1Password, {sys} entry",
    "the token budget is {n}",
    "build {d} passed, key metrics in grafana",
    "login with {name}'s account is blocked",
    "the password reset email says {w}",
    "pin: {ver} is the target",
    "commit {h} has the password validation fix",
    "the key is {n} bits",
    "PR {n} changes the code owners",
    "meeting code for zoom is on the calendar",
    "shipment tracking {d}",
    "we use {w} as the password hashing lib",
    "order id {id} was charged twice",
    "trace id {hex} shows the timeout in the auth service",
    "request id {uuid} failed",
    "commit {h} fixed the login bug",
    "the key id is {HEX8}, signed with gpg",
    "host key fingerprint SHA256:{b64}",
    "mac address {mac}",
    "the printer ip is 10.{n3}.{n3}.{n3}",
    "GA measurement id is G-{UP}",
    "gtm container GTM-{UP}",
    "test card 4242 4242 4242 4242 works in stripe test mode",
    "cron {n2} {n2} * * *",
    "use {color} for the login button",
    "ticket PROJ-{n} covers the password reset flow",
    "image digest sha256:{hex}",
    "tracking number 1Z{UP}{d}",
    "the instance is {w}-{n} in us-east-1",
    "the bucket is {w}-{w2}-{n}",
    "session started at {time}",
    "the file is report_{n}_{w}.xlsx",
    "model gpt-4o-mini with {n} tokens",
    "login is {name}@example.com, ask for the password",
    "username is {name}",
    "the login user is {name}, password is in the vault",
    "key rotation happens every {n} days",
    "the api key lives in $API_KEY",
    "token expired at {time}",
    "the otp secret is stored in vault, path secret/{w}",
    "pin {w} to version {ver}",
    "code freeze starts {date}",
    "release code name is {w}",
    "the code {w}_{w2}() is slow",
    "backup codes are in the safe",
    "unseal needs 3 of 5 key shares",
    "the safe is in room {n}",
    "combo box shows {w}",
    "group {n} of {n2} finished",
    "app password page: myaccount.google.com/apppasswords",
    "spelled {w} wrong in the docs",
    "uuid key {uuid}",
    "idempotency key {w}-{date}-{h}",
    "cache key {w}_{n}",
    "sort key {w}_{w2}",
    "partition key {w}Id",
    "primary key {w}_id",
    "the key {w}.{w2} is missing from the config",
    "foreign key {w}_{n}",
    "press ctrl+shift+{n2} to open it",
    "the S3 key is uploads/{date}/{h}.png",
    "object key {w}/{uuid}.json",
    "the redis key session:{hex}",
    "token count was {n}",
    "the password hash is bcrypt $2b$12$...",
    "api version {ver}, key not needed",
    "the access key id is in the AWS console, never in chat",
    "password must be {n2} characters",
    "pin is {n2} digits long",
    "the code has {n} lines",
    "password expires in {n} days",
    "{n} failed password attempts",
    "otp window is {n2} seconds",
    "the key is {n} bits long",
    "passphrase of {n2} words",
    "the hook greps for `{w}_[A-Za-z0-9]{{{n2}}}` before every push",
    "regex for the token: ^[a-z]{{{n2}}}-\\d+$",
    "cf-ray: {hex}-ICN, x-request-id: {uuid}",
    "customer cus_{UP}{b62} has two subscriptions",
    "invoice in_{b62} failed",
    "charge ch_{b62} was refunded",
    "the file name is {b64}.pdf",
    "build id {UP}-{n}, commit {h}",
    "compare GPT-4o / Claude-3.5 on the evals",
    "run it on arm64 / x86_64",
    "python3.12 / node20 in CI",
    "video id {b62} is the demo",
    "short link bit.ly/{b62}",
    "build {b62} passed on main",
    "job {b62} finished in {n}s",
    "the doc id is {b62}",
    "asset {b62}.png uploaded",
    "ref {b62} in the changelog",
    "row {b62} updated",
    "see {b62} for details",
    "the zip is {n} MB",
    "archive {w}-{date}.tar.gz is on the nas",
    "the public key is ssh-ed25519 AAAAC3Nza{b64} {name}@laptop",
]

_LOOKALIKES_KO = [
    "비밀번호는 {n}자 이상이어야 해요",
    "인증번호가 안 와요",
    "주문번호 {d} 배송됐어요",
    "에러 코드 {e} 나와요",
    "비번 바꾸는 방법 알려주세요",
    "버전 {ver}에서 고쳐졌어요",
    "회의실 {n}호에서 코드 리뷰해요",
    "비번은 금고 관리자한테 물어보세요",
    "암호화는 {w}로 해요",
    "도어락 번호는 매달 바뀌어요",
    "전화번호 010-{n4}-{n4}",
    "송장번호 {d}",
    "앱 비밀번호 기능은 {w} 버전부터 돼요",
    "OTP 앱 설치하세요",
    "비밀번호 입력란이 안 보여요",
    "카드 결제 {n}원",
    "요청 ID {uuid} 로그 확인 부탁드려요",
    "트레이스 ID {hex} 보면 타임아웃이에요",
    "장비 MAC 주소 {mac}",
    "GPG 키 ID {HEX8} 로 서명돼 있어요",
    "커밋 {h} 에서 로그인 버그 고쳤어요",
    "주문 ID {id} 결제가 두 번 됐어요",
    "측정 ID G-{UP} 로 세팅했어요",
    "프린터 IP는 10.{n3}.{n3}.{n3}",
    "서명된 URL은 최대 {n2}일까지만 유효해요",
    "토큰 만료 시간은 {n}초예요",
    "비번은 볼트에 있어요 secret/{w}",
    "키는 {n}비트예요",
    "아이디는 {name}이고 비번은 관리자한테 물어보세요",
    "로그인 아이디 {name}",
    "금고는 {n}호실에 있어요",
    "인증 코드 유효시간 {n2}분",
    "압축 파일은 {n}MB예요",
    "코드 리뷰 {date}에 해요",
    "버전 코드 {n} 올렸어요",
    "공개키는 ssh-ed25519 AAAAC3Nza{b64} 이거예요",
    "비밀번호 {n}자리",
    "비밀번호는 {n2}자리 이상",
    "PIN {n2}자리",
    "인증번호 6자리 숫자",
    "암호 {n}비트",
    "키 길이 {n}비트",
    "비번 {n2}글자 넘어야 해요",
    "OTP {n2}초마다 바뀌어요",
    "코드 {n}줄 고쳤어요",
    "비밀번호 {n2}회 틀리면 잠겨요",
    "base64로 인코딩된 파일명이에요: {b64} (정산서.pdf)",
    "훅에서 `{w}_[A-Za-z0-9]{{{n2}}}` 패턴 검사해요",
    "고객 cus_{UP}{b62} 구독이 두 개예요",
    "요청 ID {uuid} 로 찾아보세요",
    "에러 코드 E{n} 발생",
    "티켓 PROJ-{n} 비밀번호 재설정 건",
    "색상 {color} 로 바꿨어요",
    "cron {n2} {n2} * * * 로 바꿨어요",
]


def _fill(template: str, value: str, rng: random.Random, systems: list[str]) -> str:
    return template.format(v=value, sys=rng.choice(systems), name=rng.choice(_NAMES))


def _lookalike(template: str, rng: random.Random) -> str:
    return template.format(
        n=rng.randrange(2, 2000),
        n4=_digits(rng, 4, 4),
        d=_digits(rng, 5, 10),
        e=rng.choice(["500", "403", "E1042", "429"]),
        ver=f"{rng.randrange(1, 9)}.{rng.randrange(0, 20)}.{rng.randrange(0, 9)}",
        w=rng.choice(_WORDS),
        w2=rng.choice(_WORDS),
        sys=rng.choice(_SYSTEMS_EN),
        name=rng.choice(_NAMES),
        h="".join(rng.choice("0123456789abcdef") for _ in range(7)),
        hex="".join(rng.choice("0123456789abcdef") for _ in range(rng.choice([16, 24, 32, 40]))),
        HEX8="".join(rng.choice("0123456789ABCDEF") for _ in range(rng.choice([8, 16]))),
        uuid="-".join(
            "".join(rng.choice("0123456789abcdef") for _ in range(k)) for k in (8, 4, 4, 4, 12)
        ),
        mac=":".join("".join(rng.choice("0123456789abcdef") for _ in range(2)) for _ in range(6)),
        b62="".join(
            rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randrange(14, 24))
        ),
        b64="".join(
            rng.choice(string.ascii_letters + string.digits + "+/")
            for _ in range(rng.randrange(20, 44))
        ),
        UP="".join(
            rng.choice(string.ascii_uppercase + string.digits) for _ in range(rng.randrange(6, 11))
        ),
        id=rng.choice(["ord_", "A", "#", ""]) + _digits(rng, 6, 12),
        n2=rng.randrange(1, 60),
        n3=rng.randrange(0, 255),
        color="#" + "".join(rng.choice("0123456789abcdef") for _ in range(6)),
        time=f"{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}",
        date=f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
    )


def rows(seed: int = 20261206, per_template: int = 3) -> Iterator[Row]:
    """The synthetic rows: every credential template ``per_template`` times, then look-alikes."""
    rng = random.Random(seed)
    for lang, table, systems in (("en", _EN, _SYSTEMS_EN), ("ko", _KO, _SYSTEMS_KO)):
        for form, make, templates in table:
            for template in templates:
                for _ in range(per_template):
                    value = make(rng)
                    yield {
                        "text": _fill(template, value, rng, systems),
                        "lang": lang,
                        "values": [value],
                        "form": form,
                    }
    for lang, templates in (("en", _LOOKALIKES_EN), ("ko", _LOOKALIKES_KO)):
        for template in templates:
            for _ in range(per_template * 2):
                yield {
                    "text": _lookalike(template, rng),
                    "lang": lang,
                    "values": [],
                    "form": "look-alike",
                }
