"""The evidence habits and goals emerge from: a concept's days of activity, the links
between concepts (shared grounding, structural edges), and the densest group of them
(peeling), with the labels habits and goals are given."""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from enfold.graph import WorkingGraph
from enfold.intents.core import _CONCEPT_EDGES, _STRUCTURAL, DAY, RECENT_EVENTS, _day
from enfold.model import EdgeType, Node, NodeKind
from enfold.settings import Settings
from enfold.text import goals


class _LinksCache(dict[str, tuple[Any, dict[str, float]]]):
    """Kept in ``graph.indexes``: concept id → (its stamp, its :func:`concept_links`)."""


_first = operator.itemgetter(0)


def _close(before: list[tuple[str, dict[str, float]]],
           now: list[tuple[str, dict[str, float]]], slack: float | None = None) -> bool:
    """Whether two goal scans saw the same concepts with the same links, each weight
    within ``slack`` (``Settings.goal_slack``; None: its default, :data:`GOAL_SLACK`)."""
    slack = GOAL_SLACK if slack is None else slack
    if len(before) != len(now):
        return False
    for (a, old), (b, new) in zip(before, now, strict=True):
        if a != b:
            return False
        if old is new:
            continue
        if old.keys() != new.keys() or any(abs(w - old[k]) > slack
                                           for k, w in new.items()):
            return False
    return True


def habit_days(graph: WorkingGraph, concept_id: str, at_ts: float, window_days: float,
               source: str | None = None, *, recent: int = RECENT_EVENTS) -> list[str]:
    """The concept's occurrences in (at − window, at], one per distinct (UTC) day, oldest
    first. An occurrence is an event of the concept by ``source`` (a habit is someone's)
    that does not state an obligation: saying "I need to call the dentist" on three days
    is not a habit of calling the dentist. Only the concept's ``recent`` latest events are
    looked at (``Settings.intent_recent_events``)."""
    node = graph.nodes[concept_id]
    lo = at_ts - window_days * DAY
    latest = [(n.ts, e) for e in node.grounded_in[-recent:]
              if (n := graph.nodes.get(e)) is not None]
    by_day: dict[int, str] = {}
    for ts, ev in sorted((p for p in latest if lo < p[0] <= at_ts), key=_first):
        day = _day(ts)
        if day not in by_day and graph.nodes[ev].attrs.get("source") == source \
                and not any(e.type is EdgeType.TRIGGERS for e in graph.out_edges(ev)):
            by_day[day] = ev
    return list(by_day.values())


def concept_links(graph: WorkingGraph, concept_id: str, recent: int = RECENT_EVENTS
                  ) -> dict[str, float]:
    """Weighted links of a concept to other concepts: structural edges (their weight) and
    shared grounding events (overlap |A∩B| / min(|A|, |B|)); the stronger one counts.

    Shared grounding counts events with a GROUNDS/REINFORCES edge into both concepts: a
    parent theme's provenance holds its children's events by construction, which is the
    PART_OF edge's business, not extra evidence of convergence. The overlap is read from
    the concept's ``recent`` latest direct events (``Settings.intent_recent_events``).
    """
    concepts = graph.by_kind[NodeKind.CONCEPT]
    out: dict[str, float] = {}
    for other, e in graph.links(concept_id, _STRUCTURAL):
        if other in concepts and other != concept_id:
            out[other] = max(out.get(other, 0.0), e.weight)
    # The most recent events with an edge of their own into the concept, read from the end
    # of its provenance: the cost follows ``recent``, not the concept's size.
    events, mine = direct_events(graph, concept_id, recent)
    shared: Counter[str] = Counter()
    for ev in events:
        for e in graph.out_edges(ev):
            if e.type in _CONCEPT_EDGES and e.dst != concept_id and e.dst in concepts:
                shared[e.dst] += 1
    for other, k in shared.items():
        size = min(mine, len(graph.nodes[other].grounded_in))
        out[other] = max(out.get(other, 0.0), min(1.0, k / max(1, size)))
    return out


# the defaults of Settings.goal_slack and Settings.goal_memos
GOAL_SLACK: float = Settings.goal_slack
GOAL_MEMOS: int = Settings.goal_memos


class _GoalMemos(dict[tuple[str, ...], tuple[list[tuple[str, dict[str, float]]], list[str]]]):
    """Kept in ``graph.indexes``: per scanned neighbourhood (its concepts, in scan order), the
    rows and the group of its last peeling; at most ``Settings.goal_memos`` of them."""


class _EvidenceDays(dict[str, tuple[Node, frozenset[int]]]):
    """Kept in ``graph.indexes``: intent id → (the node read, its evidence days)."""


def cached_links(graph: WorkingGraph, concept_id: str, recent: int = RECENT_EVENTS
                 ) -> dict[str, float]:
    """:func:`concept_links`, remembered until the concept itself changes (its provenance
    or any update): the goal scan asks for the same few concepts event after event.

    A concept's shared-event overlap moves when one of its own recent events joins another
    concept — which reinforces that concept and so changes it — or, slightly, when the other
    concept grows; the second is tolerated until the concept's next change.
    """
    node = graph.nodes[concept_id]
    stamp = (len(node.grounded_in), node.updated_at, node.attrs.get("level"), recent)
    cache = graph.indexes.of(_LinksCache, _LinksCache)
    hit = cache.get(concept_id)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    links = concept_links(graph, concept_id, recent)
    cache[concept_id] = (stamp, links)
    return links


def direct_events(graph: WorkingGraph, concept_id: str, n: int = RECENT_EVENTS
                  ) -> tuple[list[str], int]:
    """Up to ``n`` of the latest events that ground or reinforce the concept directly, and
    how many such events it has.

    A leaf concept's provenance is exactly those events. A parent theme's provenance also
    holds its children's events, so its own are picked out by their edges — a scan that
    stops after ``8 n`` entries, so a parent of large children costs no more than a leaf
    (its count is then what the scan found).
    """
    node = graph.nodes[concept_id]
    if not node.attrs.get("level"):
        return list(node.grounded_in[-n:]), len(node.grounded_in)
    out: list[str] = []
    for ev in itertools.islice(reversed(node.grounded_in), 8 * n):
        if any(graph.edge(ev, t, concept_id) is not None for t in _CONCEPT_EDGES):
            out.append(ev)
            if len(out) >= n:
                break
    out.reverse()
    return out, len(out)


Links = dict[str, dict[str, float]]


def symmetric(links: Links) -> Links:
    """Pair weights among the keys of ``links``, symmetric (the stronger direction wins)."""
    out: Links = {a: {} for a in links}
    for a, row in links.items():
        for b, x in row.items():
            if b in out and b != a:
                out[a][b] = out[b][a] = max(x, out[a].get(b, 0.0))
    return out


def density(group: Sequence[str], links: Links) -> float:
    """Weighted density: the sum of pair weights over the number of pairs (reference)."""
    n = len(group)
    if n < 2:
        return 0.0
    total = sum(links[a].get(b, 0.0) for i, a in enumerate(group) for b in group[i + 1:])
    return total / (n * (n - 1) / 2)


def peeling(links: Links, min_size: int = 3) -> Iterator[tuple[float, frozenset[str]]]:
    """Greedy peeling (Charikar) over symmetric ``links``: each group met while dropping
    the node of least weighted degree until ``min_size`` remain, with its weighted density.
    O(n²) with degrees kept up to date."""
    deg = {a: sum(row.values()) for a, row in links.items()}
    total = sum(deg.values()) / 2
    alive = set(links)
    while len(alive) >= min_size:
        n = len(alive)
        yield total / (n * (n - 1) / 2), frozenset(alive)
        if n == min_size:
            return
        weakest = min(alive, key=lambda a: (deg[a], a))
        alive.discard(weakest)
        total -= deg[weakest]
        for b, x in links[weakest].items():
            if b in alive:
                deg[b] -= x


def densest_group(links: Links, min_size: int = 3) -> tuple[list[str], float]:
    """The densest connected group met while :func:`peeling`, the earliest among equals,
    or ``([], 0.0)``. Connectivity is checked from the densest group down, so usually once
    rather than at every step."""
    met = [(d, step, group) for step, (d, group) in enumerate(peeling(links, min_size))
           if d > 0.0]
    for d, _, group in sorted(met, key=lambda x: (-x[0], x[1])):
        if _connected(set(group), links):
            return sorted(group), d
    return [], 0.0


def habit_label(concept: Node, texts: Sequence[str] = ()) -> str:
    """A habit's label: "Keep <the activity its occurrences report>" (``texts``), else
    "Keep up: <the concept's label>" (the LLM's label in llm mode)."""
    return goals.habit_label(concept.text, texts)


def goal_template(graph: WorkingGraph, group: Sequence[str], links: Links) -> str:
    """A goal's label without an LLM: its most linked concept, with two of the others."""
    central = max(group, key=lambda a: (sum(links.get(a, {}).get(b, 0.0) for b in group), a))
    others = [graph.nodes[c].text for c in group if c != central]
    return f"Goal: {graph.nodes[central].text} (with {', '.join(others[:2])})"


def _connected(group: set[str], links: Links) -> bool:
    start = next(iter(group))
    seen = {start}
    stack = [start]
    while stack:
        for b, x in links[stack.pop()].items():
            if x > 0 and b in group and b not in seen:
                seen.add(b)
                stack.append(b)
    return len(seen) == len(group)
