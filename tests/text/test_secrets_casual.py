"""Credentials as people drop them into chat: named only by the words around them, the value
after its name with words in between, before its name, in Korean, as a PIN; and ordinary prose
about passwords, keys and codes that must never be flagged.

Every value here is made up for these tests. ``⟦ ⟧`` marks exactly the span to be found.
"""

from __future__ import annotations

from itertools import pairwise

import pytest

from squad.classifier.cues import has_secret
from squad.text.secrets import SecretMatch, find_secrets, redact
from tests.text.test_secrets import unmark

CASUAL: list[tuple[str, str]] = [
    # named by what the value opens, not by a password word
    ("password_prose", "just use ⟦sunflower88⟧ for the jenkins box"),
    ("password_prose", "try ⟦Qwerty!23⟧ on the admin account"),
    ("password_prose", "the laptop takes ⟦harbor77⟧ as the password"),
    ("credential_pair", "login as root with ⟦toor123⟧"),
    ("credential_pair", "creds are bob and ⟦Bobby#2024⟧"),
    ("credential_pair", "the office router login is still admin / ⟦harbor123⟧"),
    ("password_prose", "staging creds: user seed, pass ⟦Seedling2024!⟧"),
    # the value somewhere after its name
    ("password_prose", "password for everything on that box: the usual, ⟦Winter2024!⟧"),
    ("password_prose", "the master pw hasn't changed, still ⟦Gr33nLeaf⟧"),
    ("password_prose", "the wifi password's on the fridge: ⟦mangoTree7⟧"),
    ("password_prose", "oh the password? it's ⟦Pa55word_staging⟧"),
    ("password_prose", "Use the password '⟦tigerlily⟧' when it prompts"),
    ("password_prose", "the pass is ⟦dolphin77⟧"),
    # networks, PINs and codes
    ("password_prose", "guest wifi is Acme-Guest and the key is ⟦bluebird2020⟧"),
    ("password_prose", "ssid Orbit5G, pass ⟦orbit12345⟧"),
    ("password_prose", "the alarm pin is ⟦904412⟧"),
    ("password_prose", "door code: ⟦4471⟧"),
    ("password_prose", "the vault unseal code is ⟦7Hq2-Lm9X-4Rt8⟧"),
    # secrets: before the name, or quoted after it
    ("secret_prose", "here you go: ⟦3hd8Fk2LqZ9xWm4TyB7c⟧, that's the api key for sandbox"),
    ("secret_prose", "the shared secret is '⟦north-star-blue⟧'"),
    # Korean
    ("password_prose", "젠킨스 박스는 ⟦sunflower88⟧ 로 로그인하세요"),
    ("password_prose", "스테이징 서버는 ⟦orchid42⟧로 들어가시면 돼요"),
    ("password_prose", "그 서버 암호 알려 드릴게요, ⟦Blue!Sky22⟧"),
    ("password_prose", "도어락 번호 ⟦482213⟧이에요"),
    ("password_prose", "노트북 잠금 암호 ⟦482916⟧ 으로 바꿨어요"),
    ("password_prose", "키오스크는 잠금 화면에서 ⟦Maple#771⟧ 치시면 돼요"),
    ("password_prose", "어드민 패널 비번 오늘 아침에 ⟦Tempest#42⟧로 초기화했어요"),
    ("password_prose", "일단 비번(⟦Marlin!88⟧)은 티켓 설명에 적어 뒀어요"),
    ("password_prose", "집 와이파이 비번 바꿨어요, 이제 ⟦sunflower2025⟧예요"),
    ("secret_prose", "api 키 는 ⟦3hd8Fk2LqZ9xWm4TyB7c⟧ 에요"),
    ("credential_pair", "공유기 로그인은 아직도 admin / ⟦admin123⟧이에요, 아무도 안 바꿨어요"),
    ("password_prose", "자꾸 까먹는데 볼트 언실 코드는 ⟦7Hq2-Lm9X-4Rt8⟧이에요"),
    ("secret_prose", "로컬 테스트는 공용 키 ⟦abcd1234EFGH5678ijkl⟧ 그냥 쓰시면 돼요"),
    # a spaced user / password pair with no login word, a random token after "key"
    ("credential_pair", "ssh to the box with ops / ⟦Gr4nite!Peak⟧ and then sudo -i"),
    ("credential_pair", "SMTP 릴레이는 mailer@acme.io / ⟦Qu1ckSend⟧, 포트 587이에요"),
    ("secret_prose", "just use the key ⟦abcd1234EFGH5678ijkl⟧ for local testing"),
    ("secret_prose", "the key ⟦aB3x9Kq2mZ7pL4wT⟧ works for the sandbox"),
]

PROSE: list[str] = [
    # passwords, keys and codes talked about, none given
    "the password policy requires 12 characters and a symbol",
    "passwords are hashed with argon2id in this service",
    "the password reset emails go through Postmark",
    "the API key is read from the PAYMENTS_API_KEY env var",
    "the token expires after 15 minutes",
    "we pass the token in the Authorization header",
    "the secret is in Vault under kv/payments",
    "The secret to fast builds is caching the deps layer.",
    "the secret is 'consistency'",
    "The secret is 'less-is-more'",
    'the client secret is "my-app"',
    "key takeaway: pin your base images",
    "The door code thing is handled by facilities.",
    "pin 2048 rows per batch",
    "we pin 3 versions of the runtime",
    "the pass rate is 98% now",
    "the first pass is O(n log n)",
    "log in as admin with SSO",
    "the login flow is still SSO / SAML",
    "wifi is flaky in the office",
    # versions and tools next to "use", "for the box", "as", "로 로그인"
    "use python3 for the build box",
    "use node18 for the CI runner",
    "use arm64 for the build box",
    "use t3.large for the staging db",
    "I use node18 as the runtime for the build box",
    "use ubuntu2204 for the runner box",
    "the user service passes ids around, pass v2 to the new endpoint",
    "OAuth2로 로그인하세요",
    "SSO로 로그인하시면 돼요",
    "npm install 치시면 돼요",
    "python3 입력하면 REPL이 떠요",
    "그 서버는 ubuntu22로 돌아가요",
    # Korean prose about passwords and tokens
    "비밀번호는 bcrypt로 해시해요",
    "비밀번호 정책은 Argon2id로 해시해요",
    "토큰은 15분 뒤에 만료돼요",
    "비밀번호 12자리 이상이어야 해요",
    "user_id는 pass through 돼요",
    # pairs with a slash and keys that are names, versions or ids
    "TCP / UDP both work",
    "we support iOS / Android12 only",
    "staging / prod2024 are separate",
    "GPT-4o / Claude3 comparison",
    "we moved from Webpack5 / Babel7 to Vite",
    "the PR by dev-ops / Release2024Q1 team",
    "node18 / node20 matrix",
    "로그인은 아직도 SSO / SAML이에요",
    "the key 3f9a8b7c6d5e4f3a2b1c9d8e is the commit",
    "the key customerIdAndRegion2024 is fine",
    "the key user_profile_settings_v2 here",
    "the partition key customerIdAndRegion2024 is fine",
    "idempotency key order-2024-11-30-abcdef",
    "uuid key 550e8400-e29b-41d4-a716-446655440000",
    "복구 코드는 금고에 있어요",
    "복구 키는 나중에 드릴게요",
]
STRUCTURED = [  # holds no password for the memory writer; the classifier may refuse it
    "password: ENC[AES256_GCM,data:Tr4k2Q==,iv:abc,tag:def,type:str]",
]


@pytest.mark.parametrize(("kind", "marked"), CASUAL, ids=[m for _, m in CASUAL])
def test_a_casual_credential_is_found_at_exactly_its_value_and_refused_by_the_classifier(
    kind: str, marked: str
) -> None:
    text, spans = unmark(marked)
    found = find_secrets(text)
    assert found == [SecretMatch(kind, start, end) for start, end in spans], "found exactly"
    redacted, _ = redact(text)
    assert [text[start:end] for start, end in spans if text[start:end] in redacted] == [], (
        "redact removes the value"
    )
    assert redact(redacted) == (redacted, []), "redact is idempotent"
    assert has_secret(text), "the classifier refuses it"


def test_prose_about_credentials_is_not_a_credential() -> None:
    flagged = [f"{text!r}: {found}" for text in PROSE + STRUCTURED if (found := find_secrets(text))]
    assert not flagged, "\n".join(["the writer finds credentials in prose:", *flagged])


@pytest.mark.parametrize(
    "text",
    [
        "비번 1234",
        "the password is 4471.",
        "the pin is 1234",
        "paste this into the header: 8fK2LmQ9xR4tZ7vB1nC3, should work",
    ],
)
def test_the_classifier_is_wider_than_the_memory_writer(text: str) -> None:
    """A short PIN after a password word, a generated-looking token with no name at all."""
    assert has_secret(text)


CLASSIFIER_PROSE = [  # the prose above, and numbers, hashes and names near a cue word
    *PROSE,
    "password must be 12 characters",
    "비밀번호 1234자리",
    "암호 2048비트",
    "password hashing uses 4096 rounds",
    "password is 1.2345",
    "commit 3f9a2c1e8b7d6f5a4c3b2a1f0e9d8c7b6a5f4e3d",
    "ProcessPaymentHandler2024 is the class",
    "the cache key is user_id2",
    "run test_Checkout_Flow_2024_v2 again",
]


def test_the_classifier_does_not_refuse_prose() -> None:
    refused = [repr(text) for text in CLASSIFIER_PROSE if has_secret(text)]
    assert not refused, "\n".join(["the classifier refuses prose:", *refused])


HOSTILE = {
    "use-words": "use " * 10_000 + "x",
    "use-values": "use a1b2c3d4 " * 4_000,
    "pw-commas": "password , , " * 4_000,
    "pw-window": ("pw " + "a, " * 30) * 500,
    "parens": "(" * 30_000,
    "login-as": "login as a " * 5_000,
    "wifi-key": "wifi " * 10_000 + "key",
    "the-pass": "the pass " * 6_000,
    "ko-pw": "비번 " * 10_000,
    "ko-pw-values": "비번 a1b2c3로 " * 3_000,
    "pins": "pin is " * 6_000,
    "codes": "door code " * 6_000 + "1234",
    "value-then-name": "A1b2C3d4E5f6G7h8I9 " * 3_000 + "is the token",
    "type-values": "x1y2z3w4 " * 5_000 + "치시면",
    "creds": "creds are a and " * 4_000,
    "user-then": "user " * 8_000 + "pass x1y2z3w4",
    "as-password": "a1b2c3d4 " * 5_000 + "as the password",
    "spaces-paren": "비번" + " " * 50_000 + "(x",
    "spaces-token": "token:" + " " * 50_000 + "x",
    "spaces-door": "도어락" + " " * 50_000 + "x",
    "spaces-pin": "pin" + " " * 50_000 + "is x",
    "spaces-wifi": "wifi" + " " * 50_000 + "key x",
    "ko-later": "비번 " + "가" * 30_000,
    "tokens": "Ab1" * 10 + " " + "Ab1" * 20_000,
    "slashes": "a / " * 10_000 + "Gr4nite!Peak",
    "keys": "key " * 10_000 + "aB3x9Kq2mZ7pL4wT",
    "key-word": "a" * 50_000 + " key x",
    "ko-pair-still": "로그인은 아직도 a / " * 3_000,
    "ko-codes": "언실 코드는 " * 5_000,
    "context-words": "password " * 10_000 + "Summer2025!",
    "context-values": "login " + "Ab1!cdefg " * 5_000,
    "named-secrets": "client secret " * 5_000 + "x",
    "code-lists": "backup codes: " + "1234 5678 " * 5_000,
    "docker-login": "docker login " * 5_000 + "-p x",
    "public-blocks": "-----BEGIN PUBLIC KEY-----\n" * 3_000 + "Ab1+" * 1_000,
    "table-rows": "user\tpassword\n" + "a\tb\t" * 20_000,
    "table-headers": "user|password\n" * 10_000,
    "login-lines": "login\nx\n" * 10_000,
}


@pytest.mark.timeout(30)  # about 2 s each at most today
@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_scanned_without_backtracking(text: str) -> None:
    """Must finish: the time limit fails catastrophic backtracking; no wall-clock asserts."""
    _, matches = redact(text)
    assert all(a.end <= b.start for a, b in pairwise(matches))
    has_secret(text)
