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
:mod:`._cards` (payment card numbers by their Luhn digit, security codes by their name),
:mod:`._files` (by the file format that holds them: ``.npmrc``, ``.pgpass``, PuTTY keys,
Terraform variable defaults, Oracle connect strings),
:mod:`._values` (is this value a literal, a placeholder, random or words),
:mod:`._echo` (a value found once, said again later in the same conversation),
:mod:`._learned` (the learned detector: a credential in prose, by its letters and the words
around it; see :func:`find_secrets`). The rule finders share a
:class:`._scan.Scan` of the text, which runs each pattern only where the literals every match
holds are (:mod:`._triggers` reads them from the pattern), so that a message with nothing
key-like costs microseconds and a long text only its lines with a cue (issue 32).

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
- Given ``known`` values (those found earlier in the same conversation, kept by the caller in
  a :class:`SeenSecrets`), every occurrence of one is redacted too, ``[REDACTED:echo]``, even
  where the detector alone sees nothing ("OK, Blu3Whale$2024 is saved"): 4+ characters, not
  glued to ASCII letters or digits (:mod:`._echo`). An echo overlapping a find becomes one span
  with the find's kind. :func:`find_secrets` itself never reports echoes.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from squad.errors import SecretInMemoryError
from squad.text.bounded_cache import BoundedCache, text_key
from squad.text.secrets import _echo, _values
from squad.text.secrets._echo import SeenSecrets
from squad.text.secrets._scan import Scan as _Scan
from squad.text.secrets._values import ALNUM as _ALNUM
from squad.text.secrets._values import BY_CONTEXT
from squad.text.secrets._values import MARKER as _MARKER
from squad.text.secrets._values import Candidate as _Candidate
from squad.text.secrets._version import detector_version

if TYPE_CHECKING:
    KINDS: tuple[str, ...]

__all__ = [
    "CUE_MESSAGES",
    "ECHO_KIND",
    "KINDS",
    "SecretMatch",
    "SeenSecrets",
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
    "secret_values",
]

ECHO_KIND = _echo.KIND
"""The kind of a known value found again (``[REDACTED:echo]``): not one of :data:`KINDS`."""

CUE_MESSAGES = 2
"""Messages before a bare value searched for its cue: the question and, when the assistant
answered "go ahead" in between, the user's own "my password is"."""


@dataclass(frozen=True)
class _Rules:
    """The rule modules' entry points; see :func:`_rules`."""

    finders: tuple[Callable[[str, Sequence[str], _Scan], Iterable[_Candidate]], ...]
    learned: Callable[[str], Iterable[_Candidate]]
    public_block: Callable[[str, int], bool]
    needs_previous: Callable[[str], bool]
    kinds: tuple[str, ...]


@functools.cache
def _rules() -> _Rules:
    """The rules, imported on the first search: their pattern tables take a tenth of a
    second to compile, which a command that only imports a writer of memory (``squad memory
    context`` reads memory, it never writes) does not pay."""
    from squad.text.secrets import (
        _cards,
        _context,
        _files,
        _followup,
        _layout,
        _learned,
        _named,
        _spoken,
        _tokens,
    )

    return _Rules(
        finders=(
            lambda text, previous, scan: _tokens.candidates(text, scan),
            lambda text, previous, scan: _named.candidates(text, scan),
            lambda text, previous, scan: _files.candidates(text, scan),
            _followup.candidates,
            lambda text, previous, scan: _context.candidates(text, scan),
            lambda text, previous, scan: _layout.candidates(text, scan),
            lambda text, previous, scan: _spoken.candidates(text, scan),
            lambda text, previous, scan: _cards.candidates(text, scan),
        ),
        learned=_learned.candidates,
        public_block=_tokens.in_public_block,
        needs_previous=_followup.needs_previous,
        kinds=tuple(
            dict.fromkeys(
                [
                    *_tokens.KINDS,
                    *_named.KINDS,
                    *_files.KINDS,
                    *_followup.KINDS,
                    *_context.KINDS,
                    *_layout.KINDS,
                    *_spoken.KINDS,
                    *_cards.KINDS,
                    *_learned.KINDS,
                ]
            )
        ),
    )


def __getattr__(name: str) -> Any:
    """:data:`KINDS` (every kind :func:`find_secrets` reports, most specific first), made
    from the rules when first asked for."""
    if name == "KINDS":
        return _rules().kinds
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def needs_previous(text: str) -> bool:
    """Whether ``text``'s first line is a bare value, whose cue could be in the messages before."""
    return _rules().needs_previous(text)


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


def _candidates(text: str, previous: Sequence[str], learned: bool) -> Iterator[_Candidate]:
    rules = _rules()
    scan = _Scan(text)  # the finders share what was read of the text
    for finder in rules.finders:
        yield from finder(text, previous, scan)
    if learned:
        yield from rules.learned(text)


def is_password_manager(value: str) -> bool:
    """Whether ``value`` names a password manager ("the password is in 1Password"): where a
    credential lives, not the credential."""
    return _values.password_manager(value)


def is_public_data(text: str, pos: int) -> bool:
    """Whether ``text[pos:]`` starts public key material: a PEM public key or certificate body,
    an SSH public key, a fingerprint. Random-looking, and no credential."""
    return _rules().public_block(text, pos)


def find_secrets(
    text: str, *, previous: Sequence[str] = (), learned: bool = True
) -> list[SecretMatch]:
    """Every credential in ``text``, sorted and non-overlapping.

    ``previous`` are the messages just before ``text`` (oldest first), where a bare value's
    cue may be ("what's the db password?"); only the last :data:`CUE_MESSAGES` are read.
    Where finds overlap, the most specific kind wins (a provider token over the bearer header or
    ``api_key=`` assignment that carries it), then the longer span. ``learned=False`` asks
    the rules alone.

    The rules read the text; the learned detector (:mod:`._learned`) reads it with the rules'
    finds redacted, so what it learned about the words around a value is not misled by a key
    the rules already took (a PEM block's "PRIVATE KEY" before an unrelated number). The result
    is a fixpoint: a value redacted changes the words around its neighbours, so the text with
    every find redacted is scanned again (at most :data:`_PASSES` more times) until nothing
    new is found, and redacting the result of :func:`redact` finds nothing.

    A text of at most :data:`_CACHED_MESSAGE` characters is scanned once for the same
    messages before it: a turn's reply is asked about by the recorder, the redaction of its
    output, the conversation's store write, working memory and the extractor, 3.7 scans a
    text in a run of the runtime bench. The cache returns what the scan returned (the
    scanner reads nothing but its arguments and the detector's data, fixed for the process),
    and keeps a digest of the texts, not the texts.
    """
    if len(text) > _CACHED_MESSAGE:
        return _scanned(text, previous, learned)
    cues = tuple(previous[-CUE_MESSAGES:])
    key = text_key("learned" if learned else "rules", text, *cues)
    return list(_FINDS.get(key, lambda: tuple(_scanned(text, cues, learned))))


def _scanned(text: str, previous: Sequence[str], learned: bool) -> list[SecretMatch]:
    """:func:`find_secrets` without its cache."""
    found = _find_once(text, previous, learned=False)
    if not learned:
        return found  # the rules alone (to compare, and to test them)
    redacted, starts = _apply(text, found)
    more = _moved_back(_learned_only(redacted), starts, found)
    for _ in range(_PASSES):
        if not more:
            break
        found = sorted([*found, *more], key=_start)
        # The rules alone are idempotent: only around a new find can anything change.
        keys = [m.start for m in found]  # sorted, the finds never overlap
        more = [m for r in _regions(text, more) for m in _find_near(text, r, found, keys, previous)]
    return found


_REGION = 2048
"""How far around a new find the next pass looks (at most; it stops at a blank line)."""


def _regions(text: str, new: list[SecretMatch]) -> list[tuple[int, int]]:
    """The paragraphs (cut to :data:`_REGION` either side) around ``new`` finds, merged."""
    out: list[tuple[int, int]] = []
    for m in new:
        start = max(text.rfind("\n\n", max(0, m.start - _REGION), m.start), m.start - _REGION, 0)
        end = text.find("\n\n", m.end, m.end + _REGION)
        end = min(len(text), m.end + _REGION) if end < 0 else end
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _find_near(
    text: str,
    region: tuple[int, int],
    found: list[SecretMatch],
    keys: list[int],
    previous: Sequence[str],
) -> list[SecretMatch]:
    """New finds in ``text[region]`` with ``found`` redacted: rules and learned together."""
    lo, hi = region
    first, last = bisect.bisect_left(keys, lo), bisect.bisect_left(keys, hi)
    if (first and found[first - 1].end > lo) or (last and found[last - 1].end > hi):
        return []  # a find crosses the region's edge: leave it as it is
    inside = [SecretMatch(m.kind, m.start - lo, m.end - lo) for m in found[first:last]]
    redacted, starts = _apply(text[lo:hi], inside)
    more = _find_once(redacted, previous if lo == 0 else (), learned=True)
    markers = _marker_spans(redacted)
    more = [m for m in more if not _overlaps_any(m, markers)]
    return [
        SecretMatch(m.kind, m.start + lo, m.end + lo) for m in _moved_back(more, starts, inside)
    ]


def _learned_only(text: str) -> list[SecretMatch]:
    return [SecretMatch(kind, start, end) for _, start, end, kind in _rules().learned(text)]


def _marker_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MARKER.finditer(text)]


def _overlaps_any(m: SecretMatch, spans: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_left(spans, (m.end, m.end))
    return i > 0 and spans[i - 1][1] > m.start


_PASSES = 3


def _start(m: SecretMatch) -> int:
    return m.start


def _apply(text: str, matches: list[SecretMatch]) -> tuple[str, list[int]]:
    """``text`` with ``matches`` redacted, and where each marker starts in the result."""
    parts: list[str] = []
    starts: list[int] = []
    pos = out = 0
    for m in matches:
        parts.append(text[pos : m.start])
        out += m.start - pos
        starts.append(out)
        marker = redaction_marker(m.kind)
        parts.append(marker)
        out += len(marker)
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), starts


def _moved_back(
    more: list[SecretMatch], starts: list[int], found: list[SecretMatch]
) -> list[SecretMatch]:
    """Finds in the redacted text placed in the original (none overlaps a marker)."""
    shifts = [0]
    for f in found:
        shifts.append(shifts[-1] + (f.end - f.start) - len(redaction_marker(f.kind)))
    out = []
    for m in more:
        shift = shifts[bisect.bisect_right(starts, m.start)]
        out.append(SecretMatch(m.kind, m.start + shift, m.end + shift))
    return out


_DATE = re.compile(r"(?:19|20)\d\d([-./])(\d{1,2})\1(\d{1,2})")


def _calendar_date(value: str) -> bool:
    """A whole date, year first ("2026-03-12"): taken by a rule that reads context, it is the
    day a code expires or a password changes, not the code."""
    m = _DATE.fullmatch(value)
    return m is not None and 1 <= int(m[2]) <= 12 and 1 <= int(m[3]) <= 31


def _find_once(text: str, previous: Sequence[str], *, learned: bool) -> list[SecretMatch]:
    markers = [m.span() for m in _MARKER.finditer(text)]

    def in_marker(pos: int) -> bool:
        i = bisect.bisect_right(markers, (pos, pos)) - 1
        return i >= 0 and markers[i][0] < pos < markers[i][1]

    starts: list[int] = []
    chosen: list[SecretMatch] = []
    found = _candidates(text, previous, learned)
    for priority, start, end, kind in sorted(found, key=lambda c: (c[0], c[1] - c[2], c[1])):
        if (
            in_marker(start)
            or in_marker(end)
            or not _ALNUM.search(_MARKER.sub("", text[start:end]))
        ):
            continue  # part of, or only, an earlier redaction
        if priority >= BY_CONTEXT and _calendar_date(text[start:end]):
            continue  # a date near a cue word: when a code expires or a password changes
        i = bisect.bisect_right(starts, start)
        if (i and chosen[i - 1].end > start) or (i < len(chosen) and chosen[i].start < end):
            continue
        starts.insert(i, start)
        chosen.insert(i, SecretMatch(kind, start, end))
    return chosen


def _found(
    text: str, previous: Sequence[str], known: Collection[str], learned: bool = True
) -> list[SecretMatch]:
    """:func:`find_secrets`, with the echoes of ``known`` values merged in."""
    return _with_echoes(text, find_secrets(text, previous=previous, learned=learned), known)


def _with_echoes(
    text: str, matches: list[SecretMatch], known: Collection[str]
) -> list[SecretMatch]:
    """The detector's ``matches`` in ``text`` with the echoes of ``known`` values merged in."""
    if not known:
        return matches
    echoes = _echo.spans(text, known)
    if not echoes:
        return matches
    spans = _echo.merged([(m.kind, m.start, m.end) for m in matches], echoes)
    return [SecretMatch(kind, start, end) for kind, start, end in spans]


def secret_values(text: str, *, previous: Sequence[str] = ()) -> list[str]:
    """The raw credential values :func:`find_secrets` finds in ``text``, those worth looking
    for again later in the conversation (see ``known``): keep them in memory only."""
    return [
        value
        for m in find_secrets(text, previous=previous)
        if _echo.usable(value := text[m.start : m.end])
    ]


def redact(
    text: str,
    *,
    previous: Sequence[str] = (),
    known: Collection[str] = (),
    learned: bool = True,
) -> tuple[str, list[SecretMatch]]:
    """``text`` with each credential value replaced by ``[REDACTED:<kind>]``, and the finds;
    ``known``: values found earlier in the conversation, redacted wherever they occur;
    ``learned=False``: the rules alone."""
    matches = _found(text, previous, known, learned)
    return _apply(text, matches)[0], matches


def redact_conversation(
    messages: Sequence[str], *, previous: Sequence[str] = (), known: Collection[str] = ()
) -> list[str]:
    """Each of ``messages`` (oldest first) redacted with the ones before it as ``previous``,
    so "my password is" / "hunter2x" loses the value; ``previous`` are those before the first.

    A value found in one message is redacted wherever it occurs in the later ones (an
    assistant's echo of it), as are the ``known`` values found before these messages."""
    context = list(previous[-CUE_MESSAGES:])
    seen = list(known)
    out: list[str] = []
    for message in messages:
        matches = _with_echoes(message, _conversation_finds(message, tuple(context)), seen)
        shown = _apply(message, matches)[0]
        out.append(shown)
        seen += [
            value
            for m in matches
            if m.kind != ECHO_KIND and _echo.usable(value := message[m.start : m.end])
        ]
        context = [*context, message][-CUE_MESSAGES:]
    return out


def _conversation_finds(message: str, context: tuple[str, ...]) -> list[SecretMatch]:
    """:func:`find_secrets` of one message of a conversation (remembered, as every short
    text's finds are: a chat's history is redacted again before every turn)."""
    return find_secrets(message, previous=context)


_CACHED_MESSAGE = 8192
"""The longest text whose finds are kept (:func:`find_secrets`)."""


_FINDS: BoundedCache[tuple[SecretMatch, ...]] = BoundedCache(2048)
"""The finds of the texts last scanned, by a digest of the text and its cue messages (the
texts are not kept: :mod:`squad.text.bounded_cache`)."""


def redact_fields(value: Any, *, known: Collection[str] = ()) -> Any:
    """``value`` (a log event's fields: strings, dicts, lists) with every string redacted;
    ``known`` as for :func:`redact`."""
    if isinstance(value, str):
        if len(value) > _SHORT:
            return redact(value, known=known)[0]
        return _apply(value, _with_echoes(value, list(_short_finds(value)), known))[0]
    if isinstance(value, dict):
        return {str(k): redact_fields(v, known=known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_fields(v, known=known) for v in value]
    return value


_SHORT = 128


@functools.lru_cache(maxsize=4096)
def _short_finds(text: str) -> tuple[SecretMatch, ...]:
    """The finds in a short field: ids, statuses and model names repeat on every event."""
    return tuple(find_secrets(text))


def refuse_secrets(
    text: str,
    *,
    what: str = "text",
    previous: Sequence[str] = (),
    known: Collection[str] = (),
) -> None:
    """Raise :class:`SecretInMemoryError` if ``text`` carries a credential (or an echo of one
    of ``known``, as for :func:`redact`).

    The message names kinds and lines only; it never repeats the credential.
    """
    matches = _found(text, previous, known)
    if not matches:
        return
    found = [f"{m.kind} on line {text.count(chr(10), 0, m.start) + 1}" for m in matches[:5]]
    if len(matches) > 5:
        found.append(f"{len(matches) - 5} more")
    raise SecretInMemoryError(
        f"{what} was not stored: it contains a credential ({', '.join(found)}). Remove the "
        "credential; store where it lives instead, e.g. 'the key is in $OPENAI_API_KEY'."
    )


def contains_secret(
    text: str, *, previous: Sequence[str] = (), known: Collection[str] = ()
) -> bool:
    """Whether ``text`` carries anything :func:`find_secrets` would report, or an echo of one
    of ``known``."""
    return bool(_found(text, previous, known))
