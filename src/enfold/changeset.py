"""What one transaction changed: the nodes, edges, vectors, aliases, op records and meta a
store persists at commit.

The working graph (:mod:`enfold.graph`) journals its changes into a :class:`ChangeSet`; the
stores (:mod:`enfold.store`) write exactly that. It lives apart from both so the stores need
not import the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from enfold.model import Edge, EdgeType, Node, OpRecord

#: An edge's identity: (source id, type, destination id).
EdgeKey = tuple[str, EdgeType, str]


@dataclass
class ChangeSet:
    """What one transaction changed: the store persists exactly this."""

    nodes: dict[str, Node | None] = field(default_factory=dict)  # None = deleted
    edges: dict[EdgeKey, Edge | None] = field(default_factory=dict)
    vectors: dict[str, np.ndarray | None] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    ops: list[OpRecord] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    purge_history: set[str] = field(default_factory=set)  # node ids whose op log is erased
    purge_cache: set[str] = field(default_factory=set)  # embedding-cache hashes to erase
    # A changed node as the store held it before the change set (None: it did not exist).
    # With it a store appends the provenance entries a node gained (see provenance_writes)
    # and leaves alone the text index of a node whose text did not change. A node missing
    # here (a change set built by hand) is written in full.
    before: dict[str, Node | None] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.nodes or self.edges or self.vectors or self.aliases or self.ops
                    or self.meta or self.purge_history or self.purge_cache)

    def absorb(self, later: ChangeSet) -> None:
        """Fold ``later`` (a change set made after this one) into this one, so that storing
        the result equals storing both in order: the last write of a node, edge, vector,
        alias or meta key wins, the state before is the earliest one, ops keep their order,
        and ops of a node whose history ``later`` erases are dropped with that history."""
        self.nodes.update(later.nodes)
        self.edges.update(later.edges)
        self.vectors.update(later.vectors)
        self.aliases.update(later.aliases)
        self.meta.update(later.meta)
        for node_id, node in later.before.items():
            self.before.setdefault(node_id, node)
        if later.purge_history:
            self.ops = [op for op in self.ops if op.target not in later.purge_history
                        and op.peer not in later.purge_history]
            self.purge_history |= later.purge_history
        self.ops.extend(later.ops)
        self.purge_cache |= later.purge_cache

    def provenance_writes(self) -> tuple[list[str], list[tuple[str, int, str]]]:
        """How a store brings its provenance rows in line with this change set: the node
        ids whose rows are deleted first, and the (node id, position, event id) rows to
        insert. A node whose provenance only grew (a concept reinforced by its 1,000th
        event) appends one row instead of rewriting a thousand."""
        reset: list[str] = []
        rows: list[tuple[str, int, str]] = []
        for node_id, node in self.nodes.items():
            if node is None:
                reset.append(node_id)
                continue
            new = node.grounded_in
            if node_id not in self.before:
                before = None
            else:
                old = self.before[node_id]
                before = () if old is None else old.grounded_in
            if before is None or new[:len(before)] != before:
                reset.append(node_id)
                start = 0
            else:
                start = len(before)
            rows.extend((node_id, pos, new[pos]) for pos in range(start, len(new)))
        return reset, rows
