"""The local planner on the bundled scenario, checked against its gold assignment."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from enfold import Memory, NodeKind
from enfold.demo import demo_events, demo_gold
from enfold.model import EdgeType

WORD = re.compile(r"[a-z]+")


def _words(*texts: str) -> set[str]:
    out: set[str] = set()
    for t in texts:
        for w in WORD.findall(t.lower()):
            out.add(w[:-1] if w.endswith("s") and len(w) > 4 else w)
    return out


@pytest.fixture(scope="module")
def folded() -> tuple[Memory, dict[str, str]]:
    pytest.importorskip("sentence_transformers")
    mem = Memory.open("memory:", embedder="minilm", planner="local")
    events = demo_events()
    ids = mem.add_many(events)
    return mem, {i: e["id"] for i, e in zip(ids, events)}


def _concepts(mem: Memory) -> list:
    g = mem.graph()
    return [g.nodes[c] for c in g.of_kind(NodeKind.CONCEPT)]


@pytest.mark.minilm
def test_every_event_folded_and_every_concept_grounded(folded):
    mem, ext = folded
    assert mem.stats()["pending"] == 0
    g = mem.graph()
    for c in _concepts(mem):
        assert c.grounded_in, c.text
        assert all(e in ext for e in c.grounded_in)
        # provenance is visible as edges too (GROUNDS / REINFORCES or PART_OF children)
        assert any(e.type in (EdgeType.GROUNDS, EdgeType.REINFORCES, EdgeType.PART_OF)
                   for e in g.edges_of(c.id))


@pytest.mark.minilm
def test_themes_found_and_named(folded):
    """Each gold theme has a concept made mostly of its events, named in its vocabulary."""
    mem, ext = folded
    gold = demo_gold()
    of_event = {e: c["id"] for c in gold["concepts"] for e in c["events"]}
    found = {}
    for c in _concepts(mem):
        if c.attrs.get("level"):
            continue  # parent themes span several gold concepts by design
        labels = Counter(of_event.get(ext[e]) for e in c.grounded_in)
        top, n = labels.most_common(1)[0]
        if top is not None and n / len(c.grounded_in) >= 0.6:
            found.setdefault(top, []).append(c)
    missing = [c["id"] for c in gold["concepts"] if c["id"] not in found]
    assert len(missing) <= 1, f"themes without a concept: {missing}"
    named = 0
    for gc in gold["concepts"]:
        for c in found.get(gc["id"], []):
            vocab = _words(gc["label"], *gc["keywords"])
            if _words(c.text, *c.attrs.get("keywords", [])) & vocab:
                named += 1
                break
    assert named >= len(found) - 1, "concept labels should use the theme's own words"


@pytest.mark.minilm
def test_distractors_do_not_become_concepts(folded):
    mem, ext = folded
    distractors = set(demo_gold()["distractors"])
    for c in _concepts(mem):
        share = sum(ext[e] in distractors for e in c.grounded_in) / len(c.grounded_in)
        assert share < 0.5, f"{c.text!r} is mostly distractors"
    grounded = {ext[e] for c in _concepts(mem) for e in c.grounded_in}
    assert len(distractors & grounded) <= 1


@pytest.mark.minilm
def test_deadline_becomes_intent_with_time_anchor(folded):
    mem, _ = folded
    g = mem.graph()
    deadlines = [g.nodes[i] for i in g.of_kind(NodeKind.INTENT)
                 if g.nodes[i].attrs.get("category") == "deadline"]
    assert deadlines
    for intent in deadlines:
        times = [e.src for e in g.in_edges(intent.id) if e.type is EdgeType.DEADLINE_FOR]
        assert times and all(g.nodes[t].kind is NodeKind.TIME for t in times)


def test_claim_keeps_its_holder():
    mem = Memory.open("memory:", embedder="hash", planner="local")
    reported = mem.add("Gina thinks Jon being fired was a mistake", source="Maya",
                       ts="2026-03-02T10:00:00Z")
    own = mem.add("I think the new office is too far away", source="Maya",
                  ts="2026-03-02T11:00:00Z")
    g = mem.graph()
    claims = {g.nodes[c].grounded_in[0]: g.nodes[c] for c in g.of_kind(NodeKind.CLAIM)}
    assert claims[reported].attrs["holder"] == "Gina"
    assert claims[reported].attrs["reported"] is True
    assert claims[own].attrs["holder"] == "Maya"
    for event_id, claim in claims.items():
        holders = [g.nodes[e.src].text for e in g.in_edges(claim.id) if e.type is EdgeType.HOLDS]
        assert holders == [claim.attrs["holder"]]
        assert g.edge(claim.id, EdgeType.SUPPORTED_BY, event_id) is not None
    # the speaker participates; the reported holder is only mentioned
    speaker = [g.nodes[e.src].text for e in g.in_edges(reported)
               if e.type is EdgeType.PARTICIPATES]
    assert speaker == ["Maya"]


def test_a_holder_named_in_lower_case_is_one_person_with_the_claim():
    # "callum thinks …": the mention reads "callum", the claim reader "Callum"; one event,
    # one plan, one person, and a question about Callum's view finds the claim
    mem = Memory.open("memory:", embedder="hash", planner="local")
    fact = mem.add("Finn's had a temp of 38.6 since yesterday so he's off school",
                   source="Isla", ts="2026-03-02T10:00:00Z")
    view = mem.add("callum thinks it's just the bug going round his class and he'll be fine "
                   "by monday", source="Isla", ts="2026-03-02T11:00:00Z")
    g = mem.graph()
    callums = [p for p in g.of_kind(NodeKind.PERSON) if g.nodes[p].text.lower() == "callum"]
    assert len(callums) == 1 and g.nodes[callums[0]].text == "Callum"
    held = [o for o, e in g.links(callums[0]) if e.type is EdgeType.HOLDS]
    assert [list(g.nodes[c].grounded_in) for c in held] == [[view]]
    pack = mem.recall("What does Callum expect to happen with Finn's illness?", k=2,
                      touch=False)
    assert [c.holder for c in pack.claims] == ["Callum"]
    assert [e.id for e in pack.evidence] == [view, fact]


def test_restart_resumes_planner_state(tmp_path):
    """Pending events survive a restart: the third similar event still forms a concept."""
    db = tmp_path / "m.db"
    texts = ["Ran 5 miles along the river trail this morning",
             "Another river trail run, 6 miles, felt strong",
             "Long run on the river trail: 10 miles at easy pace"]
    with Memory.open(db, embedder="hash", planner="local") as mem:
        for i, t in enumerate(texts[:2]):
            mem.add(t, source="Maya", ts=f"2026-10-0{i + 1}T07:00:00Z")
        assert mem.stats()["nodes"].get("concept", 0) == 0
    with Memory.open(db, embedder="hash", planner="local") as mem:
        mem.add(texts[2], source="Maya", ts="2026-10-03T07:00:00Z")
        g = mem.graph()
        concepts = [g.nodes[c] for c in g.of_kind(NodeKind.CONCEPT)]
        assert len(concepts) == 1 and len(concepts[0].grounded_in) == 3
        assert "river" in concepts[0].text.lower() or "trail" in concepts[0].text.lower()


def test_time_index_finds_what_a_scan_finds_through_outside_adds_and_removals() -> None:
    """The planner's index of time anchors by value answers as a scan would, through
    anchors added, removed and renamed between lookups, some in rolled-back transactions."""
    import random

    from enfold.graph import WorkingGraph
    from enfold.model import Node, NodeKind
    from enfold.write.planner_local import _find_time

    rng = random.Random(11)
    g = WorkingGraph("ns")
    values = [f"2024-01-{d:02d}" for d in range(1, 29)]
    n = 0
    for _ in range(600):
        for _ in range(rng.randint(1, 3)):  # a few changes between two lookups
            g.begin()
            roll = rng.random()
            live = list(g.of_kind(NodeKind.TIME))
            free = [v for v in values if all(g.nodes[t].text != v for t in live)]
            if roll < 0.3 and live:
                g.remove_node(rng.choice(live))
            elif roll < 0.45 and live and free:  # a plan relabels an anchor
                t = rng.choice(live)
                g.put_node(g.nodes[t].with_changes(text=rng.choice(free)))
            elif free:
                n += 1
                g.put_node(Node(f"ti_{n}", "ns", NodeKind.TIME, rng.choice(free)))
            if rng.random() < 0.2:
                g.rollback()
            else:
                g.commit()
        for probe in values:
            scan = next((t for t in g.of_kind(NodeKind.TIME) if g.nodes[t].text == probe),
                        None)
            assert _find_time(g, probe) == scan, probe


def test_an_uncalibrated_embedder_takes_the_settings_thresholds() -> None:
    from enfold.embed import HashingEmbedder
    from enfold.intents import IntentEngine
    from enfold.settings import Settings
    from enfold.write.calibration import thresholds_for
    from enfold.write.planner_local import LocalPlanner

    odd = HashingEmbedder(seed=1)  # "hash:256:seed=1": no calibration is recorded for it
    plain = LocalPlanner(Settings(), odd)
    assert (plain.assign_threshold, plain.cluster_threshold, plain.parent_threshold) == \
        (0.55, 0.45, 0.35)
    tuned = Settings().with_(uncalibrated_assign_threshold=0.6, uncalibrated_cluster_threshold=0.5,
                             uncalibrated_parent_threshold=0.2, uncalibrated_group_threshold=0.3)
    planner = LocalPlanner(tuned, odd)
    assert (planner.assign_threshold, planner.cluster_threshold, planner.parent_threshold) == \
        (0.6, 0.5, 0.2)
    assert IntentEngine(tuned, embedder_name=odd.name).related_threshold == 0.2
    assert thresholds_for(odd.name, tuned)["group"] == 0.3
    # a calibrated embedder keeps its recorded thresholds
    assert thresholds_for(HashingEmbedder().name, tuned) == thresholds_for(HashingEmbedder().name)
    # and the fold follows them: at a cluster cut of 0.99 like events form no concept
    counts = []
    for settings in (Settings(), Settings().with_(uncalibrated_cluster_threshold=0.99)):
        mem = Memory.open("memory:", embedder=HashingEmbedder(seed=1), planner="local",
                          settings=settings)
        for i in range(6):
            mem.add(f"Practiced violin scales and the Bach partita for an hour, day {i}",
                    ts=1_790_000_000 + 86_400 * i, source="Maya")
        counts.append(mem.graph().count(NodeKind.CONCEPT))
        mem.close()
    assert counts == [1, 0]
