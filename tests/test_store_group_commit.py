"""A fold group is written as one merged change set (``ChangeSet.absorb``): storing the
merge must leave a store exactly as storing each change set in turn would — nodes, edges,
vectors, provenance, aliases, meta, the op log (with histories erased in between) and the
text index (which a store skips for nodes whose text did not change).

Both stores of a pair see the same random workload on one working graph; one commits each
transaction, the other commits random runs of them merged. Once per backend.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from conftest import make_store_url

from enfold.graph import ChangeSet, WorkingGraph
from enfold.model import Edge, EdgeType, Node, NodeKind, OpRecord
from enfold.store import open_store
from enfold.store.base import Store

WORDS = ["river", "marathon", "budget", "tiles", "piano", "sourdough", "visa", "garden",
         "deadline", "invoice", "chess", "concert"]
KINDS = [NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM, NodeKind.PERSON]


def _workload(rng: random.Random, rounds: int) -> list[ChangeSet]:
    """Change sets of random transactions on one graph (rolled-back ones left out)."""
    g = WorkingGraph("A")
    out: list[ChangeSet] = []
    ids = [f"n_{i}" for i in range(14)]
    for r in range(rounds):
        g.begin()
        for _ in range(rng.randint(1, 6)):
            nid = rng.choice(ids)
            old = g.nodes.get(nid)
            roll = rng.random()
            if old is not None and roll < 0.12:
                g.remove_node(nid)
            elif old is None or roll < 0.35:  # (re)write, often with new text
                g.put_node(Node(id=nid, namespace="A", kind=rng.choice(KINDS),
                                text=" ".join(rng.sample(WORDS, 2)),
                                attrs={"keywords": rng.sample(WORDS, 1)},
                                grounded_in=tuple(f"ev_{rng.randint(0, 50)}"
                                                  for _ in range(rng.randint(0, 3)))))
            elif roll < 0.7:  # reinforced: provenance grows, text and keywords unchanged
                g.put_node(old.with_changes(
                    grounded_in=(*old.grounded_in, f"ev_{r}"),
                    attrs={**old.attrs, "last_ts": float(r)}))
            else:  # keywords change, text does not: the text index must follow
                g.put_node(old.with_changes(attrs={**old.attrs,
                                                   "keywords": rng.sample(WORDS, 2)}))
        live = list(g.nodes)
        for _ in range(rng.randint(0, 3)):
            if len(live) < 2:
                break
            a, b = rng.sample(live, 2)
            key = (a, EdgeType.RELATED_TO, b)
            if g.edge(*key) is not None and rng.random() < 0.3:
                g.remove_edge(key)
            else:
                g.put_edge(Edge("A", a, b, EdgeType.RELATED_TO, rng.random(), 1.0, float(r)))
        if live and rng.random() < 0.4:
            nid = rng.choice(live)
            g.set_vector(nid, np.full(4, float(r), dtype=np.float32))
        if live:
            target = rng.choice(live)
            g.add_op(OpRecord("A", 0, f"pl_{r}", "UPDATE_NODE", target, None,
                              {"round": r}, "test", float(r)))
            if rng.random() < 0.1:
                g.changes().purge_history.add(rng.choice(live))
        if rng.random() < 0.2:
            g.set_alias(f"old_{r}", rng.choice(ids))
        g.set_meta("round", r)
        if rng.random() < 0.15:
            g.rollback()
        else:
            out.append(g.commit())
    return out


def _state(store: Store) -> tuple[object, ...]:
    snap = store.load_graph("A")
    nodes = sorted((n.id, n.kind, n.text, n.grounded_in, sorted(n.attrs.items(), key=str))
                   for n in snap.nodes)
    edges = sorted((e.key, e.weight, e.updated_at) for e in snap.edges)
    vectors = sorted((i, v.tolist()) for i, v in snap.vectors)
    ops = [(o.plan_id, o.target, o.after) for n in sorted({*(x[0] for x in nodes), "n_0"})
           for o in store.history("A", n)]
    found = {w: sorted(i for i, _ in store.search_text("A", w, None, 50)) for w in WORDS}
    return (nodes, edges, vectors, sorted(snap.aliases), sorted(snap.meta), ops, found,
            store.get_cursor("A"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_merged_group_stores_what_its_change_sets_store_one_by_one(
        backend: str, seed: int, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    rng = random.Random(seed)
    sets = _workload(rng, 80)
    one = open_store(make_store_url(backend, request, tmp_path, "one"))
    merged = open_store(make_store_url(backend, request, tmp_path, "merged"))
    try:
        for changes in sets:
            one.commit("A", changes)
        i = 0
        while i < len(sets):
            n = rng.randint(1, 9)
            group = ChangeSet()
            for changes in sets[i:i + n]:
                group.absorb(changes)
            merged.commit("A", group)
            i += n
        assert _state(merged) == _state(one)
        # The workload did exercise what the merge must get right.
        assert any(c.purge_history for c in sets)
        assert any(n is None for c in sets for n in c.nodes.values())
    finally:
        one.close()
        merged.close()


def test_a_node_whose_text_did_not_change_keeps_its_text_index_row(tmp_path: Path) -> None:
    """Reinforcing a concept rewrites its row, not its FTS row; changing its keywords
    rewrites both, and search follows."""
    store = open_store(tmp_path / "s.db")
    g = WorkingGraph("A")
    g.begin()
    g.put_node(Node(id="co_1", namespace="A", kind=NodeKind.CONCEPT, text="Marathon training",
                    attrs={"keywords": ["running"]}))
    store.commit("A", g.commit())

    statements: list[str] = []
    store._db.set_trace_callback(statements.append)  # type: ignore[attr-defined]

    def fts_writes() -> int:
        n = sum("INSERT INTO node_text" in s for s in statements)
        statements.clear()
        return n

    fts_writes()
    g.begin()
    g.put_node(g.nodes["co_1"].with_changes(grounded_in=("ev_1",), attrs={
        "keywords": ["running"], "last_ts": 5.0}))
    store.commit("A", g.commit())
    assert fts_writes() == 0
    g.begin()
    g.put_node(g.nodes["co_1"].with_changes(attrs={"keywords": ["intervals"]}))
    store.commit("A", g.commit())
    assert fts_writes() == 1
    assert [i for i, _ in store.search_text("A", "intervals", None, 5)] == ["co_1"]
    assert store.search_text("A", "running", None, 5) == []
    assert [i for i, _ in store.search_text("A", "marathon", None, 5)] == ["co_1"]
    store.close()
