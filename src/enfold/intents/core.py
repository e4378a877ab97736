"""Intents' vocabulary (categories, statuses, the time spans the lifecycle uses) and
the functions that read intents off the graph."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from enfold.errors import InputError
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, Node, NodeKind
from enfold.payloads import INTENT_CATEGORIES
from enfold.settings import Settings

DAY = 86_400.0
CATEGORIES = INTENT_CATEGORIES
STATUSES = ("pending", "suppressed", "deferred", "resolved", "rejected", "expired")
#: Statuses of an intent still waiting for something (it can be resolved or expire).
OPEN = frozenset({"pending", "deferred", "suppressed"})
FEEDBACK_KINDS = ("accept", "modify", "defer", "reject")
CALIBRATION_KEY = "intents.calibration"

#: The defaults of ``Settings.intent_explicit_deadline``, ``intent_explicit_follow_up`` and
#: ``intent_explicit_other``: the evidence score of an explicit obligation (the threshold is
#: 1.0 at w = 1).
EXPLICIT_SCORE: dict[str, float] = {"deadline": Settings.intent_explicit_deadline,
                                    "follow_up": Settings.intent_explicit_follow_up}
EXPLICIT_DEFAULT: float = Settings.intent_explicit_other
#: The defaults of ``Settings.intent_threshold_min`` and ``intent_threshold_max``: the
#: threshold multiplier's clamp, θ_c ∈ [min, max]·base.
THRESHOLD_CLAMP: tuple[float, float] = (Settings.intent_threshold_min,
                                        Settings.intent_threshold_max)
#: The defaults of ``Settings.late_resolution_days`` and ``Settings.intent_lapse_days``.
LATE_RESOLUTION_DAYS: float = Settings.late_resolution_days
LAPSE_DAYS: float = Settings.intent_lapse_days
#: The default of ``Settings.intent_recent_events``.
RECENT_EVENTS: int = Settings.intent_recent_events


#: The defaults of ``Settings.intent_max_score`` and ``Settings.intent_history_max``.
MAX_SCORE: float = Settings.intent_max_score
MAX_HISTORY: int = Settings.intent_history_max
_DAYLIKE = frozenset({"day", "datetime"})
_STRUCTURAL = (EdgeType.PART_OF, EdgeType.RELATED_TO, EdgeType.DERIVED_FROM)
_CONCEPT_EDGES = (EdgeType.GROUNDS, EdgeType.REINFORCES)

Labeler = Callable[[str, Sequence[str], str], str]
"""Writes a goal's label from (category, evidence texts, namespace) — the LLM in llm mode.
Habits need none: "Keep up: <concept>" reuses the concept's label, the LLM's in llm mode;
explicit obligations keep the words they were stated in."""


# ----------------------------------------------------------------------------- reading
def status_of(node: Node) -> str:
    return str(node.attrs.get("status") or "pending")


def category_of(node: Node) -> str:
    return str(node.attrs.get("category") or "goal")


def list_intents(graph: WorkingGraph, *, status: str | Iterable[str] | None = "pending",
                 category: str | None = None) -> list[Node]:
    """Intents by status (``"pending"`` by default; ``"open"``, ``"all"`` or any status or
    list of them) and category; soonest due first, then highest score."""
    if status is None or status == "all":
        wanted: set[str] | None = None
    elif isinstance(status, str):
        wanted = set(OPEN) if status == "open" else {status}
    else:
        wanted = set(status)
    if wanted is not None and wanted - set(STATUSES):
        raise InputError(f"unknown status {min(wanted - set(STATUSES))!r} "
                         f"(use {', '.join(STATUSES)}, open or all)")
    out = [n for n in (graph.nodes[i] for i in graph.of_kind(NodeKind.INTENT))
           if (wanted is None or status_of(n) in wanted)
           and (category is None or category_of(n) == category)]
    out.sort(key=lambda n: (n.attrs.get("due") is None, float(n.attrs.get("due") or 0.0),
                            -float(n.attrs.get("score") or 0.0), n.created_at, n.id))
    return out


def grounding_connections(graph: WorkingGraph, intent_id: str) -> int:
    """Events and concepts with an edge into an intent (the paper's grounding connections)."""
    return len({e.src for e in graph.in_edges(intent_id)
                if (n := graph.nodes.get(e.src)) is not None
                and n.kind in (NodeKind.EVENT, NodeKind.CONCEPT)})


def proactivity(graph: WorkingGraph, min_support: int = 2) -> float:
    """Share of intents with ≥ ``min_support`` grounding connections (CogEval; 0 if none)."""
    counts = [grounding_connections(graph, i) for i in graph.of_kind(NodeKind.INTENT)]
    return sum(c >= min_support for c in counts) / len(counts) if counts else 0.0


def concepts_of(graph: WorkingGraph, event_id: str) -> list[str]:
    """The concepts an event grounds or reinforces."""
    concepts = graph.by_kind[NodeKind.CONCEPT]
    return list(dict.fromkeys(e.dst for e in graph.out_edges(event_id)
                              if e.type in _CONCEPT_EDGES and e.dst in concepts))


def due_end(graph: WorkingGraph, node: Node) -> float | None:
    """When an intent is overdue: the end of its deadline's time anchor, else its due."""
    ends = [float(t.attrs["end"]) for e in graph.in_edges(node.id)
            if e.type is EdgeType.DEADLINE_FOR and (t := graph.nodes.get(e.src)) is not None
            and isinstance(t.attrs.get("end"), (int, float))]
    if ends:
        return max(ends)
    due = node.attrs.get("due")
    return float(due) if isinstance(due, (int, float)) else None


def _day(ts: float) -> int:
    return math.floor(ts / DAY)
