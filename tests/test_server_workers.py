"""The server's background machinery without HTTP: folding while requests append and read
(thread safety of Memory and the SQLite store), namespace leases, drain and resume,
scheduled consolidation, and webhook retries."""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from enfold.memory import Memory
from enfold.notify import Notification
from enfold.server.app import append_events
from enfold.server.push import Webhooks
from enfold.server.workers import FoldWorkers
from enfold.store import open_store


def _wait(cond: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_appends_and_reads_while_workers_fold_are_safe(tmp_path: Path) -> None:
    """Request threads append and read (recall, get, edges, graph walks) while two workers
    fold: nothing raises, and every event is stored and folded exactly once."""
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    memory.fold_on_read = False
    workers = FoldWorkers(memory, threads=2, chunk=8, scan_interval_s=0.2)
    workers.start()
    done = threading.Event()
    ids: dict[str, list[str]] = {"a": [], "b": []}
    words = ["coffee", "budget", "garden", "report", "train", "dentist"]

    def writer(tid: int) -> None:
        rnd = random.Random(tid)
        for b in range(10):
            ns = "ab"[(tid + b) % 2]
            batch = [{"text": f"{ns} {rnd.choice(words)} {rnd.choice(words)} {tid}-{b}-{i}"}
                     for i in range(25)]
            if b % 2:  # the library's own path and the server's
                ids[ns].extend(memory.add_many(batch, namespace=ns, fold=False))
            else:
                ids[ns].extend(a.id for a in append_events(memory, ns, batch, None))
            workers.appended(ns, len(batch))

    def reader(tid: int) -> int:
        rnd = random.Random(10 + tid)
        reads = 0
        while not done.is_set():
            ns = rnd.choice("ab")
            pack = memory.recall(rnd.choice(words), namespace=ns, k=5)
            for item in pack.evidence:
                assert memory.get(item.id, namespace=ns).namespace == ns
                memory.edges(item.id, namespace=ns)
            with memory.reading(ns) as g:
                for e in g.all_edges():
                    assert e.src in g.nodes or e.src in g.aliases
            reads += 1
        return reads

    with ThreadPoolExecutor(6) as pool:
        readers = [pool.submit(reader, i) for i in range(2)]
        try:
            for f in [pool.submit(writer, i) for i in range(4)]:
                f.result(60)  # re-raises what the thread raised
            assert workers.drain(60)
        finally:
            done.set()
        assert all(f.result(30) > 0 for f in readers)
    for ns in "ab":
        stats = memory.stats(ns)
        assert stats["events"] == stats["folded"] == len(set(ids[ns])) == 500
    assert workers.stats.folded == 1000 and workers.stats.errors == 0
    memory.close()


def test_a_namespace_leased_by_another_process_waits_for_its_lease(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    other = open_store(tmp_path / "m.db")  # another server process on the same file
    assert other.try_lease("shared", "elsewhere", 60)
    memory.add_many([{"text": f"shared note {i}"} for i in range(10)], namespace="shared",
                    fold=False)
    workers = FoldWorkers(memory, scan_interval_s=0.1)
    workers.start()
    try:
        _wait(lambda: workers.stats.lease_misses >= 2)
        assert memory.stats("shared")["folded"] == 0 and workers.backlog("shared") == 10
        other.release_lease("shared", "elsewhere")
        _wait(lambda: memory.stats("shared")["folded"] == 10)
        # Done folding, the worker gives its lease back: the other process can take it.
        _wait(lambda: other.try_lease("shared", "elsewhere", 60), timeout=5)
    finally:
        workers.stop()
        other.close()
        memory.close()


def test_sqlite_leases_expire_and_renew(tmp_path: Path) -> None:
    store = open_store(tmp_path / "l.db")
    assert store.try_lease("n", "a", 0.2) and store.try_lease("n", "a", 0.2)
    assert not store.try_lease("n", "b", 10)
    store.release_lease("n", "b")  # not b's: a no-op
    assert not store.try_lease("n", "b", 10)
    time.sleep(0.25)
    assert store.try_lease("n", "b", 10)
    store.release_lease("n", "b")
    assert store.try_lease("n", "a", 10)
    store.close()


class SlowPlanner:
    """The local planner, 20 ms slower per event."""

    name = "slow"

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def plan(self, event: Any, graph: Any) -> Any:
        time.sleep(0.02)
        return self.inner.plan(event, graph)


def test_drain_timeout_leaves_a_checkpoint_that_the_next_start_resumes(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    memory.planners = [SlowPlanner(memory.planners[0])]
    memory.add_many([{"text": f"slow note {i}"} for i in range(200)], namespace="s",
                    fold=False)
    workers = FoldWorkers(memory, chunk=4)
    workers.start()
    assert workers.drain(0.5) is False
    first = memory.stats("s")["folded"]
    assert 0 < first < 200 and first == workers.stats.folded
    memory.close()

    again = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    resumed = FoldWorkers(again, chunk=64)
    resumed.start()
    assert resumed.drain(60) is True
    assert again.stats("s")["folded"] == 200 and resumed.stats.folded == 200 - first
    again.close()


def test_changed_namespaces_are_consolidated_on_schedule(tmp_path: Path) -> None:
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    workers = FoldWorkers(memory, scan_interval_s=0.1, consolidate_interval_s=0.3)
    workers.start()
    try:
        memory.add_many([{"text": f"garden tomatoes {i}"} for i in range(5)], namespace="g",
                        fold=False)
        workers.appended("g", 5)
        _wait(lambda: workers.stats.consolidations >= 1)
        passes = workers.stats.consolidations
        time.sleep(0.8)  # nothing changed since: no further passes
        assert workers.stats.consolidations == passes
    finally:
        workers.stop()
        memory.close()


def test_webhook_backoff_doubles_and_gives_up() -> None:
    calls: list[tuple[str, float]] = []
    answers = {"http://h/retry": 503, "http://h/bad": 400}

    def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
        calls.append((url, time.monotonic()))
        return answers[url]

    hooks = Webhooks([("n", "http://h/retry"), ("*", "http://h/bad")], "k", attempts=4,
                     backoff_s=0.05, post=post)
    hooks._thread = threading.Thread(target=hooks._run, daemon=True)
    hooks._thread.start()
    hooks.enqueue(Notification("intent_emerged", "n", "in_1", "call the bank", 0.0))
    _wait(lambda: hooks.stats.failed == 2)
    hooks.stop(flush_s=0.1)
    retried = [t for url, t in calls if url == "http://h/retry"]
    assert [url for url, _ in calls].count("http://h/bad") == 1  # a 4xx is final
    assert len(retried) == 4 and hooks.stats.delivered == 0
    gaps = [b - a for a, b in itertools.pairwise(retried)]
    assert gaps[0] >= 0.045 and gaps[1] >= 0.095 and gaps[2] >= 0.19
    with pytest.raises(ValueError, match="secret"):
        Webhooks([("n", "http://h")], "")
    with pytest.raises(ValueError, match="http"):
        Webhooks([("n", "ftp://h")], "k")


def test_a_namespace_fed_as_fast_as_it_folds_does_not_starve_another(tmp_path: Path) -> None:
    """One fold thread; a writer keeps a namespace's backlog growing faster than it folds.
    An event appended to a second namespace is folded after a chunk or two of the busy one,
    not after its backlog ran dry."""
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    memory.planners = [SlowPlanner(memory.planners[0])]
    memory.fold_on_read = False
    workers = FoldWorkers(memory, threads=1, chunk=4, scan_interval_s=60)
    workers.start()
    stop = threading.Event()

    def feed() -> None:
        i = 0
        while not stop.is_set():
            memory.add_many([{"text": f"busy note {i}-{j}"} for j in range(10)],
                            namespace="busy", fold=False)
            workers.appended("busy", 10)
            i += 1
            time.sleep(0.05)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        _wait(lambda: workers.stats.folded >= 8)  # the busy namespace is being folded
        memory.add_many([{"text": "the quiet namespace's one event"}], namespace="quiet",
                        fold=False)
        workers.appended("quiet", 1)
        _wait(lambda: memory.store.get_cursor("quiet") == 1, timeout=10)
        assert workers.backlog("busy") > 0  # folded while the busy one still had a backlog
    finally:
        stop.set()
        writer.join()
        workers.stop()
        memory.close()
