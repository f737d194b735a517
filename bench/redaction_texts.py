"""Texts of every shape the redactor is fed, generated (seeded) at any size, for
``bench.redaction_scale``.

Each maker returns ``size`` characters of one shape, a fake credential every few hundred lines
so the finders have something to find. The shapes differ in what the rule modules key on: cue
words ("password", "token", "비번", "login"), assignments, table separators, base64, newlines.

* ``log+markdown``: what a workspace holds most: run logs, JSONL events, notes with headings,
  lists and tables, a code block; short lines.
* ``one long line``: a minified JSON export with base64 payloads, no newline at all (issue 30).
* ``blobs on one line``: padded base64 chunks separated by spaces, no newline: every chunk is a
  candidate credential.
* ``chat prose``: English chat about credentials without one: "the token expired again", "did
  you rotate the staging password?", "login is broken", "same as before".
* ``korean chat``: the same in Korean: "비번 바꿨어요?", "토큰 만료됐어요", "로그인이 안 돼요".
* ``env dump``: a ``.env`` / config dump, one assignment a line, many named ``*_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, most with placeholders or references.
* ``markdown tables``: tables, some with a password or token column.
* ``json log``: JSON lines whose keys name tokens and keys (``token_count``, ``api_key_id``,
  ``refresh_token``).
* ``short lines``: one or two words a line, many of them cues ("password:", "token?").
* ``credential dump``: a credential on every other line, in every form the finders know.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

_WORDS = [
    "the",
    "agent",
    "wrote",
    "a",
    "plan",
    "for",
    "task",
    "review",
    "deploy",
    "build",
    "test",
    "merge",
    "config",
    "file",
    "output",
    "result",
    "memory",
    "section",
    "insight",
    "coding",
    "rule",
    "decision",
    "project",
    "context",
    "squad",
    "run",
    "step",
    "tool",
    "call",
    "cache",
    "retry",
    "budget",
    "schema",
    "worker",
    "queue",
    "latency",
]
_B62 = string.ascii_letters + string.digits


def _token(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(_B62) for _ in range(n))


def _lines(size: int, line: Callable[[int], str], sep: str = "\n") -> str:
    parts: list[str] = []
    total = i = 0
    while total < size:
        i += 1
        part = line(i)
        parts.append(part)
        total += len(part) + len(sep)
    return sep.join(parts)[:size]


def log_and_markdown(size: int, seed: int = 7) -> str:
    """Logs, events and notes, a credential every ~900 lines."""
    rnd = random.Random(seed)

    def words(n: int) -> str:
        return " ".join(rnd.choice(_WORDS) for _ in range(n))

    def line(i: int) -> str:
        kind = i % 9
        if i % 1800 == 5:
            return "db password: Tr0ub4dor&3x"
        if i % 900 == 5:
            return "export OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34"
        if kind == 0:
            return f"## Section {i}: {words(5)}"
        if kind == 1:
            event = {"event": "task_done", "run": f"r{i:06x}", "tokens": rnd.randint(10, 9000)}
            return json.dumps(event)
        if kind == 2:
            return f"2026-12-06 05:{i % 60:02d}:{i % 60:02d} INFO step={i} agent=writer {words(8)}"
        if kind == 3:
            return f"- {words(12)}."
        if kind == 4:
            return f"    def step_{i}(x: int) -> int:  # returns x + {i}"
        if kind == 5:
            return f"| {rnd.choice(_WORDS)} | {rnd.randint(1, 99)} | {words(2)} |"
        return words(rnd.randint(5, 15))

    return _lines(size, line)


def one_long_line(size: int, seed: int = 7) -> str:
    """Minified JSON: messages with base64 payloads, some with a name and a digest."""
    rnd = random.Random(seed)

    def record(i: int) -> str:
        payload = base64.b64encode(rnd.randbytes(rnd.randint(24, 40))).decode()
        fields: dict[str, object] = {"id": i, "payload": payload}
        if i % 4 == 0:
            fields |= {"name": f"{rnd.choice(_WORDS)}-{i}", "sha256": rnd.randbytes(32).hex()}
        return json.dumps(fields, separators=(",", ":"))

    return ("[" + _lines(size, record, ",") + "]")[:size]


def blobs_on_one_line(size: int, seed: int = 7) -> str:
    """Padded base64 chunks separated by spaces, no newline."""
    rnd = random.Random(seed)
    chunks = (base64.b64encode(rnd.randbytes(31)).decode() for _ in range(size // 44 + 1))
    return " ".join(chunks)[:size]


_CHAT_EN = (
    "did you rotate the password for the staging box?",
    "the token expired again, can you send a new one when you get a chance",
    "my password is wrong apparently, I'll reset it tomorrow",
    "login page is broken on mobile, the account menu never opens",
    "the api key for the sandbox is in the vault, ask Dana",
    "same as before, nothing changed since last week",
    "the admin said the secret rotation runs every 90 days",
    "can you check whether the access token has the right scopes?",
    "pw reset link never arrived, checked spam too",
    "creds are in 1Password under 'staging'",
    "the key is to keep the budget under 2000 tokens per call",
    "is the passphrase required for login or optional?",
    "ok so the root account is locked until someone from ops unlocks it",
    "I used the usual flow: sign in, open settings, regenerate the key",
    "thanks! see you tomorrow at the standup",
    "what's the wifi password? the guest one",
    "never mind, found it",
    "we still need a token budget for the summariser, maybe 4096?",
    "the password policy says 12 characters minimum with a symbol",
    "bearer tokens go in the Authorization header, not in the query string",
)


def chat_prose(size: int, seed: int = 7) -> str:
    """English chat about credentials, one message a line, a real one every ~700 lines."""
    rnd = random.Random(seed)

    def line(i: int) -> str:
        if i % 700 == 5:
            return f"the wifi password is Tr0ub4dor&{i % 10}x"
        if i % 1100 == 7:
            return f"use the key {_token(rnd, 24)} for the sandbox"
        return rnd.choice(_CHAT_EN)

    return _lines(size, line)


_CHAT_KO = (
    "비번 바꿨어요? 스테이징 서버 들어가야 해서요",
    "토큰 만료됐어요, 새로 발급 부탁드려요",
    "로그인이 안 돼요 계정이 잠긴 것 같아요",
    "API 키는 볼트에 있어요 다나한테 물어보세요",
    "암호화 키 교체 일정 공유드립니다",
    "비밀번호 정책이 12자 이상이래요",
    "아이디는 사번이고 비번은 처음에 생일이에요",
    "접속 정보 슬랙으로 보냈어요 확인 부탁해요",
    "내일 스탠드업에서 봬요 감사합니다",
    "시크릿 로테이션은 90일마다 돌아요",
    "관리자 계정은 ops팀만 써요",
    "인증 토큰 스코프 확인해 주실 수 있나요?",
    "와이파이 비번 뭐예요? 게스트용이요",
    "아 찾았어요 신경 쓰지 마세요",
    "패스워드 재설정 메일이 안 와요",
)


def korean_chat(size: int, seed: int = 7) -> str:
    """Korean chat about credentials, one message a line, a real one every ~700 lines."""
    rnd = random.Random(seed)

    def line(i: int) -> str:
        if i % 700 == 5:
            return f"와이파이 비번은 Qwer{i % 10}234! 이에요"
        return rnd.choice(_CHAT_KO)

    return _lines(size, line)


_ENV_NAMES = (
    "DATABASE_PASSWORD", "STRIPE_KEY", "SECRET_KEY_BASE", "API_TOKEN", "MAX_TOKENS",
    "PASSWORD_MIN_LENGTH", "AWS_ACCESS_KEY_ID", "REDIS_PASSWORD", "SENTRY_DSN", "JWT_SECRET",
    "SESSION_SECRET", "TOKEN_TTL", "SORT_KEY", "PUBLIC_KEY_PATH", "GITHUB_TOKEN", "LOG_LEVEL",
    "APP_NAME", "PORT", "SMTP_PASS", "OAUTH_CLIENT_SECRET",
)  # fmt: skip
_ENV_VALUES = (
    "${DB_PASSWORD}", "changeme", "", "4096", "12", "info", "squad", "8080", "your-key-here",
    "$(cat /run/secrets/x)", "/etc/squad/key.pem", "true",
)  # fmt: skip


def env_dump(size: int, seed: int = 7) -> str:
    """A ``.env`` dump: assignments named for keys, tokens and passwords, mostly placeholders."""
    rnd = random.Random(seed)

    def line(i: int) -> str:
        name = f"{rnd.choice(('', 'PROD_', 'STAGING_', 'SVC_'))}{rnd.choice(_ENV_NAMES)}"
        if i % 400 == 5:
            return f"{name}={_token(rnd, 32)}"
        if i % 10 == 0:
            return f"# {' '.join(rnd.choice(_WORDS) for _ in range(6))}"
        return f"{name}={rnd.choice(_ENV_VALUES)}"

    return _lines(size, line)


def markdown_tables(size: int, seed: int = 7) -> str:
    """Markdown tables, a header every 30 rows, some naming a password or token column."""
    rnd = random.Random(seed)
    headers = (
        "| user | password | host |",
        "| model | token | budget |",
        "| task | agent | status |",
        "| name | key | notes |",
    )

    def line(i: int) -> str:
        if i % 30 == 0:
            return ""
        if i % 30 == 1:
            return headers[(i // 30) % len(headers)]
        if i % 30 == 2:
            return "|------|------|------|"
        if i % 900 == 5:
            return f"| svc | {_token(rnd, 14)} | db01 |"
        return f"| {rnd.choice(_WORDS)} | {rnd.choice(_WORDS)} | {rnd.randint(1, 9999)} |"

    return _lines(size, line)


def json_log(size: int, seed: int = 7) -> str:
    """JSON lines whose keys name tokens and keys: counts, ids, budgets, now and then one."""
    rnd = random.Random(seed)

    def line(i: int) -> str:
        event: dict[str, object] = {
            "ts": f"2026-12-06T05:{i % 60:02d}:00Z",
            "event": rnd.choice(("llm_call", "tool_call", "task_done")),
            "token_count": rnd.randint(10, 9000),
            "max_tokens": 4096,
            "api_key_id": f"key-{i % 17}",
            "cache_key": f"{rnd.choice(_WORDS)}:{i}",
            "session_token_ttl": 3600,
        }
        if i % 500 == 5:
            event["refresh_token"] = _token(rnd, 40)
        return json.dumps(event)

    return _lines(size, line)


_SHORT = ("password:", "ok", "token?", "thanks", "login", "hunter", "비번?", "yes", "key", "later")


def short_lines(size: int, seed: int = 7) -> str:
    """One or two words a line, many of them cues."""
    rnd = random.Random(seed)
    return _lines(size, lambda _i: rnd.choice(_SHORT))


def _credential(rnd: random.Random, i: int) -> str:
    token = _token(rnd, 24)
    return (
        f"the wifi password is Tr0ub4dor&{i % 10}x",
        f"export SERVICE_API_KEY={token}",
        f"login: admin / Hunter{i % 100}x!",
        f"door code: {4000 + i % 5000}",
        f"토큰은 {token} 이에요",
        f"| svc-{i} | {token[:14]} | db01 |",
        f"what's the db password?\nWinter{i % 100}!",
        f"the api key is {token}",
    )[i % 8]


def credential_dump(size: int, seed: int = 7) -> str:
    """A credential on every line, in every form the finders know, with prose between: the
    worst case for skipping lines (every line has a cue)."""
    rnd = random.Random(seed)

    def line(i: int) -> str:
        return _credential(rnd, i) if i % 2 else rnd.choice(_CHAT_EN)

    return _lines(size, line)


TEXTS: dict[str, Callable[[int], str]] = {
    "log+markdown": log_and_markdown,
    "one long line": one_long_line,
    "blobs on one line": blobs_on_one_line,
    "chat prose": chat_prose,
    "korean chat": korean_chat,
    "env dump": env_dump,
    "markdown tables": markdown_tables,
    "json log": json_log,
    "short lines": short_lines,
    "credential dump": credential_dump,
}
"""Every shape, by name."""

BENIGN = (
    "thanks, see you tomorrow",
    "Sounds good. I looked at the review notes this morning and most of the comments are about "
    "naming and the order of sections; nothing blocks the merge, so go ahead when you are ready.",
    "좋아요, 내일 회의에서 다시 이야기해요. 오늘 정리한 내용은 문서에 올려둘게요.",
)
"""Messages with nothing key-like: what most chat turns are."""
