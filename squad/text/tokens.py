"""Token counting with the agent's model tokenizer, fully offline.

litellm ships tiktoken's ``cl100k_base``/``o200k_base`` files and Anthropic's and DeepSeek's
tokenizer files; we read them from litellm's package folder without importing litellm
(seconds) and without letting tiktoken reach the network. The same counter is used when
memory is written (caps, extraction) and when it is injected (budgets), so both agree.

Models whose tokenizer is not shipped (Ollama, vLLM, the offline model) are counted with
``cl100k_base``: close for most modern BPE vocabularies, and deterministic. Counters remember
what they counted (:class:`CachedCounter`): memory is mostly the same from turn to turn.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from squad.text.bounded_cache import BoundedCache, text_key

if TYPE_CHECKING:
    from squad.text.kept_counts import KeptCounts

__all__ = ["CachedCounter", "TokenCounter", "counter_for_model", "encoding_for_model"]


class TokenCounter(Protocol):
    """Anything that counts tokens; tests may pass a simpler one (e.g. whitespace words)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
_HF_FILES = {"anthropic": "anthropic_tokenizer.json", "deepseek": "deepseek_tokenizer.json"}
_LOAD_LOCK = threading.Lock()


def encoding_for_model(model: str) -> str:
    """The tokenizer name used for a litellm model string (``openai/gpt-4o`` -> ``o200k_base``)."""
    lowered = model.lower()
    bare = lowered.rsplit("/", 1)[-1]
    if bare.startswith(_O200K_PREFIXES):
        return "o200k_base"
    if "claude" in lowered or lowered.startswith("anthropic/"):
        return "anthropic"
    if "deepseek" in lowered:
        return "deepseek"
    return "cl100k_base"


def counter_for_model(model: str, *, remember: bool = True) -> TokenCounter:
    """The shared counter for ``model``'s tokenizer; ``remember=False`` gives one that
    tokenizes every time (a benchmark's baseline)."""
    name = encoding_for_model(model)
    return _counter(name) if remember else _uncached_counter(name)


class _TiktokenCounter:
    """Counts with a ``cl100k``/``o200k`` table; builds tiktoken's encoder for it only once
    more than :attr:`SMALL_CHARS` characters have been counted.

    Building the whole encoder costs 0.1-0.3 s (it indexes 100,000-200,000 ranks), more than
    a command like ``squad memory context`` spends on everything else it counts. Until then
    each text is counted by an encoder of only the ranks that are substrings of it: byte pair
    encoding looks up nothing but substrings of the text's pieces, which are substrings of the
    text, so the count is the same (the tests compare both on many texts). Those ranks come
    from :func:`_small_tables`: the table split by each token's first two bytes, so that only
    the parts a text's byte pairs name are read (a fifth of the table or less for a memory
    block), not the whole table (10 ms)."""

    SMALL_CHARS = 2_048
    """About what ``squad memory context`` counts on a young memory (1,200 characters); a run
    counts ten times that and more, and scanning costs ~10 ms a thousand characters, so past
    it the whole encoder is cheaper."""
    _SHORT = 16
    """Substrings up to this many bytes are looked up; the few longer ranks are searched for."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self._folder = folder
        self._lock = threading.Lock()
        self._encoding: Any = None
        self._small: dict[str, Any] | None = None
        self._ranks: dict[bytes, int] = {}
        """The ranks of the parts of :attr:`_small` read so far."""
        self._read_pairs: set[bytes] = set()
        self._small_left = self.SMALL_CHARS

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            small = self._encoding is None and len(text) <= self._small_left
            if small:
                self._small_left -= len(text)
        encoding = self._small_encoding(text) if small else None
        if encoding is None:
            encoding = self._full()
        return len(encoding.encode(text, disallowed_special=()))

    def _full(self) -> Any:
        with self._lock:
            if self._encoding is None:
                tables = _kept_tables(self.name, self._folder)
                self._encoding = _encoding_of(tables) if tables else None
                if self._encoding is None:
                    self._encoding = _load_tiktoken(self.name, self._folder)
            return self._encoding

    def _small_encoding(self, text: str) -> Any:
        """An encoder of the ranks found in ``text``; None when there are no kept tables (a
        first load parses the rank file into the whole encoder anyway) or the text is not
        UTF-8 (tiktoken mends it first)."""
        try:
            data = text.encode()
        except UnicodeEncodeError:
            return None
        with self._lock:
            if self._small is None:
                self._small = _small_tables(self.name, self._folder) or {}
            if not self._small:
                return None
            ranks = self._ranks_for(data)
        found: dict[bytes, int] = {}
        size = len(data)
        for start in range(size):
            for end in range(start + 1, min(size, start + self._SHORT) + 1):
                rank = ranks.get(data[start:end])
                if rank is not None:
                    found[data[start:end]] = rank
        found.update((token, rank) for token, rank in self._small["long"].items() if token in data)
        tables = {key: self._small[key] for key in ("name", "pat_str", "special_tokens")}
        return _encoding_of({**tables, "mergeable_ranks": found})

    def _ranks_for(self, data: bytes) -> dict[bytes, int]:
        """The ranks of every token that starts with a byte pair of ``data`` (and of every
        single byte), reading the parts of the table not read yet; the lock is held."""
        assert self._small is not None
        if not self._ranks:
            self._ranks.update(self._small["singles"])
        parts = self._small["pairs"]
        for pair in {data[at : at + 2] for at in range(len(data) - 1)} - self._read_pairs:
            self._read_pairs.add(pair)
            part = parts.get(pair)
            if part is not None:
                self._ranks.update(marshal.loads(part))
        return self._ranks


@dataclass(frozen=True)
class _HuggingFaceCounter:
    name: str
    tokenizer: Any

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


class CachedCounter:
    """Remembers counts: a prompt re-counts the same memory lines every turn, and a 50 KB
    memory.md costs milliseconds to tokenize. Kept in a :class:`BoundedCache` (a long text
    by its digest, so the cache holds at most ``maxsize`` short strings)."""

    def __init__(
        self, inner: TokenCounter, maxsize: int = 8192, kept: KeptCounts | None = None
    ) -> None:
        self._inner = inner
        self._counts: BoundedCache[int] = BoundedCache(maxsize)
        self._kept = kept

    @property
    def name(self) -> str:
        return self._inner.name

    def count(self, text: str) -> int:
        return self._counts.get(text_key(text), lambda: self._count(text))

    def _count(self, text: str) -> int:
        if self._kept is None:
            return self._inner.count(text)
        return self._kept.count(text, self._inner.count)


@lru_cache(maxsize=8)
def _counter(name: str) -> TokenCounter:
    """The shared counter of encoding ``name``: counts remembered in the process, and a
    tiktoken encoding's short counts kept between processes (:mod:`squad.text.kept_counts`:
    ``squad memory context`` on an unchanged memory imports no tokenizer)."""
    kept = None
    if name not in _HF_FILES:
        from squad.text.kept_counts import KeptCounts, counts_path

        path = counts_path(name, _bundled_tokenizers(), _rank_cache().parent / "token-counts")
        kept = None if path is None else KeptCounts(path)
    return CachedCounter(_uncached_counter(name), kept=kept)


@lru_cache(maxsize=8)
def _uncached_counter(name: str) -> TokenCounter:
    folder = _bundled_tokenizers()
    if name in _HF_FILES:
        from tokenizers import Tokenizer

        return _HuggingFaceCounter(name, Tokenizer.from_file(str(folder / _HF_FILES[name])))
    return _TiktokenCounter(name, folder)


def _bundled_tokenizers() -> Path:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("litellm is not installed; it ships the tokenizer files squad uses")
    return Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"


def _load_tiktoken(name: str, folder: Path, cache: Path | None = None) -> Any:
    """Load an encoding from litellm's cached copy; tiktoken only downloads on a cache miss.

    Parsing the rank file (100,000 base64 lines) is most of the load: the parsed encoding is
    kept in ``cache`` (default :func:`_rank_cache`) with :mod:`marshal`, a few times faster
    to read back, under a name that changes with tiktoken's version and litellm's files.
    """
    import tiktoken

    where = _rank_cache() if cache is None else cache
    path = where / f"{name}-{_fingerprint(folder, tiktoken.__version__)}.marshal"
    kept = _read_ranks(path)
    if kept is not None:
        return tiktoken.Encoding(**kept)
    encoding = _parse_tiktoken(name, folder)
    _keep_ranks(path, encoding)
    return encoding


def _kept_tables(name: str, folder: Path) -> dict[str, Any] | None:
    """The kept constructor arguments of ``name``'s encoding (see :func:`_load_tiktoken`);
    None when none are kept yet."""
    import tiktoken

    return _read_ranks(
        _rank_cache() / f"{name}-{_fingerprint(folder, tiktoken.__version__)}.marshal"
    )


_SMALL_KEYS = ("name", "pat_str", "special_tokens", "singles", "pairs", "long")
"""What :func:`_small_tables` keeps: the encoding's name, pattern and special tokens, the
ranks of single bytes, the other ranks by their first two bytes (each part marshalled on its
own, read when a text holds that pair) and the ranks of tokens longer than
:attr:`_TiktokenCounter._SHORT` bytes."""


def _small_tables(name: str, folder: Path) -> dict[str, Any] | None:
    """``name``'s kept tables split for counting short texts (:data:`_SMALL_KEYS`), kept
    beside the whole table the first time they are asked for; None when no whole table is
    kept yet."""
    import tiktoken

    path = _rank_cache() / f"{name}-{_fingerprint(folder, tiktoken.__version__)}.small.marshal"
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        kept = None
    if isinstance(kept, dict) and set(kept) == set(_SMALL_KEYS):
        return kept
    tables = _kept_tables(name, folder)
    if tables is None:
        return None
    ranks: dict[bytes, int] = tables["mergeable_ranks"]
    pairs: dict[bytes, dict[bytes, int]] = {}
    for token, rank in ranks.items():
        if len(token) > 1:
            pairs.setdefault(token[:2], {})[token] = rank
    split = {
        "name": tables["name"],
        "pat_str": tables["pat_str"],
        "special_tokens": tables["special_tokens"],
        "singles": {token: rank for token, rank in ranks.items() if len(token) == 1},
        "pairs": {pair: marshal.dumps(part) for pair, part in pairs.items()},
        "long": {
            token: rank for token, rank in ranks.items() if len(token) > _TiktokenCounter._SHORT
        },
    }
    _keep(path, split)
    return split


def _encoding_of(tables: dict[str, Any]) -> Any:
    import tiktoken

    return tiktoken.Encoding(**tables)


def _parse_tiktoken(name: str, folder: Path) -> Any:
    import tiktoken

    with _LOAD_LOCK:
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            return tiktoken.get_encoding(name)
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


_ENCODING_KEYS = ("name", "pat_str", "mergeable_ranks", "special_tokens")
"""What ``tiktoken.Encoding`` is built from, as the rank cache keeps it."""


def _rank_cache() -> Path:
    """The folder of parsed rank tables: ``$XDG_CACHE_HOME/squad/tokenizers``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "squad" / "tokenizers"


def _fingerprint(folder: Path, version: str) -> str:
    """What a kept table depends on: tiktoken's version, Python's, and litellm's files."""
    digest = hashlib.blake2b(f"{version} {sys.version_info[:2]}".encode(), digest_size=8)
    with contextlib.suppress(OSError):  # no files to tell apart: the version alone names it
        digest_folder(digest, folder)
    return digest.hexdigest()


def digest_folder(digest: Any, folder: Path) -> None:
    """Add ``folder``'s entries (name, size, modification time) to ``digest``, in name order:
    what names a cache kept for the files in it. Raises OSError when it cannot be listed."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        info = entry.stat()
        digest.update(f"{entry.name} {info.st_size} {info.st_mtime_ns}\n".encode())


def _read_ranks(path: Path) -> dict[str, Any] | None:
    """The kept constructor arguments; None when there are none (or they are not whole)."""
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(kept, dict) or set(kept) != set(_ENCODING_KEYS):
        return None
    return kept


def _keep_ranks(path: Path, encoding: Any) -> None:
    """Keep ``encoding``'s tables for the next process; a cache that cannot be written is
    only slower."""

    # tiktoken keeps its constructor's arguments as attributes (0.7 to 0.14 at least); a
    # version that does not is simply not cached.
    kept = {
        key: getattr(encoding, key if key == "name" else f"_{key}", None) for key in _ENCODING_KEYS
    }
    if any(value is None for value in kept.values()):
        return
    _keep(path, kept)


def _keep(path: Path, tables: dict[str, Any]) -> None:
    """Keep ``tables`` at ``path`` for the next process; a cache that cannot be written is
    only slower."""
    from squad.fsutil import atomic_write, private_dir

    try:
        private_dir(path.parent)
        atomic_write(path, marshal.dumps(tables), durable=False)
    except (OSError, ValueError):
        pass
