"""CogEval-Bench (CogniFold, Appendix F): the graph enfold folds from a scenario, scored
against the scenario's gold concept graph.

Each scenario's events are ingested in order into their own namespace (``source``, ``ts``
and external id = the scenario's event id) with the local planner; the metrics are then
computed from the resulting working graph with the plain functions of
:mod:`enfold.bench.metrics`. The choices the paper leaves open are made here:

- **Gold F1** (``gold_f1``), the reference protocol of the CogniFold authors' released code
  (``benchmarks/cogeval/concept_evaluator.py``): every system concept's **label** against
  every gold concept's **label**, both embedded with all-MiniLM-L6-v2 (whatever embedder
  the ingest used), one-to-one Hungarian matching, a pair counts at cosine ≥ ``threshold``
  (0.5). Parent (hierarchy) concepts of the system count as system concepts; the gold's
  hierarchy parents are not gold concepts. ``None`` when MiniLM is not installed.
- **Gold F1, described** (``gold_f1_described``, this harness's earlier variant): a system
  concept embedded as "label. keywords. summary", a gold concept as "label: description",
  with the run's embedder, at cosine ≥ 0.75. The sensitivity of both at 0.5–0.9 is kept.
- **Event overlap** (``event_f1``, label-free): the leaf concepts (no PART_OF child) matched
  one-to-one to the gold concepts by the Jaccard overlap of their grounding events
  (Hungarian), a pair counts at Jaccard ≥ 0.3; precision, recall and F1. **B-cubed**
  (``bcubed_f1``) over all events: an event's system cluster is its most specific concept
  (as for modularity), its gold cluster its gold concept; unfolded events and distractors
  are clusters of their own.
- **Entity concepts**: concepts whose label is only a person's, place's, organisation's or
  product's name (spaCy's entity types), which a theme never is.
- **Purity**: mean pairwise cosine of the ingest embeddings of the events in each concept's
  ``grounded_in`` (GROUNDS and REINFORCES both add to it); concepts with < 2 events skipped.
- **Topology graph**: CogniFold's four node kinds — events, concepts, intents, time anchors.
  enfold's people, claims and facts are left out, because every event of a scenario has the
  same speaker, whose person node would connect every pair of events (chain discovery over
  the whole graph is reported as ``chain_discovery_all_kinds`` to show this).
- **Chain Discovery**: a planted chain is found when its first and last events (gold ids
  mapped to enfold event ids through the external id) are connected in the topology graph.
- **Clustering coefficient and Modularity** run over the concept/event subgraph (edges
  whose two ends are events or concepts, unweighted). Modularity's partition is the
  concepts' grounding sets: concepts are taken from the most specific (fewest events) up,
  each forming a community of itself and its not yet assigned grounding events, so an event
  belongs to its leaf concept and a parent concept keeps only itself; every other node is
  its own community.
- **Edge-type entropy** over every edge of the namespace (all 14 types count).
- **Compression**: scenario events per concept. **PageRank Gini**: Gini of the weighted,
  undirected PageRank of the whole namespace graph (what enfold ranks with).
- **Intent F1** (``intent_f1``): the reference protocol applied to intents: each intent's
  label against the gold intents' labels (MiniLM cosine at the same threshold, one-to-one).
  Not in the paper; it measures whether the intents are the goals a person would name.
- **Proactivity**: share of intents with ≥ 2 grounding connections — distinct nodes linked
  to the intent by GROUNDS or TRIGGERS, together with its ``grounded_in`` events.

LLM Quality and Harmony need an LLM judge and are not computed (reported as n/a).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from enfold.bench.datasets import Scenario, load_cogeval
from enfold.bench.metrics import (
    DEFAULT_THRESHOLDS,
    Edge,
    bcubed,
    chain_discovery,
    clustering_coefficient,
    compression,
    edge_type_entropy,
    event_overlap_f1,
    gini,
    gold_f1_sensitivity,
    modularity,
    proactivity,
    purity,
)
from enfold.bench.report import format_cell, markdown_table
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind
from enfold.settings import Settings

__all__ = ["METRICS", "PUBLISHED", "render_summary", "run", "score_graph"]

#: The averaged metrics of ``systems.enfold``, in report order.
METRICS = ("gold_f1", "gold_f1_described", "event_f1", "bcubed_f1", "purity", "chain_discovery", "clustering", "modularity",
           "edge_entropy", "compression", "pagerank_gini", "proactivity", "intent_f1", "concepts",
           "intents", "unfolded_events", "entity_concepts")

#: CogniFold's published CogEval-Bench numbers, where our metric is the same one.
PUBLISHED: dict[str, float | None] = {"gold_f1": 0.358, "purity": 0.361, "proactivity": 0.614,
                                      "compression": 4.6, "harmony": 0.476}

#: CogniFold's node kinds: the graph the topology metrics are defined on.
TOPOLOGY_KINDS = frozenset({NodeKind.EVENT, NodeKind.CONCEPT, NodeKind.INTENT, NodeKind.TIME})
_CONCEPT_EVENT = frozenset({NodeKind.EVENT, NodeKind.CONCEPT})
_INTENT_GROUNDING = (EdgeType.GROUNDS, EdgeType.TRIGGERS)
#: The reference protocol's label threshold and event-overlap threshold.
LABEL_THRESHOLD = 0.5
OVERLAP_THRESHOLD = 0.3
DESCRIBED_THRESHOLD = 0.75


# --------------------------------------------------------------------------- graph views
def _edges(graph: WorkingGraph, kinds: frozenset[NodeKind] | None = None) -> list[Edge]:
    """Undirected (src, dst) pairs of the graph, optionally only between nodes of ``kinds``."""
    out: list[Edge] = []
    for e in graph.all_edges():
        a, b = graph.nodes.get(e.src), graph.nodes.get(e.dst)
        if a is None or b is None:
            continue
        if kinds is None or (a.kind in kinds and b.kind in kinds):
            out.append((e.src, e.dst))
    return out


def grounding_events(graph: WorkingGraph, concept_id: str) -> list[str]:
    """The events a concept rests on (its ``grounded_in`` that are events of the graph)."""
    events = graph.by_kind[NodeKind.EVENT]
    return [e for e in graph.nodes[concept_id].grounded_in if e in events]


def leaf_concepts(graph: WorkingGraph) -> list[str]:
    """Concepts no other concept is PART_OF: the themes themselves, not their parents."""
    return sorted(c for c in graph.of_kind(NodeKind.CONCEPT)
                  if not any(e.type is EdgeType.PART_OF for e in graph.in_edges(c)))


def is_entity_label(label: str) -> bool:
    """Whether a label is nothing but a named entity (a person, place, product...)."""
    from enfold.text import nlp
    from enfold.text.themes import NAME_ENTS

    doc = nlp.parse(label)
    if doc is None:
        return False
    words = [t for t in doc if not (t.is_punct or t.is_space)]
    inside = [t for t in words if t.ent_type_ in NAME_ENTS]
    return bool(words) and len(inside) == len(words)


def concept_partition(graph: WorkingGraph) -> list[set[Hashable]]:
    """Communities from the concepts' grounding sets (see the module docstring)."""
    concepts = sorted(graph.of_kind(NodeKind.CONCEPT),
                      key=lambda c: (len(grounding_events(graph, c)), c))
    assigned: set[str] = set()
    communities: list[set[Hashable]] = []
    for c in concepts:
        members = [e for e in grounding_events(graph, c) if e not in assigned]
        assigned.update(members)
        communities.append({c, *members})
    communities += [{e} for e in graph.of_kind(NodeKind.EVENT) if e not in assigned]
    return communities


def intent_support(graph: WorkingGraph, intent_id: str) -> int:
    """Grounding connections of an intent: GROUNDS/TRIGGERS sources and grounded_in events."""
    support = {e.src for e in graph.in_edges(intent_id) if e.type in _INTENT_GROUNDING}
    support.update(graph.nodes[intent_id].grounded_in)
    return len(support)


def concept_text(graph: WorkingGraph, concept_id: str) -> str:
    """What a system concept is compared by: its label, keywords and summary."""
    node = graph.nodes[concept_id]
    keywords = [str(k) for k in node.attrs.get("keywords") or []]
    if all(k.lower() in node.text.lower() for k in keywords):
        keywords = []  # the label is made of them already; do not weigh them twice
    parts = [node.text, ", ".join(keywords), str(node.attrs.get("summary") or "")]
    return ". ".join(p for p in parts if p.strip())


def _pagerank_scores(graph: WorkingGraph) -> list[float]:
    from enfold.pagerank import pagerank_reference

    edges = [(e.src, e.dst, max(0.0, e.weight)) for e in graph.all_edges()
             if e.src in graph.nodes and e.dst in graph.nodes]
    return list(pagerank_reference(list(graph.nodes), edges).values())


# --------------------------------------------------------------------------- scoring
def score_graph(
    graph: WorkingGraph,
    scenario: Scenario,
    event_ids: dict[str, str],
    *,
    embed: Callable[[list[str]], Any],
    label_embed: Callable[[list[str]], Any] | None = None,
    threshold: float = LABEL_THRESHOLD,
    thresholds: Iterable[float] = DEFAULT_THRESHOLDS,
) -> dict[str, Any]:
    """Every CogEval metric of one folded scenario.

    ``event_ids`` maps the scenario's event ids to enfold's; ``embed`` embeds a list of
    texts (the run's embedder) for the described Gold F1, ``label_embed`` (MiniLM) for the
    reference protocol's; without it ``gold_f1`` is ``None``.
    """
    concepts = sorted(graph.of_kind(NodeKind.CONCEPT))
    intents = sorted(graph.of_kind(NodeKind.INTENT))
    gold = scenario.gold.concepts
    levels = sorted({*(float(t) for t in thresholds), float(threshold), DESCRIBED_THRESHOLD})

    def matching(left: list[str], right: list[str], fn: Callable[[list[str]], Any]
                 ) -> dict[float, dict[str, float | int]]:
        right_vecs = np.asarray(fn(right), dtype=np.float64)
        left_vecs = (np.asarray(fn(left), dtype=np.float64) if left
                     else np.zeros((0, right_vecs.shape[1])))
        return gold_f1_sensitivity(left_vecs, right_vecs, levels)

    described = matching([concept_text(graph, c) for c in concepts],
                         [f"{c.label}: {c.description}" for c in gold], embed)
    labelled = (matching([graph.nodes[c].text for c in concepts], [c.label for c in gold],
                         label_embed) if label_embed is not None else None)
    at = labelled[float(threshold)] if labelled is not None else None
    # intents by the same protocol: each intent's label against the gold intents' labels
    gold_intents = [i.label for i in scenario.gold.intents]
    intent_at = (matching([graph.nodes[i].text for i in intents], gold_intents,
                          label_embed)[float(threshold)]
                 if label_embed is not None and gold_intents else None)

    scenario_id = {v: k for k, v in event_ids.items()}
    leaves = leaf_concepts(graph)
    overlap = event_overlap_f1(
        [[scenario_id.get(e, e) for e in grounding_events(graph, c)] for c in leaves],
        [c.expected_events for c in gold], OVERLAP_THRESHOLD)
    cluster_of: dict[Hashable, Hashable] = {}
    for community in concept_partition(graph):
        members = [scenario_id[n] for n in community if n in scenario_id]
        for m in members:
            cluster_of[m] = min(str(n) for n in community)
    gold_of: dict[Hashable, Hashable] = {
        e.id: (e.gold_concept if e.gold_concept is not None else f"noise:{e.id}")
        for e in scenario.events}
    b3 = bcubed(cluster_of, gold_of)

    groups = []
    for c in concepts:
        vecs = [v for v in (graph.event_vectors.get(e) for e in grounding_events(graph, c))
                if v is not None]
        if vecs:
            groups.append(np.stack(vecs))

    chains = [[event_ids.get(e, f"missing:{e}") for e in ch.events]
              for ch in scenario.gold.chains]
    topo = _edges(graph, TOPOLOGY_KINDS)
    ce_edges = _edges(graph, _CONCEPT_EVENT)
    ce_nodes = [n for n in graph.nodes if graph.nodes[n].kind in _CONCEPT_EVENT]
    n_events = len(scenario.events)
    ratio = compression(n_events, len(concepts))
    return {
        "gold_f1": None if at is None else round(float(at["f1"]), 4),
        "gold_precision": None if at is None else round(float(at["precision"]), 4),
        "gold_recall": None if at is None else round(float(at["recall"]), 4),
        "gold_f1_sensitivity": ({} if labelled is None else
                                {f"{t:g}": round(float(v["f1"]), 4)
                                 for t, v in labelled.items()}),
        "gold_f1_described": round(float(described[DESCRIBED_THRESHOLD]["f1"]), 4),
        "intent_f1": None if intent_at is None else round(float(intent_at["f1"]), 4),
        "intent_precision": (None if intent_at is None
                             else round(float(intent_at["precision"]), 4)),
        "intent_recall": None if intent_at is None else round(float(intent_at["recall"]), 4),
        "gold_f1_described_sensitivity": {f"{t:g}": round(float(v["f1"]), 4)
                                          for t, v in described.items()},
        "event_precision": round(float(overlap["precision"]), 4),
        "event_recall": round(float(overlap["recall"]), 4),
        "event_f1": round(float(overlap["f1"]), 4),
        "bcubed_precision": round(b3["precision"], 4),
        "bcubed_recall": round(b3["recall"], 4),
        "bcubed_f1": round(b3["f1"], 4),
        "purity": round(purity(groups), 4),
        "chain_discovery": round(chain_discovery(topo, chains), 4),
        "chain_discovery_all_kinds": round(chain_discovery(_edges(graph), chains), 4),
        "clustering": round(clustering_coefficient(ce_edges, ce_nodes), 4),
        "modularity": round(modularity(ce_edges, concept_partition(graph)), 4),
        "edge_entropy": round(edge_type_entropy(e.type.value for e in graph.all_edges()), 4),
        "compression": None if ratio is None else round(ratio, 3),
        "pagerank_gini": round(gini(_pagerank_scores(graph)), 4),
        "proactivity": round(proactivity(intent_support(graph, i) for i in intents), 4),
        "concepts": len(concepts),
        "intents": len(intents),
        "events": n_events,
        "unfolded_events": sum(
            1 for e in event_ids.values()
            if not any(x.type in (EdgeType.GROUNDS, EdgeType.REINFORCES)
                       for x in graph.out_edges(e))),
        "gold_concepts": len(gold),
        "entity_concepts": sum(1 for c in concepts if is_entity_label(graph.nodes[c].text)),
        "labels": [graph.nodes[c].text for c in concepts],
        "intent_labels": [graph.nodes[i].text for i in intents],
    }


def _reference_embed(embedder: Any) -> Callable[[list[str]], Any] | None:
    """MiniLM's embed function for the reference protocol (the run's own when it is MiniLM)."""
    if str(getattr(embedder, "name", "")).startswith("minilm"):
        return embedder.embed  # type: ignore[no-any-return]
    from enfold.embed import make_embedder
    from enfold.errors import EnfoldError

    try:
        return make_embedder("minilm").embed
    except (EnfoldError, ImportError):
        return None


def _mean(values: list[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(float(np.mean(vals)), 4) if vals else None


def _average(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rows = list(per.values())
    avg: dict[str, Any] = {}
    for key in rows[0] if rows else ():
        if key in ("labels", "intent_labels"):
            continue
        if key.endswith("_sensitivity"):
            avg[key] = {t: _mean([r[key].get(t) for r in rows]) for t in rows[0][key]}
        else:
            avg[key] = _mean([r[key] for r in rows])
    return avg


def run(
    scenarios: Path | None,
    *,
    embedder: Any,
    threshold: float = LABEL_THRESHOLD,
    part: str = "bundled",
    progress: Callable[[str], None] | None = None,
    settings: Settings | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Ingest and score every scenario; returns (systems, details).

    ``systems["enfold"]`` holds the averages over scenarios and ``per_scenario``.
    ``settings``: the memory's and the local planner's (None: the defaults), so a setting
    tried on the benchmark (``enfold --set cluster_min_events=2 bench cogeval``) is the
    one measured.
    """
    from enfold.memory import Memory
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    label_embed = _reference_embed(embedder)
    per: dict[str, dict[str, Any]] = {}
    ingest_s = 0.0
    consolidated = False
    for sc in load_cogeval(scenarios, part=part):
        mem = Memory(open_store("memory:"), namespace=sc.id, embedder=embedder,
                     settings=settings, planners=[LocalPlanner(settings, embedder)])
        try:
            t0 = time.perf_counter()
            ids = mem.add_many([{"text": e.text, "source": e.source, "ts": e.ts.isoformat(),
                                 "id": e.id, "kind": "note"} for e in sc.events])
            consolidate = getattr(mem, "consolidate", None)
            if callable(consolidate):  # a consolidation pass, once the library has one
                consolidate()
                consolidated = True
            ingest_s += time.perf_counter() - t0
            per[sc.id] = score_graph(mem.graph(), sc, dict(zip((e.id for e in sc.events), ids,
                                                               strict=True)),
                                     embed=embedder.embed, label_embed=label_embed,
                                     threshold=threshold)
        finally:
            mem.close()
        if progress is not None:
            m = per[sc.id]
            progress(f"{sc.id}: {m['events']} events, {m['concepts']} concepts, "
                     f"{m['intents']} intents, gold F1 {m['gold_f1']}, event F1 {m['event_f1']}")
    enfold = _average(per)
    enfold["per_scenario"] = per
    details = {"scenarios": len(per), "ingest_s": round(ingest_s, 2),
               "consolidated": consolidated,
               "published": {"source": "CogniFold (CogEval-Bench)", **PUBLISHED,
                             "harmony_enfold": "n/a (needs an LLM judge)"}}
    return {"enfold": enfold}, details


# --------------------------------------------------------------------------- summary
_LABELS = {
    "gold_f1": "Gold F1 (labels, MiniLM)", "gold_f1_described": "Gold F1, described @ 0.75",
    "event_f1": "Event-overlap F1 @ Jaccard 0.3", "bcubed_f1": "B-cubed F1 (events)",
    "unfolded_events": "Unfolded events", "entity_concepts": "Entity-only concepts",
    "purity": "Purity", "chain_discovery": "Chain discovery",
    "clustering": "Clustering coefficient", "modularity": "Modularity (Q)",
    "edge_entropy": "Edge-type entropy (bits)", "compression": "Compression (events/concept)",
    "pagerank_gini": "PageRank Gini", "proactivity": "Proactivity", "concepts": "Concepts",
    "intents": "Intents", "intent_f1": "Intent F1 (labels, MiniLM)",
}


def render_summary(result: dict[str, Any], threshold: float = LABEL_THRESHOLD) -> str:
    """The printed table: our averages beside CogniFold's published numbers."""
    enfold = result["systems"]["enfold"]
    rows: list[dict[str, Any]] = []
    for key in METRICS:
        label = _LABELS[key] + (f" @ {threshold:g}" if key == "gold_f1" else "")
        rows.append({"metric": label, "enfold": enfold.get(key),
                     "CogniFold (paper)": PUBLISHED.get(key)})
    rows.append({"metric": "Harmony", "enfold": "n/a (LLM judge)",
                 "CogniFold (paper)": PUBLISHED["harmony"]})
    table = markdown_table(rows, ["metric", "enfold", "CogniFold (paper)"])
    sens = enfold.get("gold_f1_sensitivity") or {}
    sens_d = enfold.get("gold_f1_described_sensitivity") or {}
    per = enfold.get("per_scenario") or {}
    columns = ["gold_f1", "event_f1", "bcubed_f1", "purity", "proactivity", "compression",
               "concepts", "unfolded_events", "intents"]
    per_rows = [{"scenario": name, **{k: m.get(k) for k in columns}}
                for name, m in per.items()]
    label_lines = [f"- {name}: " + "; ".join(m.get("labels") or [])
                   for name, m in per.items()]
    lines = [
        table, "",
        "Gold F1 (labels) sensitivity: "
        + "  ".join(f"{t}: {format_cell(v)}" for t, v in sens.items()),
        "Gold F1 (described) sensitivity: "
        + "  ".join(f"{t}: {format_cell(v)}" for t, v in sens_d.items()),
        "",
        markdown_table(per_rows, ["scenario", *columns]),
        "",
        "Concept labels:",
        *label_lines,
        "",
        (f"{result.get('scenarios')} scenarios, embedder {result['config'].get('embedder')}, "
         f"elapsed {result['elapsed_s']:.1f} s. The paper's numbers come from its own "
         "scenarios and an LLM planner; only metrics defined the same way are shown beside "
         "ours."),
    ]
    return "\n".join(lines)
