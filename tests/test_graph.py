"""The working graph's secondary indexes stay equal to what a scan of its edges gives,
through writes, removals, rollbacks and node removal."""

from __future__ import annotations

import random

from enfold.graph import WorkingGraph
from enfold.model import Edge, EdgeType, Node, NodeKind


def _node(nid: str, kind: NodeKind) -> Node:
    return Node(id=nid, namespace="ns", kind=kind, text=nid)


def _scan(g: WorkingGraph, nid: str) -> set[tuple[str, EdgeType, str]]:
    events = g.by_kind[NodeKind.EVENT]
    return {e.key for e in g.edges_of(nid) if e.src not in events and e.dst not in events}


def test_links_index_matches_a_scan_through_rollbacks() -> None:
    rng = random.Random(7)
    g = WorkingGraph("ns")
    events = [f"ev_{i}" for i in range(30)]
    concepts = [f"co_{i}" for i in range(8)]
    g.begin()
    for nid in events:
        g.put_node(_node(nid, NodeKind.EVENT))
    for nid in concepts:
        g.put_node(_node(nid, NodeKind.CONCEPT))
    g.commit()
    for round_ in range(60):
        g.begin()
        for _ in range(10):
            a, b = rng.sample(concepts, 2)
            if rng.random() < 0.5:
                src, type_ = rng.choice(events), rng.choice([EdgeType.GROUNDS, EdgeType.REINFORCES])
            else:
                src, type_ = a, rng.choice([EdgeType.PART_OF, EdgeType.RELATED_TO])
            key = (src, type_, b)
            if g.edge(*key) is not None and rng.random() < 0.4:
                g.remove_edge(key)
            else:
                g.put_edge(Edge(namespace="ns", src=src, type=type_, dst=b, weight=rng.random(),
                                created_at=0.0, updated_at=0.0))
        if round_ % 3 == 0:
            g.rollback()
        else:
            g.commit()
        for nid in concepts:
            assert {e.key for _, e in g.links(nid)} == _scan(g, nid)
    g.begin()
    g.remove_node(concepts[0])
    g.commit()
    assert concepts[0] not in g.derived
    for nid in concepts[1:]:
        assert {e.key for _, e in g.links(nid)} == _scan(g, nid)
        assert all(other != concepts[0] for other, _ in g.links(nid))


def test_provenance_that_only_grew_is_appended_not_rewritten() -> None:
    g = WorkingGraph("ns")
    g.begin()
    g.put_node(Node(id="co_1", namespace="ns", kind=NodeKind.CONCEPT, text="c",
                    grounded_in=("ev_1", "ev_2")))
    reset, rows = g.changes().provenance_writes()
    assert reset == [] and rows == [("co_1", 0, "ev_1"), ("co_1", 1, "ev_2")]
    g.commit()

    g.begin()  # reinforced twice in one transaction: only the two new entries are written
    c = g.nodes["co_1"]
    g.put_node(c.with_changes(grounded_in=(*c.grounded_in, "ev_3")))
    g.put_node(g.nodes["co_1"].with_changes(grounded_in=("ev_1", "ev_2", "ev_3", "ev_4")))
    reset, rows = g.changes().provenance_writes()
    assert reset == [] and rows == [("co_1", 2, "ev_3"), ("co_1", 3, "ev_4")]
    g.commit()

    g.begin()  # an event retracted (forget): the stored list is rewritten
    g.put_node(g.nodes["co_1"].with_changes(grounded_in=("ev_1", "ev_3", "ev_4")))
    reset, rows = g.changes().provenance_writes()
    assert reset == ["co_1"] and [r[2] for r in rows] == ["ev_1", "ev_3", "ev_4"]
    g.commit()

    g.begin()
    g.remove_node("co_1")
    assert g.changes().provenance_writes() == (["co_1"], [])
    g.rollback()


def test_nearest_by_kind_equals_a_filtered_search_through_rollbacks() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    g = WorkingGraph("ns")
    kinds = [NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM]
    ids = [f"{k.value[:2]}_{i}" for i in range(30) for k in kinds]
    g.begin()
    for nid in ids:
        kind = next(k for k in kinds if nid.startswith(k.value[:2]))
        g.put_node(Node(id=nid, namespace="ns", kind=kind, text=nid))
    g.commit()
    for round_ in range(20):
        g.begin()
        for nid in rng.choice(ids, 12, replace=False):
            g.set_vector(str(nid), None if rng.random() < 0.2 else rng.normal(size=16))
        if round_ % 4 == 3:
            g.rollback()
        else:
            g.commit()
        q = rng.normal(size=16)
        for kind in kinds:
            members = g.by_kind[kind]
            ref = g.node_vectors.search(q, 5, accept=members.__contains__)
            fast = g.nearest(q, kind, 5)
            assert [i for i, _ in fast] == [i for i, _ in ref]
            assert set(g.kind_vectors[kind].ids()) == {i for i in g.node_vectors.ids()
                                                       if i in members}


def test_search_of_the_last_rows_only_sees_the_most_recent_vectors() -> None:
    import numpy as np

    from enfold.vectors import VectorIndex

    rng = np.random.default_rng(5)
    ix = VectorIndex()
    vecs = {f"cl_{i}": rng.normal(size=8) for i in range(50)}
    for nid, v in vecs.items():
        ix.put(nid, v)
    q = vecs["cl_3"]  # an old row: found in the whole index, not among the last 10
    assert ix.search(q, 1)[0][0] == "cl_3"
    recent = ix.search(q, 50, last=10)
    assert {i for i, _ in recent} == {f"cl_{i}" for i in range(40, 50)}
    sims = [s for _, s in recent]
    assert sims == sorted(sims, reverse=True)
    ix.remove("cl_45")
    assert "cl_45" not in {i for i, _ in ix.search(q, 50, last=10)}


def test_grounded_set_follows_provenance_through_appends_rewrites_and_rollbacks() -> None:
    rng = random.Random(3)
    g = WorkingGraph("ns")
    universe = [f"ev_{i}" for i in range(260)] + [f"ev_x{r}_{i}" for r in range(200)
                                                  for i in range(0, 120, 7)]

    def same(graph: WorkingGraph) -> bool:  # membership answers equal the tuple's
        have = set(graph.nodes["co_1"].grounded_in)
        return all((e in graph.grounded("co_1")) == (e in have) for e in universe)

    g.begin()  # around the length where a set takes over from the tuple, both ways
    g.put_node(Node(id="co_1", namespace="ns", kind=NodeKind.CONCEPT, text="c",
                    grounded_in=tuple(f"ev_{i}" for i in range(40))))
    g.commit()
    n = 40
    sizes = []
    for round_ in range(200):
        g.begin()
        node = g.nodes["co_1"]
        roll = rng.random()
        if roll < 0.6:  # reinforced: appended to
            n += 1
            g.put_node(node.with_changes(grounded_in=(*node.grounded_in, f"ev_{n}")))
        elif roll < 0.75:  # a retraction rewrites the tuple
            kept = tuple(e for e in node.grounded_in if rng.random() < 0.8)
            g.put_node(node.with_changes(grounded_in=kept))
        else:  # same length, other ids
            g.put_node(node.with_changes(grounded_in=tuple(
                f"ev_x{round_}_{i}" for i in range(len(node.grounded_in)))))
        assert same(g)
        sizes.append(len(g.nodes["co_1"].grounded_in))
        if round_ % 4 == 0:
            g.rollback()
        else:
            g.commit()
        assert same(g)
    assert min(sizes) < 32 <= max(sizes)
    g.begin()
    g.remove_node("co_1")
    g.commit()
    assert not any(e in g.grounded("co_1") for e in universe)


def test_ids_sort_by_creation_and_a_forked_child_starts_its_own_sequence(monkeypatch) -> None:
    import os
    import time

    import enfold.model
    from enfold.model import new_id

    ids = [new_id(NodeKind.EVENT) for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 23 and int(i[3:], 16) >= 0 for i in ids)
    if not hasattr(os, "fork"):
        return
    # One frozen millisecond for parent and child: only the child's fresh sequence keeps
    # their ids apart.
    frozen = time.time_ns()
    monkeypatch.setattr(enfold.model.time, "time_ns", lambda: frozen)
    new_id(NodeKind.EVENT)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the ids it makes right after the fork
        os.close(r)
        os.write(w, " ".join(new_id(NodeKind.EVENT) for _ in range(50)).encode())
        os._exit(0)
    os.close(w)
    mine = {new_id(NodeKind.EVENT) for _ in range(50)}
    with os.fdopen(r) as f:
        theirs = set(f.read().split())
    os.waitpid(pid, 0)
    assert len(theirs) == 50 and not mine & theirs


def test_indexes_keep_one_structure_per_type_made_once() -> None:
    g = WorkingGraph("ns")
    made: list[int] = []

    class Counts(list[int]):
        pass

    class Other(list[int]):
        pass

    def make() -> Counts:
        made.append(1)
        return Counts([len(made)])

    first = g.indexes.of(Counts, make)
    assert g.indexes.of(Counts, make) is first and made == [1]
    assert g.indexes.get(Other) is None  # a type is its own key: no value of another type
    replaced = g.indexes.put(Counts([9]))
    assert g.indexes.get(Counts) is replaced and g.indexes.of(Counts, make) == [9]
    assert made == [1]


def test_no_derived_state_is_kept_under_a_string_key() -> None:
    """The old ``graph.state["key"]`` bag is gone: every structure is found by its type."""
    import re
    from pathlib import Path

    import enfold

    root = Path(enfold.__file__).parent
    found = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\b(graph|g)\.state\b|\bstate_of\(", line)]
    assert not found, found


def test_node_names_are_its_text_and_its_string_aliases() -> None:
    def node(aliases: object) -> Node:
        return Node("co_1", "ns", NodeKind.CONCEPT, "garden", {"aliases": aliases})

    assert node(["allotment", 3, None, "plot"]).names() == ["garden", "allotment", "plot"]
    assert node("allotment").names() == ["garden"]  # not a list: no letters as names
    assert Node("co_2", "ns", NodeKind.CONCEPT, "garden").names() == ["garden"]
