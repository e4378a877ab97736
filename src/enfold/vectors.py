"""A vector index: a growing float32 matrix with id bookkeeping, exact below a size and
HNSW-backed above it.

The working graph keeps one per namespace for events and one per kind of derived node.
Below :attr:`~enfold.ann.AnnOptions.threshold` rows, search is a matrix-vector product over
the live rows (:meth:`VectorIndex.search_exact`, the reference). From the threshold on, an
HNSW graph over the same rows (:mod:`enfold.ann`) answers instead, so a search costs a few
thousand dot products however large the index grows; rows added since its last batch
insert (at most :attr:`~enfold.ann.AnnOptions.batch`) are searched exactly beside it. The
matrix stays either way: :meth:`get`, :meth:`similarities` and searches over the ``last``
rows read it. Removed rows are tombstoned and compacted when they reach a quarter of the
matrix; a removed row leaves the HNSW graph at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from enfold.ann import AnnOptions, Hnsw, read_file, write_file

EXACT = AnnOptions(threshold=0)
RESTORE_LIMIT = 0.5  # a file needing more than this share of rows re-added is rebuilt
# A restored vector within this of the store's (largest component difference) is the same
# vector: a float16 store gives back its vectors rounded.
RESTORE_TOLERANCE = 2e-3


class VectorIndex:
    """Cosine search over L2-normalized rows; approximate (HNSW) once large."""

    def __init__(self, dim: int | None = None, *, ann: AnnOptions = EXACT) -> None:
        self.dim = dim
        self.ann = ann
        self._mat = np.zeros((0, dim or 0), dtype=np.float32)
        self._ids: list[str | None] = []
        self._row: dict[str, int] = {}
        self._dead = 0
        # The HNSW layer (None below the threshold). Each row in it has a key; rows not
        # in it yet are pending (searched exactly) until the next batch insert.
        self._hnsw: Hnsw | None = None
        self._key_of: dict[int, int] = {}  # row -> key
        self._row_of: dict[int, int] = {}  # key -> row
        self._pending: dict[int, None] = {}  # rows, in insertion order
        self._next_key = 0
        self._defer = False  # while loading: build once at the end
        self.changed = False  # since the last save or restore
        # Vectors removed from the HNSW graph since it was last written: usearch keeps a
        # removed vector's bytes in its slot, so save() blanks them in what it writes.
        self._removed: list[bytes] = []

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._row

    def nbytes(self) -> int:
        """Bytes of the vectors held: the exact matrix (with its spare rows) and the HNSW
        graph's own memory, as usearch reports it."""
        return int(self._mat.nbytes) + (0 if self._hnsw is None else self._hnsw.nbytes())

    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph."""
        return self._hnsw is not None

    def ids(self) -> Iterable[str]:
        return self._row.keys()

    def get(self, node_id: str) -> np.ndarray | None:
        row = self._row.get(node_id)
        return None if row is None else self._mat[row]

    # ----------------------------------------------------------------- writing
    def put(self, node_id: str, vec: np.ndarray) -> None:
        """Insert or replace a vector (it is normalized here)."""
        v = _normalized(np.asarray(vec, dtype=np.float32).reshape(1, -1))[0]
        self._set_dim(int(v.shape[0]))
        self.changed = True
        row = self._row.get(node_id)
        if row is not None:
            self._mat[row] = v
            if self._hnsw is not None:
                self._unindex(row)
                self._pending[row] = None
                self._maybe_flush()
            return
        n = len(self._ids)
        self._grow(n + 1)
        self._mat[n] = v
        self._ids.append(node_id)
        self._row[node_id] = n
        if self._hnsw is not None:
            self._pending[n] = None
            self._maybe_flush()
        elif not self._defer:
            self._maybe_build()

    def put_many(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Insert many new vectors at once (as :meth:`put` each; faster for a load)."""
        if not items:
            return
        self._defer, was = True, self._defer
        try:
            fresh = [(i, v) for i, v in items if i not in self._row]
            for node_id, vec in items:
                if node_id in self._row:
                    self.put(node_id, vec)
            if fresh:
                m = _normalized(np.stack([np.asarray(v, dtype=np.float32).reshape(-1)
                                          for _, v in fresh]))
                self._set_dim(int(m.shape[1]))
                n = len(self._ids)
                self._grow(n + len(fresh))
                self._mat[n:n + len(fresh)] = m
                for j, (node_id, _) in enumerate(fresh):
                    self._ids.append(node_id)
                    self._row[node_id] = n + j
                    if self._hnsw is not None:
                        self._pending[n + j] = None
                self.changed = True
        finally:
            self._defer = was
        if self._hnsw is not None:
            self._maybe_flush()
        elif not self._defer:
            self._maybe_build()

    def remove(self, node_id: str) -> None:
        row = self._row.pop(node_id, None)
        if row is None:
            return
        self.changed = True
        if self._hnsw is not None:
            if row in self._key_of:
                self._removed.append(self._mat[row].tobytes())
            self._pending.pop(row, None)
            self._unindex(row)
        self._ids[row] = None
        self._mat[row] = 0.0
        self._dead += 1
        if self._dead * 4 > len(self._ids) and self._dead > 64:
            self._compact()

    def _set_dim(self, dim: int) -> None:
        if self.dim is None or self._mat.shape[1] == 0:
            self.dim = dim
            self._mat = np.zeros((0, dim), dtype=np.float32)
        if dim != self.dim:
            raise ValueError(f"vector of dimension {dim} in an index of {self.dim}")

    def _grow(self, rows: int) -> None:
        if rows > self._mat.shape[0]:
            assert self.dim is not None
            grown = np.zeros((max(64, rows, 2 * self._mat.shape[0]), self.dim),
                             dtype=np.float32)
            n = len(self._ids)
            grown[:n] = self._mat[:n]
            self._mat = grown

    def _compact(self) -> None:
        keep = [i for i, x in enumerate(self._ids) if x is not None]
        new_row = {old: new for new, old in enumerate(keep)}
        self._mat = np.ascontiguousarray(self._mat[keep])
        self._ids = [self._ids[i] for i in keep]
        self._row = {x: i for i, x in enumerate(self._ids) if x is not None}
        self._dead = 0
        if self._hnsw is not None:
            self._key_of = {new_row[r]: k for r, k in self._key_of.items()}
            self._row_of = {k: r for r, k in self._key_of.items()}
            self._pending = {new_row[r]: None for r in self._pending}

    # ------------------------------------------------------------ the HNSW layer
    def _live_rows(self) -> list[int]:
        return [i for i, x in enumerate(self._ids) if x is not None]

    def _maybe_build(self) -> None:
        if self.ann.enabled and self._hnsw is None and len(self._row) >= self.ann.threshold:
            self._build()

    def _build(self) -> None:
        """A fresh HNSW graph over every live row (one batch insert)."""
        assert self.dim is not None
        self._hnsw = Hnsw(self.dim, self.ann)
        self._key_of, self._row_of, self._pending = {}, {}, dict.fromkeys(self._live_rows())
        self._flush()

    def _unindex(self, row: int) -> None:
        key = self._key_of.pop(row, None)
        if key is not None and self._hnsw is not None:
            del self._row_of[key]
            self._hnsw.remove(np.array([key], dtype=np.uint64))

    def _maybe_flush(self) -> None:
        if len(self._pending) >= self.ann.batch:
            self._flush()

    def _flush(self) -> None:
        """Insert the pending rows into the HNSW graph in one batch."""
        if self._hnsw is None or not self._pending:
            return
        rows = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
        keys = np.arange(self._next_key, self._next_key + len(rows), dtype=np.uint64)
        self._next_key += len(rows)
        self._hnsw.add(keys, self._mat[rows])
        for r, k in zip(rows.tolist(), keys.tolist(), strict=True):
            self._key_of[r] = k
            self._row_of[k] = r
        self._pending = {}

    # ---------------------------------------------------------------- searching
    def search(
        self,
        query: np.ndarray,
        k: int,
        *,
        accept: Callable[[str], bool] | None = None,
        last: int | None = None,
    ) -> list[tuple[str, float]]:
        """The k rows with the highest cosine to ``query`` (optionally filtered).

        ``last``: search only the ``last`` rows inserted most recently (a vector replaced in
        place keeps its row), so the cost stays bounded however large the index grows;
        that search is always exact. Otherwise, from the threshold on, the HNSW graph
        answers: approximate, nearly always the same rows as :meth:`search_exact`.
        """
        if self._hnsw is None or last is not None:
            return self.search_exact(query, k, accept=accept, last=last)
        n = len(self._row)
        q = _unit(query)
        if n == 0 or k <= 0 or q is None:
            return []
        pend = np.fromiter(self._pending, dtype=np.int64, count=len(self._pending))
        pend_sims = self._mat[pend] @ q if len(pend) else np.zeros(0, dtype=np.float32)
        want = k if accept is None else 2 * k
        while True:
            keys, _ = self._hnsw.search(q, want)
            rows = np.fromiter((self._row_of.get(int(x), -1) for x in keys), dtype=np.int64,
                               count=len(keys))
            rows = rows[rows >= 0]
            # Cosines from the matrix, as the exact search computes them: the graph's copy
            # of a vector may be a restored one within RESTORE_TOLERANCE of it.
            cand_rows = np.concatenate([rows, pend])
            cand_sims = np.concatenate([self._mat[rows] @ q, pend_sims])
            order = np.lexsort((cand_rows, -cand_sims))
            out: list[tuple[str, float]] = []
            for i in order:
                node_id = self._ids[int(cand_rows[i])]
                if node_id is None or (accept is not None and not accept(node_id)):
                    continue
                out.append((node_id, float(cand_sims[i])))
                if len(out) == k:
                    return out
            if len(keys) < want:  # the graph has no more
                return out
            want *= 4
            if want * 4 >= n:  # a filter rejecting most rows: a scan is cheaper
                return self.search_exact(query, k, accept=accept)

    def search_exact(
        self,
        query: np.ndarray,
        k: int,
        *,
        accept: Callable[[str], bool] | None = None,
        last: int | None = None,
    ) -> list[tuple[str, float]]:
        """:meth:`search` by a scan of every (or the ``last``) row: exact, the reference."""
        n = len(self._ids)
        q = _unit(query)
        if n == 0 or k <= 0 or q is None:
            return []
        first = 0 if last is None else max(0, n - last)
        sims = self._mat[first:n] @ q
        m = n - first
        want = k if accept is None else min(m, max(4 * k, k + 64))
        out: list[tuple[str, float]] = []
        while True:
            take = min(want, m)
            idx = np.argpartition(-sims, take - 1)[:take] if take < m else np.arange(m)
            idx = idx[np.argsort(-sims[idx], kind="stable")]
            out = []
            for i in idx:
                node_id = self._ids[first + int(i)]
                if node_id is None or (accept is not None and not accept(node_id)):
                    continue
                out.append((node_id, float(sims[int(i)])))
                if len(out) == k:
                    return out
            if take >= m:
                return out
            want *= 4

    def nearest_among(self, query: np.ndarray, ids: Iterable[str], k: int
                      ) -> list[tuple[str, float]]:
        """The ``k`` of ``ids`` with the highest cosine to ``query``, best first: what
        :meth:`search_exact` gives with ``accept`` testing membership in ``ids`` (ties in
        row order), at the cost of ``ids``, not of the index."""
        q = _unit(query)
        if q is None or k <= 0:
            return []
        get = self._row.get
        rows = np.fromiter((get(node_id, -1) for node_id in ids), dtype=np.int64)
        rows = np.unique(rows[rows >= 0])
        if not len(rows):
            return []
        sims = self._mat[rows] @ q
        best = np.argsort(-sims, kind="stable")[:k]
        return [(self._ids[r], float(s)) for r, s in
                zip(rows[best].tolist(), sims[best].tolist(), strict=True)
                if self._ids[r] is not None]

    def similarities(self, query: np.ndarray, ids: Iterable[str]) -> dict[str, float]:
        """Cosine of ``query`` to each of ``ids`` that is in the index."""
        q = _unit(query)
        if q is None:
            return {}
        found = [(node_id, row) for node_id in ids
                 if (row := self._row.get(node_id)) is not None]
        if not found:
            return {}
        sims = self._mat[np.fromiter((r for _, r in found), dtype=np.int64,
                                     count=len(found))] @ q
        return {node_id: float(s) for (node_id, _), s in zip(found, sims.tolist(),
                                                              strict=True)}

    def similarity_array(self, query: np.ndarray, ids: Sequence[str],
                         missing: float = -2.0) -> NDArray[np.float64]:
        """:meth:`similarities` as an array aligned with ``ids`` (``missing`` for an id not
        in the index, or for every id when the query is a zero vector)."""
        out = np.full(len(ids), missing, dtype=np.float64)
        q = _unit(query)
        if q is None or not len(ids):
            return out
        get = self._row.get
        rows = np.fromiter((get(node_id, -1) for node_id in ids), dtype=np.int64,
                           count=len(ids))
        found = rows >= 0
        if found.any():
            # the rows in the order similarities() takes them: the same products
            out[found] = self._mat[rows[found]] @ q
        return out

    # ------------------------------------------------------------------ loading
    def begin_load(self) -> None:
        """Hold off building the HNSW graph until :meth:`end_load` (a bulk load)."""
        self._defer = True

    def end_load(self, path: Path | None = None) -> str:
        """Finish a bulk load: restore the HNSW graph from ``path`` if it can be brought up
        to date with the rows loaded, else build it (above the threshold). Returns what
        happened: ``"exact"``, ``"built"``, ``"restored"`` or ``"reconciled"``."""
        self._defer = False
        if not self.ann.enabled or len(self._row) < self.ann.threshold:
            self._maybe_build()
            return "built" if self._hnsw is not None else "exact"
        outcome = "built"
        if path is not None and self._hnsw is None and self.restore(path):
            outcome = "reconciled" if self.changed else "restored"
        if self._hnsw is None:
            self._build()
            self.changed = True
        return outcome

    def restore(self, path: Path) -> bool:
        """Take the HNSW graph from ``path`` and reconcile it with the rows this index
        holds: rows whose id is missing from the file or whose vector differs are added,
        keys whose id this index no longer holds (forgotten, merged) are removed. False
        (nothing taken) when the file is unusable or more than :data:`RESTORE_LIMIT` of
        the rows would need adding."""
        if self.dim is None or not self._row:
            return False
        got = read_file(path, self.dim, self.ann)
        if got is None:
            return False
        header, hnsw = got
        pairs = header.get("keys")
        if not isinstance(pairs, list):
            return False
        in_file: dict[str, int] = {}
        for pair in pairs:
            if isinstance(pair, list) and len(pair) == 2:
                in_file[str(pair[1])] = int(pair[0])
        live = [(r, in_file.get(x)) for r, x in enumerate(self._ids) if x is not None]
        kept = [(r, key) for r, key in live if key is not None]
        stale_keys = set(in_file.values())
        ok = np.zeros(len(kept), dtype=bool)
        if kept:
            keys = np.array([key for _, key in kept], dtype=np.uint64)
            stored = hnsw.vectors(keys)
            if stored is None:
                return False
            rows = np.array([r for r, _ in kept], dtype=np.int64)
            ok = np.max(np.abs(stored - self._mat[rows]), axis=1) <= RESTORE_TOLERANCE
        add = len(live) - int(ok.sum())
        if add > RESTORE_LIMIT * len(live):
            return False
        self._hnsw = hnsw
        self._key_of, self._row_of, self._pending = {}, {}, {}
        for (r, key), good in zip(kept, ok.tolist(), strict=True):
            if good:
                self._key_of[r] = key
                self._row_of[key] = r
                stale_keys.discard(key)
        self._pending = {r: None for r, _ in live if r not in self._key_of}
        # Keys in the graph that the header does not name (a torn or foreign file) go too.
        stale = {int(x) for x in hnsw.keys().tolist()} - set(self._row_of)
        hnsw.remove(np.array(sorted(stale), dtype=np.uint64))
        self._next_key = max([*self._row_of, *stale, *in_file.values(), -1]) + 1
        self.changed = bool(stale or self._pending)
        self._flush()
        return True

    def save(self, path: Path, header: dict[str, Any] | None = None) -> bool:
        """Write the HNSW graph to ``path`` (with ``header`` entries added); below the
        threshold there is none, and a file left at ``path`` is removed. True if written."""
        if self._hnsw is None:
            path.unlink(missing_ok=True)
            return False
        self._flush()
        pairs = [[k, self._ids[r]] for r, k in self._key_of.items()]
        live = {self._mat[r].tobytes() for r in self._key_of} if self._removed else set()
        blank = [b for b in self._removed if b not in live]
        write_file(path, {**(header or {}), "keys": pairs, "count": len(pairs)}, self._hnsw,
                   blank=blank)
        self._removed = []
        self.changed = False
        return True


def _normalized(m: NDArray[np.float32]) -> NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero), computed in float64 so that a row
    comes out bit for bit the same whether it is put alone or in a batch (a restored HNSW
    graph is checked against the rows)."""
    m64 = m.astype(np.float64)
    norms = np.linalg.norm(m64, axis=1, keepdims=True)
    return np.ascontiguousarray(m64 / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _unit(query: np.ndarray) -> NDArray[np.float32] | None:
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    qn = float(np.linalg.norm(q))
    return None if qn == 0 else q / qn
