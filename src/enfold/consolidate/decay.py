"""Decay: edge weights fade with stream time since they were last written.

    w ← w · exp(−δ · Δhours),   δ = ``settings.decay_delta``

Δ is measured on the stream's clock (:mod:`enfold.consolidate.clock`) from the edge's last
write — a reinforcement by a plan, or the previous decay. Because each decay stamps the edge
with the pass's wall time, whose stream time the pass clock records exactly, decays
telescope: two passes at the same stream time change nothing the second time, and decaying
in ten small steps gives the same weight as one big step.

Which stream time an edge was last written at:

* an edge touching an event: the later of the event's time (:func:`event_time`: events are
  folded once, so their edges are written while the stream stands at their time) and the
  pass clock at the edge's ``updated_at``;
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
  it raised) — and *structural* edges never fall below ``prune_floor`` and are never removed
  either: PART_OF (a parent theme lists its children's events as its own provenance and
  reaches them through its children), and an intent's DEADLINE_FOR and TRIGGERS (its due
  date and its reason are part of what the intent is, open or settled). So every event stays
  reachable from each concept it grounded, and an intent keeps its deadline;
* every other ("derived") edge that falls below ``prune_floor`` is **archived**: removed from
  the graph, with its full before-state written to the op log (``ARCHIVE_EDGE``: one
  record under the source, naming the other end as its peer), so ``history()`` of either
  end still shows it and nothing is lost;
* edges touching a time anchor that has not come yet (a deadline, an appointment) do not
  decay until it has: a pending deadline is not stale however long ago it was mentioned;
  once it has passed, they age from its end;
* events and nodes are never touched.

A full pass decays every edge. Decay is a function of time, not of what changed, so an
incremental pass cannot limit it to its region; instead it takes the edges that have waited
longest from a queue of those that can still fade (:class:`DecayQueue`), up to a budget,
and only once they have aged ``Settings.decay_step_h`` stream hours. Edges at their floor
leave the queue, so its length — and the pass's decay work — follows the stream's recent rate,
not the size of the graph.
:func:`decay_reference` is the one-edge formula the tests check the fast path against.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from enfold.consolidate.clock import PassClock, Stamp, event_time
from enfold.graph import EdgeKey, WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, Node, NodeKind
from enfold.settings import Settings

#: Edges that are part of what their endpoint is, never archived (see the module).
STRUCTURAL = frozenset({EdgeType.PART_OF, EdgeType.DEADLINE_FOR, EdgeType.TRIGGERS})


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
    """The stream time from which ``edge`` ages (None: unknown; see the module)."""
    best = stamp.clock.stream_at(edge.updated_at)
    for node_id in (edge.src, edge.dst):
        node = graph.nodes.get(node_id)
        if node is None:
            continue
        t: float | None = None
        if node.kind is NodeKind.EVENT:
            t = event_time(node)
        elif node.kind is NodeKind.TIME and stamp.now_ts is not None:
            end = _anchor_end(node)
            t = end if end is not None and end <= stamp.now_ts else None
        if t is not None:
            best = t if best is None else max(best, t)
    return best


def _anchor_end(node: Node) -> float | None:
    end = node.attrs.get("end", node.attrs.get("start"))
    return float(end) if isinstance(end, (int, float)) and not isinstance(end, bool) else None


def _pending_time(graph: WorkingGraph, edge: Edge, now_ts: float) -> float | None:
    """When the edge touches a time anchor that has not come yet, its end: a pending
    deadline or appointment is not stale, however long ago it was mentioned."""
    for node_id in (edge.src, edge.dst):
        node = graph.nodes.get(node_id)
        if node is not None and node.kind is NodeKind.TIME:
            end = _anchor_end(node)
            if end is not None and end >= now_ts:
                return end
    return None


def _is_evidence(graph: WorkingGraph, edge: Edge) -> bool:
    """An edge through which a derived node reaches its evidence (see the module)."""
    if edge.type in STRUCTURAL:
        return True
    src = graph.nodes.get(edge.src)
    if src is None or src.kind is not NodeKind.EVENT:
        return False
    return edge.src in graph.grounded(edge.dst)


def decay_edges(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    keys: Iterable[EdgeKey] | None = None,
    queue: DecayQueue | None = None,
    min_hours: float = 0.0,
) -> DecayResult:
    """Decay the edges ``keys`` (all edges when None) to the stream time ``stamp.now_ts``.

    Edges younger than ``min_hours`` of stream time, and edges waiting for a time anchor,
    are left for later — put back on ``queue`` (if given) for when they are due.
    Runs inside an open graph transaction; see the module docstring for the rules.
    """
    result = DecayResult()
    if stamp.now_ts is None:
        return result
    now_ts = stamp.now_ts
    delta = settings.decay_delta
    todo = [e.key for e in graph.all_edges()] if keys is None else list(keys)
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
        anchor = _pending_time(graph, edge, now_ts)
        if anchor is not None:
            if queue is not None:
                queue.push(key, anchor)
            continue
        if hours <= 0.0 or hours < min_hours:
            if queue is not None:
                queue.push(key, now_ts if since is None else since)
            continue
        rule = ONTOLOGY[edge.type]
        if rule.provenance:
            floor: float | None = settings.provenance_floor
        elif _is_evidence(graph, edge):
            floor = settings.prune_floor
        else:
            floor = None
        new = decay_reference(edge.weight, hours, delta, floor)
        if floor is None and new < settings.prune_floor:
            graph.remove_edge(key)
            reason = (f"decayed to {new:.4f} (< prune floor {settings.prune_floor}) after "
                      f"{hours:.0f} h of stream time; archived")
            # The whole edge, so that nothing is lost: an archived edge can be restored.
            stamp.op(graph, "ARCHIVE_EDGE", edge.src, edge.to_dict(), None, reason,
                     peer=edge.dst)
            result.pruned += 1
        elif new < edge.weight:
            # The write re-queues the edge through the scheduler's edge listener.
            graph.put_edge(edge.with_changes(weight=new, updated_at=stamp.at))
            result.decayed += 1
        # An edge that did not change sits at its floor: it leaves the queue until a plan
        # writes it again (which queues it again).
    return result


@dataclass
class DecayQueue:
    """The edges that may still decay, oldest first, for incremental passes.

    Keyed by the stream time an edge was last written (an estimate is enough: the key only
    orders the work; the decay itself reads the exact time from the pass clock). Every edge
    write enqueues the edge (the scheduler's listener calls :meth:`push`); a pass pops the
    edges at least ``min_hours`` old, oldest first, up to its budget. An edge that reaches
    its floor, or is archived, is not enqueued again — so the queue holds only what can
    still fade, which depends on the stream's rate and the decay constant, not on the size
    of the graph, and an incremental pass's decay work stays flat.
    Entries are lazily deleted: a popped key whose edge is gone is skipped.
    """

    heap: list[tuple[float, EdgeKey]] = field(default_factory=list)

    @classmethod
    def build(cls, graph: WorkingGraph, settings: Settings, clock: PassClock) -> DecayQueue:
        """Every edge that can still fade (above its floor), by when it was written."""
        queue = cls()
        for edge in graph.all_edges():
            if can_fade(graph, edge, settings):
                queue.heap.append((written_estimate(graph, edge, clock), edge.key))
        heapq.heapify(queue.heap)
        return queue

    def push(self, key: EdgeKey, stream_ts: float) -> None:
        heapq.heappush(self.heap, (stream_ts, key))

    def pop_due(self, before: float, budget: int) -> list[EdgeKey]:
        """Up to ``budget`` distinct keys last written at or before stream time ``before``."""
        out: dict[EdgeKey, None] = {}
        while self.heap and len(out) < budget and self.heap[0][0] <= before:
            out[heapq.heappop(self.heap)[1]] = None
        return list(out)

    def __len__(self) -> int:
        return len(self.heap)


def can_fade(graph: WorkingGraph, edge: Edge, settings: Settings) -> bool:
    """False when decay can no longer change ``edge``: it sits at its floor."""
    if ONTOLOGY[edge.type].provenance:
        return edge.weight > settings.provenance_floor
    if edge.weight > settings.prune_floor:
        return True
    return not _is_evidence(graph, edge)


def written_estimate(graph: WorkingGraph, edge: Edge, clock: PassClock) -> float:
    """The stream time ``edge`` was last written at, as far as ``clock`` knows (a lower
    bound; -inf when unknown, so that such an edge is looked at first)."""
    best = clock.stream_at(edge.updated_at)
    for node_id in (edge.src, edge.dst):
        node = graph.nodes.get(node_id)
        if node is not None and node.kind is NodeKind.EVENT:
            t = event_time(node)
            best = t if best is None else max(best, t)
    return best if best is not None else float("-inf")
