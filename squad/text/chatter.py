"""The model's chatter: what a reply says that is no fact about the project or the person. Pure.

Memory fills with a model's own words unless they are told apart from what it learnt: the
offline model's disclaimer, "Done. The work is written up below.", "memory_append answered:
saved to ...", "Thanks!". A reply is read line by line, then sentence by sentence; each piece
is chatter of one :data:`ChatterKind`, or substance:

=================  ==========================================================================
kind               recognised when the piece...
=================  ==========================================================================
``offline_model``  is one of the built-in offline model's fixed phrases, read from the file it
                   answers from (``squad/prompts/offline.yaml``), its fields as wildcards
``acknowledgement`` is only thanks, agreement or a pleasantry ("Got it, thanks!", "네, 감사합니다")
``tool_receipt``   reports a tool's answer ("memory_append answered: ...", "saved to
                   agents/a/memory.md (Insights)", "I've saved that to memory.", "working
                   memory updated: decisions 1, ...")
``refusal``        declines or disclaims ("I'm sorry, but I can't help with that", "As an AI
                   language model, ...")
``boilerplate``    talks only about the reply itself: every word is a function word or a word
                   about answering ("The work is written up below", "Hope this helps",
                   "Let me know if you need anything else", a placeholder "point one")
``restatement``    says nothing the user or the task did not already say: almost all its
                   words (and every number) are in the statements before it
=================  ==========================================================================

Roles: an assistant's text is judged by every kind. A person's (``user``) or a task prompt's
only by the kinds that never hold a fact whoever says them (the offline model's phrases,
acknowledgements, tool receipts): "Answer first, details below" from a user is a preference,
from a model boilerplate. A ``tool`` message is a receipt and a ``system`` prompt
boilerplate, whole. Text in another language is judged only by what is written for it
(Korean acknowledgements and refusals): its words are never "about answering", so real
content is never chatter because it is not English.

:func:`substance` is what the fact extractors read; :func:`is_chatter_message` is what a
recall may leave out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from squad import prompts
from squad.text.bounded_cache import BoundedCache, text_key
from squad.text.lexical import stem, term_counts

__all__ = [
    "ChatterKind",
    "Context",
    "Piece",
    "Said",
    "chatter_kind",
    "is_chatter_message",
    "pieces",
    "restates",
    "substance",
]

ChatterKind = Literal[
    "offline_model", "acknowledgement", "tool_receipt", "refusal", "boilerplate", "restatement"
]
_ANYONE: frozenset[ChatterKind] = frozenset({"offline_model", "acknowledgement", "tool_receipt"})
"""Kinds that are chatter whoever says them; the others only in a model's reply."""

RESTATED = 0.8
"""A piece whose words are at least this much in the context restates it."""
_MIN_TERMS = 2
"""Fewer words than this are too few to call a restatement ("We use Postgres" may choose)."""


@dataclass(frozen=True)
class Piece:
    """One line or sentence of a message, and what chatter it is (None: substance)."""

    text: str
    kind: ChatterKind | None
    line: int = 0
    """Its line's place in the message: pieces of one line share it."""


# -- the offline model's phrases --------------------------------------------------------------

_FIELD = re.compile(r"\{[a-z_]+\}")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def _templates(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _templates(value)


def _pattern(template: str) -> re.Pattern[str] | None:
    """A template line or sentence as a whole-text pattern, its fields as wildcards; None
    when its fixed words are fewer than two (``# {title}`` would match any heading)."""
    template = _bare(template)
    if len(_WORDS.findall(_FIELD.sub(" ", template))) < 2:
        return None
    parts = _FIELD.split(template)
    literal = [r"\s+".join(re.escape(w) for w in part.split(" ")) for part in parts]
    body = ".*?".join(literal)
    return re.compile(rf"^{body}$", re.IGNORECASE | re.DOTALL)


_SIGNATURE = "squad's offline model"
"""Words every template line of the offline model that names itself holds."""


@cache
def _offline_patterns() -> tuple[re.Pattern[str], ...]:
    """Every line and sentence of the offline model's templates, as patterns."""
    found: dict[str, re.Pattern[str]] = {}
    for template in _templates(prompts.offline_phrases()):
        for line in template.splitlines():
            for piece in (line, *_SENTENCE_END.split(line.strip())):
                pattern = _pattern(piece)
                if pattern is not None:
                    found.setdefault(pattern.pattern, pattern)
    return tuple(found.values())


# -- the kinds --------------------------------------------------------------------------------

_I = re.IGNORECASE
_TOOL_RECEIPT = [
    re.compile(p, _I)
    for p in (
        r"^`?[a-z][\w.-]*_[\w.-]+`?\s+(?:answered|returned|replied|responded|said|gave|output)\b",
        r"^(?:the )?tool(?: call| result)?\b.{0,40}\b(?:answered|returned|succeeded|failed)\b",
        r"\bsaved to \S+\s*\([^)]*\)|\bfile is now [\d,]+ bytes\b",
        r"^(?:saved|written|appended|stored|added|recorded)\s+(?:to|in|into)\s+\S+[.!]?$",
        r"^(?:i(?:'ve| have)\s+)?(?:now\s+)?(?:saved|stored|added|appended|written|wrote|recorded"
        r"|noted|remembered|updated|put)\b.{0,60}?\b(?:to|in|into|under)\s+(?:my |your |the |our )?"
        r"(?:long[- ]term )?(?:memory(?:\.md)?|notes|insights)\b(?:\s*\([^)]*\)|\s+under \w+"
        r"|#\S+)?\s*[.!]?$",
        r"^(?:memory|memory\.md|notes?)\s+(?:updated|saved|written)\b",
        r"^(?:my |your |the )?working memory (?:is )?(?:updated|unchanged)\b",
        r"^refused: ",
    )
]
_REFUSAL = [
    re.compile(p, _I)
    for p in (
        r"^as an ai\b",
        r"^i(?:'m| am) (?:just |only |merely )?(?:an? )?(?:ai|language model|large language model"
        r"|llm|chatbot|virtual assistant|ai assistant)\b",
        r"^(?:(?:i'?m |i am )?sorry|unfortunately|i apologi[sz]e|apologies)\b.{0,40}\b"
        r"(?:can(?:no|')t|cannot|unable|not able|won'?t be able|don'?t have)\b",
        r"^(?:but |however,? |unfortunately,? )?i (?:can(?:no|')t|cannot|am unable to|'m unable to"
        r"|am not able to|'m not able to|won'?t be able to|do(?:n'?t| not) have the ability to)"
        r" (?:help|assist|comply|do that|answer|provide|look (?:this |that |it )?up|browse"
        r"|access the internet|verify|share|fulfil+|complete (?:this|that)|support|process"
        r"|reason|see|open|run)\b",
        r"^i do(?:n'?t| not) have (?:access to (?:the internet|real-time|external|your)|personal"
        r" (?:opinions|experiences|feelings)|the ability|real-time|browsing)\b",
        r"^i can only (?:restate|repeat|echo)\b",
        r"죄송(?:합니다|하지만|해요).{0,40}(?:수 없|어렵|불가)|(?:도와|답변해|도움을) ?드릴 수 없"
        r"|^저는 (?:AI|인공지능|언어 ?모델)",
    )
]
_ACK_TEXT = """
    ok okay k kk sure yes yeah yep yup got it noted understood thanks thank you very much so a lot
    ty thx cheers great perfect awesome cool nice done will do sounds good right alright all of
    course certainly absolutely welcome you're no problem worries happy to help glad anytime np
    appreciated appreciate that makes sense roger ack hi hello hey bye see ya later again will
    indeed excellent wonderful fantastic lol haha ah oh hmm sorry oops my bad gladly pleasure
    네 넵 넹 예 응 감사합니다 감사해요 감사 고마워요 고마워 고맙습니다 알겠습니다 알겠어요 알겠어
    확인했습니다 확인했어요 확인 좋아요 좋습니다 천만에요 물론이죠 물론입니다 그럼요
    완료했습니다 완료
    오케이 ㅇㅋ 넵넵 네네 수고하셨습니다 수고하세요 반갑습니다 안녕하세요
"""
_ACK_WORDS = frozenset(_ACK_TEXT.split())
"""Words of thanks, agreement and pleasantry, English and Korean: a sentence of nothing else
acknowledges."""
_META_TEXT = """
    a an the this that these those it its it's that's here's there's what's is are was were
    be been being am do does did don't doesn't won't can't we'd
    doing done have has had having i i'm i've i'll i'd me my mine we we're we've we'll us our you
    you've you'll you'd your yours there here what which who how when where why will would shall
    should can could may might must to of in on at for from by with about as and or but so if
    then than also just now all any some each every more most other else further below above
    following follows attached included enclosed overleaf let let's know feel free reach out ask
    need needs anything something everything nothing answer answers answered reply replies
    response responses result results summary summaries summarised summarized work worked
    written write wrote writeup draft document deliverable output report overview breakdown
    details detail list listed outlined update updates updated version notes note point
    points item items step steps section sections part parts one two three four five first
    second third next finally task tasks request requests question questions help helps helped
    helpful hope hoping glad happy pleased assist assistance clarify clarification see find look
    check provided shown laid described detailed covered addressed addresses address complete
    completed completion finished ready said asked told mentioned recap remember approach
    further additional other things thing like want wanted please going go ahead up down
"""
_META_WORDS = _ACK_WORDS | frozenset(_META_TEXT.split())
"""Function words and words about answering: a sentence made of nothing else says nothing
about the project or the person. English only, by design: other languages' words are never
in it, so their sentences are never boilerplate by this test."""
_CONTRACTION_PARTS = frozenset({"ll", "ve", "re", "d", "s", "t", "m"})
_BULLET = re.compile(r"^\s*(?:[-*+•>]|\d+[.)]|#{1,6})\s+")
_EMPHASIS = re.compile(r"^[_*`~]+|[_*`~]+$")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_QUESTION = re.compile(r"[?？]\s*$")
_NUMBER = re.compile(r"\d+(?:[.:,]\d+)*")


def _bare(text: str) -> str:
    """A line or sentence without its bullet, heading marks or emphasis, spaces collapsed."""
    text = " ".join(text.split())
    text = _BULLET.sub("", text)
    return _EMPHASIS.sub("", text).strip()


def _words(text: str) -> list[str]:
    return [w.casefold().replace("’", "'") for w in re.findall(r"[^\W_]+(?:['’][^\W_]+)?", text)]


def _only(words: list[str], vocabulary: frozenset[str]) -> bool:
    return bool(words) and all(w in vocabulary for w in words)


_CACHED_CHARS = 250_000
"""The characters of the texts whose words are kept (:data:`_TERMS`, :data:`_STATED`): a
text's words weigh about five bytes a character of it, so each cache stays near a megabyte."""
_TERMS: BoundedCache[frozenset[str]] = BoundedCache(2048, max_weight=_CACHED_CHARS)
_STATED: BoundedCache[tuple[frozenset[str], frozenset[str]]] = BoundedCache(
    2048, max_weight=_CACHED_CHARS
)


def _terms(text: str) -> frozenset[str]:
    """The words that could carry news: stemmed, words about answering left out (kept: a
    batch's context is read again for each sentence of each reply)."""
    return _TERMS.get(text_key(text), lambda: _terms_of(text), len(text))


def _terms_of(text: str) -> frozenset[str]:
    return frozenset(
        {
            stem(t)
            for t in term_counts(text, stemmed=False)
            if t not in _META_WORDS and t not in _CONTRACTION_PARTS
        }
    )


def _stated(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words and numbers of ``text``'s sentences that state something: a question's words
    restated are its answer, not a restatement (kept, as :func:`_terms`)."""
    return _STATED.get(text_key(text), lambda: _stated_of(text), len(text))


def _stated_of(text: str) -> tuple[frozenset[str], frozenset[str]]:
    kept = [
        sentence
        for line in text.splitlines()
        for sentence in _SENTENCE_END.split(line)
        if sentence.strip() and not _QUESTION.search(sentence)
    ]
    statements = "\n".join(kept)
    return _terms(statements), frozenset(_NUMBER.findall(statements))


@dataclass
class Said:
    """What the user and the task said before a reply: the words and numbers of their
    statements, grown one message at a time (a batch reads each message once)."""

    terms: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Said:
        said = cls()
        for text in texts:
            said.add(text)
        return said

    def add(self, text: str) -> None:
        terms, numbers = _stated(text)
        self.terms |= terms
        self.numbers |= numbers

    def __bool__(self) -> bool:
        return bool(self.terms or self.numbers)


Context = Sequence[str] | Said
"""What was said before a reply: the texts, or a :class:`Said` built from them."""


def _said(context: Context) -> Said:
    if isinstance(context, Said):
        return context
    return Said.of([context] if isinstance(context, str) else context)  # one text, not letters


def restates(text: str, context: Context) -> bool:
    """``text`` says nothing ``context`` did not: at least :data:`RESTATED` of its words (and
    every number) were said, and it has enough words to tell."""
    terms = _terms(text)
    if len(terms) < _MIN_TERMS:
        return False
    said = _said(context)
    if not set(_NUMBER.findall(text)) <= said.numbers:
        return False
    return len(terms & said.terms) / len(terms) >= RESTATED


def _kind(piece: str, role: str, context: Said) -> ChatterKind | None:
    """What chatter ``piece`` is when ``role`` says it (see :data:`_ANYONE`)."""
    kind = _any_kind(piece, context if role == "assistant" else Said())
    return kind if role == "assistant" or kind in _ANYONE else None


def _any_kind(piece: str, context: Said) -> ChatterKind | None:
    """What chatter ``piece`` would be in a model's reply; the first kind that fits."""
    bare = _bare(piece)
    if not re.search(r"\w", bare):
        return "boilerplate"  # a rule, a lone bullet, an emoji
    if any(p.match(bare) for p in _offline_patterns()):
        return "offline_model"
    words = _words(bare)
    numbered = _NUMBER.search(bare) is not None  # a number is news: "OK, port 8080 then."
    if _only(words, _ACK_WORDS) and not numbered:
        return "acknowledgement"
    if any(p.search(bare) for p in _TOOL_RECEIPT):
        return "tool_receipt"
    if any(p.search(bare) for p in _REFUSAL):
        return "refusal"
    if _only(words, _META_WORDS) and not numbered:
        return "boilerplate"
    if context and restates(bare, context):
        return "restatement"
    return None


def chatter_kind(
    text: str, *, role: str = "assistant", context: Context = ()
) -> ChatterKind | None:
    """What chatter one sentence (or line) is, or None when it may state a fact.

    ``context`` is what the user (or the task) said before it, for restatements.
    """
    if role == "tool":
        return "tool_receipt"
    if role == "system":
        return "boilerplate"
    return _kind(text, role, _said(context) if role == "assistant" else Said())


def pieces(text: str, *, role: str = "assistant", context: Context = ()) -> list[Piece]:
    """``text`` as lines, and the lines no phrase covers whole as sentences, each judged.

    A fenced code block is one piece of substance: code is no chatter (nor a fact by itself;
    the classifier reads past it).
    """
    if role in ("tool", "system"):
        kind = chatter_kind(text, role=role)
        return [Piece(text, kind)] if text.strip() else []
    said = _said(context) if role == "assistant" else Said()
    out: list[Piece] = []
    at, number = 0, 0
    for fence in [*_FENCE.finditer(text), None]:
        end = fence.start() if fence is not None else len(text)
        for line in text[at:end].split("\n"):
            number += 1
            if not line.strip():
                continue
            whole = _kind(line, role, said)
            if whole is not None:
                out.append(Piece(line, whole, number))
                continue
            bullet = _BULLET.match(line)
            head = bullet.group() if bullet else ""
            sentences = [s for s in _SENTENCE_END.split(line[len(head) :].strip()) if s.strip()]
            if sentences:  # "1. Outline the guide": the bullet is no sentence of its own
                sentences[0] = head.strip() + " " + sentences[0] if head.strip() else sentences[0]
            out += [Piece(s, _kind(s, role, said), number) for s in sentences]
        if fence is not None:
            out.append(Piece(fence.group(), None, number))
            number += fence.group().count("\n")
            at = fence.end()
    return out


def substance(
    text: str,
    *,
    role: str = "assistant",
    context: Context = (),
    keep: Collection[ChatterKind] = (),
) -> str:
    """``text`` without its chatter (but the kinds in ``keep``), a line per line kept; ""
    when it is all chatter."""
    lines: dict[int, list[str]] = {}
    for piece in pieces(text, role=role, context=context):
        if piece.kind is None or piece.kind in keep:
            lines.setdefault(piece.line, []).append(piece.text.strip())
    return "\n".join(" ".join(kept) for _, kept in sorted(lines.items()))


def is_chatter_message(text: str, role: str, context: Context = ()) -> bool:
    """True when a whole message is chatter: no line or sentence of it may state a fact.

    For recall: a message that is only "Thanks!", a tool receipt or the offline model's
    disclaimer is not worth a line of the prompt. ``context`` (what was said before it)
    lets an assistant's mere restatement count too.
    """
    if role == "assistant" and _signed_offline(text):
        return True
    found = pieces(text, role=role, context=context)
    return bool(found) and all(p.kind is not None for p in found)


def _signed_offline(text: str) -> bool:
    """Whether ``text`` carries a line of the offline model's that names it (its footer under
    a deliverable, its disclaimer in a chat): all of such a message is the model restating the
    prompt, headings and "Covered: ..." lines included, which say too little alone to tell."""
    lines = [_bare(line) for line in text.splitlines() if line.strip()]
    return any(p.match(line) for line in lines for p in _offline_signatures())


@cache
def _offline_signatures() -> tuple[re.Pattern[str], ...]:
    """The offline model's template lines that name it ("squad's offline model")."""
    return tuple(
        pattern
        for template in _templates(prompts.offline_phrases())
        for line in template.splitlines()
        if _SIGNATURE in line.casefold()
        for pattern in (_pattern(line),)
        if pattern is not None
    )
