"""Find, redact or refuse credentials in text bound for agent memory and stored history.

Memory files and facts are pasted into prompts and kept for weeks, and chat history is sent
back to the model on every turn, so a credential must never enter them: every write path either
refuses the text (:func:`refuse_secrets`) or stores a redacted copy (:func:`redact`,
:func:`redact_conversation`). Pure: precompiled stdlib ``re`` patterns over a string, no I/O.
No pattern nests quantifiers over overlapping classes and every open-ended run starts after a
literal or a boundary, so matching stays linear on hostile input.

Modules: :mod:`._tokens` (credentials by their own shape), :mod:`._named` (by the words or
flag around them), :mod:`._context` (by the context, with no name and verb: "the usual
Summer2025!", "client secret ..."), :mod:`._layout` (a table's password column, a user and a
password on the lines after a login word), :mod:`._followup` (a bare value after its cue),
:mod:`._spoken` (lock codes, corrected passwords, seed phrases, codes listed under their name),
:mod:`._files` (by the file format that holds them: ``.npmrc``, ``.pgpass``, PuTTY keys,
Terraform variable defaults, Oracle connect strings),
:mod:`._values` (is this value a literal, a placeholder, random or words).

Judgment calls, each pinned by ``tests/text/secrets_corpus.py``:

- A provider token whose prefix is its provider's alone (``sk-proj-``, ``sk-ant-``, ``ghp_``,
  ``glpat-``, ``xoxb-``, ``sk_live_``, ``whsec_``, ``ya29.``, ``GOCSPX-``, ``gsk_``, ``hvs.``...)
  counts whatever its body: 8+ token characters that are not lower-case words
  (``xoxb-your-token-here``), even shorter than real ones, and with spaces or zero-width
  characters inserted between groups of one width, as keys are written to be read
  (``sk-proj-Ab12Cd34 Ef56Gh78 ...``, ``AKIA 4F7Q 2XZ9 ...``). A prefix that is also
  an everyday word or identifier (``sk-``, ``hf_``, ``npm_``, ``AIza``) counts only in the
  provider's own length and alphabet (``sk-learn``, ``hf_hub_download`` are not keys).
- Private keys count as PEM blocks, cut off or whole, and as the base64 body alone: the DER of
  every private key format starts the same way (``MII...IBAAK``, ``MHcCAQEEI``,
  ``b3BlbnNzaC1rZXktdjE``...). Public keys and certificates do not.
- A random-looking string with no prefix and no name does not count when it can be an
  identifier: hex (commit SHA, digest), UUIDs, words and numbers joined by ``-_./``. A base64 blob
  standing alone does (``base64_token``): 20+ characters with base64's own ``+``, ``/`` or ``=``
  padding, all of lower case, upper case and digits, not mostly words, not after a name like
  ``sha256``, ``etag`` or ``id``, not an SSH public key, certificate, image or archive.
- A value assigned to a password name counts whatever it looks like (``password: hunter2``,
  ``pw=hunter2``, ``root pw: ...``, ``비번: ...``, ``암호 = ...``); ``pass`` alone, also an everyday
  word, only for a password-shaped value (below). Secret, token and API-key names (``토큰``) vouch
  for any value; any other name containing KEY, TOKEN, SECRET or CREDENTIAL (``STRIPE_KEY``,
  ``SECRET_KEY_BASE``) only for random-looking values: 16+ token characters, two of
  lower/upper/digit, not words joined by ``-_./``, >= 3 bits of entropy per character.
- In prose, where a bare word is more often an adjective ("the password is wrong"), a password
  counts when quoted or password-shaped: 6+ characters with a letter and a digit or a symbol
  inside other than ``-_./``, not lower-case words and numbers joined by ``-_./``
  (``case-sensitive``, ``sha256-hashed``), an algorithm, a version, a path or an address; or
  6+ digits. That holds after "is", "is:", "was", "is now", "changed to", a dash or an arrow,
  after a question ("what's the db password? hunter2x") and with no verb ("password hunter2x",
  "my pw is ...", "pwd is ..."); "the passphrase is" also takes three or more joined words. In
  Korean an ASCII word with a copula after it says what the password is, whatever its shape
  ("비번은 qwerty예요", "암호는 Qwer1234! 야"); ``암호화`` is not ``암호``. A token named in prose
  ("the API key is ...", "토큰은 ...") counts when random: 12+ characters, letters and digits.
- A plain word counts as a password where it ends the clause (the line's end, ``. , ; !`` or a
  parenthesis, not more words) after a possessive or article and the password noun ("my password
  is qwerty", "the wifi password is sunshine"; not "password is ..." with neither, nor "my
  password is sunshine and ..."), and in Korean after the noun with no copula ("비번은 qwerty",
  "암호는 sunshine", "비번은 qwerty 예요"): 4+ ASCII letters and digits, not digits alone, not a
  word of :data:`._values.NOT_A_PASSWORD` (states "expired", "wrong", "correct", "set", "ok";
  function words; instructions; field names, providers and environments: "비번은 OK",
  "비밀번호는 SSO"), not a participle or adjective by its suffix (``-ed -ing -able -ible -less
  -ive -ous`` on 5+ letters: "compromised", "guessable", "dangerous"), not an algorithm. Hangul
  never starts a value, so "비번은 만료됐어요" needs no stop word. After "passphrase is",
  "passphrase:" or "패스프레이즈는", three or more plain words to the clause's end are the
  passphrase ("correct horse battery staple") unless one is a function word or the first an
  instruction, field name or participle ("required for login", "stored in the vault", "four
  random words from diceware"; a passphrase that opens with a number word is missed).
- A user/password pair after a login word counts in either language ("login is admin /
  hunter2x", "creds: ci-bot/Bu1ld-2024", "Wi-Fi: Guest / ...", "계정은 deploy / ... 이에요",
  "아이디/비번은 admin/...", "접속: app / ...") when the password is password-shaped, or one plain
  word (as above) after a spaced slash that ends the clause or is followed by Korean, a
  parenthesis or "for/on/at/to" ("login is admin / sunshine", "account is root / toor", "아이디
  root / toor"), neither side a field name, role, provider or environment; ``read/write``,
  ``acme/prod``, ``SSO / Okta``, ``email / password``, ``Google / GitHub``, ``staging / prod``,
  ``alice / bob / carol``, ``alice@acme.dev / bob@acme.dev`` are not. With an adverb between
  ("로그인은 아직도 admin / ..."), the password must be shaped like one. With no login word at
  all ("ssh in with ops / ...", "mailer@acme.io / ..."), only a strongly shaped password
  counts: 8+ characters with a symbol inside, or upper case, lower case and a digit not only
  at its end, not mostly words (``iOS / Android12``, ``dev-ops / Release2024Q1`` are not).
- In casual chat a value named only by the words around it counts when shaped like a password
  (:func:`._values.strong_password`: password-shaped, not a tool or version with a number
  such as ``python3``, ``arm64``, ``oauth2``, not dotted words like ``t3.large``): after "use",
  "try" or "enter" with what it opens ("use hunter2 for the staging box"), before "as the
  password", after "log in as USER with", "creds are USER and", "login is still USER /", "pass"
  after a user or SSID, "the pass is", a network's "key is"; after a password word with words
  between ("password for that box: the usual, Winter2024!", "pw hasn't changed, still ..."),
  quoted or in parentheses right after it, or after "password? it's"; in Korean before
  ``로 로그인`` / ``로 들어가`` / ``치시면`` / ``넣고`` and after a password word with ``…로
  초기화`` or ``이제 …예요``. A PIN, door, alarm or unseal code counts as 4-8 digits after its
  name ("door code: 4471", "도어락 번호 482213이에요"), and 6+ digits after ``암호`` with no copula.
  So does an unseal or recovery code in Korean ("언실 코드는 ...이에요"). A random token right
  after "key" or "키" counts ("use the key ...", "공용 키 ..."), not hex, a UUID or camel-cased
  words and numbers (``customerIdAndRegion2024``), nor after ``sort``, ``primary``,
  ``partition``, ``public``... A random token before "that's the api key" counts, and a
  quoted token after a secret's name when it has a digit, a joiner or mixed case and no
  function word ('north-star-blue', not 'consistency' or 'less-is-more'). Each of these
  loses to every other kind over the same span.
- Under a table header that names a password column (tab, pipe or comma separated, markdown
  too) every one-word value of 4+ characters counts, digits only from six; under a token or
  secret column only a random-looking one (``| model | token |`` over ``8192`` is a budget).
  After a login word, a user alone on the next line and a password-shaped value alone on the
  one after count as a pair.
- A password glued to ``mysql``'s ``-p`` counts (``mysql -u root -pS3cret``); ``-p`` elsewhere
  is a port or a flag (``mkdir -p``, ``docker run -p8080:80``). So do ``sshpass -p``,
  ``redis-cli -a`` and ``openssl -pass pass:``.
- A line that is only a value (``hunter2x``, "it's hunter2x", "`hunter2x`", "hunter2x예요")
  counts when the line before it, or for a message's first line one of the
  :data:`CUE_MESSAGES` messages before it, ends by asking for or announcing a credential
  ("what's the db password?", "my password is", ``password:``, "DB 비번 뭐예요?", "토큰
  알려줘"). A one-word reply ("no", "later", "몰라요") is not a password; after a token cue the
  value must look random. Pass those messages as ``previous``.
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
- Overlapping finds keep the most specific kind (provider > header/URL/command/pair > named >
  guess), then the longer; only the value is replaced, never the name, user or host. A value
  that starts with an earlier ``[REDACTED:...]`` is that redaction, so :func:`redact` is
  idempotent. ``[REDACTED:<kind>]`` is the one marker format, in memory and in history alike.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from squad.errors import SecretInMemoryError
from squad.text.secrets import (
    _context,
    _files,
    _followup,
    _layout,
    _named,
    _spoken,
    _tokens,
    _values,
)
from squad.text.secrets._followup import CUE_MESSAGES, needs_previous
from squad.text.secrets._values import ALNUM as _ALNUM
from squad.text.secrets._values import MARKER as _MARKER
from squad.text.secrets._values import Candidate as _Candidate
from squad.text.secrets._version import detector_version

__all__ = [
    "CUE_MESSAGES",
    "KINDS",
    "SecretMatch",
    "contains_redaction",
    "contains_secret",
    "detector_version",
    "find_secrets",
    "is_password_manager",
    "is_public_data",
    "needs_previous",
    "redact",
    "redact_conversation",
    "redact_fields",
    "redaction_marker",
    "refuse_secrets",
]

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *_tokens.KINDS,
            *_named.KINDS,
            *_files.KINDS,
            *_followup.KINDS,
            *_context.KINDS,
            *_layout.KINDS,
            *_spoken.KINDS,
        ]
    )
)
"""Every kind :func:`find_secrets` reports, most specific first."""


@dataclass(frozen=True)
class SecretMatch:
    """One credential: its kind and the character span of the value to remove."""

    kind: str
    start: int
    end: int


def redaction_marker(kind: str) -> str:
    """What replaces a credential of ``kind``: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


def contains_redaction(text: str) -> bool:
    """Whether ``text`` holds a :func:`redaction_marker`: it was built from a credential."""
    return _MARKER.search(text) is not None


def _candidates(text: str, previous: Sequence[str]) -> Iterator[_Candidate]:
    yield from _tokens.candidates(text)
    yield from _named.candidates(text)
    yield from _files.candidates(text)
    yield from _followup.candidates(text, previous)
    yield from _context.candidates(text)
    yield from _layout.candidates(text)
    yield from _spoken.candidates(text)


def is_password_manager(value: str) -> bool:
    """Whether ``value`` names a password manager ("the password is in 1Password"): where a
    credential lives, not the credential."""
    return _values.password_manager(value)


def is_public_data(text: str, pos: int) -> bool:
    """Whether ``text[pos:]`` starts public key material: a PEM public key or certificate body,
    an SSH public key, a fingerprint. Random-looking, and no credential."""
    return _tokens.in_public_block(text, pos)


def find_secrets(text: str, *, previous: Sequence[str] = ()) -> list[SecretMatch]:
    """Every credential in ``text``, sorted and non-overlapping.

    ``previous`` are the messages just before ``text`` (oldest first), where a bare value's
    cue may be ("what's the db password?"); only the last :data:`CUE_MESSAGES` are read.
    Where finds overlap, the most specific kind wins (a provider token over the bearer header or
    ``api_key=`` assignment that carries it), then the longer span.
    """
    markers = [m.span() for m in _MARKER.finditer(text)]

    def in_marker(pos: int) -> bool:
        i = bisect.bisect_right(markers, (pos, pos)) - 1
        return i >= 0 and markers[i][0] < pos < markers[i][1]

    starts: list[int] = []
    chosen: list[SecretMatch] = []
    found = _candidates(text, previous)
    for _, start, end, kind in sorted(found, key=lambda c: (c[0], c[1] - c[2], c[1])):
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


def redact(text: str, *, previous: Sequence[str] = ()) -> tuple[str, list[SecretMatch]]:
    """``text`` with each credential value replaced by ``[REDACTED:<kind>]``, and the finds."""
    matches = find_secrets(text, previous=previous)
    parts: list[str] = []
    pos = 0
    for m in matches:
        parts += [text[pos : m.start], redaction_marker(m.kind)]
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), matches


def redact_conversation(messages: Sequence[str], *, previous: Sequence[str] = ()) -> list[str]:
    """Each of ``messages`` (oldest first) redacted with the ones before it as ``previous``,
    so "my password is" / "hunter2x" loses the value; ``previous`` are those before the first."""
    context = list(previous[-CUE_MESSAGES:])
    out: list[str] = []
    for message in messages:
        out.append(redact(message, previous=context)[0])
        context = [*context, message][-CUE_MESSAGES:]
    return out


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


def refuse_secrets(text: str, *, what: str = "text", previous: Sequence[str] = ()) -> None:
    """Raise :class:`SecretInMemoryError` if ``text`` carries a credential.

    The message names kinds and lines only; it never repeats the credential.
    """
    matches = find_secrets(text, previous=previous)
    if not matches:
        return
    found = [f"{m.kind} on line {text.count(chr(10), 0, m.start) + 1}" for m in matches[:5]]
    if len(matches) > 5:
        found.append(f"{len(matches) - 5} more")
    raise SecretInMemoryError(
        f"{what} was not stored: it contains a credential ({', '.join(found)}). Remove the "
        "credential; store where it lives instead, e.g. 'the key is in $OPENAI_API_KEY'."
    )


def contains_secret(text: str, *, previous: Sequence[str] = ()) -> bool:
    """Whether ``text`` carries anything :func:`find_secrets` would report."""
    return bool(find_secrets(text, previous=previous))
