"""Credentials people say rather than paste: lock codes, corrected passwords, phrases. Pure.

"the safe combo is 32-17-08", "키패드 번호 2468#", "if the alarm beeps, punch in 0913",
"it's Hunter2024! not Hunter2023!", "tjdnf2024! 가 아니라 tjdnf2025! 에요", "비번은 회사명+연도라서
acme2024 입니다", "pw has spaces: 'Moon Walk 1969'", a 12-word seed phrase, "diceware one:
glacier-mango-velvet-anchor", a list of recovery codes under their name, "인증번호 [739105]".
Each finder proposes a value only in its context and its shape, and loses to every other kind
over the same span (:data:`._values.BY_CONTEXT`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from squad.text.secrets._named import PASSWORD_WORDS_EN, PASSWORD_WORDS_KO
from squad.text.secrets._scan import NextNewline, Rules, Scan
from squad.text.secrets._values import (
    ADDRESS,
    BY_CONTEXT,
    FUNCTION_WORDS,
    HANGUL,
    NOT_A_PASSWORD,
    Candidate,
    password_manager,
    placeholder,
)

__all__ = ["KINDS", "candidates"]

KINDS = ("lock_code", "one_time_code", "recovery_code", "seed_phrase", "password_context")

_UNITS = (
    r"자리|글자|자|chars?|characters?|digits?|times|번|회|일|days?|months?|years?|minutes?|분|초"
    r"|시간|비트|bits?|바이트|bytes?|rounds?|iterations?|개|%|ms|s\b|won|원|달러|dollars?"
)

# -- lock codes and PINs: digits, grouped or not, right after their name ---------------------

_LOCK = re.compile(
    rf"""(?:(?i:(?<![\w-])(?:pin[ \t]?code|(?:door|gate|garage
      |alarm|keypad|lock|locker|safe|entry|bios|sim|card)[ \t]?(?:code|pin|combo|combination
      |password|number)|keypad|combo|combination|safe)(?![\w-])
      (?:[ \t]+(?:for|of|on|in|at|to)[ \t]+(?:the[ \t]+)?[\w-]+(?:[ \t]+[\w-]+)?)?
      [ \t]*+(?:(?:is|was)(?:[ \t]+(?:now|still|literally|just))?|:|=|-)?)
    |(?:핀[ \t]?번호|도어락(?:[ \t]?번호)?|키패드(?:[ \t]?번호)?
      |금고(?:[ \t]?(?:비밀번호|비번|번호))?|현관(?:문)?[ \t]?(?:비번|번호)
      |(?:도어|출입문|비상구)[ \t]?(?:비번|번호))
      (?:은|는|이|가)?[ \t]*+:?)
    [ \t]*+\[?(?P<v>\d{{1,4}}(?:[ -]\d{{1,4}}){{1,5}}|\d{{4,8}})\]?(?P<hash>[\#*])?
    (?![\d.:,/-]?\d|[ \t]*(?:{_UNITS})(?![A-Za-z{HANGUL}]))""",
    re.VERBOSE,
)
_DATE_OR_TIME = re.compile(r"\d{4}-\d{1,2}(?:-\d{1,2})?|\d{1,2}-\d{1,2}-\d{4}")


def _lock_code(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return (
        4 <= len(digits) <= 12
        and len(set(digits)) > 1
        and not _DATE_OR_TIME.fullmatch(value)
        and not placeholder(digits)
    )


# -- a code keyed into a lock: "if the alarm panel beeps, punch in 0913", "현관 0427# 누르고" ------

_LOCK_WORD = re.compile(
    r"(?i:(?<![\w-])(?:alarm|keypad|door|gate|panel|safe|lockbox|lock|garage)s?(?![\w-]))"
    r"|도어락|키패드|현관|경보기|금고|출입문"
)
_KEYED = re.compile(
    r"(?i:(?<![\w-])(?:(?:punch|key|tap|type)(?:ed|ing)?[ \t]+in|enter)[ \t]+)"
    r"(?P<v>\d{4,8})(?P<hash>\#)?(?![\d.,:/-]?\d)"
    r"|(?<![\w-])(?P<kv>\d{4,8})(?P<khash>\#)?[ \t]*(?:을|를)?[ \t]*(?:누르|눌러|입력|치고|찍)"
)
_KEYED_REACH = 80
"""How far back the lock word may be, within the code's sentence."""


def _keyed(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for m in scan.finditer(_KEYED):
        group, mark = ("v", "hash") if m["v"] is not None else ("kv", "khash")
        if re.fullmatch(r"(?:19|20)\d\d", m[group]):
            continue  # "enter 2024 as the year": keyed, but a year
        start = _sentence_start(text, m.start(), _KEYED_REACH)
        if _LOCK_WORD.search(text, start, m.start()) and _lock_code(m[group]):
            yield BY_CONTEXT, m.start(group), m.end(mark) if m[mark] else m.end(group), "lock_code"


# -- one-time codes: "인증번호 [739105]", "they texted me the code: 482913" ----------------

_ONE_TIME = re.compile(
    r"(?:(?i:(?<![\w-])(?:(?:verification|login|sign[ -]?in|one[ -]time|otp|2fa|mfa|sms|security"
    r"|auth(?:entication)?|confirmation|backup|recovery)[ \t]?code|texted\ me\ the\ code"
    r"|the\ code\ (?:they|it)\ (?:sent|texted)))|인증[ \t]?(?:번호|코드)|OTP[ \t]?(?:번호|코드)?)"
    r"[^\n\d]{0,12}?[\[(]?(?P<v>\d{3,4}[ -]\d{3,4}(?![ -]?\d)|\d{4,8}(?![./-]\d))(?!\d)"
)  # a number that goes on after '-', '.' or '/' is a date or a version, not the code

# -- a correction: "X, not Y", "Y 가 아니라 X": near-identical values, one mistyped -----------

_VALUE = rf"[^\s'\"`,;()—{HANGUL}]{{6,64}}"
_CORRECTION = re.compile(
    rf"(?<![^\s'\"`(])['\"`]?(?P<a>{_VALUE}?)['\"`]?,?[ \t]+(?i:not|instead\ of|rather\ than)"
    rf"[ \t]+['\"`]?(?P<b>{_VALUE})['\"`]?"
    rf"|(?<![^\s'\"`(])['\"`]?(?P<c>{_VALUE}?)['\"`]?[ \t]*+(?:가|이)?[ \t]*+아니(?:라|고)[ \t,]*+"
    rf"['\"`]?(?P<d>{_VALUE})['\"`]?"
)
_PASSWORD_CUE = re.compile(
    rf"(?i:(?<![\w-])(?:{PASSWORD_WORDS_EN}|pwd|creds?|login|rotated|typo)(?![\w-]))"
    rf"|{PASSWORD_WORDS_KO}|오타|로그인"
)
_SYMBOL = re.compile(r"[!#$%^&*?~@+=]")


def _near(a: str, b: str) -> bool:
    """Two spellings of one value: the same length give or take two, and a shared prefix or
    suffix covering all but three characters of the shorter."""
    if a == b or abs(len(a) - len(b)) > 2:
        return False
    prefix = len(_common(a, b))
    suffix = len(_common(a[::-1], b[::-1]))
    return max(prefix, suffix) >= min(len(a), len(b)) - 3


def _common(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _corrected(scan: Scan) -> Iterator[Candidate]:
    cue = scan.search(_PASSWORD_CUE) is not None
    for m in scan.finditer(_CORRECTION):
        groups = ("a", "b") if m["a"] is not None else ("d", "c")  # (right, wrong)
        pair = [m[g].rstrip(".,:;)") for g in groups]  # "!" and "?" may end a password
        if not all(_password_pair_value(v) for v in pair) or not _near(*pair):
            continue
        if not (cue or any(_SYMBOL.search(v) for v in pair)):
            continue  # hotspot-7781, not hotspot-7718: a host, unless a password is talked of
        for group, value in zip(groups, pair, strict=True):
            yield BY_CONTEXT, m.start(group), m.start(group) + len(value), "password_context"


def _password_pair_value(value: str) -> bool:
    return (
        any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and not placeholder(value)
        and not ADDRESS.fullmatch(value)
        and "://" not in value
        and not re.fullmatch(r"v?\d+(?:\.\d+)+[a-z]*\d*|[A-Z][A-Z0-9_]+", value)
    )


# -- a password's value later in its sentence, said with a copula: "... acme2024 입니다" --------

_KO_PASSWORD_WORD = re.compile(
    rf"{PASSWORD_WORDS_KO}(?!화)|(?i:(?<![\w-])(?:pw|pwd|password)(?![\w-]))"
)
_KO_VALUE = re.compile(
    rf"(?<![^\s'\"`(/])(?P<v>[A-Za-z0-9!@#$%^&*?~_+.-]{{4,64}}?)[ \t]*+"
    rf"(?:입니다|이에요|예요|에요|이고요|이요|래요|래|이래요|라고|이라고|야|이야|임|요"
    rf"|이었어요|였어요|이었습니다|였습니다|이었음|였음)(?![{HANGUL}])"
)
_KO_WINDOW = 80


def _korean_said(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for cue in scan.finditer(_KO_PASSWORD_WORD):
        end = _sentence_end(text, cue.end(), _KO_WINDOW)
        for m in _KO_VALUE.finditer(text, cue.end(), end):
            value = m["v"].rstrip(".")
            letters = any(c.isalpha() for c in value)
            digits = sum(c.isdigit() for c in value)
            between = text[cue.end() : m.start("v")].strip()
            pin = value.isdigit() and len(value) >= 4 and between in ("", "은", "는", "이", "가")
            if not (digits and (letters or _SYMBOL.search(value) or digits >= 6 or pin)):
                continue  # "택배함 비번 8023 이에요": a PIN right after its name, said as one
            if placeholder(value) or ADDRESS.fullmatch(value) or value.lower() in NOT_A_PASSWORD:
                continue
            if not pin and re.fullmatch(r"v?\d+(?:\.\d+)+|[A-Z][A-Z0-9_]+|\d{1,5}", value):
                continue  # a version, a constant's name, a length or a port
            yield BY_CONTEXT, m.start("v"), m.start("v") + len(value), "password_context"


_SENTENCE_END = re.compile(r"\n|(?<!\.)[.!?](?:\s|$)")  # "..." trails off, it does not end


def _sentence_end(text: str, start: int, width: int) -> int:
    end = min(len(text), start + width)
    m = _SENTENCE_END.search(text, start, end)
    return m.start() if m else end


def _sentence_start(text: str, end: int, width: int) -> int:
    """Where the sentence holding ``end`` starts, at most ``width`` back."""
    start = max(0, end - width)
    for m in _SENTENCE_END.finditer(text, start, end):
        start = m.end()
    return start


# -- a quoted value after a password word, words between: "pw has spaces: 'Moon Walk 1969'" ------

_QUOTED_AFTER = re.compile(
    rf"(?P<cue>(?i:(?<![\w-])(?:{PASSWORD_WORDS_EN}|pwd)(?![\w-]))|{PASSWORD_WORDS_KO}"
    r"|패스\s?프레이즈)"
    r"[^\n'\"‘“`]{0,40}?(?:'(?P<sq>[^'\n]{4,64})'|\"(?P<dq>[^\"\n]{4,64})\"|‘(?P<cq>[^’\n]{4,64})’"
    r"|“(?P<cd>[^”\n]{4,64})”)"
)
_HANGUL_RE = re.compile(f"[{HANGUL}]")
_PHRASE_CUE = re.compile(r"(?i:passphrase)|패스\s?프레이즈")


def _spoken_value(words: list[str], value: str, *, phrase: bool) -> bool:
    """Words with a number ('Moon Walk 1969'), or after "passphrase" three words or more."""
    return (len(words) >= 2 and any(c.isdigit() for c in value)) or (phrase and len(words) >= 3)


def _quoted(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for m in scan.finditer(_QUOTED_AFTER):
        group = next(g for g in ("sq", "dq", "cq", "cd") if m[g] is not None)
        value = m[group]
        words = value.lower().split()
        if placeholder(value) or any(w in FUNCTION_WORDS for w in words):
            continue
        if _HANGUL_RE.search(value):
            if not _PHRASE_CUE.fullmatch(m["cue"]) or len(words) < 2:
                continue  # "비밀번호 재설정 메일 제목은 '...'": a label, unless a passphrase
        elif not _spoken_value(words, value, phrase=_PHRASE_CUE.fullmatch(m["cue"]) is not None):
            continue  # one quoted word after "password" is judged where it is named
        if password_manager(text[m.end("cue") : m.start(group)]):
            continue  # "the password is in 1Password under 'Prod DB 2'": where it lives
        yield BY_CONTEXT, *m.span(group), "password_context"


# -- passphrases of words: a seed phrase, a diceware passphrase ------------------------------

_SEED_CUE = re.compile(
    r"(?i:(?<![\w-])(?:(?:seed|recovery|backup|mnemonic|secret|wallet)[ \t]?(?:phrase|words)"
    r"|wallet[ \t]seed|mnemonic|bip-?39)(?![\w-]))"
    r"|니모닉|시드[ \t]?(?:문구|구문|단어)|복구[ \t]?(?:문구|구문|단어)"
)
_SEED = re.compile(r"(?<![\w-])[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23}(?![\w-])")
_DICEWARE_CUE = re.compile(
    r"(?i:(?<![\w-])(?:diceware|passphrase)(?![A-Za-z0-9_-]))|패스\s?프레이즈"
)
_DICEWARE = re.compile(r"(?<![\w-])[a-z]{3,10}(?:-[a-z0-9]{2,10}){3,9}(?![\w-])")
_WINDOW = 80


def _phrases(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    for cue in scan.finditer(_SEED_CUE):
        line_end = text.find("\n", cue.end(), cue.end() + _WINDOW)
        stop = min(len(text), cue.end() + 4 * _WINDOW) if line_end < 0 else line_end
        if line_end >= 0 and not text[cue.end() : line_end].strip(" \t:：-—()0123456789words"):
            stop = text.find("\n", line_end + 1)  # the phrase on the line below its name
            stop = len(text) if stop < 0 else stop
        for m in _SEED.finditer(text, cue.end(), stop):
            if not any(w in FUNCTION_WORDS for w in m[0].split()):
                yield BY_CONTEXT, *m.span(), "seed_phrase"
    for cue in scan.finditer(_DICEWARE_CUE):
        end = text.find("\n", cue.end(), cue.end() + _WINDOW)  # as far as the phrases below
        for m in _DICEWARE.finditer(text, cue.end(), min(len(text), cue.end() + _WINDOW)):
            if end < 0 or m.start() < end:
                yield BY_CONTEXT, *m.span(), "password_context"


# -- codes listed under their name, one per line ----------------------------------------------

_LIST_CUE = re.compile(
    r"(?i:(?<![\w-])(?:backup|recovery|2fa|mfa|otp)[ \t]?(?:codes?|keys?)(?![\w-]))"
    r"|(?:백업|복구)[ \t]?(?:코드|키)"
)
_LISTED = re.compile(
    r"[ \t]*(?:\d{1,2}[.)][ \t]*|[-*•][ \t]*)?(?P<v>\d{4}[ -]\d{4}|[a-z0-9]{4,5}-[a-z0-9]{4,5}"
    r"|[A-Z0-9]{4}(?:-[A-Z0-9]{4}){1,}|[a-z0-9]{8,10}|\d{6}(?:-\d{6}){7})[ \t]*"
)
_UNSEAL = re.compile(r"(?i:unseal[ \t]key[ \t]?\d*)[ \t]*:[ \t]*(?P<v>[A-Za-z0-9+/]{40,}={0,2})")
_BITLOCKER = re.compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")


def _listed(scan: Scan) -> Iterator[Candidate]:
    text = scan.text
    next_newline = NextNewline(text)
    for cue in scan.finditer(_LIST_CUE):
        pos = next_newline(cue.end())
        while pos >= 0:
            line_end = text.find("\n", pos + 1)
            line_end = len(text) if line_end < 0 else line_end
            m = _LISTED.fullmatch(text, pos + 1, line_end)
            if m is None or not any(c.isdigit() for c in m["v"]):
                break
            yield BY_CONTEXT, *m.span("v"), "recovery_code"
            pos = line_end if line_end < len(text) else -1
    for m in scan.finditer(_UNSEAL):
        yield BY_CONTEXT, *m.span("v"), "recovery_code"
    for m in scan.finditer(_BITLOCKER):
        yield BY_CONTEXT, *m.span(), "recovery_code"


RULES = Rules(
    _LOCK,
    _ONE_TIME,
    _KEYED,
    _PASSWORD_CUE,
    _CORRECTION,
    _KO_PASSWORD_WORD,
    _QUOTED_AFTER,
    _SEED_CUE,
    _DICEWARE_CUE,
    _LIST_CUE,
    _UNSEAL,
    _BITLOCKER,
)
"""Every pattern :func:`candidates` runs over the whole text."""


def candidates(text: str, scan: Scan | None = None) -> Iterator[Candidate]:
    """Every credential ``text`` says rather than pastes; ``scan`` is ``text``'s :class:`Scan`
    when the caller shares one among the finders."""
    scan = Scan(text) if scan is None else scan
    if not scan.admits(RULES):
        return  # no pattern here can match: most messages
    for m in scan.finditer(_LOCK):
        if _lock_code(m["v"]):
            yield BY_CONTEXT, m.start("v"), m.end("hash") if m["hash"] else m.end("v"), "lock_code"
    for m in scan.finditer(_ONE_TIME):
        if len(set(m["v"].replace(" ", "").replace("-", ""))) > 1:
            yield BY_CONTEXT, *m.span("v"), "one_time_code"
    yield from _keyed(scan)
    yield from _corrected(scan)
    yield from _korean_said(scan)
    yield from _quoted(scan)
    yield from _phrases(scan)
    yield from _listed(scan)
