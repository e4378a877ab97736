"""Scheduling: what changed since the last consolidation pass, and when the next one is due.

A :class:`Scheduler` lives in a working graph's ``state`` (one per namespace). It listens to
every edge change of the graph (:attr:`WorkingGraph.edge_listeners`), so whatever folds
events — the local or the LLM planner, ``Memory.apply``, ``forget`` — marks both ends of each
edge it writes as *dirty*, without the write path having to report anything. Changes made
by a pass itself are not marked (the pass pauses the listener), so a pass does not schedule
another one.

The **region** of an incremental pass is the dirty set plus the 1-hop neighbours of its
nodes that a pass acts on (concepts, claims, facts, intents), except that hubs (nodes with
more than ``Settings.hub_degree`` edges: the main speaker, a concept reinforced by thousands of
events) are included but not expanded — their neighbourhood is most of the graph, and
expanding it would make the pass's cost grow with the graph instead of with what changed.
Events enter a region only through their own edges: an event whose people or concepts
changed (a new event, a merge that moved its REINFORCES edge) is an endpoint of a changed
edge; the unchanged events of a touched concept need nothing.

A pass is **due** when the region is not empty and either ``consolidate_every`` events were
folded since the last pass, or ``consolidate_idle_s`` seconds passed since the last activity.

After a restart the dirty set is rebuilt from the event log: the events whose sequence number
is past the one recorded by the last pass (meta ``consolidate.seq``), with their neighbours.

The scheduler also keeps the passes' rebuildable indexes (facts by person and concept,
claims by holder/target/predicate family) and the queue of edges that can still decay
(:class:`enfold.consolidate.decay.DecayQueue`), which its listener feeds with every edge
written.
"""

from __future__ import annotations

from typing import Any

from enfold.consolidate.claims import ClaimIndex
from enfold.consolidate.clock import PassClock, event_time
from enfold.consolidate.decay import DecayQueue, can_fade, written_estimate
from enfold.consolidate.facts import FactIndex
from enfold.graph import EdgeKey, WorkingGraph
from enfold.model import Edge, NodeKind, now
from enfold.settings import Settings

SEQ_KEY = "consolidate.seq"
#: The kinds a region grows into: those the passes act on. Events join a region only when
#: one of their own edges changed (that is when their people or concepts changed); people
#: and time anchors are never consolidated themselves.
_EXPAND = frozenset({NodeKind.CONCEPT, NodeKind.CLAIM, NodeKind.FACT, NodeKind.INTENT})


class Scheduler:
    """Dirty tracking, due-ness and the incremental state of one namespace's passes."""

    def __init__(self, graph: WorkingGraph, settings: Settings) -> None:
        self.graph, self.settings = graph, settings
        self.dirty: dict[str, None] = {}
        self.events_since = 0
        self.last_activity = now()
        self.paused = False
        self.passes = 0
        self.clock = PassClock.of(graph)  # the latest pass clock (for queue order)
        self.decay_queue: DecayQueue | None = None
        self.fact_index: FactIndex | None = None
        self.claim_index: ClaimIndex | None = None
        self.seq = _as_int(graph.meta.get(SEQ_KEY))
        self.newest_ts: float | None = None
        for eid in graph.of_kind(NodeKind.EVENT):
            node = graph.nodes[eid]
            t = event_time(node)
            if self.newest_ts is None or t > self.newest_ts:
                self.newest_ts = t
            if _as_int(node.attrs.get("seq")) > self.seq:
                self.mark(eid)
                self.mark(*(other for other, _ in graph.neighbors(eid)))
        graph.edge_listeners.append(self._on_edge)

    @classmethod
    def of(cls, graph: WorkingGraph, settings: Settings) -> Scheduler:
        """The graph's scheduler, created (and registered as a listener) on first use."""
        found = graph.indexes.of(Scheduler, lambda: cls(graph, settings))
        found.settings = settings
        return found

    # -------------------------------------------------------------- tracking
    def _on_edge(self, key: EdgeKey, edge: Edge | None) -> None:
        if edge is not None and self.decay_queue is not None \
                and can_fade(self.graph, edge, self.settings):
            self.decay_queue.push(key, written_estimate(self.graph, edge, self.clock))
        if not self.paused:
            self.dirty[key[0]] = None
            self.dirty[key[2]] = None

    def mark(self, *node_ids: str) -> None:
        """Mark nodes as changed (the edge listener does this for every edge write)."""
        for node_id in node_ids:
            self.dirty[node_id] = None

    def tick(self, events: int = 0, at: float | None = None) -> bool:
        """Note ``events`` newly folded events; True when a pass is due now."""
        at = now() if at is None else at
        idle = at - self.last_activity >= self.settings.consolidate_idle_s
        if events:
            self.events_since += events
            self.last_activity = at
        if not self.dirty:
            return False
        return idle or self.events_since >= self.settings.consolidate_every

    # --------------------------------------------------------------- regions
    def region(self, dirty: dict[str, None] | None = None) -> set[str]:
        """The dirty nodes still in the graph and the derived 1-hop neighbours (concepts,
        claims, facts, intents) of the non-hubs among them."""
        g = self.graph
        ids = self.dirty if dirty is None else dirty
        region = {g.resolve(x) for x in ids}
        region &= g.nodes.keys()
        hub = self.settings.hub_degree
        for node_id in list(region):
            if g.degree(node_id) <= hub:
                region.update(other for other, _ in g.neighbors(node_id)
                              if g.nodes[other].kind in _EXPAND)
        return region

    def take(self) -> dict[str, None]:
        """Hand the dirty set to a pass (and start a new one)."""
        taken, self.dirty = self.dirty, {}
        return taken

    def restore(self, taken: dict[str, None]) -> None:
        """Give a failed pass's dirty set back; its indexes are rebuilt on the next pass."""
        self.dirty.update(taken)
        self.fact_index = None
        self.claim_index = None
        self.decay_queue = None
        self.clock = PassClock.of(self.graph)

    def done(self, *, full: bool) -> None:
        """A pass committed."""
        self.events_since = 0
        self.passes += 1
        if full:
            self.dirty = {}

    # ---------------------------------------------------- incremental state
    def facts(self, *, rebuild: bool = False) -> FactIndex:
        if self.fact_index is None or rebuild:
            self.fact_index = FactIndex.build(self.graph)
        else:
            self.fact_index.sync_aliases(self.graph)
        return self.fact_index

    def decay(self, *, rebuild: bool = False) -> DecayQueue:
        if self.decay_queue is None or rebuild:
            self.decay_queue = DecayQueue.build(self.graph, self.settings, self.clock)
        return self.decay_queue

    def claims(self, *, rebuild: bool = False) -> ClaimIndex:
        if self.claim_index is None or rebuild:
            self.claim_index = ClaimIndex.build(self.graph)
        return self.claim_index

    def note_events(self, event_ids: set[str]) -> None:
        """Advance the stream clock and the consolidated sequence number past these."""
        for eid in event_ids:
            node = self.graph.nodes.get(eid)
            if node is None or node.kind is not NodeKind.EVENT:
                continue
            t = event_time(node)
            if self.newest_ts is None or t > self.newest_ts:
                self.newest_ts = t
            self.seq = max(self.seq, _as_int(node.attrs.get("seq")))


def _as_int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
