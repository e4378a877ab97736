"""Two processes on one store (simulated by two Memory objects on the same URL, each with
its own cached working graph): each sees the other's work before it folds, recalls or
edits, because a working graph that missed a change in the store is reloaded."""

from __future__ import annotations

from enfold import Memory, NodeKind

BASE_TS = 1_700_000_000


def test_memories_taking_turns_share_one_graph(store_url: str) -> None:
    a = Memory.open(store_url, embedder="hash", planner="local")
    b = Memory.open(store_url, embedder="hash", planner="local")
    try:
        for i in range(8):
            m = a if i % 2 == 0 else b
            m.add(f"note {i}: watered the tomatoes in the garden", source="Maya",
                  ts=BASE_TS + 3600 * i)
        for m in (a, b):
            g = m.graph()
            people = [g.nodes[p].text for p in g.of_kind(NodeKind.PERSON)]
            assert people == ["Maya"], "the speaker exists once, whichever memory folded"
            assert g.count(NodeKind.EVENT) == 8
            concepts = [g.nodes[c] for c in g.of_kind(NodeKind.CONCEPT)]
            assert len(concepts) == 1 and len(concepts[0].grounded_in) == 8
        # a recall through the memory that folded the fewest events sees every event
        pack = b.recall("tomatoes in the garden", k=10)
        assert len({e.id for e in pack.evidence}) == 8
    finally:
        a.close()
        b.close()
