"""A long event's passages: its sentences and each two side by side, embedded beside the
whole text (enfold.text.passages), kept with the event's vector row, searched by recall, and
gone with the event when it is forgotten."""

from __future__ import annotations

import io
import sqlite3
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from enfold import Memory
from enfold.settings import Settings
from enfold.text.passages import passages

EMAIL = """Hi Ines,

Thanks for the update on the flood claim. The assessor came round on Tuesday morning and \
took photos of the kitchen floor, the skirting boards and the damp patch under the stairs. \
He said the insurer will want three written quotes from builders before they approve \
anything, and that the drying equipment can stay until the end of the month.
Separately, the cardiologist changed Dad's dose of bisoprolol to 5mg from Monday. Can you \
remind him?
Speak soon, Mark"""


def test_a_long_text_is_cut_into_its_sentences_and_each_two_side_by_side() -> None:
    found = passages(EMAIL)
    sentences = found[:5]
    # A greeting of two words joins the sentence after it; a line break ends a sentence
    # even without a full stop before it; the sign-off joins the question before it.
    assert sentences[0].startswith("Hi Ines, Thanks for the update")
    assert sentences[3] == "Separately, the cardiologist changed Dad's dose of bisoprolol " \
                           "to 5mg from Monday."
    assert sentences[4].endswith("Speak soon, Mark")
    assert found[5:] == [f"{a} {b}" for a, b in pairwise(sentences)]


def test_a_short_text_is_its_own_passage() -> None:
    assert passages("Ran 5k along the canal with Sam this morning. Knee held up fine.") == []
    assert passages(" ".join(["word"] * 60)) == []  # one sentence, however long
    assert passages(EMAIL, Settings(passage_max=0)) == []
    assert len(passages(EMAIL, Settings(passage_max=3))) == 3


def _rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {i: len(d) // (4 * dim)
                for i, dim, d in db.execute("SELECT node_id, dim, data FROM vectors")}


def test_passage_vectors_live_in_their_events_row_and_go_when_it_is_forgotten(
        tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory.open(path, embedder="hash") as m:
        long_id = m.add(EMAIL)
        short_id = m.add("ran 5k this morning with Sam")
        g = m.graph()
        assert g.passage_count == {long_id: 9}
        assert len(g.passage_vectors) == 9
        assert g.vector(long_id) is not None and g.vector(long_id).ndim == 1
    rows = _rows(path)
    assert rows[long_id] == 10 and rows[short_id] == 1  # whole text, then 9 passages
    with Memory.open(path, embedder="hash") as m:  # loaded back as they were
        g = m.graph()
        assert g.passage_count == {long_id: 9}
        stored = g.vector_row(long_id)
        assert stored is not None and stored.shape == (10, g.vector(long_id).shape[0])
        m.forget(long_id)
        assert m.graph().passage_count == {} and len(m.graph().passage_vectors) == 0
    assert long_id not in _rows(path)
    with sqlite3.connect(path) as db:  # the cached passage vectors went with the text's
        assert db.execute("SELECT count(*) FROM embed_cache").fetchone() == (1,)


def test_an_export_carries_the_passages_and_an_import_restores_them(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "a.db", embedder="hash") as m:
        long_id = m.add(EMAIL)
        m.add("ran 5k this morning with Sam")
        before = m.graph().vector_row(long_id)
        buf = io.StringIO()
        m.export(buf)
    with Memory.open(tmp_path / "b.db", embedder="hash") as b:
        b.import_(buf.getvalue().splitlines())
        g = b.graph()
        assert g.passage_count == {long_id: 9}
        after = g.vector_row(long_id)
        assert before is not None and after is not None
        assert np.array_equal(before, after)


def test_a_rolled_back_change_gives_an_event_its_passages_back() -> None:
    from enfold.graph import WorkingGraph
    from enfold.model import Node, NodeKind

    g = WorkingGraph("default")
    rng = np.random.default_rng(3)
    first = rng.standard_normal((4, 8)).astype(np.float32)
    g.begin()
    g.put_node(Node(namespace="default", id="ev_1", kind=NodeKind.EVENT, text="x"))
    g.set_vector("ev_1", first)
    g.commit()
    g.begin()
    g.set_vector("ev_1", rng.standard_normal(8).astype(np.float32))  # no passages now
    assert g.passage_count == {}
    g.rollback()
    assert g.passage_count == {"ev_1": 3}
    row = g.vector_row("ev_1")
    assert row is not None
    unit = first / np.linalg.norm(first, axis=1, keepdims=True)
    assert np.allclose(row / np.linalg.norm(row, axis=1, keepdims=True), unit, atol=1e-6)


@pytest.mark.parametrize("with_passages", [True, False])
def test_recall_finds_a_long_event_by_its_passage(tmp_path: Path, with_passages: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The passage feature reads each candidate's best passage; with passages off the
    candidates are scored as before (the feature equals the whole text's cosine)."""
    from enfold.recall import controller
    from enfold.recall.rank import Signals

    settings = Settings() if with_passages else Settings(passage_max=0)
    seen: list[Signals] = []
    real = controller.candidate_set

    def spy(graph, sig, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(sig)
        return real(graph, sig, *args, **kwargs)

    with Memory.open(tmp_path / "m.db", embedder="hash", settings=settings) as m:
        long_id = m.add(EMAIL)
        for i in range(5):
            m.add(f"ran {5 + i} km along the canal, the knee held up")
        monkeypatch.setattr(controller, "candidate_set", spy)
        m.recall("What dose of bisoprolol did the cardiologist give Dad?", k=3)
    sig = seen[-1]
    if with_passages:
        assert long_id in sig.passage and sig.passage[long_id] > sig.dense[long_id]
    else:
        assert sig.passage == {}


def test_a_text_of_more_sentences_than_the_cap_is_covered_to_its_end() -> None:
    text = " ".join(f"Item {i} on the agenda was discussed at some length today." for i in range(120))
    found = passages(text, Settings(passage_max=48))
    assert len(found) <= 48
    assert "Item 0 " in found[0] and "Item 119 " in found[-1]
    assert sum(p.count("Item ") for p in found) == 120  # every sentence, once


def test_an_event_text_cannot_take_another_texts_cached_passages(tmp_path: Path) -> None:
    """The passages' cache key is of an input no event text can give (a text that is the
    prefix of the old key plus another text folded as that text, not as its passages)."""
    from enfold.write.fold import passages_hash, text_hash

    assert passages_hash("hash:256", EMAIL) not in {
        text_hash("hash:256", f"\x00passages\x00{EMAIL}"), text_hash("hash:256", EMAIL)}
    with Memory.open(tmp_path / "m.db", embedder="hash") as m:
        m.add(EMAIL)
        m.add(f"\x00passages\x00{EMAIL}")
        m.add("ran 5k this morning with Sam")
        assert m.store.get_cursor("default") == m.store.last_seq("default") == 3
        assert all(v is not None and v.ndim == 1 for v in
                   (m.graph().vector(e) for e in m.graph().passage_count))


def test_passages_cut_by_other_settings_are_embedded_again(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory.open(path, embedder="hash") as m:
        m.add(EMAIL)
    with Memory.open(path, embedder="hash", settings=Settings(passage_max=3)) as m:
        e = m.add(EMAIL, source="other")  # the same text: its passages come from the cache
        assert m.graph().passage_count[e] == 3


@pytest.mark.parametrize("rows", [1e999, 0, -1, True, 1.5, 4, "2", None])
def test_an_import_with_bad_passage_rows_is_refused_whole(tmp_path: Path, rows: object) -> None:
    import json

    from enfold.errors import InputError

    with Memory.open(tmp_path / "a.db", embedder="hash") as m:
        long_id = m.add(EMAIL)
        m.add("ran 5k this morning with Sam")
        buf = io.StringIO()
        m.export(buf)
    lines = []
    for line in buf.getvalue().splitlines():
        obj = json.loads(line)
        if obj.get("record") == "vector" and obj["id"] == long_id:
            if rows is None:
                del obj["rows"]
            else:
                obj["rows"] = rows
            line = json.dumps(obj)
        lines.append(line)
    with Memory.open(tmp_path / "b.db", embedder="hash") as b:
        with pytest.raises(InputError):
            b.import_(lines)
        assert b.store.last_seq("default") == 0  # nothing stored


def test_a_wipe_removes_the_passages_hnsw_file(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    settings = Settings().with_(ann_threshold=5)
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as m:
        m.add(EMAIL)
    sidecar = tmp_path / "m.db.default.passages.usearch"
    assert sidecar.exists()
    with Memory.open(db, embedder="hash", planner=None, settings=settings) as m:
        m.wipe()
    assert not sidecar.exists()


def test_a_passage_the_embedder_refuses_costs_only_the_passages(tmp_path: Path) -> None:
    from enfold.embed import HashingEmbedder

    class Picky(HashingEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if any(t.startswith("Separately") for t in texts):
                raise ValueError("input rejected by the embedding service")
            return super().embed(texts)

    with Memory.open(tmp_path / "m.db", embedder=Picky()) as m:
        e = m.add(EMAIL)
        g = m.graph()
        assert g.vector(e) is not None and e not in g.passage_count
        assert "fold_error" not in g.nodes[e].attrs


def test_the_session_estimate_counts_the_passage_vectors(tmp_path: Path) -> None:
    from enfold.session import estimate_bytes

    with Memory.open(tmp_path / "m.db", embedder="hash") as m:
        m.add(EMAIL)
        g = m.graph()
        with_passages = estimate_bytes(g)
        g.passage_vectors.remove(next(iter(g.passage_vectors.ids())))
        assert estimate_bytes(g) < with_passages
