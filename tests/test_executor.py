"""The executor (enfold.write.apply) is the security boundary: random plans, valid or not,
never leave a partial, dangling, ungrounded or off-ontology graph, and the working graph
always equals what the store would load.

The property tests draw plans against the live graph (``st.data()``), apply them through
``Memory.apply`` on ``memory:`` and on a real SQLite file, and check the invariants after
every plan. Known bugs are excluded from the random generator (see ``ATTRS`` and
the MERGE_NODES endpoints) and pinned by the strict-xfail tests at the end of this file.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import enfold.model
from enfold import (
    AddEdge,
    AddNode,
    EdgeType,
    MergeNodes,
    NodeKind,
    PlanError,
    RemoveEdge,
    RemoveNode,
    Settings,
    StoreError,
    UpdateNode,
    UpdatePlan,
)
from enfold.graph import WorkingGraph
from enfold.memory import Memory
from enfold.model import GROUNDED_KINDS, ONTOLOGY, PLANNABLE_KINDS

NS, OTHER = "A", "B"
MAX_OPS = 12  # a low per-plan limit so that "too many operations" is cheap to generate


# --------------------------------------------------------------------------- helpers
def open_memory(target: str | Path, *, max_ops: int = MAX_OPS) -> Memory:
    return Memory.open(target, namespace=NS, embedder="hash", planner=None,
                       settings=Settings().with_(max_ops_per_plan=max_ops))


def seed_events(m: Memory) -> tuple[list[str], list[str], dict[str, dict[str, Any]]]:
    """Events in A and B; returns their ids and A's events as stored right after add()."""
    texts = ["I went running in the park this morning", "Running again, 10k along the river",
             "Booked a trip to Paris for May", "Chess club meets on Thursday evening"]
    a = [m.add(t, ts=1_700_000_000 + 3600 * i, source="Maya", meta={"i": i})
         for i, t in enumerate(texts)]
    b = [m.add(f"secret of namespace B number {i}", ts=1_700_000_000 + i, namespace=OTHER)
         for i in range(2)]
    originals = {e: m.get(e).to_dict() for e in a}
    return a, b, originals


def export_text(m: Memory, ns: str = NS) -> str:
    buf = io.StringIO()
    m.export(buf, namespace=ns)
    return buf.getvalue()


def graph_state(g: WorkingGraph) -> dict[str, Any]:
    """Everything a working graph holds, as comparable plain data (vectors separately)."""
    out_edges = {e.key: e.to_dict() for e in g.all_edges()}
    in_edges = {e.key: e.to_dict() for d in g.inn.values() for e in d.values()}
    assert out_edges == in_edges, "out/in edge indexes disagree"
    by_kind = {k: set(g.of_kind(k)) for k in NodeKind}
    assert by_kind == {k: {i for i, n in g.nodes.items() if n.kind is k} for k in NodeKind}
    return {
        "nodes": {i: n.to_dict() for i, n in g.nodes.items()},
        "edges": out_edges,
        "aliases": dict(g.aliases),
        "meta": dict(g.meta),
        "event_vectors": {i: np.array(g.event_vectors.get(i)) for i in g.event_vectors.ids()},
        "node_vectors": {i: np.array(g.node_vectors.get(i)) for i in g.node_vectors.ids()},
    }


def assert_same_graph(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("nodes", "edges", "aliases", "meta"):
        assert a[key] == b[key], f"{key} differ"
    for key in ("event_vectors", "node_vectors"):
        assert a[key].keys() == b[key].keys(), f"{key} ids differ"
        for i, v in a[key].items():
            np.testing.assert_allclose(v, b[key][i], atol=1e-5, err_msg=f"{key}[{i}]")


def fresh_graph_state(m: Memory, path: str | Path | None) -> dict[str, Any]:
    """What a fresh Memory loads from the same store (a new connection for a file)."""
    if path is None:
        snap = m.store.load_graph(NS)
        g = WorkingGraph(NS)
        g.load(snap.nodes, snap.edges, snap.vectors, snap.aliases, snap.meta)
        return graph_state(g)
    m2 = Memory.open(path, namespace=NS, embedder=None, planner=None)
    try:
        return graph_state(m2.graph())
    finally:
        m2.close()


def check_invariants(m: Memory, events_a: list[str], originals: dict[str, dict[str, Any]]
                     ) -> None:
    g = m.graph(NS)
    events = set(g.of_kind(NodeKind.EVENT))
    assert events == set(events_a), "a plan created or removed an event"
    for e in events_a:
        assert g.nodes[e].to_dict() == originals[e], f"event {e} changed"
    for edge in g.all_edges():
        assert edge.src in g.nodes and edge.dst in g.nodes, f"dangling edge {edge.key}"
        rule = ONTOLOGY[edge.type]
        sk, dk = g.nodes[edge.src].kind, g.nodes[edge.dst].kind
        assert sk in rule.sources and dk in rule.targets, f"off-ontology edge {edge.key}"
        assert edge.src != edge.dst
        assert 0.0 <= edge.weight <= 1.0
        assert edge.namespace == NS
    for nid, node in g.nodes.items():
        assert node.namespace == NS
        if node.kind in GROUNDED_KINDS:
            assert node.grounded_in, f"{node.kind} {nid} is ungrounded"
            assert set(node.grounded_in) <= events, f"{nid} grounded in a non-event"
        if node.kind in (NodeKind.CONCEPT, NodeKind.INTENT):
            assert g.degree(nid) > 0, f"orphan {node.kind} {nid}"
    for old, new in g.aliases.items():
        assert old not in g.nodes, f"absorbed id {old} is still a node"
        assert old != new, f"alias {old} points to itself"
    assert set(g.event_vectors.ids()) <= events
    assert set(g.node_vectors.ids()) <= set(g.nodes) - events


# ------------------------------------------------------------------ plan generation
LABELS = ["Running", "running", "Morning run", "run, morning", "Swimming", "Chess club",
          "Paris trip", "trip to Paris", "Maya", "2024-05-01", "   ", ""]
# Attribute keys that the executor reads back (aliases, strength, event_count, keywords,
# last_ts) are left out: a wrong type there is refused (see test_attr_types_* and
# tests/test_payloads.py). Undeclared keys take any JSON value; declared ones (category,
# status and value are strings in enfold.payloads) their type, so the plans stay valid.
_FREE_ATTRS = st.dictionaries(st.sampled_from(["note", "colour"]),
                              st.one_of(st.integers(-5, 5), st.text(max_size=8),
                                        st.booleans()), max_size=2)
_TYPED_ATTRS = st.dictionaries(st.sampled_from(["category", "status", "value"]),
                               st.text(max_size=8), max_size=2)
ATTRS = st.tuples(_FREE_ATTRS, _TYPED_ATTRS).map(lambda t: {**t[0], **t[1]})
WEIGHTS = st.one_of(st.none(), st.floats(0.0, 1.0), st.sampled_from([-0.5, 1.5]))


def draw_plan(data: st.DataObject, m: Memory, events_a: list[str], events_b: list[str]
              ) -> UpdatePlan:
    """Mostly well-formed plans (so that the graph grows and later plans have something to
    work on), with invalid operations mixed in at random."""
    g = m.graph(NS)
    kinds: dict[str, NodeKind] = {i: n.kind for i, n in g.nodes.items()}  # ids and refs
    refs: set[str] = set()
    absorbed = sorted(g.aliases)
    junk = ["nope", "co_00000000000000000000", "ev_ffffffffffffffffffff"]
    foreign = events_b + junk + absorbed
    edges = [e.key for e in g.all_edges()]

    def pick(pool: list[str]) -> str:
        return data.draw(st.sampled_from(sorted(pool)))

    def of(allowed: frozenset[NodeKind] | set[NodeKind], *, no_refs: bool = False) -> list[str]:
        return [i for i, k in kinds.items() if k in allowed and not (no_refs and i in refs)]

    def grounding(required: bool) -> list[str]:
        lo = 1 if required else 0
        return data.draw(st.lists(st.sampled_from(events_a), min_size=lo, max_size=3))

    def valid_op() -> Any:
        what = data.draw(st.sampled_from(
            ["add_node"] * 3 + ["add_edge"] * 3 + ["update", "merge", "remove_node",
                                                   "remove_edge"]))
        reasoning = data.draw(st.sampled_from(["", "because"]))
        derived = of(set(NodeKind) - {NodeKind.EVENT})
        if what == "add_edge":
            type_ = data.draw(st.sampled_from(list(EdgeType)))
            rule = ONTOLOGY[type_]
            srcs, dsts = of(rule.sources), of(rule.targets)
            if srcs and dsts:
                src, dst = pick(srcs), pick(dsts)
                if src != dst:
                    return AddEdge(src=src, dst=dst, type=type_, weight=data.draw(
                        st.one_of(st.none(), st.floats(0.0, 1.0))), reasoning=reasoning)
            what = "add_node"
        if what == "update" and derived:
            return UpdateNode(id=pick(derived), text=data.draw(
                st.one_of(st.none(), st.sampled_from(LABELS[:-2]))),
                attrs=data.draw(ATTRS), grounded_in=grounding(False), reasoning=reasoning)
        if what == "merge":
            # Not refs of this plan: a ref turned into reinforcement of an existing concept
            # makes "merge X into itself" (known bug, test_merge_with_near_duplicate_ref_*).
            mergeable = [k for k in sorted(PLANNABLE_KINDS) if len(of({k}, no_refs=True)) >= 2]
            if mergeable:
                pool = of({data.draw(st.sampled_from(mergeable))}, no_refs=True)
                keep = pick(pool)
                absorb = pick([x for x in pool if x != keep])
                del kinds[absorb]
                return MergeNodes(keep=keep, absorb=absorb, reasoning=reasoning)
        if what == "remove_node" and derived:
            victim = pick(derived)
            del kinds[victim]
            return RemoveNode(id=victim, reasoning=reasoning)
        if what == "remove_edge" and edges:
            src, type_, dst = data.draw(st.sampled_from(edges))
            edges.remove((src, type_, dst))
            return RemoveEdge(src=src, type=type_, dst=dst, reasoning=reasoning)
        kind = data.draw(st.sampled_from(sorted(PLANNABLE_KINDS)))
        ref = f"r{len(refs)}"
        refs.add(ref)
        kinds[ref] = kind
        return AddNode(ref=ref, kind=kind, text=data.draw(st.sampled_from(LABELS[:-2])),
                       attrs=data.draw(ATTRS), grounded_in=grounding(kind in GROUNDED_KINDS),
                       reasoning=reasoning)

    def any_id() -> str:
        pools = [p for p in (sorted(kinds), foreign) if p]
        return data.draw(st.sampled_from(data.draw(st.sampled_from(pools))))

    def bad_grounding() -> list[str]:
        return data.draw(st.lists(st.sampled_from(sorted(kinds) + foreign), max_size=2))

    def chaotic_op() -> Any:
        what = data.draw(st.sampled_from(
            ["add_node", "add_edge", "update", "merge", "remove_node", "remove_edge"]))
        if what == "add_node":
            ref = data.draw(st.sampled_from([f"x{len(refs)}", *sorted(kinds)[:3],
                                             *absorbed[:2]]))
            return AddNode(ref=ref, kind=data.draw(st.sampled_from(list(NodeKind))),
                           text=data.draw(st.sampled_from(LABELS)), attrs=data.draw(ATTRS),
                           grounded_in=bad_grounding())
        if what == "add_edge":
            return AddEdge(src=any_id(), dst=any_id(),
                           type=data.draw(st.sampled_from(list(EdgeType))),
                           weight=data.draw(WEIGHTS))
        if what == "update":
            return UpdateNode(id=any_id(), text=data.draw(st.one_of(
                st.none(), st.sampled_from(LABELS))), grounded_in=bad_grounding())
        if what == "merge":
            pool = sorted(set(kinds) - refs) + foreign
            return MergeNodes(keep=data.draw(st.sampled_from(pool)),
                              absorb=data.draw(st.sampled_from(pool)))
        if what == "remove_node":
            return RemoveNode(id=any_id())
        return RemoveEdge(src=any_id(), type=data.draw(st.sampled_from(list(EdgeType))),
                          dst=any_id())

    shape = data.draw(st.integers(0, 19))
    if shape == 0:
        # Too many operations, each harmless on its own.
        ops: list[Any] = [AddNode(ref=f"p{i}", kind=NodeKind.PERSON, text=f"Person {i}")
                          for i in range(MAX_OPS + 1)]
    else:
        chaos = 0.0 if shape < 12 else 0.3
        ops = []
        for _ in range(data.draw(st.integers(1, 6))):
            if chaos and data.draw(st.floats(0, 1)) < chaos:
                ops.append(chaotic_op())
            else:
                ops.append(valid_op())
    namespace = data.draw(st.sampled_from([None] * 8 + [NS, OTHER]))
    return UpdatePlan(namespace=namespace, operations=ops, reasoning="random")


class _CountingIds:
    """Stands in for enfold.model's id clock so that node ids are a function of the example
    (Hypothesis needs draws that depend only on its choices, and ids decide iteration
    orders)."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"{self.n:020x}"


def run_random_plans(data: st.DataObject, target: str | Path) -> None:
    path = None if target == "memory:" else Path(target)
    real_ids = enfold.model._IDS
    enfold.model._IDS = _CountingIds()  # type: ignore[assignment]
    m = open_memory(target)
    try:
        events_a, events_b, originals = seed_events(m)
        other_before = export_text(m, OTHER)
        accepted = 0
        for _ in range(data.draw(st.integers(1, 10), label="plans")):
            plan = draw_plan(data, m, events_a, events_b)
            g = m.graph(NS)
            before_graph, before_store = graph_state(g), export_text(m)
            before_version = g.version
            try:
                result = m.apply(plan)
            except PlanError as exc:
                event("plan rejected" + (" at apply time" if not exc.errors[0].startswith(
                    ("op ", "plan ")) else ""))
                assert_same_graph(graph_state(m.graph(NS)), before_graph)
                assert export_text(m) == before_store, "a rejected plan changed the store"
                assert m.graph(NS).version == before_version
            else:
                for op in plan.operations:
                    event(f"accepted {op.op}")
                if result.reinforced:
                    event("near-duplicate reinforced")
                if result.repaired:
                    event("orphan repaired")
                accepted += 1
                assert plan.namespace in (None, NS)
                assert len(plan.operations) <= MAX_OPS
            check_invariants(m, events_a, originals)
            assert_same_graph(graph_state(m.graph(NS)), fresh_graph_state(m, path))
            assert export_text(m, OTHER) == other_before, "namespace B was touched"
    finally:
        m.close()
        enfold.model._IDS = real_ids  # type: ignore[assignment]


_HYP = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_HYP
@given(data=st.data())
def test_random_plans_keep_invariants_in_memory_store(data: st.DataObject) -> None:
    run_random_plans(data, "memory:")


@_HYP
@given(data=st.data())
def test_random_plans_keep_invariants_in_sqlite_file(data: st.DataObject) -> None:
    d = tempfile.mkdtemp(prefix="enfold-exec-")
    try:
        run_random_plans(data, str(Path(d) / "exec.db"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# -------------------------------------------------------------- deterministic cases
@pytest.fixture(params=["memory", "file", "postgres"])
def mem(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    target = {"memory": "memory:", "file": str(tmp_path / "m.db")}.get(request.param) \
        or str(request.getfixturevalue("pg_url"))
    m = open_memory(target, max_ops=200)
    m.test_path = None if request.param == "memory" else target  # type: ignore[attr-defined]
    yield m
    m.close()


def _concept(m: Memory, label: str, events: list[str]) -> str:
    r = m.apply(UpdatePlan(operations=[
        AddNode(ref="c", kind=NodeKind.CONCEPT, text=label, grounded_in=events)]))
    return r.created["c"]


def _invalid_plans(ev: list[str], evb: list[str], c1: str, c2: str, person: str,
                   absorbed: str) -> dict[str, list[Any] | UpdatePlan]:
    P = NodeKind.PERSON
    return {
        "add event": [AddNode(ref="x", kind=NodeKind.EVENT, text="forged event")],
        "GROUNDS concept->event": [AddEdge(src=c1, type=EdgeType.GROUNDS, dst=ev[0])],
        "HOLDS person->concept": [AddEdge(src=person, type=EdgeType.HOLDS, dst=c1)],
        "PART_OF event->concept": [AddEdge(src=ev[0], type=EdgeType.PART_OF, dst=c1)],
        "unknown src": [AddEdge(src="co_nope", type=EdgeType.RELATED_TO, dst=c1)],
        "edge to B's event": [AddEdge(src=evb[0], type=EdgeType.GROUNDS, dst=c1)],
        "ref = existing id": [AddNode(ref=c1, kind=P, text="Shadow")],
        "ref = absorbed id": [AddNode(ref=absorbed, kind=P, text="Shadow")],
        "duplicate ref": [AddNode(ref="d", kind=P, text="One"),
                          AddNode(ref="d", kind=P, text="Two")],
        "update event": [UpdateNode(id=ev[0], text="rewritten history")],
        "update event attrs": [UpdateNode(id=ev[0], attrs={"source": "Mallory"})],
        "remove event": [RemoveNode(id=ev[0])],
        "merge events": [MergeNodes(keep=ev[0], absorb=ev[1])],
        "merge concept+person": [MergeNodes(keep=c1, absorb=person)],
        "merge into itself": [MergeNodes(keep=c1, absorb=c1)],
        "merge via alias into itself": [MergeNodes(keep=c2, absorb=absorbed)],
        "remove missing edge": [RemoveEdge(src=ev[0], type=EdgeType.CAUSES, dst=ev[1])],
        "ungrounded concept": [AddNode(ref="u", kind=NodeKind.CONCEPT, text="Floating")],
        "ungrounded intent": [AddNode(ref="u", kind=NodeKind.INTENT, text="Do it")],
        "ungrounded fact": [AddNode(ref="u", kind=NodeKind.FACT, text="It is so")],
        "grounded in a concept": [AddNode(ref="u", kind=NodeKind.CONCEPT, text="Meta",
                                          grounded_in=[c1])],
        "grounded in B's event": [AddNode(ref="u", kind=NodeKind.CONCEPT, text="Stolen",
                                          grounded_in=[evb[0]])],
        "grounded in unknown": [AddNode(ref="u", kind=NodeKind.CONCEPT, text="Ghost",
                                        grounded_in=["ev_00000000000000000000"])],
        "empty text": [AddNode(ref="u", kind=P, text="   ")],
        "oversized text": [AddNode(ref="u", kind=P, text="x" * 5000)],
        "weight > 1": [AddEdge(src=ev[0], type=EdgeType.CAUSES, dst=ev[1], weight=1.5)],
        "self edge": [AddEdge(src=c1, type=EdgeType.RELATED_TO, dst=c1)],
        "use after remove": [RemoveNode(id=person),
                             AddEdge(src=person, type=EdgeType.PARTICIPATES, dst=ev[0])],
        "valid then invalid": [AddNode(ref="ok", kind=P, text="Valid person"),
                               AddEdge(src="ok", type=EdgeType.PARTICIPATES, dst=ev[0]),
                               UpdateNode(id=ev[1], text="tamper")],
        # Passes validation (the src is a ref), fails while applying: partial work undone.
        "fails mid-apply": [AddNode(ref="late", kind=P, text="Late person"),
                            AddEdge(src="late", type=EdgeType.PARTICIPATES, dst=ev[0]),
                            RemoveEdge(src="late", type=EdgeType.MENTIONS, dst=ev[0])],
        "too many removals": [RemoveEdge(src=ev[0], type=EdgeType.GROUNDS, dst=c1)] * 21,
        "too many operations": [AddNode(ref=f"p{i}", kind=P, text=f"P{i}") for i in range(201)],
        "other namespace": UpdatePlan(namespace=OTHER, operations=[
            AddNode(ref="x", kind=P, text="Intruder")]),
    }


_CASES = list(_invalid_plans(*([["e0", "e1"]] * 2), "c1", "c2", "p", "a").keys())


@pytest.mark.parametrize("case", _CASES)
def test_invalid_plan_is_rejected_and_changes_nothing(mem: Memory, case: str) -> None:
    ev, evb, originals = seed_events(mem)
    c1 = _concept(mem, "Running", ev[:2])
    c2 = _concept(mem, "Chess club", [ev[3]])
    c3 = _concept(mem, "Board games", [ev[2]])
    mem.apply(UpdatePlan(operations=[MergeNodes(keep=c2, absorb=c3)]))
    person = mem.apply(UpdatePlan(operations=[
        AddNode(ref="p", kind=NodeKind.PERSON, text="Maya"),
        AddEdge(src="p", type=EdgeType.PARTICIPATES, dst=ev[0])])).created["p"]
    plan = _invalid_plans(ev, evb, c1, c2, person, c3)[case]
    if not isinstance(plan, UpdatePlan):
        plan = UpdatePlan(operations=plan)
    before_graph, before_store = graph_state(mem.graph(NS)), export_text(mem)
    before_b = export_text(mem, OTHER)
    with pytest.raises(PlanError):
        mem.apply(plan)
    assert_same_graph(graph_state(mem.graph(NS)), before_graph)
    assert export_text(mem) == before_store
    assert export_text(mem, OTHER) == before_b
    check_invariants(mem, ev, originals)
    # The graph is usable afterwards: no transaction was left open.
    assert not mem.graph(NS).in_transaction
    mem.apply(UpdatePlan(operations=[AddNode(ref="z", kind=NodeKind.PERSON, text="Zoe")]))


def test_near_duplicate_concept_becomes_reinforcement(mem: Memory) -> None:
    ev, _, _ = seed_events(mem)
    c = _concept(mem, "Running", [ev[0]])
    before = mem.get(c)
    r = mem.apply(UpdatePlan(operations=[
        AddNode(ref="dup", kind=NodeKind.CONCEPT, text="running", grounded_in=[ev[1]]),
        AddEdge(src=ev[2], type=EdgeType.RELATED_TO, dst="dup")]))
    assert r.created == {}, "a second concept was created"
    assert r.reinforced == [c]
    g = mem.graph(NS)
    assert list(g.of_kind(NodeKind.CONCEPT)) == [c]
    after = mem.get(c)
    assert after.attrs["strength"] == pytest.approx(before.attrs["strength"] + 0.1)
    assert set(after.grounded_in) == {ev[0], ev[1]}
    assert g.edge(ev[1], EdgeType.REINFORCES, c) is not None
    assert g.edge(ev[1], EdgeType.REINFORCES, c).weight == pytest.approx(
        ONTOLOGY[EdgeType.REINFORCES].prior)
    # Later operations on the ref land on the existing concept.
    assert g.edge(ev[2], EdgeType.RELATED_TO, c) is not None
    # The centroid moved towards the new event.
    v0, v1 = g.event_vectors.get(ev[0]), g.event_vectors.get(ev[1])
    expected = (v0 + v1) / np.linalg.norm(v0 + v1)
    np.testing.assert_allclose(g.node_vectors.get(c), expected, atol=1e-5)
    assert_same_graph(graph_state(g), fresh_graph_state(mem, mem.test_path))  # type: ignore[attr-defined]


def test_orphan_concept_and_intent_get_grounds_edges(mem: Memory) -> None:
    ev, _, _ = seed_events(mem)
    r = mem.apply(UpdatePlan(operations=[
        AddNode(ref="c", kind=NodeKind.CONCEPT, text="Chess", grounded_in=[ev[2], ev[3]]),
        AddNode(ref="i", kind=NodeKind.INTENT, text="Go to chess club", grounded_in=[ev[3]])]))
    c, i = r.created["c"], r.created["i"]
    assert set(r.repaired) == {c, i}
    g = mem.graph(NS)
    assert {(e.src, e.type) for e in g.in_edges(c)} == {(ev[2], EdgeType.GROUNDS),
                                                         (ev[3], EdgeType.GROUNDS)}
    assert {(e.src, e.type) for e in g.in_edges(i)} == {(ev[3], EdgeType.GROUNDS)}
    assert all(e.weight == ONTOLOGY[EdgeType.GROUNDS].prior for e in g.in_edges(c))
    # A concept that has an edge is not "repaired".
    r2 = mem.apply(UpdatePlan(operations=[
        AddNode(ref="c", kind=NodeKind.CONCEPT, text="Paris travel", grounded_in=[ev[2]]),
        AddEdge(src="c", type=EdgeType.RELATED_TO, dst=c)]))
    assert r2.repaired == []
    assert list(g.in_edges(r2.created["c"])) == []
    # Removing a concept's last edge brings the repair back.
    c2 = r2.created["c"]
    r3 = mem.apply(UpdatePlan(operations=[RemoveEdge(src=c2, type=EdgeType.RELATED_TO, dst=c)]))
    assert r3.repaired == [c2]
    assert g.edge(ev[2], EdgeType.GROUNDS, c2) is not None
    assert_same_graph(graph_state(g), fresh_graph_state(mem, mem.test_path))  # type: ignore[attr-defined]


def test_merge_nodes_moves_edges_aliases_and_provenance(mem: Memory) -> None:
    ev, _, originals = seed_events(mem)
    keep = _concept(mem, "Running", [ev[0]])
    absorb = _concept(mem, "Jogging by the river", [ev[1]])
    other = _concept(mem, "Chess club", [ev[3]])
    mem.apply(UpdatePlan(operations=[
        AddEdge(src=absorb, type=EdgeType.PART_OF, dst=other, weight=0.4),
        AddEdge(src=keep, type=EdgeType.PART_OF, dst=other, weight=0.2),
        AddEdge(src=ev[2], type=EdgeType.MENTIONS, dst=absorb),
        UpdateNode(id=absorb, attrs={"aliases": ["jog"]})]))
    mem.apply(UpdatePlan(operations=[MergeNodes(keep=keep, absorb=absorb, reasoning="same")]))
    g = mem.graph(NS)
    assert absorb not in g.nodes
    survivor = mem.get(keep)
    assert mem.get(absorb).id == keep, "the absorbed id must resolve to the survivor"
    assert set(survivor.grounded_in) == {ev[0], ev[1]}
    assert {"Jogging by the river", "jog"} <= set(survivor.attrs["aliases"])
    assert "Running" not in survivor.attrs["aliases"]
    # Edges moved; parallel edges keep the max weight.
    assert g.edge(ev[1], EdgeType.GROUNDS, keep) is not None
    assert g.edge(ev[2], EdgeType.MENTIONS, keep) is not None
    assert g.edge(keep, EdgeType.PART_OF, other).weight == pytest.approx(0.4)
    assert not any(absorb in (e.src, e.dst) for e in g.all_edges())
    assert survivor.attrs["event_count"] == 2
    check_invariants(mem, ev, originals)
    # A label matching the absorbed name is now recognised as the survivor.
    r = mem.apply(UpdatePlan(operations=[AddNode(ref="x", kind=NodeKind.CONCEPT,
                                                 text="jogging by the river!",
                                                 grounded_in=[ev[2]])]))
    assert r.reinforced == [keep]
    # History of the absorbed id still answers, through the survivor.
    assert any(h.op == "MERGE_NODES" for h in mem.history(absorb))
    # Reloaded from the store: same graph, alias included.
    assert_same_graph(graph_state(g), fresh_graph_state(mem, mem.test_path))  # type: ignore[attr-defined]
    if mem.test_path is not None:  # type: ignore[attr-defined]
        m2 = Memory.open(mem.test_path, namespace=NS,  # type: ignore[attr-defined]
                         planner=None, embedder=None)
        try:
            assert m2.get(absorb).id == keep
        finally:
            m2.close()


# ------------------------------------------------------------ store failure rollback
def _valid_busy_plan(ev: list[str], c: str) -> UpdatePlan:
    return UpdatePlan(operations=[
        AddNode(ref="n", kind=NodeKind.CONCEPT, text="Paris trip", grounded_in=[ev[2]]),
        AddNode(ref="dup", kind=NodeKind.CONCEPT, text="running", grounded_in=[ev[1]]),
        AddNode(ref="p", kind=NodeKind.PERSON, text="Maya"),
        AddEdge(src="p", type=EdgeType.PARTICIPATES, dst=ev[0]),
        UpdateNode(id=c, attrs={"summary": "runs"}),
        RemoveEdge(src=ev[0], type=EdgeType.GROUNDS, dst=c)])


def test_store_failure_mid_commit_rolls_back_graph(mem: Memory, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    ev, _, originals = seed_events(mem)
    c = _concept(mem, "Running", [ev[0]])
    other = _concept(mem, "Chess", [ev[3]])
    mem.apply(UpdatePlan(operations=[MergeNodes(keep=c, absorb=other)]))
    g = mem.graph(NS)
    before_graph, before_store, version = graph_state(g), export_text(mem), g.version
    real_commit = mem.store.commit
    calls = []

    def failing_commit(namespace: str, changes: Any, *, cursor: int | None = None) -> None:
        calls.append(changes)
        # Write everything inside an outer transaction, then fail: nothing may stick.
        with mem.store._tx():  # type: ignore[attr-defined]
            real_commit(namespace, changes, cursor=cursor)
            raise StoreError("disk full (injected)")

    monkeypatch.setattr(mem.store, "commit", failing_commit)
    with pytest.raises(StoreError):
        mem.apply(_valid_busy_plan(ev, c))
    assert calls and not calls[0].empty(), "the plan did reach the store"
    assert_same_graph(graph_state(g), before_graph)
    assert g.version == version and not g.in_transaction
    monkeypatch.setattr(mem.store, "commit", real_commit)
    assert export_text(mem) == before_store
    check_invariants(mem, ev, originals)
    # The same plan applies cleanly afterwards.
    r = mem.apply(_valid_busy_plan(ev, c))
    assert r.reinforced == [c]
    assert_same_graph(graph_state(g), fresh_graph_state(mem, mem.test_path))  # type: ignore[attr-defined]


def test_real_sqlite_failure_rolls_back_graph(tmp_path: Path) -> None:
    """A genuine SQLite error half-way through the commit (a trigger on the op log)."""
    m = open_memory(tmp_path / "t.db")
    try:
        ev, _, originals = seed_events(m)
        c = _concept(m, "Running", [ev[0]])
        g = m.graph(NS)
        before_graph, before_store = graph_state(g), export_text(m)
        m.store._db.execute(  # type: ignore[attr-defined]
            "CREATE TRIGGER fail_oplog BEFORE INSERT ON oplog "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
        with pytest.raises(StoreError, match="injected failure"):
            m.apply(_valid_busy_plan(ev, c))
        assert_same_graph(graph_state(g), before_graph)
        m.store._db.execute("DROP TRIGGER fail_oplog")  # type: ignore[attr-defined]
        assert export_text(m) == before_store
        assert_same_graph(graph_state(g), fresh_graph_state(m, tmp_path / "t.db"))
        check_invariants(m, ev, originals)
    finally:
        m.close()


def test_accepted_plan_writes_op_log(mem: Memory) -> None:
    ev, _, _ = seed_events(mem)
    r = mem.apply(UpdatePlan(reasoning="plan-level why", operations=[
        AddNode(ref="c", kind=NodeKind.CONCEPT, text="Running", grounded_in=[ev[0]],
                reasoning="op-level why")]))
    c = r.created["c"]
    hist = mem.history(c)
    adds = [h for h in hist if h.op == "ADD_NODE"]
    assert len(adds) == 1 and adds[0].plan_id == r.plan_id
    assert adds[0].reasoning == "op-level why" and adds[0].before is None
    assert adds[0].after["text"] == "Running"
    assert any(h.op == "ADD_EDGE" and h.reasoning == "orphan repair" for h in hist)
    seqs = [h.seq for h in hist]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


# ------------------------------------------------------------------------ known bugs
def test_merge_with_near_duplicate_ref_does_not_delete_the_concept(mem: Memory) -> None:
    ev, _, _ = seed_events(mem)
    c = _concept(mem, "Running", [ev[0]])
    plan = UpdatePlan(operations=[
        AddNode(ref="dup", kind=NodeKind.CONCEPT, text="running", grounded_in=[ev[1]]),
        MergeNodes(keep=c, absorb="dup")])
    try:
        mem.apply(plan)
    except PlanError:
        pass
    assert mem.get(c).id == c
    assert all(old != new for old, new in mem.graph(NS).aliases.items())


@pytest.mark.parametrize("attrs", [{"aliases": 5}, {"aliases": [1]}, {"strength": "high"},
                                   {"event_count": "x"}],
                         ids=["aliases-int", "aliases-list-int", "strength-str", "count-str"])
def test_attr_types_cannot_poison_later_plans(mem: Memory, attrs: dict[str, Any]) -> None:
    ev, _, _ = seed_events(mem)
    try:
        mem.apply(UpdatePlan(operations=[
            AddNode(ref="c", kind=NodeKind.CONCEPT, text="Swimming pool",
                    grounded_in=[ev[0]], attrs=attrs)]))
    except PlanError:
        return  # rejected up front: fine
    # An ordinary plan afterwards (a near-duplicate from a new event) must not crash.
    try:
        mem.apply(UpdatePlan(operations=[
            AddNode(ref="d", kind=NodeKind.CONCEPT, text="swimming pools",
                    grounded_in=[ev[1]])]))
    except PlanError:
        pass


def test_label_similarity_with_a_floor_decides_as_the_exact_ratio() -> None:
    """The cheap bounds only answer pairs that cannot reach the floor: every answer at or
    above the floor is difflib's exact ratio, every answer below it is an upper bound."""
    import difflib
    import random

    from enfold.write.apply import label_similarity, normalize_label

    rng = random.Random(2)
    words = ["renew", "passport", "send", "budget", "Omar", "Friday", "keys", "landlord",
             "submit", "report", "review", "slides", "call", "dentist", "book", "flights",
             "pay", "invoice"]
    labels = [" ".join(rng.sample(words, rng.randint(1, 8))) for _ in range(120)]
    for a in labels[:40]:
        for b in labels:
            na, nb = normalize_label(a), normalize_label(b)
            exact = 1.0 if na == nb else difflib.SequenceMatcher(None, na, nb).ratio()
            for floor in (0.0, 0.5, 0.85):
                got = label_similarity(a, b, floor)
                assert (got >= floor) == (exact >= floor)
                assert got >= exact - 1e-12
                if got >= floor:
                    assert got == pytest.approx(exact)


def test_the_plan_limits_are_the_callers_settings(mem: Memory) -> None:
    """How many removals a plan may carry and how large a node's attributes may be are
    settings the executor reads, not constants: the same plan passes or fails by them."""
    from enfold.settings import Settings
    from enfold.write.apply import validate_plan

    ev, _, _ = seed_events(mem)
    c1 = _concept(mem, "Running", ev[:2])
    g = mem.graph(NS)
    removals = UpdatePlan(operations=[RemoveEdge(src=ev[0], type=EdgeType.GROUNDS, dst=c1)] * 3)
    assert validate_plan(removals, g, Settings(max_removals_per_plan=3)) == []
    assert any("removes 3 items" in e
               for e in validate_plan(removals, g, Settings(max_removals_per_plan=2)))
    big = UpdatePlan(operations=[UpdateNode(id=c1, attrs={"summary": "x" * 200})])
    assert validate_plan(big, g, Settings()) == []
    assert any("attrs exceed 100 bytes" in e
               for e in validate_plan(big, g, Settings(max_attrs_bytes=100)))
