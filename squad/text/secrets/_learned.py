"""The learned detector: a credential in prose, told by the value's own letters and the words
around it rather than by a rule. Pure; weights ship as ``data/learned_weights.json``.

The rules (the other modules) know formats: provider tokens, PEM blocks, assignments, URLs,
``.pgpass`` lines. People also give credentials in sentences nobody wrote a rule for ("the
safe opens on 36 24 12", "앱 비밀번호 abcd efgh ijkl mnop", "spell it h u n t e r 2"), and
each new phrasing needs a new rule. This detector scores words instead:

1. **Units.** The text is cut into units, the words a value can be: runs of non-space
   characters, trimmed of quotes, brackets and trailing ``.,;:?``, a Korean particle or copula
   split off an ASCII value ("qwerty예요" gives ``qwerty``) or off a Hangul word. Two composite
   units join several words into one value: a value spelled character by character
   ("h u n t e r 2", "H, U, N, T") and groups of one width ("abcd efgh ijkl mnop",
   "36 24 12").
2. **Gate.** Only a unit with a cue word (:data:`Model.cues`, learned: the words that came
   before credentials in training, "password", "pin", "코드", "combo"...) among the eight
   units before it, or the three after it, is scored; a message with no cue costs one regex
   search (:func:`_maybe`), so long logs and prose stay cheap.
3. **Score.** A logistic regression over hashed features of the unit (character 2-4-grams,
   its shape, length, character classes, entropy) and its context (the three units before and
   two after, by position, and the words in the window), trained by
   ``training/credentials/train.py`` from our corpora (never from an evaluation set).
4. **Spans.** Units scoring at least :data:`Model.threshold` are credentials; neighbours
   separated only by spaces or hyphens join into one span, so a passphrase
   ("tiger lamp orbit velvet") is redacted whole. A composite unit that scores wins over its
   words.

Its finds have the lowest priority: where a rule also finds a span, the rule's kind names it.
"""

from __future__ import annotations

import array
import bisect
import functools
import json
import math
import re
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

from squad.text.secrets._lexicon import word_class
from squad.text.secrets._values import (
    BY_CONTEXT,
    HANGUL,
    Candidate,
    password_manager,
    placeholder,
    strong_password,
    word_set,
)

__all__ = ["KINDS", "Model", "Unit", "candidates", "features", "load_model", "units"]

KIND = "credential"
KINDS = (KIND,)
PRIORITY = BY_CONTEXT + 1
"""Loses to every rule over the same span."""
MODEL_FILE = "learned_model.json"
"""The threshold and the cue words."""
WEIGHTS_FILE = "learned_weights.bin"
"""The weights: little-endian uint32 buckets, then int16 weights x 10,000, as many of each."""
BUCKETS = 1 << 20
BEFORE = 8
"""How many units before a unit may hold its cue."""
AFTER = 3

_RAW = re.compile(r"(?:[^\s\\]|\\(?![ntr]))+")
"""A word: no white space, nor an escaped one (``\\n`` in JSON text: a log line, a tool answer)."""
_LEAD = "\"'“‘`([{<«「『*"
_TRAIL = "\"'”’`)]}>»」』*.,;:?"
_PARTICLES = tuple(
    sorted(
        [
            "이에요",
            "예요",
            "이었어요",
            "였어요",
            "입니다",
            "이야",
            "야",
            "이고",
            "고",
            "이랑",
            "랑",
            "으로",
            "로",
            "은",
            "는",
            "이",
            "가",
            "을",
            "를",
            "이요",
            "요",
            "에요",
            "이며",
            "며",
            "라고",
            "이라고",
            "이라서",
            "라서",
            "인데",
            "인데요",
            "이니까",
            "니까",
            "임",
            "에서",
            "에",
            "도",
            "만",
            "까지",
            "하고",
            "와",
            "과",
            "이예요",
            "이구요",
            "구요",
        ],
        key=len,
        reverse=True,
    )
)
_HANGUL_RE = re.compile(f"[{HANGUL}]")
_ASCII_THEN_HANGUL = re.compile(rf"^([!-~]+?)([{HANGUL}].*)$")
_SPELLED = re.compile(
    r"(?<![^\s(\"'“‘:])[^\s,.;:\"'“”‘’()]"
    r"(?:(?:[ \t]|,[ \t]?|-|[ \t]-[ \t]|\.[ \t]?)[^\s,.;:\"'“”‘’()]){3,40}"
    r"(?![^\s)\"'”’.,;:!?])"
)
_SPOKEN = word_set(
    "에이 비 씨 디 이 에프 지 쥐 에이치 아이 제이 케이 엘 엠 엔 오 피 큐 알 에스 티 유"
    " 브이 더블유 엑스 와이 제트 지읒 영 공 일 이 삼 사 오 육 칠 팔 구 하나 둘 셋 넷"
    " 다섯 여섯 일곱 여덟 아홉 대문자 소문자 숫자 느낌표 골뱅이 샵 샾 별표 물음표"
    " 마침표 점 대시 하이픈 언더바 언더스코어 달러"
    " alpha alfa bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima"
    " mike november oscar papa quebec romeo sierra tango uniform victor whiskey x-ray xray"
    " yankee zulu zero one two three four five six seven eight nine capital uppercase"
    " upper lowercase lower small cap caps number digit dash hyphen underscore exclamation"
    " bang at hash pound dollar percent caret ampersand star asterisk dot period"
    " right left turn then again clockwise"
    " 오른쪽 왼쪽 오른쪽으로 왼쪽으로 다시 돌리고 돌려서 그다음"
)
"""Names a person spells a password with, in Korean and English, and the words around them."""
_SPOKEN_WORD = re.compile(rf"(?<![\w'])(?:[{HANGUL}]+|[A-Za-z-]+|[0-9]{{1,2}}|[!@#$%^&*])(?![\w'])")
_SPOKEN_GAP = re.compile(r"[ \t]*[,/]?[ \t]+|[ \t]*,[ \t]*")
_GROUP = re.compile(r"(?<![^\s(\"'“‘:])[A-Za-z0-9]{2,6}(?![^\s)\"'”’.,;:!?])")
_MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_PHONE = re.compile(r"\+?\d{1,3}[ .-]?\(?\d{2,4}\)?[ .-]\d{3,4}[ .-]\d{4}")
_PEM = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]+)-----")
_LOOKS = (
    ("hex", re.compile(r"(?:0x)?[0-9a-fA-F]{6,}")),
    ("uuid", re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")),
    ("mac", re.compile(r"[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}")),
    ("ip", re.compile(r"\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?")),
    ("date", re.compile(r"\d{2,4}[-/.]\d{1,2}[-/.]\d{1,4}")),
    ("version", re.compile(r"v?\d+(?:\.\d+)+")),
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("url", re.compile(r"\w+://\S+")),
    ("path", re.compile(r"[~.]?/[\w./-]+")),
    ("ticket", re.compile(r"[A-Z][A-Z0-9]+-\d+")),
    ("ident", re.compile(r"[a-z]+(?:[_.][a-z0-9]+)+\(?\)?")),
    ("phone", _PHONE),
    ("idprefix", re.compile(r"[a-z]{2,5}_[A-Za-z0-9]{8,}")),
    ("digest", re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}")),
)
_NEVER = tuple(
    p
    for name, p in _LOOKS
    if name in ("uuid", "ip", "date", "version", "email", "url", "mac", "phone", "digest")
)
"""What the learned detector never takes, however it is named: identifiers, addresses, dates,
versions, phone numbers (a credential in one of these shapes is the rules' to find, by its
name: ``api_key = <uuid>``)."""


@dataclass(frozen=True)
class Unit:
    """A word a value can be: its text and span, and whether it joins several words."""

    text: str
    start: int
    end: int
    composite: bool = False


def _trim(raw: str, start: int) -> tuple[str, int]:
    """``raw`` without leading quotes or brackets and trailing punctuation, and its new start."""
    lead = len(raw) - len(raw.lstrip(_LEAD))
    body = raw[lead:].rstrip(_TRAIL)
    return body, start + lead


def _split_korean(text: str, start: int) -> Iterator[tuple[str, int]]:
    """A unit with a Korean particle or copula after it, as the value alone."""
    m = _ASCII_THEN_HANGUL.match(text)
    if m:
        yield m[1].rstrip(_TRAIL), start
        yield m[2], start + m.start(2)  # the particle or unit ("자리", "비트"): context
        return
    if _HANGUL_RE.search(text):
        for particle in _PARTICLES:
            if text.endswith(particle) and len(text) - len(particle) >= 2:
                yield text[: -len(particle)], start
                return
    yield text, start


def units(text: str) -> list[Unit]:
    """The single-word units of ``text``, in order."""
    out: list[Unit] = []
    for m in _RAW.finditer(text):
        body, start = _trim(m[0], m.start())
        if not body:
            continue
        for piece, at in _split_korean(body, start):
            if piece:
                out.append(Unit(piece, at, at + len(piece)))
    return out


def composites(text: str) -> list[Unit]:
    """Values written over several words: spelled out (character by character, or by the
    names of letters and digits: "에이 비 씨 일 이 삼", "capital K, seven, m"), or in groups
    of one width."""
    out = [Unit(m[0], m.start(), m.end(), composite=True) for m in _SPELLED.finditer(text)]
    out += _spelled_by_name(text)
    run: list[re.Match[str]] = []
    for m in [*_GROUP.finditer(text), None]:
        if run and (m is None or not _same_group(run[-1], m, text)):
            if _grouped_value(run):
                out.append(
                    Unit(text[run[0].start() : run[-1].end()], run[0].start(), run[-1].end(), True)
                )
            run = []
        if m is not None:
            run.append(m)
    return out


def _spelled_by_name(text: str) -> list[Unit]:
    """Runs of four or more letter, digit and symbol names or single characters, two of them
    names at least."""
    out: list[Unit] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        if len(run) >= 4 and sum(w[0].lower() in _SPOKEN for w in run) >= 2:
            out.append(
                Unit(text[run[0].start() : run[-1].end()], run[0].start(), run[-1].end(), True)
            )
        run.clear()

    for m in _SPOKEN_WORD.finditer(text):
        spoken = m[0].lower() in _SPOKEN or len(m[0]) == 1
        if run and not (spoken and _SPOKEN_GAP.fullmatch(text, run[-1].end(), m.start())):
            flush()
        if spoken:
            run.append(m)
    flush()
    return out


def _same_group(a: re.Match[str], b: re.Match[str], text: str) -> bool:
    """Whether ``b`` continues ``a``'s run: the next word, as wide, digits like digits."""
    return (
        text[a.end() : b.start()] in (" ", "  ", "\t")
        and len(a[0]) == len(b[0])
        and a[0].isdigit() == b[0].isdigit()
    )


def _grouped_value(run: list[re.Match[str]]) -> bool:
    """Groups that can be one value: two or more of digits ("583 920", "36 24 12"), three or
    more of 4+ characters ("abcd efgh ijkl mnop")."""
    return (len(run) >= 2 and run[0][0].isdigit()) or (len(run) >= 3 and len(run[0][0]) >= 4)


def _norm(word: str) -> str:
    """A context word as a feature: lower case, punctuation off its ends, Hangul by its stem;
    an earlier redaction is ``[redacted]`` whatever its kind."""
    if _MARKER.search(word):
        return "[redacted]"
    word = word.lower().strip(_LEAD + _TRAIL + "!")
    if _HANGUL_RE.search(word):
        for particle in _PARTICLES:
            if word.endswith(particle) and len(word) - len(particle) >= 1:
                return word[: -len(particle)]
    return word


def _shape(text: str) -> str:
    out: list[str] = []
    for c in text:
        if c.isdigit():
            s = "9"
        elif c.isupper():
            s = "A"
        elif c.islower():
            s = "a"
        elif _HANGUL_RE.match(c):
            s = "가"
        elif c.isspace():
            s = " "
        else:
            s = c
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out[:12])


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def features(unit: Unit, before: list[str], after: list[str]) -> list[str]:
    """The features of ``unit`` with the normalised words before (nearest last) and after it."""
    return [*unit_features(unit.text, unit.composite), *context_features(unit.text, before, after)]


def unit_features(t: str, composite: bool) -> tuple[str, ...]:
    """The features of a unit's own text. Not kept: a unit's own score is
    (:meth:`Model.unit_probability`), a float where its features are a hundred strings."""
    low = t.lower()
    n = len(t)
    classes = sum(
        any(test(c) for c in t)
        for test in (str.islower, str.isupper, str.isdigit, lambda c: not c.isalnum())
    )
    f = [
        "bias",
        f"len={min(n, 24) if n < 16 else 16 + min(n // 8, 6)}",
        f"cls={classes}",
        f"shape={_shape(t)}",
        f"ent={min(int(_entropy(t) * 2), 10)}",
        f"comp={composite}",
    ]
    if n <= 24:
        f.append(f"w={low}")
    padded = f"^{low[:32]}$"
    for size in (2, 3, 4):
        f.extend(f"g{size}={padded[i : i + size]}" for i in range(len(padded) - size + 1))
    if t.isdigit():
        f.append(f"digits={min(n, 12)}")
    for name, pattern in _LOOKS:
        if pattern.fullmatch(t):
            f.append(f"looks={name}")
    if _HANGUL_RE.search(t):
        f.append("hangul")
        if any(c.isascii() and c.isalnum() for c in t):
            f.append("hangul+ascii")
    return tuple(f)


def context_features(t: str, before: list[str], after: list[str]) -> list[str]:
    """The features of the words around a unit whose text is ``t``."""
    f = [f"p{i}={word}" for i, word in enumerate(reversed(before[-3:]), 1)]
    f += [f"bw={word}" for word in before]
    f += [f"n{i}={word}" for i, word in enumerate(after[:2], 1)]
    f += [f"aw={word}" for word in after]
    if before:
        f.append(f"p1+shape={before[-1]}|{_shape(t)}")
    f += [f"bc={c}" for c in {word_class(w) for w in before} if c is not None]
    f += [f"ac={c}" for c in {word_class(w) for w in after} if c is not None]
    near = word_class(before[-1]) if before else None
    if near is not None:
        f.append(f"p1c={near}")
    return f


_OWN_SCORES = 16384


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def _bucket(feature: str) -> int:
    return zlib.crc32(feature.encode()) & (BUCKETS - 1)


@dataclass(frozen=True)
class Model:
    """Weights by feature bucket, the decision threshold, and the cue words that open the gate."""

    weights: dict[int, float]
    threshold: float
    cues: frozenset[str]

    @functools.cached_property
    def hangul_cues(self) -> frozenset[str]:
        return frozenset(c for c in self.cues if _HANGUL_RE.search(c))

    def probability(self, feats: Iterable[str]) -> float:
        return _sigmoid(self.sum(feats))

    def sum(self, feats: Iterable[str]) -> float:
        weights = self.weights
        return sum(weights.get(_bucket(x), 0.0) for x in feats)

    def unit_probability(self, unit: Unit, before: list[str], after: list[str]) -> float:
        """:meth:`probability` of ``unit``'s :func:`features`, its own part remembered."""
        key = (unit.text, unit.composite)
        own = self._own.get(key)
        if own is None:
            if len(self._own) > _OWN_SCORES:
                self._own.clear()
            own = self._own[key] = self.sum(unit_features(*key))
        return _sigmoid(own + self.sum(context_features(unit.text, before, after)))

    @functools.cached_property
    def _own(self) -> dict[tuple[str, bool], float]:
        return {}


def model_from(meta: dict[str, object], weights: bytes) -> Model:
    """A :class:`Model` from the two files the training script writes."""
    n = len(weights) // 6
    buckets, values = array.array("I"), array.array("h")
    buckets.frombytes(weights[: 4 * n])
    values.frombytes(weights[4 * n : 6 * n])
    if sys.byteorder != "little":
        buckets.byteswap()
        values.byteswap()
    cues = frozenset(str(c) for c in meta["cues"])  # type: ignore[attr-defined]
    threshold = float(meta["threshold"])  # type: ignore[arg-type]
    return Model(dict(zip(buckets, (v / 10000 for v in values), strict=True)), threshold, cues)


def weights_bytes(weights: dict[int, float]) -> bytes:
    """``weights`` as :data:`WEIGHTS_FILE` holds them (for the training script)."""
    items = sorted(weights.items())
    buckets = array.array("I", (b for b, _ in items))
    values = array.array("h", (max(-32767, min(32767, round(w * 10000))) for _, w in items))
    if sys.byteorder != "little":
        buckets.byteswap()
        values.byteswap()
    return buckets.tobytes() + values.tobytes()


CUE_SHAPE = re.compile(rf"[a-z][a-z0-9_-]*[a-z0-9]|[{HANGUL}]+")
"""What a cue word may be: a lower-case word (``2fa`` and ``api_key`` too) or Hangul."""
_ASCII_WORDS = re.compile(r"[a-z0-9_-]+")
_HANGUL_WORDS = re.compile(f"[{HANGUL}]+")


@cache
def load_model() -> Model | None:
    """The shipped model, or None when the weights file is missing (a training run)."""
    data = resources.files("squad.text.secrets").joinpath("data")
    try:
        meta = json.loads(data.joinpath(MODEL_FILE).read_text(encoding="utf-8"))
        weights = data.joinpath(WEIGHTS_FILE).read_bytes()
    except (FileNotFoundError, OSError):
        return None
    return model_from(meta, weights)


def scored_units(text: str, model: Model) -> Iterator[tuple[Unit, list[str], list[str]]]:
    """Each gated unit of ``text`` with the words before and after it (see :func:`features`):
    singles, then composites."""
    singles = units(text)
    words = [_norm(u.text) for u in singles]
    cue_at = [w in model.cues for w in words]
    starts = [u.start for u in singles]
    for i, unit in enumerate(singles):
        if not _can_be_value(unit.text):
            continue
        lo, hi = max(0, i - BEFORE), min(len(singles), i + AFTER + 1)
        if not (any(cue_at[lo:i]) or any(cue_at[i + 1 : hi]) or _shaped(unit.text)):
            continue
        yield unit, words[lo:i], words[i + 1 : hi]
    for unit in composites(text):
        i = _index_at(starts, unit.start)
        j = _index_at(starts, unit.end - 1) + 1
        lo, hi = max(0, i - BEFORE), min(len(singles), j + AFTER)
        if not (any(cue_at[lo:i]) or any(cue_at[j:hi])):
            continue
        yield unit, words[lo:i], words[j:hi]


def _shaped(text: str) -> bool:
    """Shaped like a password a person chose, so worth scoring with no cue word near: a
    longer random string is a token, the rules' to judge."""
    return len(text) <= SHAPED_LONGEST and strong_password(text)


SHAPED_LONGEST = 20
LONGEST = 100
"""The longest unit scored: a password a person types is shorter; a longer run of characters
is a token or a glued document (a compact JSON line of a run log, with its random run id and
commit hash), the rules' to judge."""
_JSON_GLUE = re.compile(r'"[:,]["{\[]|[}\]],"')


def _can_be_value(text: str) -> bool:
    """Whether one word can be a credential at all: 4 to :data:`LONGEST` characters (3+
    digits: a card's security code), no compact JSON, placeholder, reference, marker or
    password manager's name."""
    if len(text) < (3 if text.isdigit() else 4) or len(text) > LONGEST:
        return False
    if _JSON_GLUE.search(text):
        return False  # compact JSON, keys and values glued without a space: the rules read it
    if any(pattern.fullmatch(text) for pattern in _NEVER):
        return False
    return not (_MARKER.search(text) or placeholder(text) or password_manager(text))


def _index_at(starts: list[int], pos: int) -> int:
    return max(0, bisect.bisect_right(starts, pos) - 1)


def _maybe(text: str, model: Model) -> bool:
    """Whether ``text`` can hold a cue word or a password-shaped word at all: the cheap test
    before any unit is cut or scored (a Hangul cue may have a particle after it, so its word's
    prefixes are tried)."""
    if not model.cues.isdisjoint(_ASCII_WORDS.findall(text.lower())):
        return True
    if _shaped_somewhere(text):
        return True
    hangul = model.hangul_cues
    return any(
        word[:k] in hangul
        for word in _HANGUL_WORDS.findall(text)
        for k in range(1, min(len(word), _LONGEST_HANGUL_CUE) + 1)
    )


_LONGEST_HANGUL_CUE = 8
_SYMBOL_INSIDE = re.compile(r"[A-Za-z0-9][^\sA-Za-z0-9_]+[A-Za-z0-9]")
_UPPER, _LOWER, _DIGIT = re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]")


def _shaped_somewhere(text: str) -> bool:
    """A superset of texts holding a :func:`_shaped` word, each search linear: a symbol between
    letters or digits, or upper case, lower case and a digit somewhere."""
    return _SYMBOL_INSIDE.search(text) is not None or all(
        p.search(text) is not None for p in (_UPPER, _LOWER, _DIGIT)
    )


def _public_blocks(text: str) -> list[tuple[int, int]]:
    """Where PEM public keys and certificates are: public, however random they look."""
    out: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for m in _PEM.finditer(text):
        if m[1] == "BEGIN":
            opened = (m.start(), m[2])
        elif opened is not None:
            if "PRIVATE" not in opened[1]:
                out.append((opened[0], m.end()))
            opened = None
    if opened is not None and "PRIVATE" not in opened[1]:
        out.append((opened[0], len(text)))
    return out


def spans(text: str, model: Model) -> list[tuple[int, int]]:
    """The credential spans the model finds in ``text``, neighbours joined, sorted."""
    if not _maybe(text, model):
        return []
    hits: list[tuple[int, int]] = []
    composite_hits: list[tuple[int, int]] = []
    for unit, before, after in scored_units(text, model):
        if model.unit_probability(unit, before, after) < model.threshold:
            continue
        (composite_hits if unit.composite else hits).append((unit.start, unit.end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(hits):
        if merged and text[merged[-1][1] : start].strip(" \t-") == "":
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    composite_hits.sort()
    starts = [s for s, _ in composite_hits]
    out = list(composite_hits)
    for start, end in merged:
        i = bisect.bisect_right(starts, start) - 1
        if not (i >= 0 and end <= composite_hits[i][1]):  # not inside the composite before it
            out.append((start, end))
    public = _public_blocks(text) if "-----" in text else []
    kept = sorted(span for span in out if not any(s <= span[0] < e for s, e in public))
    joined: list[tuple[int, int]] = []
    for start, end in kept:  # overlapping composites and words become one span
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return joined


def candidates(text: str) -> Iterator[Candidate]:
    """The learned detector's finds, as candidates for :func:`squad.text.secrets.find_secrets`."""
    model = load_model()
    if model is None:
        return
    for start, end in spans(text, model):
        yield PRIORITY, start, end, KIND
