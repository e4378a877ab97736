"""PageRank (fast path against the reference) and proactive context assembly."""

from __future__ import annotations

import random

import numpy as np
import pytest

from enfold import Memory, NodeKind, Settings
from enfold.consolidate.rank import IncrementalPageRank, pagerank_reference
from enfold.graph import WorkingGraph
from enfold.model import Edge, EdgeType, Node
from enfold.write.context import ContextAssembler, urgency


def _graph(n: int, m: int, seed: int) -> WorkingGraph:
    rnd = random.Random(seed)
    g = WorkingGraph("t")
    g.begin()
    for i in range(n):
        g.put_node(Node(f"co_{i}", "t", NodeKind.CONCEPT, f"c{i}"))
    for _ in range(m):
        a, b = rnd.sample(range(n), 2)
        g.put_edge(Edge("t", f"co_{a}", f"co_{b}", EdgeType.RELATED_TO, rnd.uniform(0.1, 1)))
    g.commit()
    return g


def _reference(g: WorkingGraph) -> dict[str, float]:
    return pagerank_reference(list(g.nodes), [(e.src, e.dst, e.weight) for e in g.all_edges()])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incremental_pagerank_matches_reference_after_updates(seed):
    g = _graph(40, 90, seed)
    pr = IncrementalPageRank(g, tol=1e-12, max_iter=2000)
    pr.refresh()
    ref = _reference(g)
    got = pr.raw()
    assert max(abs(got[k] - ref[k]) for k in ref) < 1e-8
    # change the graph: new edges, a removal, a reweighting — then a warm refresh
    rnd = random.Random(seed + 100)
    g.begin()
    edges = list(g.all_edges())
    g.remove_edge(edges[0].key)
    g.put_edge(edges[1].with_changes(weight=0.05))
    for _ in range(10):
        a, b = rnd.sample(range(40), 2)
        g.put_edge(Edge("t", f"co_{a}", f"co_{b}", EdgeType.PART_OF, 0.7))
    g.commit()
    cold_iters = pr.iterations_last
    pr.refresh()
    ref = _reference(g)
    got = pr.raw()
    assert max(abs(got[k] - ref[k]) for k in ref) < 1e-8
    assert pr.iterations_last <= cold_iters, "a warm start should not need more iterations"


def test_pagerank_follows_rollback():
    g = _graph(10, 20, 5)
    pr = IncrementalPageRank(g, tol=1e-12, max_iter=2000)
    pr.refresh()
    before = pr.raw()
    g.begin()
    g.put_edge(Edge("t", "co_1", "co_2", EdgeType.CAUSES, 1.0))
    g.rollback()
    pr.refresh()
    after = pr.raw()
    assert max(abs(before[k] - after[k]) for k in before) < 1e-9


def test_urgency_rises_linearly_in_the_last_day():
    s = Settings()
    g = WorkingGraph("t")
    g.begin()
    g.put_node(Node("in_1", "t", NodeKind.INTENT, "submit report", grounded_in=("ev_1",)))
    g.put_node(Node("ti_1", "t", NodeKind.TIME, "2026-01-02", attrs={"start": 1_000_000.0}))
    g.put_edge(Edge("t", "ti_1", "in_1", EdgeType.DEADLINE_FOR, 0.6))
    g.commit()
    assert urgency(g, "in_1", 1_000_000.0 - 48 * 3600, s) == 1.0
    assert urgency(g, "in_1", 1_000_000.0 - 24 * 3600, s) == pytest.approx(1.0)
    assert urgency(g, "in_1", 1_000_000.0 - 12 * 3600, s) == pytest.approx(1.5)
    assert urgency(g, "in_1", 1_000_000.0, s) == pytest.approx(2.0)
    assert urgency(g, "in_1", 1_000_000.0 + 3600, s) == 1.0  # a passed deadline: no boost


def test_context_tiers_are_disjoint_and_sized():
    mem = Memory.open("memory:", embedder="hash", planner="local")
    topics = ["river run miles pace", "lease landlord boxes move", "beta crash launch app",
              "candidate interview backend", "grant proposal budget"]
    for i in range(120):
        t = topics[i % 5]
        mem.add(f"{t} note {i} with detail {i % 7}", source="Maya", ts=1_790_000_000 + i * 3600)
    g = mem.graph()
    ctx_asm = ContextAssembler.of(g, mem.settings)
    ev = g.nodes[next(iter(g.of_kind(NodeKind.EVENT)))]
    ctx = ctx_asm.assemble(ev, g.event_vectors.get(ev.id))
    tiers = [ctx.immediate, ctx.working, ctx.background]
    ids = [x.id for t in tiers for x in t]
    assert len(ids) == len(set(ids)), "a node sits in one tier only"
    window = min(mem.settings.context_window, len(ids))
    assert len(ctx.immediate) <= round(0.1 * mem.settings.context_window)
    assert len(ctx.working) <= round(0.3 * mem.settings.context_window)
    assert window > 0
    # scores follow Eq. 1
    s = mem.settings
    for x in ids[:5]:
        sc = next(y for t in tiers for y in t if y.id == x)
        assert sc.score == pytest.approx(
            (s.alpha * sc.pagerank + s.beta * sc.recency + s.gamma * sc.access) * sc.urgency)
    # What the local planner asks for (no tiers, nearest concepts) is the same answer.
    lean = ctx_asm.assemble(ev, g.event_vectors.get(ev.id), tiers=False,
                            nearest=(NodeKind.CONCEPT,))
    assert not (lean.immediate or lean.working or lean.background)
    assert lean.nearest == {NodeKind.CONCEPT: ctx.nearest[NodeKind.CONCEPT]}
    assert ctx.nearest[NodeKind.CONCEPT] and lean.people == ctx.people


def test_background_tier_prefers_diversity():
    """Among equally central candidates, the background tier spreads over topics."""
    mem = Memory.open("memory:", embedder="hash", planner="local",
                      settings=Settings(context_window=10))
    g = mem.graph()
    asm = ContextAssembler.of(g, mem.settings)
    g.begin()
    rng = np.random.default_rng(0)
    base = [rng.normal(size=256) for _ in range(2)]
    for i in range(12):
        nid = f"co_{i}"
        g.put_node(Node(nid, "default", NodeKind.CONCEPT, f"c{i}", grounded_in=("ev_x",)))
        g.set_vector(nid, base[0] + 0.01 * rng.normal(size=256) if i < 9
                     else base[1] + 0.01 * rng.normal(size=256))
    g.commit()
    from enfold.write.context import Context, Scored
    ctx = Context()
    window = [Scored(f"co_{i}", 1.0, 0.5, 0.0, 0.0, 1.0) for i in range(12)]
    asm._tiers(ctx, window)
    picked = {x.id for x in ctx.background}
    assert picked & {"co_9", "co_10", "co_11"}, "the other topic should be represented"


def test_indexed_urgencies_equal_the_reference():
    """The deadline index gives the same U(v) as walking each node's edges."""
    s = Settings()
    mem = Memory.open("memory:", embedder="hash", planner="local")
    base = 1_790_000_000
    for i in range(30):
        mem.add(f"I need to send report {i} by tomorrow", source="Maya", ts=base + i * 7200)
    g = mem.graph()
    asm = ContextAssembler.of(g, s)
    from enfold.write.context import urgencies
    for now_ts in (base + 3600 * h for h in range(0, 90, 7)):
        fast = urgencies(g, asm.deadlines, now_ts, s)
        for nid in g.nodes:
            assert fast.get(nid, 1.0) == pytest.approx(urgency(g, nid, now_ts, s))
    assert any(v > 1.0 for v in urgencies(g, asm.deadlines, base + 20 * 3600, s).values())


def test_window_equals_scoring_each_node_and_sorting():
    """The array form of Eq. 1 picks the same nodes, in the same order, with the same
    scores as scoring node by node."""
    mem = Memory.open("memory:", embedder="hash", planner="local",
                      settings=Settings(context_window=25))
    base = 1_790_000_000
    topics = ["river run miles", "lease landlord move", "beta crash app", "grant budget"]
    for i in range(80):
        mem.add(f"{topics[i % 4]} note {i}; I need to file it by tomorrow" if i % 9 == 0
                else f"{topics[i % 4]} note {i}", source="Maya", ts=base + i * 5400)
    g = mem.graph()
    asm = ContextAssembler.of(g, mem.settings)
    from enfold.write.context import urgencies
    nodes = [g.nodes[i] for i in g.nodes if g.nodes[i].kind is not NodeKind.EVENT]
    for now_ts in (base + 70 * 5400, base + 90 * 5400):
        urgent = urgencies(g, asm.deadlines, now_ts, mem.settings)
        max_access = max(n.access_count for n in nodes)
        ref = sorted((asm.score(n, now_ts, max_access, urgent) for n in nodes),
                     key=lambda x: -x.score)[:25]
        fast = asm.window(nodes, now_ts, urgent)
        assert [x.id for x in fast] == [x.id for x in ref]
        for a, b in zip(fast, ref):
            assert a.score == pytest.approx(b.score, rel=1e-12)
            assert a.urgency == b.urgency


def test_context_pagerank_is_refreshed_only_for_a_reader():
    """The local planner reads no PageRank, so folding with it never runs the power
    iteration; the first reader gets scores of the graph as it is (warm-started later)."""
    from enfold.bench.perf import synthetic_events

    m = Memory.open("memory:", embedder="hash", planner="local")
    m.add_many(synthetic_events(300))
    g = m.graph()
    ctx = ContextAssembler.of(g, m.settings)
    assert ctx.since_refresh == 300 and ctx._rank.iterations_last == 0
    ref = _reference(g)
    got = ctx.rank.raw()
    assert ctx.since_refresh == 0 and ctx._rank.iterations_last > 0
    assert max(abs(got[k] - ref[k]) for k in ref) < 1e-3  # the settings' tolerance


def test_the_assembler_reads_its_callers_settings_and_rebuilds_for_new_pagerank_ones() -> None:
    g = WorkingGraph("ns")
    first = Settings()
    a = ContextAssembler.of(g, first)
    listeners = len(g.edge_listeners)
    wider = Settings(urgency_window_h=first.urgency_window_h * 2)
    b = ContextAssembler.of(g, wider)
    assert b is a and b.s is wider  # the same PageRank: only what it reads changed
    damped = Settings(pagerank_damping=0.5)
    c = ContextAssembler.of(g, damped)
    assert c is not a and c.s is damped and c._rank.damping == 0.5
    assert len(g.edge_listeners) == listeners  # the old PageRank no longer listens
    fewer = Settings(pagerank_damping=0.5, context_recent=3)
    d = ContextAssembler.of(g, fewer)
    assert d is not c and d.recent.maxlen == 3  # the recent pool is sized by the caller


def test_the_working_tiers_kind_bonus_is_a_setting():
    from enfold.write.context import Context, Scored

    mem = Memory.open("memory:", embedder="hash", planner="local")
    events = [mem.add(f"note {i} on the kiln", ts=1_790_000_000 + i * 3600) for i in range(12)]
    made = mem.apply({"operations": [{"op": "ADD_NODE", "ref": "c", "kind": "concept",
                                      "text": "kiln firing", "grounded_in": [events[0]]}]})
    concept = made.created["c"]
    g = mem.graph()
    # ten recent events fill Immediate; then an event against the concept for Working
    window = [Scored(e, 1.0, 0.0, 1.0, 0.0, 1.0) for e in events[:10]]
    window += [Scored(events[10], 0.4, 0.5, 0.5, 0.0, 1.0),  # 0.25 + 0.15
               Scored(concept, 0.4, 0.3, 0.3, 0.0, 1.0)]  # 0.15 + 0.09 + 0.2 × bonus
    orders = []
    for settings in (mem.settings, mem.settings.with_(context_concept_bonus=0.0)):
        ctx = Context()
        ContextAssembler.of(g, settings)._tiers(ctx, window)
        orders.append([x.id for x in ctx.working])
    assert orders == [[concept, events[10]], [events[10], concept]]
