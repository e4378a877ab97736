"""Proactive context assembly (CogniFold Eq. 1).

    Score(v) = [α·PR(v) + β·exp(−λ·Δt_v) + γ·Acc(v)] · U(v)

The scores pick a window of nodes that are structurally central, fresh and used, before the
event is interpreted; the window is split into Immediate, Working and Background tiers, and
the event's nearest concepts, facts and claims and the people involved are added.

Cost does not grow with the graph: candidates come from bounded pools — recently active
nodes, the PageRank leaders of the last refresh, pending intents and the embedding
neighbours — and PageRank itself is refreshed lazily and warm-started
(:mod:`enfold.pagerank`). Time is the event stream's own clock: Δt is measured from
the event being folded, so replaying a year-old conversation behaves as it did live.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import EdgeType, Node, NodeKind
from enfold.pagerank import IncrementalPageRank
from enfold.settings import Settings
from enfold.text.speakers import speaker_of
from enfold.write.people_index import PeopleIndex

# the defaults of Settings.context_concept_bonus and Settings.context_intent_bonus
_TYPE_BONUS: dict[NodeKind, float] = {NodeKind.CONCEPT: Settings.context_concept_bonus,
                                      NodeKind.INTENT: Settings.context_intent_bonus}


@dataclass(frozen=True)
class Scored:
    id: str
    score: float
    pagerank: float
    recency: float
    access: float
    urgency: float


@dataclass
class Context:
    """The assembled context of one event."""

    immediate: list[Scored] = field(default_factory=list)
    working: list[Scored] = field(default_factory=list)
    background: list[Scored] = field(default_factory=list)
    nearest: dict[NodeKind, list[tuple[str, float]]] = field(default_factory=dict)
    people: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        seen = [s.id for s in (*self.immediate, *self.working, *self.background)]
        for hits in self.nearest.values():
            seen += [h for h, _ in hits]
        return list(dict.fromkeys([*seen, *self.people]))


def activity_time(node: Node) -> float:
    """When a node was last active on the stream's clock (event time, not wall time)."""
    if node.kind is NodeKind.EVENT:
        return node.ts
    return float(node.attrs.get("last_ts") or node.attrs.get("valid_from") or node.created_at)


def urgency(graph: WorkingGraph, node_id: str, now_ts: float, settings: Settings) -> float:
    """U(v) ≥ 1: rises linearly to ``urgency_max`` over the window before a linked deadline."""
    best = 1.0
    for other, edge in graph.neighbors(node_id):
        if edge.type not in (EdgeType.DEADLINE_FOR, EdgeType.MENTIONS):
            continue
        t = graph.nodes.get(other)
        if t is None or t.kind is not NodeKind.TIME:
            continue
        start = t.attrs.get("start")
        if start is None:
            continue
        hours_left = (float(start) - now_ts) / 3600.0
        if 0.0 <= hours_left <= settings.urgency_window_h:
            u = 1.0 + (settings.urgency_max - 1.0) * (1.0 - hours_left / settings.urgency_window_h)
            best = max(best, u)
    return best


def urgencies(graph: WorkingGraph, deadlines: list[tuple[float, str]], now_ts: float,
              settings: Settings) -> dict[str, float]:
    """U(v) for every node linked to a time anchor due within the urgency window.

    ``deadlines`` is a sorted list of (start, time node id); only the anchors inside
    [now, now + window] are visited, so the cost follows the few imminent deadlines rather
    than the degree of every candidate. Nodes absent from the result have U = 1; the result
    equals :func:`urgency` for each node.
    """
    lo = bisect.bisect_left(deadlines, (now_ts, ""))
    hi = bisect.bisect_right(deadlines, (now_ts + settings.urgency_window_h * 3600.0, "\uffff"))
    out: dict[str, float] = {}
    for start, tid in deadlines[lo:hi]:
        if tid not in graph.nodes:
            continue
        hours_left = (start - now_ts) / 3600.0
        u = 1.0 + (settings.urgency_max - 1.0) * (1.0 - hours_left / settings.urgency_window_h)
        for other, edge in graph.neighbors(tid):
            if edge.type in (EdgeType.DEADLINE_FOR, EdgeType.MENTIONS):
                out[other] = max(out.get(other, 1.0), u)
    return out


class ContextAssembler:
    """Per-graph state for context assembly: PageRank and the recently-active pool."""

    def __init__(self, graph: WorkingGraph, settings: Settings) -> None:
        self.graph, self.s = graph, settings
        # Kept up by its edge listener on every change; its power iteration runs when a
        # reader asks (:attr:`rank`): the local planner never does, the LLM planner's
        # prompt does on every event.
        self._rank = IncrementalPageRank(graph, damping=settings.pagerank_damping,
                                         tol=settings.pagerank_tol)
        self._fresh = False
        self.since_refresh = 0
        self.recent: deque[str] = deque(maxlen=settings.context_recent)
        derived = sorted(
            (n for k in NodeKind if k is not NodeKind.EVENT
             for n in (graph.nodes[i] for i in graph.of_kind(k))),
            key=activity_time,
        )
        for n in derived[-settings.context_recent:]:
            self.recent.append(n.id)
        self.deadlines: list[tuple[float, str]] = sorted(
            (float(graph.nodes[t].attrs["start"]), t) for t in graph.of_kind(NodeKind.TIME)
            if graph.nodes[t].attrs.get("start") is not None
        )

    @classmethod
    def of(cls, graph: WorkingGraph, settings: Settings) -> ContextAssembler:
        """The graph's assembler under ``settings``: the caller's settings are the ones read
        (not the first caller's); a change of PageRank's own settings or of the recent pool's
        size rebuilds it."""
        found = graph.indexes.of(ContextAssembler, lambda: cls(graph, settings))
        if found.s is not settings:
            if (found.s.pagerank_damping, found.s.pagerank_tol, found.s.context_recent) != \
                    (settings.pagerank_damping, settings.pagerank_tol, settings.context_recent):
                found._rank.detach()
                found = graph.indexes.put(cls(graph, settings))
            found.s = settings
        return found

    def note_event(self, touched: list[str]) -> None:
        """After an event is folded: remember what it touched; refresh PageRank lazily."""
        for node_id in touched:
            self.recent.append(node_id)
            node = self.graph.nodes.get(node_id)
            if node is not None and node.kind is NodeKind.TIME \
                    and node.attrs.get("start") is not None:
                bisect.insort(self.deadlines, (float(node.attrs["start"]), node_id))
        self.since_refresh += 1

    @property
    def rank(self) -> IncrementalPageRank:
        """PageRank for a reader, warm-started again once enough events were folded since
        its last refresh. A refresh costs O(edges); spacing refreshes by a fixed share of
        the graph keeps the amortized cost per event constant as the graph grows."""
        due = max(self.s.pagerank_every, int(self.graph_edges() * self.s.pagerank_churn))
        if not self._fresh or self.since_refresh >= due:
            self._rank.refresh()
            self._fresh, self.since_refresh = True, 0
        return self._rank

    def graph_edges(self) -> int:
        return self._rank.edges

    def score(self, node: Node, now_ts: float, max_access: int,
              urgent: dict[str, float] | None = None) -> Scored:
        s = self.s
        pr = self.rank.score(node.id)
        dt_h = max(0.0, (now_ts - activity_time(node)) / 3600.0)
        rec = math.exp(-s.recency_lambda * dt_h)
        acc = node.access_count / max_access if max_access > 0 else 0.0
        u = (urgent.get(node.id, 1.0) if urgent is not None
             else urgency(self.graph, node.id, now_ts, s))
        return Scored(node.id, (s.alpha * pr + s.beta * rec + s.gamma * acc) * u, pr, rec, acc, u)

    def window(self, nodes: list[Node], now_ts: float, urgent: dict[str, float]
               ) -> list[Scored]:
        """The ``context_window`` best of ``nodes`` by Eq. 1, best first (ties keep the
        pool's order): :meth:`score` for every node, computed as arrays."""
        s, n = self.s, len(nodes)
        if not n:
            return []
        ids = [x.id for x in nodes]
        rank = self.rank
        pr = np.fromiter((rank.score(i) for i in ids), float, n)
        act = np.fromiter((activity_time(x) for x in nodes), float, n)
        acc = np.fromiter((x.access_count for x in nodes), float, n)
        u = np.fromiter((urgent.get(i, 1.0) for i in ids), float, n)
        rec = np.exp(-s.recency_lambda * np.maximum(0.0, (now_ts - act) / 3600.0))
        top = float(acc.max())
        acc = acc / top if top > 0 else np.zeros(n)
        score = (s.alpha * pr + s.beta * rec + s.gamma * acc) * u
        best = np.argsort(-score, kind="stable")[: s.context_window]
        return [Scored(ids[i], float(score[i]), float(pr[i]), float(rec[i]), float(acc[i]),
                       float(u[i])) for i in best.tolist()]

    def assemble(self, event: Node, vec: np.ndarray | None, *, tiers: bool = True,
                 nearest: tuple[NodeKind, ...] = (NodeKind.CONCEPT, NodeKind.FACT,
                                                  NodeKind.CLAIM)) -> Context:
        """The context of ``event``: the three tiers of the Eq. 1 window (unless ``tiers``
        is False), the nearest nodes of each kind in ``nearest``, and the speaker.

        A planner asks for what it reads: the LLM planner shows the model all of it; the
        local planner decides by the nearest concepts alone, and scoring a window of a few
        hundred nodes per event that nobody reads would be most of its cost.
        """
        g, s = self.graph, self.s
        now_ts = event.ts
        ctx = Context(nearest=self._nearest(vec, nearest), people=self._speaker(event))
        if not tiers:
            return ctx
        pool = dict.fromkeys(self.recent)
        pool.update(dict.fromkeys(self.rank.top(s.context_window)))
        for iid in itertools.islice(reversed(g.by_kind[NodeKind.INTENT].keys()),
                                    s.context_window):
            pool[iid] = None
        urgent = urgencies(g, self.deadlines, now_ts, s)
        pool.update(dict.fromkeys(u for u in urgent if u in g.nodes))
        for hits in ctx.nearest.values():
            pool.update(dict.fromkeys(h for h, _ in hits))
        pool.pop(event.id, None)
        nodes = [g.nodes[i] for i in pool if i in g.nodes]
        self._tiers(ctx, self.window(nodes, now_ts, urgent))
        return ctx

    def _nearest(self, vec: np.ndarray | None, kinds: tuple[NodeKind, ...]
                 ) -> dict[NodeKind, list[tuple[str, float]]]:
        g, s = self.graph, self.s
        if vec is None or not len(g.node_vectors):
            return {}
        # Facts and claims pile up with the stream: the nearest among the most recent ones
        # (older ones reach the context through their concepts).
        return {kind: g.nearest(vec, kind, s.context_nearest,
                                last=None if kind is NodeKind.CONCEPT
                                else s.context_recent_vectors)
                for kind in kinds}

    def _speaker(self, event: Node) -> list[str]:
        source = speaker_of(event.attrs.get("source"))
        if not source:
            return []
        pid = PeopleIndex.of(self.graph).named(source)
        return [] if pid is None else [pid]

    def _tiers(self, ctx: Context, window: list[Scored]) -> None:
        s, g = self.s, self.graph
        n = s.context_window
        left = list(window)
        u_span = max(1e-9, s.urgency_max - 1.0)
        bonus = {NodeKind.CONCEPT: s.context_concept_bonus,
                 NodeKind.INTENT: s.context_intent_bonus}

        def take(count: int, key: Callable[[Scored], float]) -> list[Scored]:
            nonlocal left
            ranked = sorted(left, key=key)
            chosen = ranked[:count]
            taken = {id(c) for c in chosen}
            left = [x for x in left if id(x) not in taken]
            return chosen

        ctx.immediate = take(max(1, round(n * s.tier_immediate)),
                             lambda x: -(0.7 * x.recency + 0.3 * (x.urgency - 1.0) / u_span))
        ctx.working = take(max(1, round(n * s.tier_working)), lambda x: -(
            0.5 * x.pagerank + 0.3 * x.recency
            + 0.2 * bonus.get(g.nodes[x.id].kind, 0.0)))
        # Background: PageRank plus real diversity — greedy, each pick far from those chosen
        # (diversity = 1 − max cosine to the nodes already selected, kept incrementally).
        want = max(1, round(n * s.tier_background))
        vecs = [g.vector(x.id) for x in left]
        dim = next((v.shape[0] for v in vecs if v is not None), 0)
        mat = np.stack([v if v is not None else np.zeros(dim, np.float32) for v in vecs]) \
            if dim else np.zeros((len(left), 0), np.float32)
        has_vec = np.array([v is not None for v in vecs], dtype=bool)
        max_sim = np.zeros(len(left))
        for chosen in (*ctx.immediate, *ctx.working):
            v = g.vector(chosen.id)
            if v is not None and dim and v.shape[0] == dim:
                max_sim = np.maximum(max_sim, mat @ v)
        pr = np.array([x.pagerank for x in left])
        free = np.ones(len(left), dtype=bool)
        background: list[Scored] = []
        while free.any() and len(background) < want:
            div = np.where(has_vec, 1.0 - max_sim, 1.0)
            val = np.where(free, 0.8 * pr + 0.2 * div, -np.inf)
            i = int(np.argmax(val))
            free[i] = False
            background.append(left[i])
            if has_vec[i]:
                max_sim = np.maximum(max_sim, mat @ mat[i])
        ctx.background = background
