"""The HNSW layer of VectorIndex: as good as the exact scan, persisted, reconciled, and a
removed vector never comes back (issue 23)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from enfold import Memory
from enfold.ann import AnnOptions
from enfold.settings import Settings
from enfold.vectors import VectorIndex

ANN = AnnOptions(threshold=500, batch=64)


def clustered(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, dim))
    x = centres[rng.integers(0, 20, n)] + 0.6 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def filled(n: int, ann: AnnOptions = ANN, seed: int = 0) -> tuple[VectorIndex, np.ndarray]:
    index = VectorIndex(ann=ann)
    x = clustered(n, seed=seed)
    for i, v in enumerate(x):
        index.put(f"ev_{i}", v)
    return index, x


def recall_at_10(index: VectorIndex, queries: np.ndarray) -> float:
    """Share of the exact top 10 found (a result tied with the 10th counts)."""
    found = total = 0
    for q in queries:
        exact = index.search_exact(q, 10)
        floor = exact[-1][1] - 1e-6
        found += sum(1 for _, s in index.search(q, 10) if s >= floor)
        total += len(exact)
    return found / total


def test_exact_below_the_threshold_and_hnsw_above_with_the_same_top_10() -> None:
    small, _ = filled(400)
    assert not small.approximate
    index, x = filled(3000)
    assert index.approximate
    queries = clustered(100, seed=1)
    assert recall_at_10(index, queries) >= 0.95
    # a row's own vector finds the row first
    assert [i for i, _ in index.search(x[1234], 1)] == ["ev_1234"]


def test_rows_added_after_the_build_are_found_before_their_batch_insert() -> None:
    index, _ = filled(600)
    fresh = clustered(1, seed=9)[0]
    index.put("ev_new", fresh)
    assert index._pending  # not in the HNSW graph yet
    assert index.search(fresh, 1)[0][0] == "ev_new"


def test_filters_and_replacements_go_through_the_hnsw_path() -> None:
    index, x = filled(2000)
    even = index.search(x[10], 5, accept=lambda i: int(i[3:]) % 2 == 0)
    assert len(even) == 5 and all(int(i[3:]) % 2 == 0 for i, _ in even)
    index.put("ev_10", x[1500])  # replaced in place: found at its new place only
    assert index.search(x[1500], 2)[0][1] == pytest.approx(1.0, abs=1e-5)
    assert {i for i, _ in index.search(x[1500], 2)} == {"ev_10", "ev_1500"}
    assert "ev_10" not in {i for i, _ in index.search(x[10], 1)}


def test_a_removed_vector_never_comes_back(tmp_path: Path) -> None:
    index, x = filled(1500)
    index.remove("ev_7")
    for _ in range(3):  # after later batch inserts too
        index.put(f"ev_x{_}", x[7])
    hits = {i for i, _ in index.search(x[7], 20)}
    assert "ev_7" not in hits
    path = tmp_path / "events.usearch"
    removed = index.search_exact(x[7], 1)[0][0]  # ev_x0: the same vector is still live
    assert removed.startswith("ev_x")
    gone = index.get("ev_100")
    assert gone is not None
    gone = gone.copy()
    index.remove("ev_100")
    index.save(path)
    assert gone.tobytes() not in path.read_bytes()  # the file keeps no removed vector
    again = VectorIndex(ann=ANN)
    again.begin_load()
    again.put_many([(i, index.get(i)) for i in index.ids()])  # type: ignore[misc]
    assert again.end_load(path) == "restored"
    assert "ev_7" not in {i for i, _ in again.search(x[7], 20)}
    assert "ev_100" not in {i for i, _ in again.search(gone, 20)}


def test_saved_index_restores_and_answers_as_before(tmp_path: Path) -> None:
    index, _ = filled(1500)
    path = tmp_path / "events.usearch"
    assert index.save(path)
    loaded = VectorIndex(ann=ANN)
    loaded.begin_load()
    loaded.put_many([(i, index.get(i)) for i in index.ids()])  # type: ignore[misc]
    assert loaded.end_load(path) == "restored"
    assert not loaded.changed
    for q in clustered(20, seed=3):
        assert loaded.search(q, 10) == index.search(q, 10)


def test_a_stale_file_is_reconciled_and_a_bad_one_rebuilt(tmp_path: Path) -> None:
    index, x = filled(1500)
    path = tmp_path / "events.usearch"
    index.save(path)
    # the store moved on: one vector gone, one changed, ten new
    rows = {i: index.get(i) for i in index.ids()}
    del rows["ev_3"]
    rows["ev_4"] = x[900]
    extra = clustered(10, seed=5)
    rows.update({f"ev_n{j}": v for j, v in enumerate(extra)})
    loaded = VectorIndex(ann=ANN)
    loaded.begin_load()
    loaded.put_many(list(rows.items()))  # type: ignore[arg-type]
    assert loaded.end_load(path) == "reconciled"
    assert "ev_3" not in {i for i, _ in loaded.search(x[3], 20)}
    assert "ev_4" not in {i for i, _ in loaded.search(x[4], 20)}
    assert "ev_4" in {i for i, _ in loaded.search(x[900], 2)}
    assert loaded.search(extra[2], 1)[0][0] == "ev_n2"
    # a file of another dimension, or not an index at all, is rebuilt from the rows
    path.write_bytes(b"not an index")
    other = VectorIndex(ann=ANN)
    other.begin_load()
    other.put_many(list(rows.items()))  # type: ignore[arg-type]
    assert other.end_load(path) == "built"
    assert recall_at_10(other, clustered(30, seed=6)) >= 0.95


def test_memory_keeps_the_hnsw_file_beside_the_store(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    settings = Settings().with_(ann_threshold=60)
    texts = [f"note {i} about the garden and topic {i % 7}" for i in range(120)]
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as mem:
        ids = mem.add_many([{"text": t} for t in texts])
        assert mem.graph().event_vectors.approximate
    sidecar = tmp_path / "m.db.default.events.usearch"
    assert sidecar.exists()
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as mem:
        g = mem.graph()
        assert g.vector_load["events"] == "restored"
        vec = g.event_vectors.get(ids[5])
        assert vec is not None
        vec = vec.copy()
        mem.forget(ids[5])
        assert not sidecar.exists()  # gone at once, not at close
        assert ids[5] not in {i for i, _ in g.event_vectors.search(vec, 20)}
    assert sidecar.exists()  # written again at close
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as mem:
        g = mem.graph()
        assert g.vector_load["events"] == "restored"
        assert ids[5] not in g.event_vectors
        assert ids[5] not in {i for i, _ in g.event_vectors.search(vec, 20)}
    # a crash after more events: the file is behind the store and is brought up to date
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as mem:
        more = mem.add_many([{"text": f"late note {i} on the kiln"} for i in range(10)])
        mem.save_vectors = lambda: None  # type: ignore[method-assign]  # no save at close
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as mem:
        g = mem.graph()
        assert g.vector_load["events"] == "reconciled"
        assert all(m in g.event_vectors for m in more)
        v = g.event_vectors.get(more[3])
        assert v is not None and g.event_vectors.search(v, 1)[0][0] == more[3]


def test_in_memory_store_keeps_no_file(tmp_path: Path) -> None:
    settings = Settings().with_(ann_threshold=30)
    with Memory.open("memory:", embedder="hash", planner=None, settings=settings) as mem:
        mem.add_many([{"text": f"entry {i}"} for i in range(40)])
        g = mem.graph()
        assert g.event_vectors.approximate and g.vector_files is None


def test_similarity_array_is_similarities_aligned_with_the_ids() -> None:
    rng = np.random.default_rng(3)
    index = VectorIndex()
    for i in range(50):
        index.put(f"ev_{i}", rng.normal(size=8).astype(np.float32))
    index.remove("ev_7")
    q = rng.normal(size=8).astype(np.float32)
    ids = ["ev_3", "nope", "ev_7", *(f"ev_{i}" for i in range(40, 10, -3)), "ev_3"]
    sims = index.similarities(q, ids)
    got = index.similarity_array(q, ids)
    assert got.tolist() == [sims.get(i, -2.0) for i in ids]
    assert index.similarity_array(np.zeros(8, dtype=np.float32), ids).tolist() == \
        [-2.0] * len(ids)


def test_the_hnsw_size_is_kept_until_a_row_comes_or_goes() -> None:
    from enfold.ann import Hnsw

    hnsw = Hnsw(32, ANN)
    x = clustered(200)
    hnsw.add(np.arange(100, dtype=np.uint64), x[:100])
    first = hnsw.nbytes()
    assert first == int(hnsw.index.memory_usage) and hnsw.nbytes() == first
    hnsw.add(np.arange(100, 200, dtype=np.uint64), x[100:])
    grown = hnsw.nbytes()
    assert grown > first and grown == int(hnsw.index.memory_usage)
    hnsw.remove(np.arange(0, 150, dtype=np.uint64))
    assert hnsw.nbytes() == int(hnsw.index.memory_usage)
