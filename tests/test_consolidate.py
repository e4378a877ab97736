"""Consolidation (SPEC §6): the structural debts, fact consolidation, claim reconciliation
and the incremental scheduling, checked on their invariants.

* after any pass every event is present and still reachable from each concept and fact it
  grounded; a merge never drops a provenance edge; decay never removes an event or a
  provenance edge; a second full pass right after the first changes nothing;
* a knowledge update ("I love my job" in March, "I hate this job" in June) leaves two claims,
  the newer current and the older superseded, both retrievable with their history;
* claims of different holders never merge; facts form from three events of one person and
  one concept within the window and grow with later ones;
* an incremental pass visits the region, not the graph.

Hand-made graphs are built through ``Memory.apply`` on a memory without a planner, so that
nothing but the plan decides their shape; end-to-end tests use the local planner.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest

from enfold import (
    AddEdge,
    AddNode,
    EdgeType,
    LLMError,
    MergeNodes,
    NodeKind,
    Settings,
    StoreError,
    UpdateNode,
    UpdatePlan,
)
from enfold.bench.perf import synthetic_events
from enfold.consolidate.clock import PassClock, Stamp
from enfold.consolidate.decay import decay_edges, decay_reference
from enfold.consolidate.merge import _Labels, duplicate_pairs_reference, find_duplicate
from enfold.consolidate.run import ConsolidationReport, consolidate, run_pass
from enfold.consolidate.schedule import Scheduler
from enfold.graph import WorkingGraph
from enfold.memory import Memory
from enfold.model import ONTOLOGY

DAY = 86_400.0
HOUR = 3_600.0
T0 = 1_709_280_000.0  # 2024-03-01


# --------------------------------------------------------------------------- helpers
def bare(settings: Settings | None = None) -> Memory:
    """A memory whose events are admitted but not planned: plans alone shape the graph."""
    return Memory.open("memory:", embedder="hash", planner=None, settings=settings)


def local(settings: Settings | None = None) -> Memory:
    return Memory.open("memory:", embedder="hash", planner="local", settings=settings)


def full_pass(m: Memory, **kw: Any) -> ConsolidationReport:
    return run_pass(m.graph(), m.store, m.settings, full=True,
                    embedder_name=getattr(m.embedder, "name", None), **kw)


def incremental(m: Memory, **kw: Any) -> ConsolidationReport:
    return run_pass(m.graph(), m.store, m.settings,
                    embedder_name=getattr(m.embedder, "name", None), **kw)


def snapshot(g: WorkingGraph) -> tuple[dict[str, Any], dict[Any, Any]]:
    return ({i: n.to_dict() for i, n in g.nodes.items()},
            {e.key: e.to_dict() for e in g.all_edges()})


def concept_plan(events: list[str], label: str, *, person: str | None = None,
                 person_ref: str | None = None, ref: str = "c") -> UpdatePlan:
    """A concept grounded in ``events`` (GROUNDS each), optionally with a speaker who
    PARTICIPATES in each (``person`` a new name, or ``person_ref`` an existing id)."""
    ops: list[Any] = [AddNode(ref=ref, kind=NodeKind.CONCEPT, text=label, grounded_in=events)]
    ops += [AddEdge(src=e, dst=ref, type=EdgeType.GROUNDS) for e in events]
    who = person_ref
    if person is not None:
        ops.append(AddNode(ref="p", kind=NodeKind.PERSON, text=person))
        who = "p"
    if who is not None:
        ops += [AddEdge(src=who, dst=e, type=EdgeType.PARTICIPATES) for e in events]
    return UpdatePlan(operations=ops)


_EVIDENCE = (EdgeType.GROUNDS, EdgeType.REINFORCES, EdgeType.SUPPORTED_BY, EdgeType.PART_OF)


def reachable(g: WorkingGraph, start: str, target: str, depth: int = 3) -> bool:
    """``target`` can be reached from ``start`` along evidence edges (either direction)."""
    frontier, seen = {start}, {start}
    for _ in range(depth):
        nxt = {o for n in frontier for o, e in g.neighbors(n) if e.type in _EVIDENCE} - seen
        if target in nxt:
            return True
        seen |= nxt
        frontier = nxt
    return False


def assert_grounding_reachable(g: WorkingGraph) -> None:
    for kind in (NodeKind.CONCEPT, NodeKind.FACT):
        for nid in g.of_kind(kind):
            for ev in g.nodes[nid].grounded_in:
                assert ev in g.by_kind[NodeKind.EVENT], f"{nid} grounded in a missing {ev}"
                assert reachable(g, nid, ev), f"{ev} unreachable from {kind.value} {nid}"


def provenance_edges(g: WorkingGraph) -> set[tuple[str, EdgeType, str]]:
    return {e.key for e in g.all_edges() if ONTOLOGY[e.type].provenance}


@pytest.fixture(scope="module")
def stream() -> list[dict[str, Any]]:
    return list(synthetic_events(320, seed=3))


# ----------------------------------------------------------------- invariants, e2e
def test_full_pass_keeps_events_and_grounding_and_is_idempotent(stream: list[dict[str, Any]]
                                                                ) -> None:
    m = local()
    m.add_many(stream)
    g = m.graph()
    events = set(g.of_kind(NodeKind.EVENT))
    prov = provenance_edges(g)
    assert_grounding_reachable(g)
    report = full_pass(m)
    assert report.full and report.changed > 0
    assert report.facts > 0 and report.decayed > 0
    assert set(g.of_kind(NodeKind.EVENT)) == events
    assert_grounding_reachable(g)
    # Provenance edges survive (endpoints follow merges); none fell below the floor.
    after = provenance_edges(g)
    for src, t, dst in prov:
        assert (g.resolve(src), t, g.resolve(dst)) in after
    floor = m.settings.provenance_floor
    assert all(g.edge(*k).weight >= floor - 1e-9 for k in after)  # type: ignore[union-attr]
    # A second full pass right after the first changes nothing.
    before = snapshot(g)
    again = full_pass(m)
    assert again.changed == 0, again.to_dict()
    assert snapshot(g) == before


def test_store_and_graph_agree_after_a_pass(tmp_path: Path, stream: list[dict[str, Any]]
                                           ) -> None:
    db = tmp_path / "m.db"
    m = Memory.open(db, embedder="hash", planner="local")
    m.add_many(stream[:150])
    full_pass(m)
    g = m.graph()
    m2 = Memory.open(db, planner=None, embedder=None)
    h = m2.graph()
    assert snapshot(h) == snapshot(g)
    assert set(h.aliases.items()) == set(g.aliases.items())
    m.close()
    m2.close()


# ----------------------------------------------------------------------- compression
def test_merge_moves_every_provenance_edge_and_keeps_the_absorbed_id() -> None:
    m = bare()
    texts = ["Long run along the river", "Tempo pace felt easy today",
             "Bike lights died on the way home", "Flat tyre on the commute",
             "New panniers for the bike"]
    ev = [m.add(t, ts=T0 + i * HOUR, source="Maya") for i, t in enumerate(texts)]
    m.apply(concept_plan(ev[:2], "Marathon training"))
    m.apply(concept_plan(ev[2:], "Cycling commute", ref="d"))
    g = m.graph()
    a, b = sorted(g.of_kind(NodeKind.CONCEPT), key=lambda c: len(g.nodes[c].grounded_in))
    # A rename (as an LLM plan may do) makes b a duplicate the executor did not see coming.
    m.apply(UpdatePlan(operations=[UpdateNode(id=b, text="marathon training!")]))
    prov = provenance_edges(g)
    report = full_pass(m)
    assert report.merged == 1
    # b has three events to a's two: b survives, a resolves to it.
    assert a not in g.nodes and g.resolve(a) == b
    assert m.get(a).id == b
    survivor = g.nodes[b]
    assert set(survivor.grounded_in) == set(ev)
    assert "Marathon training" in survivor.attrs["aliases"]
    after = provenance_edges(g)
    assert {(g.resolve(s), t, g.resolve(d)) for s, t, d in prov} <= after
    assert any(r.op == "MERGE_NODES" for r in m.history(a))


def test_parent_theme_never_merges_into_its_child() -> None:
    m = bare()
    ev = [m.add(f"running note {i}", ts=T0 + i * HOUR) for i in range(4)]
    m.apply(concept_plan(ev[:2], "Running"))
    g = m.graph()
    child = next(iter(g.of_kind(NodeKind.CONCEPT)))
    m.apply(UpdatePlan(operations=[
        AddNode(ref="parent", kind=NodeKind.CONCEPT, text="Sport", grounded_in=ev,
                attrs={"level": 1}),
        AddEdge(src=child, dst="parent", type=EdgeType.PART_OF)]))
    parent = next(c for c in g.of_kind(NodeKind.CONCEPT) if c != child)
    m.apply(UpdatePlan(operations=[UpdateNode(id=parent, text="Running")]))
    # Same label, and the same level too: still never merged along PART_OF.
    m.apply(UpdatePlan(operations=[UpdateNode(id=child, attrs={"level": 1})]))
    assert full_pass(m).merged == 0
    assert len(list(g.of_kind(NodeKind.CONCEPT))) == 2


PLACEHOLDERS = ["apple", "river", "cloud", "stone", "piano", "tiger", "ocean", "maple", "ember",
                "quartz"]


def test_fast_duplicate_search_matches_the_reference() -> None:
    m = bare()
    labels = ["Sourdough baking", "sourdough  baking", "Baking sourdough", "Kitchen renovation",
              "kitchen renovations", "Tax return", "Chess improvement", "Chess improvment",
              "Garden", "Bike commute"]
    for i, label in enumerate(labels):
        evs = [m.add(f"{word} {word}{j}", ts=T0 + (10 * i + j) * HOUR)
               for j, word in enumerate((f"alpha{i}", f"omega{i}"))]
        m.apply(UpdatePlan(operations=[
            AddNode(ref="c", kind=NodeKind.CONCEPT, text=PLACEHOLDERS[i], grounded_in=evs),
            *(AddEdge(src=e, dst="c", type=EdgeType.GROUNDS) for e in evs)]))
    g = m.graph()
    # Rename afterwards (the executor would have turned duplicates into reinforcement).
    ordered = sorted(g.of_kind(NodeKind.CONCEPT), key=lambda c: g.nodes[c].created_at)
    m.apply(UpdatePlan(operations=[UpdateNode(id=cid, text=label)
                                   for cid, label in zip(ordered, labels)]))
    assert len(ordered) == len(labels)
    s = m.settings
    pairs = duplicate_pairs_reference(g, s)
    assert pairs, "the fixture has duplicates"
    def partnered() -> set[str]:
        labels_index = _Labels.of(g)  # kept across calls, brought in step each time
        return {c for c in g.of_kind(NodeKind.CONCEPT)
                if find_duplicate(g, s, c, labels_index) is not None}

    assert partnered() == {c for pair in pairs for c in pair}
    # Renamed (a concept gains a twin), renamed inside a transaction that is rolled back,
    # and merged away: the kept index answers as the reference each time.
    m.apply(UpdatePlan(operations=[UpdateNode(id=ordered[9], text="Garden")]))
    assert partnered() == {c for pair in duplicate_pairs_reference(g, s) for c in pair}
    assert ordered[9] in partnered()
    g.begin()
    g.put_node(g.nodes[ordered[9]].with_changes(text="Bike commute"))
    assert ordered[9] not in partnered()
    g.rollback()
    assert ordered[9] in partnered()
    m.apply(UpdatePlan(operations=[MergeNodes(keep=ordered[8], absorb=ordered[9])]))
    assert partnered() == {c for pair in duplicate_pairs_reference(g, s) for c in pair}


# ----------------------------------------------------------------------------- decay
def test_decay_floors_provenance_archives_derived_and_never_touches_events() -> None:
    m = bare()
    old = m.add("Jon called about the old project", ts=T0, source="Maya")
    new = m.add("Quick note on the new project", ts=T0 + 60 * DAY, source="Maya")
    m.apply(UpdatePlan(operations=[
        AddNode(ref="p", kind=NodeKind.PERSON, text="Maya"),
        AddNode(ref="j", kind=NodeKind.PERSON, text="Jon"),
        AddEdge(src="p", dst=old, type=EdgeType.PARTICIPATES),
        AddEdge(src="p", dst=new, type=EdgeType.PARTICIPATES),
        AddEdge(src=old, dst="j", type=EdgeType.MENTIONS),
        AddEdge(src=new, dst="j", type=EdgeType.MENTIONS)]))
    g = m.graph()
    jon = next(p for p in g.of_kind(NodeKind.PERSON) if g.nodes[p].text == "Jon")
    events = {i: g.nodes[i] for i in g.of_kind(NodeKind.EVENT)}
    prov = provenance_edges(g)
    report = full_pass(m)
    assert report.pruned == 1 and report.decayed == 1  # the old PARTICIPATES, to its floor
    assert {i: g.nodes[i] for i in g.of_kind(NodeKind.EVENT)} == events
    assert provenance_edges(g) == prov
    for key in prov:  # 60 days of decay would take 0.8 far below the floor
        assert g.edge(*key).weight >= m.settings.provenance_floor  # type: ignore[union-attr]
    # The old mention is archived, not lost: its full before-state is in the op log.
    assert g.edge(old, EdgeType.MENTIONS, jon) is None
    archived = [r for r in m.history(jon) if r.op == "ARCHIVE_EDGE"]
    assert archived and archived[0].before is not None
    assert archived[0].before["src"] == old and archived[0].before["weight"] == pytest.approx(0.6)
    # The fresh mention decayed by nothing (it happened at the stream's "now").
    assert g.edge(new, EdgeType.MENTIONS, jon).weight == pytest.approx(0.6)  # type: ignore[union-attr]


def test_a_pending_deadline_does_not_decay() -> None:
    m = bare()
    old = m.add("The grant is due on May 10", ts=T0)
    m.add("Unrelated note much later", ts=T0 + 60 * DAY)
    due = T0 + 70 * DAY
    m.apply(UpdatePlan(operations=[
        AddNode(ref="t", kind=NodeKind.TIME, text="2024-05-10",
                attrs={"value": "2024-05-10", "start": due, "end": due + DAY}),
        AddEdge(src=old, dst="t", type=EdgeType.MENTIONS)]))
    g = m.graph()
    (key,) = [e.key for e in g.all_edges()]
    full_pass(m)
    assert g.edge(*key).weight == pytest.approx(0.6)  # type: ignore[union-attr]
    # Once the day has passed, the mention ages like any other.
    full_pass(m, now_ts=due + 30 * DAY)
    assert g.edge(*key) is None


def test_the_pass_clock_keeps_the_settings_samples() -> None:
    clock = PassClock()
    for i in range(10):
        clock.sample(float(i), float(i), 4)
    assert len(clock.walls) == 4 and clock.walls[-2:] == [8.0, 9.0]  # the latest half kept
    kept = []
    for settings in (Settings(), Settings().with_(pass_clock_samples=4)):
        m = bare(settings)
        ev = m.add("A note that mentions Jon", ts=T0)
        m.apply(UpdatePlan(operations=[AddNode(ref="j", kind=NodeKind.PERSON, text="Jon"),
                                       AddEdge(src=ev, dst="j", type=EdgeType.MENTIONS)]))
        for day in range(1, 11):  # each pass decays the mention: each is recorded
            full_pass(m, now_ts=T0 + day * DAY)
            time.sleep(0.002)  # each pass at its own wall time
        kept.append(len(m.graph().meta["consolidate.clock"]))
        m.close()
    assert kept == [10, 4]


def test_decay_follows_the_stream_clock_and_telescopes() -> None:
    m = bare()
    ev = m.add("A note that mentions Jon", ts=T0)
    m.apply(UpdatePlan(operations=[AddNode(ref="j", kind=NodeKind.PERSON, text="Jon"),
                                   AddEdge(src=ev, dst="j", type=EdgeType.MENTIONS)]))
    g = m.graph()
    key = next(e.key for e in g.all_edges())
    s = m.settings

    def step(now_ts: float, at: float) -> None:
        clock = PassClock.of(g)
        clock.sample(at, now_ts)
        g.begin()
        decay_edges(g, s, Stamp(at=at, now_ts=now_ts, clock=clock))
        g.set_meta("consolidate.clock", clock.to_meta())
        g.commit()

    wall = time.time()  # passes run seconds apart on the wall: only stream time counts
    step(T0 + 24 * HOUR, at=wall + 1)
    step(T0 + 72 * HOUR, at=wall + 2)
    step(T0 + 72 * HOUR, at=wall + 3)  # same stream time: nothing more
    expected = decay_reference(0.6, 72.0, s.decay_delta, None)
    assert g.edge(*key).weight == pytest.approx(expected)  # type: ignore[union-attr]
    assert expected == pytest.approx(0.6 * math.exp(-0.005 * 72))


def test_incremental_decay_drains_the_queue_to_what_the_full_pass_would_leave(
        stream: list[dict[str, Any]]) -> None:
    m = local()
    m.add_many(stream[:80])
    g = m.graph()
    full_pass(m)
    sched = Scheduler.of(g, m.settings)
    assert sched.newest_ts is not None
    later = sched.newest_ts + 200 * DAY  # long enough for every edge to reach its floor
    budget, rounds, edges = 40, 0, g.edge_count()
    while True:
        g.begin()
        report = consolidate(g, m.settings, region=[], now_ts=later, decay_budget=budget)
        m.store.commit(g.namespace, g.changes())
        g.commit()
        assert report.visited["edges"] <= budget
        rounds += 1
        if report.visited["edges"] == 0:
            break
        assert rounds <= edges // budget + 5, "the queue does not drain"
    # Left in the queue: only edges waiting for a time anchor that is still ahead.
    assert all(priority > later for priority, _ in sched.decay().heap)
    s = m.settings

    def pending(e: Any) -> bool:  # touches a time anchor still ahead of ``later``
        return any(g.nodes[n].kind is NodeKind.TIME
                   and float(g.nodes[n].attrs.get("end") or 0) >= later for n in (e.src, e.dst))

    for e in g.all_edges():
        if pending(e):
            continue
        floor = s.provenance_floor if ONTOLOGY[e.type].provenance else s.prune_floor
        assert e.weight == pytest.approx(floor), e
    # The full pass agrees: nothing is left to decay at that time.
    assert full_pass(m, now_ts=later).decayed == 0


# ------------------------------------------------------------------------ completion
def test_completion_links_orphan_concepts_to_their_neighbours() -> None:
    m = bare()
    a = [m.add(f"sourdough bread baking starter flour {i}", ts=T0 + i * HOUR) for i in range(2)]
    b = [m.add(f"sourdough bread loaf baking oven {i}", ts=T0 + (5 + i) * HOUR)
         for i in range(2)]
    m.apply(concept_plan(a, "Starter"))
    m.apply(concept_plan(b, "Loaf", ref="d"))
    g = m.graph()
    report = full_pass(m, )
    x, y = sorted(g.of_kind(NodeKind.CONCEPT))
    linked = g.edge(x, EdgeType.RELATED_TO, y) or g.edge(y, EdgeType.RELATED_TO, x)
    assert report.linked >= 1 and linked is not None
    assert full_pass(m).linked == 0


# ----------------------------------------------------------------------------- facts
def test_fact_forms_from_three_events_and_is_extended_by_a_fourth() -> None:
    m = bare()
    ev = [m.add(text, ts=T0 + d * DAY, source="Maya") for d, text in (
        (0, "Long run along the river, 18k at tempo pace"),
        (9, "Interval session on the track before work"),
        (20, "Hill repeats in the rain, legs are tired"))]
    m.apply(concept_plan(ev[:2], "Marathon training", person="Maya"))
    g = m.graph()
    cid = next(iter(g.of_kind(NodeKind.CONCEPT)))
    maya = next(iter(g.of_kind(NodeKind.PERSON)))
    # Two events are not enough.
    assert full_pass(m).facts == 0
    m.apply(UpdatePlan(operations=[AddEdge(src=ev[2], dst=cid, type=EdgeType.REINFORCES),
                                   AddEdge(src=maya, dst=ev[2], type=EdgeType.PARTICIPATES)]))
    report = incremental(m)
    assert report.facts == 1
    (fid,) = g.of_kind(NodeKind.FACT)
    fact = g.nodes[fid]
    # A template over the whole support, not one event's words under a name.
    assert fact.text.startswith("Maya · Marathon training: 3 accounts, ")
    assert not any(g.nodes[e].text in fact.text for e in ev)
    assert fact.attrs["statement_by"] == "template" and fact.attrs["phrases"]
    assert fact.attrs["first"] == T0 and fact.attrs["last"] == T0 + 20 * DAY
    assert fact.attrs["support"] == 3 and set(fact.grounded_in) == set(ev)
    assert fact.attrs["key"] == f"{maya}|{cid}"
    assert all(g.edge(fid, EdgeType.SUPPORTED_BY, e) for e in ev)
    # A fourth event within the window extends the same fact.
    e4 = m.add("Easy recovery jog, the race is close", ts=T0 + 35 * DAY, source="Maya")
    m.apply(UpdatePlan(operations=[AddEdge(src=e4, dst=cid, type=EdgeType.REINFORCES),
                                   AddEdge(src=maya, dst=e4, type=EdgeType.PARTICIPATES)]))
    report = incremental(m)
    assert report.facts == 0 and report.facts_extended == 1
    assert list(g.of_kind(NodeKind.FACT)) == [fid]
    fact = g.nodes[fid]
    assert fact.attrs["support"] == 4 and fact.attrs["last"] == T0 + 35 * DAY
    assert fact.text.startswith("Maya · Marathon training: 4 accounts, ")  # it follows
    assert e4 in fact.grounded_in and g.edge(fid, EdgeType.SUPPORTED_BY, e4)
    assert [r.op for r in m.history(fid)][:1] == ["ADD_NODE"]
    assert_grounding_reachable(g)
    assert full_pass(m).changed == 0


def test_fact_writer_is_used_and_its_failure_falls_back() -> None:
    def make(writer: Any) -> tuple[Memory, ConsolidationReport]:
        m = bare()
        ev = [m.add(f"Piano practice, scales and etudes, day {d}", ts=T0 + d * DAY,
                    source="Ben") for d in (0, 3, 6)]
        m.apply(concept_plan(ev, "Piano practice", person="Ben"))
        return m, full_pass(m, writer=writer)

    seen: dict[str, Any] = {}

    def good(texts: list[str], *, subject: str | None, concept: str | None) -> str:
        seen.update(texts=texts, subject=subject, concept=concept)
        return "Ben practises piano every few days."

    m, report = make(good)
    (fid,) = m.graph().of_kind(NodeKind.FACT)
    assert m.graph().nodes[fid].text == "Ben practises piano every few days."
    assert seen["subject"] == "Ben" and seen["concept"] == "Piano practice"
    assert len(seen["texts"]) == 3

    def bad(texts: list[str], **_: Any) -> str:
        raise LLMError("the endpoint is down")

    m, report = make(bad)
    (fid,) = m.graph().of_kind(NodeKind.FACT)
    assert report.writer_failures == 1
    assert m.graph().nodes[fid].text.startswith("Ben · Piano practice: 3 accounts")
    assert m.graph().nodes[fid].attrs["statement_by"] == "template"


# ---------------------------------------------------------------------------- claims
def test_knowledge_update_supersedes_and_keeps_history() -> None:
    m = local()
    m.add("I love my job", ts="2024-03-05T09:00:00+00:00", source="Maya")
    m.add("I'm quitting, I hate this job", ts="2024-06-10T18:00:00+00:00", source="Maya")
    g = m.graph()
    assert len(list(g.of_kind(NodeKind.CLAIM))) == 2
    report = full_pass(m)
    assert report.claims_superseded == 1 and report.claims_merged == 0
    claims = sorted((g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)),
                    key=lambda n: n.attrs["valid_from"])
    old, new = claims
    assert old.attrs["stance"] == "positive" and new.attrs["stance"] == "negative"
    assert old.attrs["superseded_by"] == new.id
    assert new.attrs.get("superseded_by") is None and new.attrs["supersedes"] == old.id
    # Both stay retrievable, each with its history.
    assert m.get(old.id).text == old.text and m.get(new.id).text == new.text
    ops = [r.op for r in m.history(old.id)]
    assert ops[0] == "ADD_NODE" and "SUPERSEDE" in ops
    assert m.history(new.id)[0].op == "ADD_NODE"
    # Saying it again, the same way, merges into the current claim.
    m.add("Honestly I hate my job", ts="2024-06-20T18:00:00+00:00", source="Maya")
    report = incremental(m)
    assert report.claims_merged == 1
    assert len(list(g.of_kind(NodeKind.CLAIM))) == 2
    assert g.nodes[new.id].attrs["support"] == 2
    assert full_pass(m).changed == 0


def test_claims_of_different_holders_never_merge() -> None:
    m = local()
    m.add("I love my job", ts=T0, source="Maya")
    m.add("I love my job", ts=T0 + DAY, source="Ben")
    m.add("I hate my job", ts=T0 + 2 * DAY, source="Ben")
    g = m.graph()
    report = full_pass(m)
    assert report.claims_merged == 0 and report.claims_superseded == 1
    claims = [g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)]
    assert len(claims) == 3
    by_holder = {c.attrs["holder"]: c for c in claims if not c.attrs.get("superseded_by")}
    assert set(by_holder) == {"Maya", "Ben"}
    assert by_holder["Maya"].attrs.get("superseded_by") is None


# ----------------------------------------------------------------------- incremental
WORDS = ["apple", "river", "cloud", "stone", "piano", "tiger", "ocean", "maple", "ember",
         "quartz", "violin", "desert", "falcon", "garlic", "harbor", "igloo", "jungle",
         "kettle", "lantern", "meadow", "nickel", "orchid", "pepper", "rocket", "saddle"]


def test_incremental_pass_visits_only_the_region() -> None:
    m = bare()
    for i, word in enumerate(WORDS):
        evs = [m.add(f"{word} {word}{j} {word}s", ts=T0 + (3 * i + j) * HOUR, source="Maya")
               for j in range(2)]
        m.apply(concept_plan(evs, word.capitalize(), ref=f"c{i}"))
    g = m.graph()
    assert len(list(g.of_kind(NodeKind.CONCEPT))) == len(WORDS)
    first = full_pass(m)
    assert first.visited["concepts"] >= len(WORDS)
    assert incremental(m).changed == 0  # nothing dirty: an empty pass
    target = next(c for c in g.of_kind(NodeKind.CONCEPT) if g.nodes[c].text == "Violin")
    ev = m.add("violin violin7 violins once more", ts=T0 + 200 * HOUR)
    m.apply(UpdatePlan(operations=[AddEdge(src=ev, dst=target, type=EdgeType.REINFORCES)]))
    report = incremental(m)
    assert not report.full and report.region <= 6
    # compression and completion each look at the one concept touched, nothing else
    assert report.visited["concepts"] <= 2
    assert report.visited["claims"] == 0


def test_scheduler_counts_events_and_idle_time() -> None:
    m = bare(Settings().with_(consolidate_every=3, consolidate_idle_s=60.0))
    g = m.graph()
    sched = Scheduler.of(g, m.settings)
    assert not sched.tick(0, at=sched.last_activity + 1000)  # nothing dirty: never due
    t = sched.last_activity
    for i in range(2):
        sched.mark(f"x{i}")
        assert not sched.tick(1, at=t + i)
    sched.mark("x2")
    assert sched.tick(1, at=t + 2)  # the third event
    sched.take()
    sched.events_since = 0
    sched.mark("y")
    assert not sched.tick(0, at=t + 30)
    assert sched.tick(0, at=t + 2 + 61)  # idle long enough


def test_edges_written_by_any_writer_mark_the_region_dirty() -> None:
    m = bare()
    ev = [m.add(f"cycling commute {i}", ts=T0 + i * HOUR) for i in range(2)]
    g = m.graph()
    sched = Scheduler.of(g, m.settings)
    sched.take()
    m.apply(concept_plan(ev, "Cycling commute"))
    cid = next(iter(g.of_kind(NodeKind.CONCEPT)))
    assert {cid, *ev} <= set(sched.dirty)
    assert {cid, *ev} <= sched.region()


def test_failed_commit_rolls_back_graph_and_keeps_the_region_dirty() -> None:
    m = bare()
    ev = [m.add(f"marathon long run {i}", ts=T0 + i * DAY, source="Maya") for i in range(3)]
    m.apply(concept_plan(ev, "Marathon", person="Maya"))
    g = m.graph()
    sched = Scheduler.of(g, m.settings)
    before = snapshot(g)
    dirty = dict(sched.dirty)

    class FailingStore:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def commit(self, *a: Any, **k: Any) -> None:
            raise StoreError("disk full")

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    with pytest.raises(StoreError):
        run_pass(g, FailingStore(m.store), m.settings)
    assert snapshot(g) == before
    assert set(dirty) <= set(sched.dirty)
    assert incremental(m).facts == 1


def test_consolidate_runs_inside_a_caller_transaction() -> None:
    m = bare()
    ev = [m.add(f"garden tomatoes watering {i}", ts=T0 + i * DAY, source="Ann") for i in range(3)]
    m.apply(concept_plan(ev, "Garden", person="Ann"))
    g = m.graph()
    g.begin()
    report = consolidate(g, m.settings, region=ev, now_ts=T0 + 2 * DAY)
    changes = g.changes()
    g.rollback()
    assert report.facts == 1 and changes.nodes
    assert not list(g.of_kind(NodeKind.FACT))


@pytest.mark.skipif(not hasattr(Memory, "consolidate"), reason="Memory.consolidate not wired")
def test_memory_runs_passes_automatically_and_on_demand(stream: list[dict[str, Any]]) -> None:
    m = local(Settings().with_(consolidate_every=20))
    m.add_many(stream[:90])
    sched = Scheduler.of(m.graph(), m.settings)
    assert sched.passes >= 3
    assert len(sched.dirty) < 200
    wired: Any = m  # Memory.consolidate comes with the wiring patch
    report = wired.consolidate()
    assert report.full
    assert wired.consolidate().changed == 0


def test_after_a_restart_unconsolidated_events_are_dirty_again(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    m = Memory.open(db, embedder="hash", planner=None)
    first = [m.add(f"note {i}", ts=T0 + i * HOUR) for i in range(3)]
    full_pass(m)
    later = m.add("a note after the pass", ts=T0 + 10 * HOUR)
    m.close()
    m2 = Memory.open(db, embedder="hash", planner=None)
    sched = Scheduler.of(m2.graph(), m2.settings)
    assert later in sched.dirty and not set(first) & set(sched.dirty)
    m2.close()


# ----------------------------------------------------------------- grouping (issue 20)
_BREAD = ["Fed the sourdough starter with rye flour before bed.",
          "Sourdough starter doubled overnight; rye flour works.",
          "Baked the first sourdough loaf from the rye starter.",
          "Sourdough loaf crumb looked open; starter is strong now."]
_OTHER = ["Invoice 1142 paid by wire transfer.", "Parking garage closes early Sunday."]


GROUPING = Settings(group_events=True)


def test_grouping_forms_a_theme_from_unfolded_events_and_is_idempotent() -> None:
    with bare(GROUPING) as m:
        ids = m.add_many([{"text": t, "ts": T0 + i * HOUR, "source": "Ana"}
                          for i, t in enumerate([*_BREAD, *_OTHER])])
        report = full_pass(m)
        g = m.graph()
        concepts = list(g.of_kind(NodeKind.CONCEPT))
        assert report.formed == 1 and len(concepts) == 1
        theme = g.nodes[concepts[0]]
        assert set(theme.grounded_in) == set(ids[:4])  # the distractors stay unfolded
        assert "sourdough" in theme.text.lower()
        assert_grounding_reachable(g)
        again = full_pass(m)
        assert again.grouped == 0 and again.formed == 0


def test_grouping_joins_a_loose_event_to_the_theme_of_its_group() -> None:
    # Accumulation (cosine to the centroid) is kept from attaching it first.
    with bare(Settings(group_events=True, assign_threshold=0.999)) as m:
        ids = m.add_many([{"text": t, "ts": T0 + i * HOUR, "source": "Ana"}
                          for i, t in enumerate(_BREAD)])
        m.apply(concept_plan(ids[:3], "Sourdough"))
        report = full_pass(m)
        g = m.graph()
        (cid,) = g.of_kind(NodeKind.CONCEPT)
        assert report.grouped == 1 and report.reinforced == 0
        assert ids[3] in g.nodes[cid].grounded_in


def test_grouping_is_off_by_default() -> None:
    with bare() as m:
        m.add_many([{"text": t, "ts": T0 + i * HOUR, "source": "Ana"}
                    for i, t in enumerate(_BREAD)])
        report = full_pass(m)
        assert report.formed == 0 and not list(m.graph().of_kind(NodeKind.CONCEPT))
