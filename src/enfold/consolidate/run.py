"""A consolidation pass: the structural debts, fact consolidation and claim reconciliation,
in order, over the dirty region or the whole graph.

:func:`consolidate` is the pass itself — a plain function over the working graph that runs
inside an open graph transaction and returns a :class:`ConsolidationReport`. Its order:

1. **claims** — reconcile the region's claims (merge repeats, supersede changes of stance);
2. **accumulation** and **compression**, repeated until neither changes anything (a merge
   moves centroids, which may attach an event; an attachment moves a centroid, which may make
   two concepts duplicates);
3. **facts** — form and extend facts from the region's events (and the events just
   attached), and for the concepts just merged;
4. **decay** — every edge on a full pass; on an incremental one, the edges that have waited
   longest among those that can still fade, up to a budget;
5. **completion** — link the region's orphan concepts to their nearest concepts (after
   decay, so that a link decay has just archived is restored at once, not a pass later).

Each step reaches a fixed point, so a second full pass right after the first changes nothing.

:func:`run_pass` is the I/O around it: take the scheduler's dirty set, open the transaction,
run the pass, commit graph and store together (or roll both back and give the dirty set
back), log the report. The write path asks the :class:`Scheduler` after each folded event
(``Scheduler.of(graph, settings).tick(1)``) and calls :func:`run_pass` when it says a pass
is due.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from enfold.changeset import ChangeSet
from enfold.consolidate.centroids import ConceptCentroids
from enfold.consolidate.claims import reconcile_claims
from enfold.consolidate.clock import CLOCK_KEY, PassClock, Stamp, newest_event_ts
from enfold.consolidate.complete import complete
from enfold.consolidate.decay import DecayResult, decay_edges
from enfold.consolidate.facts import FactWriter, consolidate_facts
from enfold.consolidate.group import GroupResult, group_unfolded
from enfold.consolidate.merge import compress
from enfold.consolidate.reinforce import accumulate
from enfold.consolidate.schedule import SEQ_KEY, Scheduler
from enfold.graph import WorkingGraph
from enfold.model import NodeKind, now
from enfold.settings import Settings
from enfold.store.base import Store
from enfold.write.calibration import thresholds_for

if TYPE_CHECKING:
    from enfold.write.planner_local import PlannerState

log = logging.getLogger("enfold.consolidate")

__all__ = ["ConsolidationReport", "Scheduler", "consolidate", "run_pass"]

_MAX_ROUNDS = 8  # accumulation/compression rounds; each round strictly shrinks the work


@dataclass
class ConsolidationReport:
    """What one pass did (merged, reinforced, decayed, linked, facts, claims)."""

    merged: int = 0
    reinforced: int = 0
    decayed: int = 0
    pruned: int = 0
    linked: int = 0
    facts: int = 0
    facts_extended: int = 0
    grouped: int = 0  # unfolded events settled by grouping (joined or formed a concept)
    formed: int = 0  # concepts grouping formed
    claims_merged: int = 0
    claims_superseded: int = 0
    duration_s: float = 0.0
    full: bool = False
    region: int = 0  # nodes in the region (0 on a full pass)
    visited: dict[str, int] = field(default_factory=dict)  # concepts, events, claims, edges
    writer_failures: int = 0
    pass_id: str = ""
    now_ts: float | None = None  # the stream time the pass ran at

    @property
    def changed(self) -> int:
        """How many things the pass changed (0: the graph is as it was)."""
        return (self.merged + self.reinforced + self.decayed + self.pruned + self.linked
                + self.facts + self.facts_extended + self.claims_merged
                + self.claims_superseded + self.grouped)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "changed": self.changed}


def _kind_subset(graph: WorkingGraph, ids: Iterable[str], kind: NodeKind) -> list[str]:
    members = graph.by_kind[kind]
    return sorted(i for i in ids if i in members)


def _planner_state(graph: WorkingGraph, settings: Settings) -> PlannerState:
    """The local planner's state of the graph: term statistics, pending and recent events."""
    from enfold.write.planner_local import LocalPlanner

    return LocalPlanner(settings).state(graph)


def _group(graph: WorkingGraph, settings: Settings, stamp: Stamp, cut: float,
           events: list[str] | None) -> GroupResult:
    state = _planner_state(graph, settings)
    return group_unfolded(graph, settings, stamp, threshold=cut, terms=state.terms,
                          recent=[*state.pending, *state.recent], events=events)


def consolidate(
    graph: WorkingGraph,
    settings: Settings,
    *,
    region: Iterable[str] | None = None,
    now_ts: float | None = None,
    writer: FactWriter | None = None,
    embedder_name: str | None = None,
    assign_threshold: float | None = None,
    decay_budget: int | None = None,
    at: float | None = None,
) -> ConsolidationReport:
    """Run one consolidation pass inside the graph's open transaction.

    ``region``: node ids to consolidate around (None: the whole graph, a full pass).
    ``now_ts``: the stream time (default: the newest event's time, see
    :func:`enfold.consolidate.clock.event_time`). ``writer``: writes fact
    statements (LLM mode); failures fall back to the template statement.
    ``assign_threshold``: cosine at which accumulation attaches an event to a concept
    (default: ``settings.assign_threshold`` or the embedder's calibration).
    ``decay_budget``: edges an incremental pass decays at most (default: ten per event of
    the region, at least 256; see :mod:`enfold.consolidate.decay`).
    """
    t0 = time.perf_counter()
    full = region is None
    sched = Scheduler.of(graph, settings)
    at = now() if at is None else at
    area: set[str] | None = None if region is None else sched.region(dict.fromkeys(region))
    if full:
        sched.note_events(set(graph.of_kind(NodeKind.EVENT)))
        stream_now = newest_event_ts(graph) if now_ts is None else now_ts
    else:
        assert area is not None
        sched.note_events(area)
        stream_now = sched.newest_ts if now_ts is None else now_ts
    clock = PassClock.of(graph)
    if stream_now is not None:
        clock.sample(at, stream_now, settings.pass_clock_samples)
    stamp = Stamp(at=at, now_ts=stream_now, clock=clock)
    sched.clock = clock
    report = ConsolidationReport(full=full, region=0 if area is None else len(area),
                                 pass_id=stamp.plan_id, now_ts=stream_now)
    visited = {"concepts": 0, "events": 0, "claims": 0, "edges": 0}
    threshold = (assign_threshold if assign_threshold is not None
                 else settings.assign_threshold
                 or thresholds_for(embedder_name, settings)["assign"])
    group_cut = settings.group_threshold or thresholds_for(embedder_name, settings)["group"]
    was_paused, sched.paused = sched.paused, True
    try:
        # 1. claims
        claims = reconcile_claims(graph, settings, stamp, sched.claims(rebuild=full),
                                  claims=None if area is None
                                  else _kind_subset(graph, area, NodeKind.CLAIM),
                                  embedder=embedder_name)
        report.claims_merged, report.claims_superseded = claims.merged, claims.superseded
        visited["claims"] += claims.visited
        # 2. accumulation and compression, to a fixed point
        events = None if area is None else _kind_subset(graph, area, NodeKind.EVENT)
        concepts: list[str] | None = (None if area is None
                                      else _kind_subset(graph, area, NodeKind.CONCEPT))
        scope = concepts
        near = ConceptCentroids(graph)
        attached: set[str] = set()
        merged: list[tuple[str, str]] = []
        for _ in range(_MAX_ROUNDS):
            acc = accumulate(graph, settings, stamp, threshold=threshold, events=events,
                             centroids=near)
            visited["events"] += acc.visited
            report.reinforced += acc.reinforced
            attached.update(ev for ev, _ in acc.attached)
            grp = _group(graph, settings, stamp, group_cut, events) if settings.group_events \
                else None
            if grp is not None:
                report.grouped += len(grp.attached)
                report.formed += len(grp.formed)
                attached.update(ev for ev, _ in grp.attached)
                acc.attached += grp.attached
                acc.reinforced += len(grp.attached)
                if grp.attached:
                    near.invalidate()
            mres = compress(graph, settings, stamp, region=scope, centroids=near)
            visited["concepts"] += mres.visited
            report.merged += mres.merged
            merged += mres.pairs
            if not acc.reinforced and not mres.merged:
                break
            # Only what moved can have become a duplicate or attract an event.
            scope = sorted({graph.resolve(c) for _, c in acc.attached}
                           | {graph.resolve(k) for k, _ in mres.pairs})
        # 3. facts (the index follows this pass's merges through the graph's aliases)
        index = sched.facts(rebuild=full)
        survivors = sorted({graph.resolve(k) for k, _ in merged})
        merged_keys = [(p, c) for c in survivors for p in sorted(index.events.get(c, {}))]
        fact_events = None if events is None else sorted({*events, *attached})
        facts = consolidate_facts(graph, settings, stamp, index, events=fact_events,
                                  keys=merged_keys, writer=writer,
                                  terms=_planner_state(graph, settings).terms)
        report.facts, report.facts_extended = facts.formed, facts.extended
        report.writer_failures = facts.writer_failures
        visited["events"] += facts.visited
        # 4. decay
        if full:
            dres = decay_edges(graph, settings, stamp)
        elif stream_now is not None:
            queue = sched.decay()
            budget = decay_budget if decay_budget is not None else max(
                settings.decay_min, settings.decay_per_event * len(events or ()))
            keys = queue.pop_due(stream_now - settings.decay_step_h * 3600.0, budget)
            dres = decay_edges(graph, settings, stamp, keys=keys, queue=queue,
                               min_hours=settings.decay_step_h)
        else:
            dres = DecayResult()
        report.decayed, report.pruned = dres.decayed, dres.pruned
        visited["edges"] += dres.visited
        # 5. completion
        comp = complete(graph, settings, stamp,
                        region=None if area is None else {*(concepts or ()), *survivors},
                        centroids=near)
        report.linked = comp.linked
        visited["concepts"] += comp.visited
        if full:
            sched.decay(rebuild=True)
        # bookkeeping: the pass clock, the consolidated sequence number, the audit record
        if report.changed and stream_now is not None:
            graph.set_meta(CLOCK_KEY, clock.to_meta())
        if sched.seq > int(graph.meta.get(SEQ_KEY) or 0):
            graph.set_meta(SEQ_KEY, sched.seq)
        report.visited = visited
        report.duration_s = time.perf_counter() - t0
        if report.changed:
            stamp.op(graph, "CONSOLIDATE", "consolidation", None, report.to_dict(),
                     f"{'full' if full else 'incremental'} consolidation pass")
    finally:
        sched.paused = was_paused
    return report


def run_pass(
    graph: WorkingGraph,
    store: Store,
    settings: Settings,
    *,
    full: bool = False,
    writer: FactWriter | None = None,
    embedder_name: str | None = None,
    now_ts: float | None = None,
    commit: Callable[[ChangeSet], None] | None = None,
) -> ConsolidationReport:
    """Take the dirty region (or everything), consolidate, and commit graph and store
    atomically; on failure both are rolled back and the region stays dirty.

    ``commit`` writes the pass's change set (default: its own store transaction). A pass
    that runs between two events of a fold group hands it to the group instead
    (:meth:`enfold.write.fold.Folder.defer`): one transaction for both, and the pages they
    share are written once. If that group's write fails, the working graph is reloaded and
    the region is dirty again, as after a failed pass."""
    sched = Scheduler.of(graph, settings)
    taken = sched.take()
    if not full and not taken:
        return ConsolidationReport()
    graph.begin()
    try:
        report = consolidate(graph, settings, region=None if full else taken, now_ts=now_ts,
                             writer=writer, embedder_name=embedder_name)
        if commit is None:
            # Derived state, rebuilt by the next pass if a power failure undoes it.
            store.commit(graph.namespace, graph.changes(), durable=False)
        else:
            commit(graph.changes())
    except BaseException:
        was, sched.paused = sched.paused, True
        try:
            graph.rollback()
        finally:
            sched.paused = was
        sched.restore(taken)
        sched.events_since = 0  # a failed pass waits for the next consolidate_every events
        raise
    graph.commit()
    sched.done(full=full)
    log.info("consolidation %s of %s: %s", "full pass" if full else "pass", graph.namespace,
             {k: v for k, v in report.to_dict().items() if v and k != "visited"})
    return report
