"""One writer per namespace: leases (enfold.lease) and what Memory does with them.

A process's leases are re-entrant, renewed while held and given back; a memory whose fold
finds the namespace leased by another process waits, and finds its events folded by the
holder; a write that cannot get the lease in time gives up with a clear error; a fold
whose commit meets another writer's change reloads the graph and folds again, keeping the
other writer's change instead of overwriting it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from enfold.errors import StoreError
from enfold.graph import ChangeSet, WorkingGraph
from enfold.lease import Leases
from enfold.memory import Memory
from enfold.model import Node, NodeKind
from enfold.plan import UpdatePlan
from enfold.settings import Settings
from enfold.store import open_store
from enfold.write.planner_local import LocalPlanner

NS = "default"
TS = 1_700_000_000


def notes(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"text": f"note {i}: went running in the park with Sam", "source": "Maya",
             "ts": TS + 3600 * i} for i in range(start, start + n)]


def test_leases_are_reentrant_in_a_process_and_exclusive_across(tmp_path: Path) -> None:
    mine, theirs = open_store(tmp_path / "l.db"), open_store(tmp_path / "l.db")
    leases = Leases(mine, ttl_s=30)
    try:
        assert leases.try_hold("n") and leases.try_hold("n")
        assert not theirs.try_lease("n", "elsewhere", 30)
        leases.release("n")
        assert leases.held("n") and not theirs.try_lease("n", "elsewhere", 30)
        leases.release("n")  # the last hold gives it back
        assert not leases.held("n") and theirs.try_lease("n", "elsewhere", 30)
        assert not leases.try_hold("n")
        leases.wait_s = 0.3
        started = time.monotonic()
        with leases.holding("n") as held:
            assert not held
        assert time.monotonic() - started >= 0.3
        calls: list[int] = []
        with leases.holding("n", done=lambda: bool(calls.append(1)) or len(calls) > 2) as held:
            assert not held and len(calls) == 3  # gave up as soon as the work was done
        theirs.release_lease("n", "elsewhere")
        with leases.holding("n") as held:
            assert held and not theirs.try_lease("n", "elsewhere", 30)
        assert theirs.try_lease("n", "elsewhere", 30)
    finally:
        leases.close()
        mine.close()
        theirs.close()


def test_a_lease_of_a_process_that_ended_on_this_host_is_taken_over_at_once(
    tmp_path: Path,
) -> None:
    """A SIGKILLed writer cannot give its lease back; the next process need not wait a TTL
    when the holder ran here and is gone. A live holder, or one on another host, is waited
    for."""
    mine, theirs = open_store(tmp_path / "l.db"), open_store(tmp_path / "l.db")
    leases = Leases(mine, ttl_s=30)
    host = socket.gethostname()
    ended = subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert ended.returncode == 0
    probe = subprocess.Popen([sys.executable, "-c", "pass"])
    probe.wait()  # reaped: its pid names no process now
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert theirs.try_lease("live", f"{host}:{alive.pid}:feedbeef", 30)
        assert theirs.try_lease("far", f"elsewhere.example:{probe.pid}:feedbeef", 30)
        assert theirs.try_lease("dead", f"{host}:{probe.pid}:feedbeef", 30)
        assert not leases.try_hold("live") and not leases.try_hold("far")
        assert leases.try_hold("dead")
        assert not theirs.try_lease("dead", f"{host}:{probe.pid}:feedbeef", 30)
        assert mine.lease_owner("dead") == leases.owner
    finally:
        alive.kill()
        alive.wait()
        leases.close()
        mine.close()
        theirs.close()


def test_a_held_lease_is_renewed_past_its_ttl_and_given_back_on_close(tmp_path: Path) -> None:
    mine, theirs = open_store(tmp_path / "l.db"), open_store(tmp_path / "l.db")
    leases = Leases(mine, ttl_s=0.3)
    try:
        assert leases.try_hold("n")
        time.sleep(1.0)  # three TTLs: renewed by the heartbeat, never lapsed
        assert not theirs.try_lease("n", "elsewhere", 30)
        leases.close()
        assert theirs.try_lease("n", "elsewhere", 30)
    finally:
        leases.close()
        mine.close()
        theirs.close()


def test_a_fold_waits_while_another_process_folds_and_finds_its_events_folded(
        tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    a = Memory.open(path, embedder="hash", planner="local")
    b = Memory.open(path, embedder="hash", planner="local")  # "another process"
    try:
        assert b.leases.try_hold(NS)
        a.add_many(notes(6), fold=False)

        def other_process() -> None:
            time.sleep(0.4)
            b.fold()
            b.leases.release(NS)

        t = threading.Thread(target=other_process)
        t.start()
        started = time.monotonic()
        report = a.fold()
        waited = time.monotonic() - started
        t.join()
        assert report.folded == 0 and waited >= 0.4
        assert a.stats()["folded"] == 6
        g = a.graph()  # b's work, reloaded
        assert g.count(NodeKind.EVENT) == 6
        assert [g.nodes[p].text for p in g.of_kind(NodeKind.PERSON)].count("Maya") == 1
    finally:
        a.close()
        b.close()


def test_writes_give_up_on_a_lease_that_stays_taken(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    a = Memory.open(path, embedder="hash", planner="local")
    other = open_store(path)
    try:
        a.add_many(notes(2))
        assert other.try_lease(NS, "elsewhere", 60)
        a.leases.wait_s = 0.3
        a.add_many(notes(2, start=2))  # stored; folding gives up and leaves them pending
        assert a.stats()["pending"] == 2
        plan = {"plan_id": "pl_x", "event_id": "ev_x", "reasoning": "r", "operations": []}
        with pytest.raises(StoreError, match="being written by another process"):
            a.apply(plan)
        other.release_lease(NS, "elsewhere")
        a.fold()
        assert a.stats()["pending"] == 0
    finally:
        other.close()
        a.close()


class Interfering(LocalPlanner):
    """The local planner; before its first plan, another writer (one that takes no lease)
    edits the concept the event will reinforce."""

    def __init__(self, other: Any, settings: Settings, embedder: Any) -> None:
        super().__init__(settings, embedder)
        self.other, self.calls = other, 0

    def plan(self, event: Node, graph: WorkingGraph) -> UpdatePlan:
        self.calls += 1
        if self.calls == 1:
            cid = next(iter(graph.of_kind(NodeKind.CONCEPT)))
            node = self.other.get_node(NS, cid)
            self.other.commit(NS, ChangeSet(nodes={cid: node.with_changes(
                attrs={**node.attrs, "summary": "edited elsewhere"})}))
        return super().plan(event, graph)


def test_a_fold_meeting_another_writers_commit_reloads_and_keeps_its_change(
        tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    with Memory.open(path, embedder="hash", planner="local") as m:
        m.add_many(notes(3))  # a concept of three events
    other = open_store(path)
    m = Memory.open(path, embedder="hash", planner=None)
    planner = Interfering(other, m.settings, m.embedder)
    m.planners = [planner]
    try:
        m.add_many(notes(1, start=3))
        assert planner.calls == 2, "the refused fold was planned again on the fresh graph"
        concepts = [m.graph().nodes[c] for c in m.graph().of_kind(NodeKind.CONCEPT)]
        assert len(concepts) == 1
        concept = other.get_node(NS, concepts[0].id)
        assert concept is not None
        assert concept.attrs.get("summary") == "edited elsewhere"  # not overwritten
        assert concept.attrs["event_count"] == len(concept.grounded_in) == 4
        assert m.stats()["folded"] == 4
    finally:
        m.close()
        other.close()
