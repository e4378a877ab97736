"""Approximate nearest-neighbour search: an HNSW graph (usearch) over a vector index's rows,
and the file it is kept in beside the store.

:class:`~enfold.vectors.VectorIndex` keeps the exact float32 matrix of its rows and, once it
holds :attr:`AnnOptions.threshold` of them, an :class:`Hnsw` over the same rows: a search
then visits a few thousand vectors instead of all of them. The exact matrix stays the
reference (tests compare the two) and answers every search below the threshold.

The file (:func:`write_file` / :func:`read_file`) is one blob written atomically (a
temporary file renamed over the old one): a magic line, a JSON header (format, dimension,
metric, which key holds which node id, the store's change token when it was written) and
usearch's own serialization. Whether it may be used is not decided by the header alone:
the index restored from it is reconciled with the vectors just loaded from the store
(:meth:`~enfold.vectors.VectorIndex.restore`), so a file from before a crash, a forget or
another process's writes is brought up to date, or rebuilt when too much changed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["AnnOptions", "Hnsw", "read_file", "write_file"]

MAGIC = b"enfold-ann 1\n"
FORMAT = 1


@dataclass(frozen=True)
class AnnOptions:
    """How a vector index searches once it is large (see :mod:`enfold.settings`:
    ``ann_threshold``, ``ann_connectivity``, ``ann_expansion_add``, ``ann_expansion_search``,
    ``ann_batch``)."""

    threshold: int = 20_000  # rows from which search uses HNSW; 0 = always exact
    connectivity: int = 16  # HNSW "M": links per node and layer
    expansion_add: int = 128  # "efConstruction"
    expansion_search: int = 128  # "ef": candidates a search keeps
    batch: int = 1024  # new rows searched exactly until this many are added in one batch
    threads: int = 0  # threads of a batch insert (0 = every core)

    @property
    def enabled(self) -> bool:
        return self.threshold > 0


class Hnsw:
    """A usearch HNSW index of unit vectors under inner product, keyed by integers."""

    def __init__(self, dim: int, options: AnnOptions, index: Any = None) -> None:
        from usearch.index import Index

        self.dim = dim
        self.options = options
        self.index = index if index is not None else Index(
            ndim=dim, metric="ip", dtype="f32", connectivity=options.connectivity,
            expansion_add=options.expansion_add, expansion_search=options.expansion_search)
        # (a restored index comes back with usearch's default)
        self.index.expansion_search = options.expansion_search  # type: ignore[misc]
        # usearch's memory_usage walks the graph (1.5 ms at 100k rows): it is asked after
        # every operation (the session's size), so it is kept until a row comes or goes
        self._bytes: int | None = None

    def __len__(self) -> int:
        return len(self.index)

    def add(self, keys: NDArray[np.uint64], vectors: NDArray[np.float32]) -> None:
        if len(keys):
            threads = self.options.threads if len(keys) > 1 else 1
            self.index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32),
                           threads=threads)
            self._bytes = None

    def remove(self, keys: NDArray[np.uint64]) -> None:
        if len(keys):
            self.index.remove(keys)
            self._bytes = None

    def vectors(self, keys: NDArray[np.uint64]) -> NDArray[np.float32] | None:
        """The stored vectors of ``keys`` (all present), or None if any is missing."""
        if not len(keys):
            return np.zeros((0, self.dim), dtype=np.float32)
        if not bool(np.all(self.index.contains(keys))):
            return None
        got = self.index.get(keys)
        return np.asarray(got, dtype=np.float32).reshape(len(keys), self.dim)

    def keys(self) -> NDArray[np.uint64]:
        return np.asarray(self.index.keys, dtype=np.uint64)

    def search(self, query: NDArray[np.float32], count: int
               ) -> tuple[NDArray[np.uint64], NDArray[np.float32]]:
        """The (up to) ``count`` nearest keys and their inner products, best first."""
        if count <= 0 or len(self.index) == 0:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32)
        m = self.index.search(query, count, threads=1)
        keys = np.asarray(m.keys, dtype=np.uint64).reshape(-1)
        sims = 1.0 - np.asarray(m.distances, dtype=np.float32).reshape(-1)
        return keys, sims

    def nbytes(self) -> int:
        """The memory usearch holds for the index (kept while no row comes or goes)."""
        if self._bytes is None:
            self._bytes = int(self.index.memory_usage)
        return self._bytes

    def serialize(self) -> bytes:
        data = self.index.save()
        if not isinstance(data, bytes | bytearray):
            raise TypeError("usearch did not serialize the index to bytes")
        return bytes(data)

    @classmethod
    def deserialize(cls, data: bytes, dim: int, options: AnnOptions) -> Hnsw:
        from usearch.index import Index

        index = Index.restore(data)
        if index is None or index.ndim != dim:
            raise ValueError("not an index of this dimension")
        return cls(dim, options, index)


def write_file(path: Path, header: dict[str, Any], hnsw: Hnsw,
               blank: Sequence[bytes] = ()) -> None:
    """Write ``header`` and ``hnsw`` to ``path`` atomically. ``blank``: vectors (as bytes)
    removed from the index, zeroed wherever they appear in what is written — usearch keeps
    a removed vector in its slot, and a forgotten event's vector must not stay on disk."""
    head = json.dumps({**header, "format": FORMAT, "dim": hnsw.dim, "metric": "ip"},
                      separators=(",", ":")).encode()
    body = bytearray(hnsw.serialize())
    for vec in blank:
        at = body.find(vec)
        while at >= 0:
            body[at:at + len(vec)] = bytes(len(vec))
            at = body.find(vec, at + len(vec))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC)
            f.write(len(head).to_bytes(8, "little"))
            f.write(head)
            f.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_file(path: Path, dim: int, options: AnnOptions
              ) -> tuple[dict[str, Any], Hnsw] | None:
    """The header and index in ``path``; None if it is missing, unreadable, of another
    format or of another dimension (the caller then builds the index from the store)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    at = len(MAGIC)
    try:
        size = int.from_bytes(data[at:at + 8], "little")
        header = json.loads(data[at + 8:at + 8 + size])
        if not isinstance(header, dict) or header.get("format") != FORMAT \
                or header.get("dim") != dim or header.get("metric") != "ip":
            return None
        hnsw = Hnsw.deserialize(data[at + 8 + size:], dim, options)
    except (ValueError, TypeError, RuntimeError, json.JSONDecodeError):
        return None
    return header, hnsw
