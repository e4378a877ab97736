"""Forgetting an event: delete it and retract what derives from it (SPEC §9).

Concepts, intents, facts and claims lose the event from their provenance; those left with no
grounding event are removed; people and time anchors left with no edge are removed. The op
log of everything removed is erased too (a single FORGET record remains, without the text),
so that forgotten words do not survive in the audit trail.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import GROUNDED_KINDS, Node, NodeKind, OpRecord

_RETRACTABLE = GROUNDED_KINDS | {NodeKind.CLAIM}


def forget_event(graph: WorkingGraph, event: Node, *, at: float) -> dict[str, Any]:
    """Apply the retraction to ``graph`` inside its open transaction; return a report."""
    ev = event.id
    dependants = {n for n, _ in graph.neighbors(ev)}
    dependants |= {
        nid for kind in _RETRACTABLE for nid in graph.of_kind(kind)
        if ev in graph.nodes[nid].grounded_in
    }
    removed: list[str] = []
    updated: list[str] = []
    dependants_of_removed: set[str] = set()
    graph.remove_node(ev)
    for nid in sorted(dependants):
        node = graph.nodes.get(nid)
        if node is None or node.kind is NodeKind.EVENT:
            continue
        if node.kind in _RETRACTABLE:
            remaining = tuple(e for e in node.grounded_in
                              if e != ev and e in graph.by_kind[NodeKind.EVENT])
            if not remaining:
                dependants_of_removed.update(o for o, _ in graph.neighbors(nid))
                graph.remove_node(nid)
                removed.append(nid)
                continue
            attrs = dict(node.attrs)
            if node.kind is NodeKind.CONCEPT:
                attrs["event_count"] = len(remaining)
                vecs = [v for v in (graph.event_vectors.get(e) for e in remaining)
                        if v is not None]
                if vecs:
                    graph.set_vector(nid, np.mean(np.stack(vecs), axis=0))
            if node.kind is NodeKind.FACT:
                times = [graph.nodes[e].ts for e in remaining]
                attrs.update(first=min(times), last=max(times), support=len(remaining),
                             stale=True)
            new = node.with_changes(grounded_in=remaining, attrs=attrs, updated_at=at)
            graph.put_node(new)
            graph.add_op(OpRecord(graph.namespace, 0, "forget", "UPDATE_NODE", nid,
                                  node.to_dict(), new.to_dict(), "forget(): provenance retracted",
                                  at))
            updated.append(nid)
    # People and time anchors that only this event tied to the graph go with it.
    for nid in sorted(dependants | dependants_of_removed):
        node = graph.nodes.get(nid)
        if node is not None and node.kind in (NodeKind.PERSON, NodeKind.TIME) \
                and graph.degree(nid) == 0:
            graph.remove_node(nid)
            removed.append(nid)
    changes = graph.changes()
    changes.purge_history.update([ev, *removed])
    graph.add_op(OpRecord(graph.namespace, 0, "forget", "FORGET", ev, None,
                          {"removed": removed, "updated": updated}, "forget()", at))
    return {"event": ev, "removed": removed, "updated": updated}
