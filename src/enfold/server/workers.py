"""Background folding for the server: per namespace, in log order, one fold at a time.

``POST /events`` only appends to the log; :class:`FoldWorkers` folds behind it. A namespace
is folded by one thread at a time, and only while the process holds the namespace's lease in
the store (the memory's :class:`~enfold.lease.Leases`: so several server processes on one
database, or a CLI next to the server, never fold the same namespace at once); the leases'
heartbeat renews them every third of their TTL, so a crashed process's namespaces are free
again one TTL later. A namespace leased elsewhere is looked at again a second later. Folding
goes in chunks of ``fold_chunk`` events, letting readers in between; after a chunk, a
namespace with more to fold goes to the back of the queue when another namespace is waiting,
so one namespace fed as fast as it folds never starves the others. The cursor is committed
with each group of events, so stopping anywhere is a checkpoint. On start, and every
``scan_interval_s``, namespaces with events past their cursor are picked up again: that
resumes a crash and sees events appended by other processes.

The backlog (events appended but not folded) is tracked per namespace; the app refuses new
events with 429 (one namespace too far behind) or 503 (the whole server) with a Retry-After
estimated from the measured folding rate. Consolidation runs on a schedule for namespaces
that changed since their last pass.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from enfold.memory import Memory

log = logging.getLogger("enfold.server")


class Overloaded(Exception):
    """Too many unfolded events: refuse with ``status`` and ``retry_after`` seconds."""

    def __init__(self, status: int, retry_after: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.retry_after = retry_after
        self.detail = detail


@dataclass
class WorkerStats:
    folded: int = 0
    consolidations: int = 0
    lease_misses: int = 0
    errors: int = 0
    rate: float = 0.0  # events/s folded, exponentially averaged over recent chunks
    last_error: str | None = None


@dataclass
class _Queue:
    """Namespaces with work, and those being worked on (one thread each)."""

    dirty: dict[str, float] = field(default_factory=dict)  # ns -> not before (monotonic)
    consolidate: set[str] = field(default_factory=set)
    active: set[str] = field(default_factory=set)


class FoldWorkers:
    """Threads that fold (and consolidate) namespaces of one :class:`Memory` in the
    background."""

    def __init__(
        self,
        memory: Memory,
        *,
        threads: int = 1,
        chunk: int = 32,
        lease_ttl_s: float = 30.0,
        scan_interval_s: float = 5.0,
        consolidate_interval_s: float = 300.0,
        max_backlog: int = 10_000,
        max_total_backlog: int = 50_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if threads < 1 or chunk < 1:
            raise ValueError("fold threads and chunk must be at least 1")
        self.memory = memory
        self.threads = threads
        self.chunk = chunk
        self.lease_ttl_s = lease_ttl_s
        self.scan_interval_s = scan_interval_s
        self.consolidate_interval_s = consolidate_interval_s
        self.max_backlog = max_backlog
        self.max_total_backlog = max_total_backlog
        memory.leases.ttl_s = lease_ttl_s
        self.owner = memory.leases.owner
        self.stats = WorkerStats()
        self._clock = clock
        self._cond = threading.Condition()
        self._q = _Queue()
        self._backlog: dict[str, int] = {}
        self._changed: set[str] = set()  # folded since their last consolidation
        self._stop = False
        self._threads: list[threading.Thread] = []
        self.started = False

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Find namespaces left with unfolded events and start the threads."""
        self.scan()
        for i in range(self.threads):
            t = threading.Thread(target=self._run, name=f"enfold-fold-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._schedule, name="enfold-schedule", daemon=True)
        t.start()
        self._threads.append(t)
        self.started = True

    def drain(self, timeout_s: float) -> bool:
        """Fold what is pending (no new consolidation passes), then stop. True if the backlog
        emptied within ``timeout_s``; otherwise the rest stays logged past the cursor and
        the next start resumes it."""
        deadline = self._clock() + timeout_s
        with self._cond:
            self._q.consolidate.clear()
            while (self._q.dirty or self._q.active) and self._clock() < deadline:
                self._cond.wait(min(0.2, max(0.0, deadline - self._clock())))
            clean = not self._q.dirty and not self._q.active
        self.stop()
        return clean

    def stop(self, join_s: float = 30.0) -> None:
        """Stop after the chunk being folded (its events are committed one by one)."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(join_s)
        self._threads.clear()

    # ----------------------------------------------------------- the backlog
    def appended(self, namespace: str, created: int) -> None:
        """Events were appended to ``namespace``: count them and wake a folder."""
        with self._cond:
            if created:
                self._backlog[namespace] = self._backlog.get(namespace, 0) + created
            self._q.dirty.setdefault(namespace, 0.0)
            self._cond.notify()

    def backlog(self, namespace: str | None = None) -> int:
        with self._cond:
            if namespace is None:
                return sum(self._backlog.values())
            return self._backlog.get(namespace, 0)

    def admit(self, namespace: str) -> None:
        """Raise :class:`Overloaded` when ``namespace`` or the server is too far behind."""
        with self._cond:
            mine = self._backlog.get(namespace, 0)
            total = sum(self._backlog.values())
            rate = max(self.stats.rate, 1.0)
        if total >= self.max_total_backlog:
            raise Overloaded(503, _retry_after(total - self.max_total_backlog / 2, rate),
                             f"the server has {total} events waiting to be folded "
                             f"(limit {self.max_total_backlog}); retry later")
        if mine >= self.max_backlog:
            raise Overloaded(429, _retry_after(mine - self.max_backlog / 2, rate),
                             f"namespace {namespace!r} has {mine} events waiting to be folded "
                             f"(limit {self.max_backlog}); retry later")

    def forgot(self, namespace: str) -> None:
        """The namespace was wiped: its backlog is gone."""
        with self._cond:
            self._backlog.pop(namespace, None)

    def scan(self) -> None:
        """Queue every namespace with events past its cursor (resume; other writers)."""
        store = self.memory.store
        for ns in store.namespaces():
            pending = max(0, store.last_seq(ns) - store.get_cursor(ns))
            with self._cond:
                if ns not in self._q.active:
                    self._backlog[ns] = pending
                if pending:
                    self._q.dirty.setdefault(ns, 0.0)
                    self._cond.notify()

    # ---------------------------------------------------------------- threads
    def _next(self) -> tuple[str, str] | None:
        """A (namespace, job) no other thread works on, waiting up to a second."""
        with self._cond:
            if self._stop:
                return None
            at = self._clock()
            for ns, not_before in self._q.dirty.items():
                if ns not in self._q.active and not_before <= at:
                    del self._q.dirty[ns]
                    self._q.active.add(ns)
                    return ns, "fold"
            for ns in self._q.consolidate:
                if ns not in self._q.active:
                    self._q.consolidate.discard(ns)
                    self._q.active.add(ns)
                    return ns, "consolidate"
            self._cond.wait(1.0)
            return None

    def _run(self) -> None:
        while not self._stop:
            job = self._next()
            if job is None:
                continue
            ns, kind = job
            try:
                if self._lease(ns):
                    try:
                        self._fold(ns) if kind == "fold" else self._consolidate(ns)
                    finally:
                        self._unlease(ns)
                else:  # another process folds it; look again later
                    self.stats.lease_misses += 1
                    self._retry(ns, kind, delay=1.0)
            except Exception as exc:  # keep folding other namespaces; retry this one later
                self.stats.errors += 1
                self.stats.last_error = f"{ns}: {type(exc).__name__}: {exc}"
                log.exception("background %s of namespace %r failed", kind, ns)
                self._retry(ns, kind, delay=5.0)
            finally:
                with self._cond:
                    self._q.active.discard(ns)
                    self._cond.notify_all()

    def _lease(self, ns: str) -> bool:
        return self.memory.leases.try_hold(ns)

    def _unlease(self, ns: str) -> None:
        self.memory.leases.release(ns)

    def _retry(self, ns: str, kind: str, delay: float) -> None:
        with self._cond:
            if kind == "fold":
                self._q.dirty[ns] = self._clock() + delay
            else:
                self._q.consolidate.add(ns)

    def _fold(self, ns: str) -> None:
        store = self.memory.store
        while not self._stop:
            started = self._clock()
            report = self.memory.fold(ns, limit=self.chunk)
            pending = max(0, store.last_seq(ns) - store.get_cursor(ns))
            with self._cond:
                self._backlog[ns] = pending
                self.stats.folded += report.folded
                if report.folded:
                    self._changed.add(ns)
                    rate = report.folded / max(self._clock() - started, 1e-6)
                    self.stats.rate = rate if not self.stats.rate else \
                        0.8 * self.stats.rate + 0.2 * rate
                self._cond.notify_all()
            if not pending or not report.folded:
                return
            if self._others_waiting(ns):  # take turns: the rest after the others' chunks
                with self._cond:
                    self._q.dirty.pop(ns, None)
                    self._q.dirty[ns] = 0.0
                    self._cond.notify()
                return

    def _others_waiting(self, ns: str) -> bool:
        """Whether another namespace is ready to fold and no thread works on it."""
        with self._cond:
            at = self._clock()
            return any(other != ns and other not in self._q.active and not_before <= at
                       for other, not_before in self._q.dirty.items())

    def _consolidate(self, ns: str) -> None:
        consolidate = getattr(self.memory, "consolidate", None)
        if callable(consolidate):
            self._fold(ns)  # counted here: the pass starts with whatever is pending
            consolidate(ns, full=False)
            self.stats.consolidations += 1

    def _schedule(self) -> None:
        """Rescan for unfolded events and queue consolidation passes on their intervals."""
        next_scan = self._clock() + self.scan_interval_s
        next_pass = self._clock() + self.consolidate_interval_s
        while True:
            with self._cond:
                if self._stop:
                    return
                self._cond.wait(min(1.0, self.scan_interval_s))
                if self._stop:
                    return
            at = self._clock()
            if at >= next_scan:
                next_scan = at + self.scan_interval_s
                try:
                    self.scan()
                except Exception:
                    log.exception("scanning for unfolded events failed")
            if self.consolidate_interval_s > 0 and at >= next_pass:
                next_pass = at + self.consolidate_interval_s
                with self._cond:
                    self._q.consolidate |= self._changed
                    self._changed.clear()
                    self._cond.notify_all()


def _retry_after(excess: float, rate: float) -> int:
    """Seconds until ``excess`` events are folded at ``rate``, between 1 and 60."""
    return int(min(60, max(1, math.ceil(excess / rate))))
