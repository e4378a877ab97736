"""The two clocks of a consolidation pass: the stream's (event time) and the wall's.

Consolidation measures time on the **stream's clock** — the time of the newest event
(:func:`event_time`) — so
that replaying a year of conversation in a minute decays and consolidates the graph as
living through that year would (context assembly makes the same choice: Δt is stream time).
Edges, however, only carry wall-clock stamps (``created_at``/``updated_at``). To tell when an
edge was last written *on the stream's clock* without adding a field to :class:`Edge`,
every pass that writes anything records one sample ``(wall time, stream time)`` in the
namespace's meta (:class:`PassClock`). An edge written at wall time ``w`` was written when
the stream stood at least at the stream time of the last pass at or before ``w``; an edge
written *by* a pass carries that pass's exact wall time, so its stream time is exact.

:class:`Stamp` is what every pass function receives: its id (the op log's ``plan_id``), its
wall time, its stream time and the clock.
"""

from __future__ import annotations

import bisect
import uuid
from dataclasses import dataclass, field
from typing import Any

from enfold.graph import WorkingGraph
from enfold.model import Node, NodeKind, OpRecord
from enfold.settings import Settings

CLOCK_KEY = "consolidate.clock"
#: The default of ``Settings.pass_clock_samples``: samples kept in the clock; older ones
#: are thinned (every other one dropped), which can only make an edge look older than it
#: is, i.e. decay it a little early.
MAX_CLOCK: int = Settings.pass_clock_samples


def event_time(node: Node) -> float:
    """Where an event puts the stream's clock: its ``ts``, but never later than when it
    was ingested — a calendar entry for next month does not move "now" to next month."""
    ingested = node.attrs.get("ingested_at")
    if isinstance(ingested, (int, float)) and not isinstance(ingested, bool):
        return min(node.ts, float(ingested))
    return node.ts


@dataclass
class PassClock:
    """Samples (wall, stream) of past passes, both non-decreasing; kept in graph meta."""

    walls: list[float] = field(default_factory=list)
    streams: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, graph: WorkingGraph) -> PassClock:
        raw = graph.meta.get(CLOCK_KEY) or []
        clock = cls()
        for pair in raw:
            if isinstance(pair, (list, tuple)) and len(pair) == 2:
                clock.walls.append(float(pair[0]))
                clock.streams.append(float(pair[1]))
        return clock

    def stream_at(self, wall: float) -> float | None:
        """The stream time of the last pass at or before wall time ``wall`` (None: none)."""
        i = bisect.bisect_right(self.walls, wall) - 1
        return self.streams[i] if i >= 0 else None

    def sample(self, wall: float, stream: float, kept: int = MAX_CLOCK) -> None:
        """Record a pass; keeps both sequences non-decreasing, and at most ``kept`` samples
        (the older half thinned)."""
        if self.walls and wall < self.walls[-1]:
            wall = self.walls[-1]
        if self.streams and stream < self.streams[-1]:
            stream = self.streams[-1]
        if self.walls and self.walls[-1] == wall:
            self.streams[-1] = max(self.streams[-1], stream)
        else:
            self.walls.append(wall)
            self.streams.append(stream)
        if len(self.walls) > kept:
            keep = list(range(0, len(self.walls) - kept // 2, 2)) + list(
                range(len(self.walls) - kept // 2, len(self.walls)))
            self.walls = [self.walls[i] for i in keep]
            self.streams = [self.streams[i] for i in keep]

    def to_meta(self) -> list[list[float]]:
        return [[w, s] for w, s in zip(self.walls, self.streams)]


def newest_event_ts(graph: WorkingGraph) -> float | None:
    """The stream's "now": the newest :func:`event_time` in the graph (a full scan)."""
    events = graph.by_kind[NodeKind.EVENT]
    return max((event_time(graph.nodes[e]) for e in events), default=None)


@dataclass
class Stamp:
    """One pass: its op-log id, wall time ``at``, stream time ``now_ts`` and the clock.

    The clock already holds this pass's own sample while the pass runs, so an edge a pass
    writes (stamped ``updated_at = at``) is known to be fresh at ``now_ts``.
    """

    at: float
    now_ts: float | None
    clock: PassClock
    plan_id: str = field(default_factory=lambda: f"cp_{uuid.uuid4().hex[:20]}")

    def op(self, graph: WorkingGraph, op: str, target: str, before: Any, after: Any,
           reasoning: str, peer: str | None = None) -> None:
        """Append one record to the op log (the audit trail and ``history()``); an edge's
        record is under its source, with its other endpoint as ``peer``."""
        graph.add_op(OpRecord(graph.namespace, 0, self.plan_id, op, target, before, after,
                              reasoning, self.at, peer))
