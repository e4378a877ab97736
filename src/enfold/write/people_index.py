"""The people of a namespace by name, kept in step with the working graph.

Folding looks a person up for every speaker and every name an event mentions, and hands
the names of everyone known to the annotator. Scanning every person node for that costs
what the namespace has of people — a memory of a team, a family or a customer base holds
thousands. :class:`PeopleIndex` answers both from keys kept up by a node listener
(rollbacks included), at the cost of the names asked about.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterator

from enfold.graph import WorkingGraph
from enfold.model import Node, NodeKind
from enfold.text.people import Either, name_key, name_parts, same_person, split_title


def _keys(name: str) -> list[tuple[str, object]]:
    """Index keys of one name: itself (case-insensitive), its words without a title, and
    the words :func:`~enfold.text.people.same_person` pairs a one-word name with."""
    _, words = split_title(name)
    out: list[tuple[str, object]] = [("lower", name.lower()), ("words", tuple(words))]
    if len(words) == 1:
        out.append(("one", words[0]))
    elif words:
        out += [("first", words[0]), ("last", words[-1])]
    return out


def _query_keys(name: str) -> list[tuple[str, object]]:
    """The keys under which a person that :func:`find` may return for ``name`` is filed."""
    _, words = split_title(name)
    out: list[tuple[str, object]] = [("lower", name.lower()), ("words", tuple(words))]
    if len(words) == 1:
        out += [("first", words[0]), ("last", words[0])]
    elif words:
        out += [("one", words[0]), ("one", words[-1])]
    return out


class PeopleIndex:
    """Person nodes by name keys, in the graph's own order of the people (the order of
    ``graph.of_kind(PERSON)``), and the keys of their names for the annotator."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.graph = graph
        self.by_key: dict[tuple[str, object], dict[str, None]] = {}
        self.order: dict[str, int] = {}  # person id -> position, as in graph.by_kind
        self.known: Counter[str] = Counter()  # name_key of each person's text
        self.parts: Counter[str] = Counter()  # the parts of those names (name_parts)
        self._next = 0
        for pid in graph.of_kind(NodeKind.PERSON):
            self._add(graph.nodes[pid])
        graph.node_listeners.append(self._on_node)

    @classmethod
    def of(cls, graph: WorkingGraph) -> PeopleIndex:
        return graph.indexes.of(PeopleIndex, lambda: cls(graph))

    # ---------------------------------------------------------------- upkeep
    def _on_node(self, node_id: str, before: Node | None, after: Node | None) -> None:
        # Must not raise (the graph would be left half-changed): Node.names() skips the
        # malformed aliases an imported node may hold.
        was = before is not None and before.kind is NodeKind.PERSON
        now = after is not None and after.kind is NodeKind.PERSON
        if was and before is not None:
            self._drop(before, keep_order=now)
        if now and after is not None:
            self._add(after)

    def _add(self, node: Node) -> None:
        if node.id not in self.order:  # a new person joins the end, as in by_kind
            self.order[node.id] = self._next
            self._next += 1
        for name in node.names():
            for key in _keys(name):
                self.by_key.setdefault(key, {})[node.id] = None
        self.known[name_key(node.text)] += 1
        self.parts.update(_asked_parts(node.text))

    def _drop(self, node: Node, *, keep_order: bool) -> None:
        for name in node.names():
            for key in _keys(name):
                ids = self.by_key.get(key)
                if ids is not None:
                    ids.pop(node.id, None)
                    if not ids:
                        del self.by_key[key]
        k = name_key(node.text)
        self.known[k] -= 1
        if self.known[k] <= 0:
            del self.known[k]
        self.parts.subtract(_asked_parts(node.text))
        for p in [p for p, n in self.parts.items() if n <= 0]:
            del self.parts[p]
        if not keep_order:
            self.order.pop(node.id, None)

    # --------------------------------------------------------------- reading
    def asked(self) -> Container[str]:
        """The keys a question's names are recognized by: every person's name and each part
        of it ("Lindqvist" of "Prof. Lindqvist", "kenji" of "kenji_t")."""
        return Either(self.known, self.parts)

    def candidates(self, name: str) -> Iterator[str]:
        found: set[str] = set()
        for key in _query_keys(name):
            found.update(self.by_key.get(key, ()))
        yield from sorted(found, key=self.order.__getitem__)

    def find(self, name: str) -> str | None:
        """The person ``name`` refers to: the first (in the graph's order) with that exact
        name or alias, ignoring case; else the first that :func:`same_person` accepts."""
        fuzzy = None
        low = name.lower()
        for pid in self.candidates(name):
            names = self.graph.nodes[pid].names()
            if any(n.lower() == low for n in names):
                return pid
            if fuzzy is None and any(same_person(n, name) for n in names):
                fuzzy = pid
        return fuzzy

    def named(self, name: str) -> str | None:
        """The first person whose own name (not an alias) is ``name``, ignoring case."""
        low = name.lower()
        return next((pid for pid in self.candidates(name)
                     if self.graph.nodes[pid].text.lower() == low), None)


def _asked_parts(name: str) -> list[str]:
    """The parts of a name a question may use alone (longer than two letters)."""
    return [p for p in name_parts(name) if len(p) > 2]
