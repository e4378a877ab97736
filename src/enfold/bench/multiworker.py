"""Several ``enfold`` server processes on one store, fed by concurrent writers.

Used by the multi-worker test (tests/test_multiworker.py) and by ``enfold bench workers``:
:func:`launch` starts N server processes (the real FastAPI app with its background fold
workers and namespace leases) on one store URL; :func:`feed` posts events from one writer
thread per namespace, each event to a random live server, retrying another server (with
the same external id, so idempotently) when one fails; :func:`wait_folded` waits until
every namespace's folding cursor reached its last event. Only the public HTTP API and the
Store protocol are used.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from enfold.store.base import Store

# The child: one server process; settings short enough for a test to see lease take-over.
_SERVER = r"""
import sys
import uvicorn
from enfold.memory import Memory
from enfold.server.app import ServerSettings, create_app

url, port, ttl, planner = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
mem = Memory.open(url, embedder="hash", planner=None if planner == "none" else planner)
settings = ServerSettings(auth=False, lease_ttl_s=ttl, scan_interval_s=0.5, fold_chunk=8,
                          consolidate_interval_s=0, max_backlog=10**6,
                          max_total_backlog=10**7)
uvicorn.run(create_app(mem, settings), host="127.0.0.1", port=port, log_level="warning")
"""

TOPICS = ["went running in the park with Sam", "booked a hotel in Vienna for the concert",
          "I need to renew my passport by Friday", "Maya thinks the new office is too far",
          "chess club moved to Thursday evenings", "ran 10k along the river again"]


def event_text(ns: str, i: int) -> str:
    return f"{ns} event {i}: {TOPICS[i % len(TOPICS)]}"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(url: str, n: int, *, lease_ttl_s: float = 2.0, planner: str = "local",
           timeout: float = 60.0) -> list[Server]:
    """Start ``n`` server processes on ``url`` and wait until each answers /readyz."""
    servers = []
    for _ in range(n):
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-c", _SERVER, url, str(port),
                                 str(lease_ttl_s), planner],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        servers.append(Server(proc, port))
    deadline = time.monotonic() + timeout
    for s in servers:
        while True:
            try:
                if httpx.get(f"{s.base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if s.proc.poll() is not None or time.monotonic() > deadline:
                stop(servers)
                err = s.proc.stderr.read().decode() if s.proc.stderr else ""
                raise RuntimeError(f"server on port {s.port} did not start: {err[-2000:]}")
            time.sleep(0.1)
    return servers


def stop(servers: Sequence[Server]) -> None:
    for s in servers:
        if s.proc.poll() is None:
            s.proc.terminate()
    for s in servers:
        try:
            s.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            s.proc.kill()
            s.proc.wait()


def kill(server: Server) -> None:
    """SIGKILL: no drain, no lease release, an event possibly half-folded."""
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait()


@dataclass
class Fed:
    """What the writers saw: accepted event ids per namespace, in posting order."""

    ids: dict[str, list[str]] = field(default_factory=dict)
    retries: int = 0
    seconds: float = 0.0

    @property
    def accepted(self) -> int:
        return sum(len(v) for v in self.ids.values())


def feed(servers: Sequence[Server], namespaces: Sequence[str], per_namespace: int, *,
         batch: int = 1, on_progress: Callable[[int], None] | None = None,
         seed: int = 7) -> Fed:
    """One writer thread per namespace posts ``per_namespace`` events in order, ``batch``
    per request, each request to a random server that still runs."""
    fed = Fed({ns: [] for ns in namespaces})
    lock = threading.Lock()
    errors: list[BaseException] = []

    def writer(ns: str, rng: random.Random) -> None:
        with httpx.Client(timeout=30) as client:
            for start in range(0, per_namespace, batch):
                body = {"events": [{"text": event_text(ns, i), "source": "Maya",
                                    "ts": 1_700_000_000 + 60 * i, "id": f"{ns}-{i}"}
                                   for i in range(start, min(start + batch, per_namespace))]}
                ids = _post(client, servers, ns, body, rng, fed, lock)
                with lock:
                    fed.ids[ns].extend(ids)
                    done = fed.accepted
                if on_progress is not None:
                    on_progress(done)

    def guarded(ns: str, k: int) -> None:
        try:
            writer(ns, random.Random(seed + k))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    started = time.perf_counter()
    threads = [threading.Thread(target=guarded, args=(ns, k)) for k, ns in enumerate(namespaces)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fed.seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    return fed


def _post(client: httpx.Client, servers: Sequence[Server], ns: str, body: dict[str, Any],
          rng: random.Random, fed: Fed, lock: threading.Lock) -> list[str]:
    for _ in range(200):
        alive = [s for s in servers if s.proc.poll() is None]
        if not alive:
            raise RuntimeError("no server left")
        s = rng.choice(alive)
        try:
            r = client.post(f"{s.base}/v1/namespaces/{ns}/events", json=body)
        except httpx.HTTPError:
            r = None
        if r is not None and r.status_code == 202:
            return list(r.json()["ids"])
        with lock:
            fed.retries += 1
        time.sleep(0.05)
    raise RuntimeError(f"could not post to namespace {ns!r}")


def wait_folded(store: Store, namespaces: Sequence[str], *, timeout: float = 120.0) -> float:
    """Wait until every namespace is folded up to its last event; returns when (monotonic)."""
    deadline = time.monotonic() + timeout
    while True:
        if all(store.get_cursor(ns) >= store.last_seq(ns) > 0 for ns in namespaces):
            return time.monotonic()
        if time.monotonic() > deadline:
            left = {ns: store.last_seq(ns) - store.get_cursor(ns) for ns in namespaces}
            raise TimeoutError(f"events still unfolded after {timeout:.0f} s: {left}")
        time.sleep(0.05)


def throughput(url: str, workers: int, *, namespaces: int = 6, per_namespace: int = 100,
               batch: int = 10, planner: str = "local") -> dict[str, Any]:
    """Accepted and folded events/s of ``workers`` server processes on a fresh store:
    accepted = events acknowledged (202) per second of posting; folded = events per
    second from the first post until every namespace's cursor reached its last event."""
    from enfold.store import open_store

    names = [f"bench{i}" for i in range(namespaces)]
    servers = launch(url, workers, planner=planner)
    try:
        store = open_store(url)
        try:
            started = time.monotonic()
            fed = feed(servers, names, per_namespace, batch=batch)
            folded_at = wait_folded(store, names, timeout=1800)
        finally:
            store.close()
    finally:
        stop(servers)
    return {"store": url.split("://")[0] if "://" in url else "sqlite", "workers": workers,
            "events": fed.accepted, "batch": batch, "namespaces": namespaces,
            "accepted_per_s": round(fed.accepted / fed.seconds, 1),
            "folded_per_s": round(fed.accepted / (folded_at - started), 1),
            "retries": fed.retries}
