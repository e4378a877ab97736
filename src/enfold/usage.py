"""What each namespace has spent: planner failures, events folded bare, failed consolidation
passes, and the LLM planner's calls and tokens.

:class:`UsageLedger` counts them for one :class:`~enfold.memory.Memory` and keeps them in
each namespace's graph meta (``usage``), so ``stats()`` totals and the LLM's token budget
survive restarts: what earlier processes saved is added once, when the namespace's graph
is first loaded, and the counters are written back after each fold when they changed. The
ledger lives on the memory, not in a namespace's session, so an evicted session loses no
counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from enfold.graph import WorkingGraph
from enfold.model import Node

if TYPE_CHECKING:
    from enfold.store.base import Store
    from enfold.write.planner_llm import LLMPlanner

__all__ = ["USAGE_KEY", "UsageLedger"]

#: The graph meta key the counters are kept under.
USAGE_KEY = "usage"


class UsageLedger:
    """The counters of every namespace this memory has folded or loaded."""

    def __init__(self, llm_planner: LLMPlanner | None = None) -> None:
        """``llm_planner``: the memory's LLM planner, whose calls and tokens are counted
        per namespace (None: no LLM, and no ``llm`` section unless a saved one exists)."""
        self.llm_planner = llm_planner
        self._failures: dict[str, dict[str, int]] = {}  # namespace → planner → failures
        self._unplanned: dict[str, int] = {}  # namespace → events folded bare on errors
        self._pass_failures: dict[str, int] = {}  # namespace → failed automatic passes
        self._saved: dict[str, dict[str, Any]] = {}  # what the store holds

    # ------------------------------------------------------------------ counting
    def count_failure(self, event: Node, planner: str, exc: BaseException) -> None:
        """A planner failed on ``event`` (the Folder's ``on_failure``)."""
        row = self._failures.setdefault(event.namespace, {})
        row[planner] = row.get(planner, 0) + 1

    def count_unplanned(self, namespace: str, events: int) -> None:
        """``events`` were folded bare because every planner failed on them."""
        self._unplanned[namespace] = self._unplanned.get(namespace, 0) + events

    def count_pass_failure(self, namespace: str) -> None:
        """An automatic consolidation pass failed (and was rolled back)."""
        self._pass_failures[namespace] = self._pass_failures.get(namespace, 0) + 1

    def unplanned(self, namespace: str | None = None) -> int:
        """Events folded bare in ``namespace``, or in all of them when None."""
        if namespace is None:
            return sum(self._unplanned.values())
        return self._unplanned.get(namespace, 0)

    # ------------------------------------------------------------------ reading
    def current(self, namespace: str) -> dict[str, Any]:
        """This process's counters of the namespace (which include what was restored)."""
        out: dict[str, Any] = {"planner_failures": dict(self._failures.get(namespace, {})),
                               "unplanned_events": self._unplanned.get(namespace, 0),
                               "pass_failures": self._pass_failures.get(namespace, 0)}
        if self.llm_planner is not None:
            out["llm"] = self.llm_planner.usage(namespace)
        return out

    def report(self, namespace: str) -> dict[str, Any]:
        """The namespace's counters as ``stats()`` shows them: :meth:`current`, and the LLM
        counters saved by a run with an LLM when this one has none."""
        return self._merged(namespace, self._saved.get(namespace, {}))

    def _merged(self, namespace: str, saved: dict[str, Any]) -> dict[str, Any]:
        current = self.current(namespace)
        if "llm" not in current and isinstance(saved.get("llm"), dict):
            current["llm"] = saved["llm"]
        return current

    # -------------------------------------------------------------- persisting
    def restore(self, namespace: str, graph: WorkingGraph) -> None:
        """Add the counters kept by earlier processes (the graph's meta) to this process's,
        once per namespace, however often its graph is reloaded."""
        if namespace in self._saved:
            return
        saved = graph.meta.get(USAGE_KEY)
        saved = dict(saved) if isinstance(saved, dict) else {}
        for key, counter in (("unplanned_events", self._unplanned),
                             ("pass_failures", self._pass_failures)):
            n = saved.get(key)
            if isinstance(n, int) and not isinstance(n, bool):
                counter[namespace] = counter.get(namespace, 0) + n
        failures = saved.get("planner_failures")
        if isinstance(failures, dict):
            row = self._failures.setdefault(namespace, {})
            for name, n in failures.items():
                if isinstance(n, int):
                    row[name] = row.get(name, 0) + n
        if self.llm_planner is not None and isinstance(saved.get("llm"), dict):
            self.llm_planner.restore_usage(namespace, saved["llm"])
        self._saved[namespace] = self._merged(namespace, saved)

    def save(self, namespace: str, graph: WorkingGraph, store: Store) -> None:
        """Write the namespace's counters to the store when they changed (in the graph's
        meta, one transaction of their own)."""
        current = self.report(namespace)
        if current == self._saved.get(namespace):
            return
        graph.begin()
        try:
            graph.set_meta(USAGE_KEY, current)
            store.commit(namespace, graph.changes())
        except BaseException:
            graph.rollback()
            raise
        graph.commit()
        self._saved[namespace] = current
