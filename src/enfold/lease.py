"""One writer per namespace across processes: the namespace leases a process holds.

A namespace's graph is written (folded, consolidated, edited) by one process at a time: the
one holding the namespace's lease in the store (:meth:`~enfold.store.base.Store.try_lease`:
a row with an owner and an expiry). :class:`Leases` is one process's side of it — one per
:class:`~enfold.memory.Memory`, shared by its threads and by a server's fold workers:

- **re-entrant** within the process: the threads of one memory share its leases (the
  memory's namespace lock serialises them), and a count says when a lease is given back;
- **waiting**: :meth:`Leases.hold` polls until the lease is free, until the work it was
  wanted for has been done by the holder (``done()``: another process folded the events),
  or until ``wait_s`` passed — then the caller does nothing, and the work stays logged;
- **kept alive**: a heartbeat thread renews every held lease each third of its TTL,
  however long the work takes (an LLM planner may spend minutes on one event), so a
  crashed process's leases lapse one TTL later and another process takes over;
- **taken over from the dead at once**: a lease whose owner ran on this host in a process
  that no longer exists (a SIGKILL, an OOM kill) is taken over without waiting for the TTL.
  A pid reused since only makes the wait the TTL again.

A lease keeps writers from doing the same work twice; correctness does not rest on it.
Every commit is fenced by the namespace's change token (:mod:`enfold.store.base`): a writer
whose lease lapsed while it stalled fails its commit instead of overwriting the other's.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from enfold.errors import StoreError
from enfold.store.base import Store

log = logging.getLogger("enfold.lease")

#: First and longest pause between two attempts to take a busy lease (seconds).
POLL_S = (0.005, 0.1)


def process_owner() -> str:
    """A lease owner name unique to this process and object: host, pid and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_dead(owner: str) -> bool:
    """Whether ``owner`` (as :func:`process_owner` names it) was a process on this host that
    has ended. Owners on other hosts, in this process, or unparseable are not known dead."""
    parts = owner.split(":")
    if len(parts) < 3 or ":".join(parts[:-2]) != socket.gethostname():
        return False
    try:
        pid = int(parts[-2])
    except ValueError:
        return False
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: it exists under another user
        return False
    return False


class Leases:
    """The namespace leases one process holds in ``store``: re-entrant, waited for, renewed
    in the background while held. A store that no other process can reach (``memory:``)
    needs none: holding always succeeds, and nothing is written."""

    def __init__(self, store: Store, *, owner: str | None = None, ttl_s: float = 30.0,
                 wait_s: float = 60.0) -> None:
        self.store = store
        self.owner = owner or process_owner()
        self.ttl_s = ttl_s
        self.wait_s = wait_s
        self.lost = 0  # renewals that found the lease taken by another owner
        self._held: dict[str, int] = {}  # namespace -> how many holders in this process
        self._cond = threading.Condition()
        self._heartbeat: threading.Thread | None = None
        self._closed = False

    def held(self, namespace: str) -> bool:
        with self._cond:
            return namespace in self._held

    def try_hold(self, namespace: str) -> bool:
        """Take the namespace's lease, or join this process's hold of it, without waiting."""
        with self._cond:
            n = self._held.get(namespace, 0)
            if n == 0 and self.store.shared \
                    and not self.store.try_lease(namespace, self.owner, self.ttl_s) \
                    and not self._take_from_the_dead(namespace):
                return False
            self._held[namespace] = n + 1
            if self.store.shared and self._heartbeat is None and not self._closed:
                self._heartbeat = threading.Thread(target=self._renew, daemon=True,
                                                   name="enfold-leases")
                self._heartbeat.start()
            return True

    def hold(self, namespace: str, *, done: Callable[[], bool] | None = None) -> bool:
        """Take the lease, waiting while another process holds it. False (not held) when
        ``done()`` turns true meanwhile or ``wait_s`` runs out."""
        deadline = time.monotonic() + self.wait_s
        pause = POLL_S[0]
        while not self.try_hold(namespace):
            if done is not None and done():
                return False
            if time.monotonic() >= deadline:
                log.warning("namespace %r stayed leased by another process for %.0f s; "
                            "giving up for now", namespace, self.wait_s)
                return False
            time.sleep(pause)
            pause = min(pause * 2, POLL_S[1])
        return True

    def _take_from_the_dead(self, namespace: str) -> bool:
        holder = self.store.lease_owner(namespace)
        if holder is None or not owner_is_dead(holder):
            return False
        if not self.store.take_over_lease(namespace, self.owner, self.ttl_s, holder):
            return False
        log.info("took over the lease of namespace %r from %s, which has ended",
                 namespace, holder)
        return True

    def release(self, namespace: str) -> None:
        """Let go of one hold; the last one in this process gives the lease back."""
        with self._cond:
            n = self._held.pop(namespace, 0)
            if n > 1:
                self._held[namespace] = n - 1
                return
            if n == 1 and self.store.shared:
                try:
                    self.store.release_lease(namespace, self.owner)
                except StoreError as exc:  # it lapses by itself within one TTL
                    log.warning("could not give back the lease of %r: %s", namespace, exc)

    @contextmanager
    def holding(self, namespace: str, *, done: Callable[[], bool] | None = None
                ) -> Iterator[bool]:
        """:meth:`hold` for the block (the value says whether it is held)."""
        got = self.hold(namespace, done=done)
        try:
            yield got
        finally:
            if got:
                self.release(namespace)

    def close(self) -> None:
        """Give back every lease and stop the heartbeat."""
        with self._cond:
            self._closed = True
            names, self._held = sorted(self._held), {}
            self._cond.notify_all()
            if self.store.shared:
                for ns in names:
                    try:
                        self.store.release_lease(ns, self.owner)
                    except StoreError as exc:
                        log.warning("could not give back the lease of %r: %s", ns, exc)

    def _renew(self) -> None:
        """The heartbeat: renew the held leases every third of the TTL; stop when none is
        held (the next hold starts another, as it does if this one dies)."""
        try:
            while True:
                with self._cond:
                    self._cond.wait(self.ttl_s / 3)
                    if self._closed or not self._held:
                        return
                    # Renewed under the lock: a lease given back meanwhile is not taken again.
                    for ns in sorted(self._held):
                        try:
                            if not self.store.try_lease(ns, self.owner, self.ttl_s):
                                self.lost += 1
                                log.warning("lost the lease of namespace %r to another "
                                            "process", ns)
                        except StoreError as exc:
                            log.warning("renewing the lease of %r failed: %s", ns, exc)
        finally:
            with self._cond:
                if self._heartbeat is threading.current_thread():
                    self._heartbeat = None
