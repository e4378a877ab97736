"""Decay: edge weights fade with stream time since they were last written (SPEC §6.3).

    w ← w · exp(−δ · Δhours),   δ = ``settings.decay_delta``

Δ is measured on the stream's clock (:mod:`enfold.consolidate.clock`) from the edge's last
write — a reinforcement by a plan, or the previous decay. Because each decay stamps the edge
with the pass's wall time, whose stream time the pass clock records exactly, decays
telescope: two passes at the same stream time change nothing the second time, and decaying
in ten small steps gives the same weight as one big step.

Which stream time an edge was last written at:

* an edge touching an event: the later of the event's ``ts`` (events are folded once, so
  their edges are written while the stream stands at their time) and the pass clock at the
  edge's ``updated_at``;
* any other edge: the pass clock at ``updated_at`` — exact for edges a pass wrote, a lower
  bound (by at most one pass interval) for edges a plan wrote between passes;
* an edge written before the namespace's first pass that touches no event has no stream
  time: its Δ falls back to wall-clock hours since ``updated_at``. After one decay it carries
  a pass stamp and is on the stream's clock from then on.

Floors, and what is never lost:

* provenance edges (``ONTOLOGY[type].provenance``: GROUNDS, SUPPORTED_BY, HOLDS,
  PARTICIPATES) decay, but never below ``provenance_floor`` and are never removed;
* *evidence* edges — an edge from an event into a node that lists that event in its
  ``grounded_in`` (a REINFORCES into the concept it corroborated, a TRIGGERS into the intent
  it raised) — and PART_OF edges (a parent theme lists its children's events as its own
  provenance and reaches them through its children) never fall below ``prune_floor`` and are
  never removed either, so every event stays reachable from each concept it grounded;
* every other ("derived") edge that falls below ``prune_floor`` is **archived**: removed from
  the graph, with its full before-state written to the op log (``ARCHIVE_EDGE``, under both
  endpoints), so ``history()`` still shows it and nothing is lost;
* events and nodes are never touched.

A full pass decays every edge. An incremental pass decays a bounded, rotating slice of the
graph (:class:`DecaySweep`): decay is a function of time, not of what changed, so the slice
keeps the pass's cost flat while every edge is brought up to date once per sweep cycle.
:func:`decay_reference` is the one-edge formula the tests check the fast path against.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from enfold.consolidate.clock import Stamp
from enfold.graph import EdgeKey, WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, NodeKind
from enfold.settings import Settings

#: Edges an incremental pass decays when no budget is given.
DECAY_SWEEP = 1024


@dataclass
class DecayResult:
    decayed: int = 0  # edges whose weight was lowered
    pruned: int = 0  # derived edges archived below the prune floor
    visited: int = 0  # edges examined


def decay_reference(weight: float, hours: float, delta: float, floor: float | None) -> float:
    """One edge's decayed weight; ``floor`` (if any) is never crossed from above."""
    new = weight * math.exp(-delta * max(0.0, hours))
    if floor is not None:
        new = max(new, min(weight, floor))
    return new


def last_written(graph: WorkingGraph, edge: Edge, stamp: Stamp) -> float | None:
    """The stream time at which ``edge`` was last written (None: unknown; see the module)."""
    best = stamp.clock.stream_at(edge.updated_at)
    for node_id in (edge.src, edge.dst):
        node = graph.nodes.get(node_id)
        if node is not None and node.kind is NodeKind.EVENT:
            best = node.ts if best is None else max(best, node.ts)
    return best


def _is_evidence(graph: WorkingGraph, edge: Edge, grounded: dict[str, frozenset[str]]) -> bool:
    """An edge through which a derived node reaches its evidence (see the module)."""
    if edge.type is EdgeType.PART_OF:
        return True
    src = graph.nodes.get(edge.src)
    if src is None or src.kind is not NodeKind.EVENT:
        return False
    prov = grounded.get(edge.dst)
    if prov is None:
        dst = graph.nodes.get(edge.dst)
        prov = frozenset(dst.grounded_in) if dst is not None else frozenset()
        grounded[edge.dst] = prov
    return edge.src in prov


def decay_edges(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    keys: Iterable[EdgeKey] | None = None,
) -> DecayResult:
    """Decay the edges ``keys`` (all edges when None) to the stream time ``stamp.now_ts``.

    Runs inside an open graph transaction; see the module docstring for the rules.
    """
    result = DecayResult()
    if stamp.now_ts is None:
        return result
    now_ts = stamp.now_ts
    delta = settings.decay_delta
    todo = [e.key for e in graph.all_edges()] if keys is None else list(keys)
    grounded: dict[str, frozenset[str]] = {}
    for key in todo:
        edge = graph.edge(*key)
        if edge is None:
            continue
        result.visited += 1
        since = last_written(graph, edge, stamp)
        if since is None:
            hours = (stamp.at - edge.updated_at) / 3600.0 if edge.updated_at > 0 else 0.0
        else:
            hours = (now_ts - since) / 3600.0
        if hours <= 0.0:
            continue
        rule = ONTOLOGY[edge.type]
        if rule.provenance:
            floor: float | None = settings.provenance_floor
        elif _is_evidence(graph, edge, grounded):
            floor = settings.prune_floor
        else:
            floor = None
        new = decay_reference(edge.weight, hours, delta, floor)
        if floor is None and new < settings.prune_floor:
            graph.remove_edge(key)
            reason = (f"decayed to {new:.4f} (< prune floor {settings.prune_floor}) after "
                      f"{hours:.0f} h of stream time; archived")
            stamp.op(graph, "ARCHIVE_EDGE", edge.src, edge.to_dict(), None, reason)
            stamp.op(graph, "ARCHIVE_EDGE", edge.dst, edge.to_dict(), None, reason)
            result.pruned += 1
        elif new < edge.weight:
            graph.put_edge(edge.with_changes(weight=new, updated_at=stamp.at))
            result.decayed += 1
    return result


@dataclass
class DecaySweep:
    """A rotating cursor over the graph's edges, for incremental passes.

    Sources are visited in turn and each source's out-edges in budget-sized slices, so a hub
    (a person with thousands of PARTICIPATES edges) is spread over several passes instead of
    making one of them slow. Edges added during a cycle are met in the next one.
    """

    queue: deque[str] = field(default_factory=deque)
    current: list[EdgeKey] = field(default_factory=list)
    pos: int = 0
    cycles: int = 0

    def next_keys(self, graph: WorkingGraph, budget: int) -> list[EdgeKey]:
        """Up to ``budget`` edge keys, continuing where the previous call stopped."""
        keys: list[EdgeKey] = []
        refilled = False
        while len(keys) < budget:
            if self.pos < len(self.current):
                take = self.current[self.pos:self.pos + budget - len(keys)]
                self.pos += len(take)
                keys.extend(take)
                continue
            if not self.queue:
                if refilled:
                    break
                self.queue.extend(graph.out.keys())
                self.cycles += 1
                refilled = True
                if not self.queue:
                    break
            src = self.queue.popleft()
            self.current = [(src, t, d) for (t, d) in graph.out.get(src, {})]
            self.pos = 0
        return keys
