"""``enfold serve`` as a real process on loopback: a bounded load test (concurrent writers
and readers across namespaces), SIGKILL under load and restart, and SIGTERM drain.

The load test prints accepted events/s and recall p50/p95; the full-size run is marked slow,
a smaller one stays in the default suite.
"""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
import httpx

from enfold.server.auth import create_key
from enfold.store import open_store

ADMIN = "load-test-admin-key"
WORDS = ["coffee", "meeting", "budget", "garden", "running", "invoice", "dentist", "train",
         "report", "tomatoes", "deadline", "birthday"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    base: str
    log: Path


@contextmanager
def serve(tmp: Path, db: Path, *extra: str) -> Iterator[Served]:
    """``enfold serve`` in a subprocess, up and answering /healthz; killed if left running."""
    port = _free_port()
    key_file = tmp / "admin.key"
    key_file.write_text(ADMIN)
    log = tmp / f"serve-{port}.log"
    cmd = [sys.executable, "-m", "enfold", "--db", str(db), "--create", "--embedder", "hash",
           "serve",
           "--port", str(port), "--admin-key-file", str(key_file), "--log-level", "warning",
           *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield Served(proc, base, log)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _keys(db: Path, namespaces: list[str]) -> dict[str, str]:
    store = open_store(db)
    try:
        return {ns: create_key(store, ns)[1] for ns in namespaces}
    finally:
        store.close()


_MARK = re.compile(r"\b(ns\d+|k[ab]|dr)-mark\b")


def _text(ns: str, i: int, rnd: random.Random) -> str:
    return f"{ns}-mark {rnd.choice(WORDS)} and {rnd.choice(WORDS)} note {i}"


@dataclass
class Load:
    """What the clients saw: accepted ids per namespace, latencies, leaks, refusals."""

    accepted: dict[str, set[str]] = field(default_factory=dict)
    recall_s: list[float] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    seen: list[tuple[str, list[str]]] = field(default_factory=list)  # ns, evidence ids
    refused: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _poster(base: str, keys: dict[str, str], load: Load, tid: int, batches: int, size: int,
            stop: threading.Event) -> None:
    rnd = random.Random(tid)
    names = sorted(keys)
    with httpx.Client(base_url=base, timeout=30) as c:
        for b in range(batches):
            if stop.is_set():
                return
            ns = names[(tid + b) % len(names)]
            body = {"events": [{"text": _text(ns, b * size + k, rnd), "source": f"client{tid}"}
                               for k in range(size)]}
            idem = f"t{tid}-b{b}"
            while True:  # retry the same batch (same Idempotency-Key) after a refusal
                try:
                    r = c.post(f"/v1/namespaces/{ns}/events", json=body,
                               headers={"Authorization": f"Bearer {keys[ns]}",
                                        "Idempotency-Key": idem})
                except httpx.HTTPError as exc:
                    with load.lock:
                        load.errors.append(f"post: {type(exc).__name__}")
                    return  # the server went away (the restart test kills it)
                if r.status_code in (429, 503):
                    with load.lock:
                        load.refused += 1
                    time.sleep(min(float(r.headers["retry-after"]), 0.5))
                    continue
                assert r.status_code == 202, r.text
                with load.lock:
                    load.accepted.setdefault(ns, set()).update(r.json()["ids"])
                break


def _recaller(base: str, keys: dict[str, str], load: Load, tid: int,
              stop: threading.Event) -> None:
    rnd = random.Random(100 + tid)
    with httpx.Client(base_url=base, timeout=30) as c:
        while not stop.is_set():
            ns = rnd.choice(sorted(keys))
            q = f"{rnd.choice(WORDS)} {rnd.choice(WORDS)}"
            t = time.perf_counter()
            try:
                r = c.get(f"/v1/namespaces/{ns}/recall", params={"q": q, "k": 10},
                          headers={"Authorization": f"Bearer {keys[ns]}"})
            except httpx.HTTPError:
                return
            took = time.perf_counter() - t
            assert r.status_code == 200, r.text
            pack = r.json()
            texts = [i["text"] for sec in ("evidence", "concepts", "facts", "claims", "intents")
                     for i in pack[sec]]
            foreign = [x for x in texts if set(_MARK.findall(x)) - {ns}]
            with load.lock:
                load.recall_s.append(took)
                load.leaks.extend(foreign)
                load.seen.append((ns, [i["id"] for i in pack["evidence"]]))


def _store_state(db: Path) -> dict[str, tuple[set[str], int, int]]:
    """Per namespace: event ids in the log, last seq and the folding cursor."""
    con = sqlite3.connect(db)
    try:
        out = {}
        for (ns,) in con.execute("SELECT DISTINCT namespace FROM events"):
            ids = {r[0] for r in con.execute("SELECT id FROM events WHERE namespace = ?", (ns,))}
            last = con.execute("SELECT MAX(seq) FROM events WHERE namespace = ?",
                               (ns,)).fetchone()[0]
            cur = con.execute("SELECT seq FROM cursors WHERE namespace = ?", (ns,)).fetchone()
            out[ns] = (ids, int(last), int(cur[0]) if cur else 0)
        return out
    finally:
        con.close()


def _wait_folded(base: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        ready = httpx.get(f"{base}/readyz", timeout=10,  # the counts are the admin's to see
                          headers={"Authorization": f"Bearer {ADMIN}"}).json()
        if ready["backlog"] == 0:
            return dict(ready)
        assert time.monotonic() < deadline, ready
        time.sleep(0.1)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def run_load(tmp_path: Path, *, namespaces: int, posters: int, batches: int, size: int,
             recallers: int, serve_args: tuple[str, ...] = ()) -> dict[str, Any]:
    db = tmp_path / "load.db"
    names = [f"ns{i}" for i in range(namespaces)]
    keys = _keys(db, names)
    load = Load()
    with serve(tmp_path, db, *serve_args) as srv:
        stop = threading.Event()
        readers = [threading.Thread(target=_recaller, args=(srv.base, keys, load, i, stop))
                   for i in range(recallers)]
        writers = [threading.Thread(target=_poster,
                                    args=(srv.base, keys, load, i, batches, size, stop))
                   for i in range(posters)]
        for t in readers:
            t.start()
        started = time.perf_counter()
        for t in writers:
            t.start()
        for t in writers:
            t.join(120)
        post_s = time.perf_counter() - started
        ready = _wait_folded(srv.base, timeout=90)
        stop.set()
        for t in readers:
            t.join(30)
        stats = {ns: httpx.get(f"{srv.base}/v1/namespaces/{ns}/stats",
                               headers={"Authorization": f"Bearer {keys[ns]}"}).json()
                 for ns in names}
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(60) == 0, srv.log.read_text()
    total = sum(len(v) for v in load.accepted.values())
    assert not load.errors, load.errors
    assert total == posters * batches * size
    assert not load.leaks, load.leaks[:5]
    for ns, evidence in load.seen:  # every recalled event was accepted in that namespace
        assert set(evidence) <= load.accepted[ns]
    # Every accepted event is stored, in its own namespace, and folded exactly once: the
    # workers folded as many events as were accepted, and every cursor is at its log's end.
    assert ready["folded"] == total
    state = _store_state(db)
    for ns in names:
        ids, last, cursor = state[ns]
        assert ids == load.accepted[ns]
        assert cursor == last and stats[ns]["folded"] == stats[ns]["events"] == len(ids)
    result = {"events": total, "events_per_s": total / post_s, "post_s": post_s,
              "recalls": len(load.recall_s), "refused": load.refused,
              "recall_p50_ms": 1000 * _pct(load.recall_s, 50),
              "recall_p95_ms": 1000 * _pct(load.recall_s, 95)}
    return result


def _report(result: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nserve load: {result['events']} events accepted in {result['post_s']:.1f}s "
              f"= {result['events_per_s']:.0f} events/s; {result['recalls']} recalls under "
              f"load, p50 {result['recall_p50_ms']:.0f} ms, p95 {result['recall_p95_ms']:.0f} "
              f"ms; {result['refused']} refusals (429/503)")


def test_load_on_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_load(tmp_path, namespaces=3, posters=3, batches=20, size=20, recallers=2)
    _report(result, capsys)
    assert result["recalls"] >= 5


@pytest.mark.slow
def test_load_on_loopback_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """6000 events with a backlog limit, so writers meet 429s and retry with their keys."""
    result = run_load(tmp_path, namespaces=4, posters=6, batches=50, size=20, recallers=3,
                      serve_args=("--max-backlog", "1000"))
    _report(result, capsys)
    assert result["refused"] > 0


def test_sigkill_under_load_then_restart_folds_every_accepted_event(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    names = ["ka", "kb"]
    keys = _keys(db, names)
    load = Load()
    stop = threading.Event()
    with serve(tmp_path, db, "--lease-ttl", "2") as srv:
        writers = [threading.Thread(target=_poster,
                                    args=(srv.base, keys, load, i, 400, 10, stop))
                   for i in range(3)]
        for t in writers:
            t.start()
        deadline = time.monotonic() + 30
        while sum(len(v) for v in load.accepted.values()) < 600:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
        stop.set()
        for t in writers:
            t.join(30)
    before = _store_state(db)
    acked = {ns: set(v) for ns, v in load.accepted.items()}
    assert sum(len(v) for v in acked.values()) >= 600
    for ns, ids in acked.items():
        assert ids <= before[ns][0], f"{len(ids - before[ns][0])} acknowledged events lost"
    unfolded = sum(last - cursor for _, last, cursor in before.values())
    with serve(tmp_path, db, "--lease-ttl", "2") as srv:  # the dead server's leases lapse
        _wait_folded(srv.base, timeout=60)
        for ns in names:
            stats = httpx.get(f"{srv.base}/v1/namespaces/{ns}/stats",
                              headers={"Authorization": f"Bearer {keys[ns]}"}).json()
            assert stats["pending"] == 0 and stats["folded"] == stats["events"]
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(60) == 0
    after = _store_state(db)
    for ns, ids in acked.items():
        assert ids <= after[ns][0]
        assert after[ns][2] == after[ns][1]  # cursor at the end: all folded
    assert unfolded > 0, "the kill left nothing to resume: the test did not test resumption"


def test_sigterm_drains_the_backlog_and_exits_zero(tmp_path: Path) -> None:
    db = tmp_path / "drain.db"
    keys = _keys(db, ["dr"])
    h = {"Authorization": f"Bearer {keys['dr']}"}
    with serve(tmp_path, db, "--drain-timeout", "60") as srv:
        with httpx.Client(base_url=srv.base, timeout=30) as c:
            for b in range(8):
                r = c.post("/v1/namespaces/dr/events", headers=h,
                           json={"events": [{"text": f"drain batch {b} item {i} "
                                                     f"{random.choice(WORDS)}"}
                                            for i in range(100)]})
                assert r.status_code == 202
            backlog = c.get("/readyz", headers=h).json()["backlog"]  # its namespace's
        # A listener on the SSE stream must not hold the shutdown up: its stream ends.
        ended = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", f"{srv.base}/v1/namespaces/dr/stream", headers=h,
                              timeout=30) as stream:
                for _ in stream.iter_lines():
                    pass
            ended.set()

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        time.sleep(0.3)
        srv.proc.send_signal(signal.SIGTERM)
        try:
            late = httpx.post(f"{srv.base}/v1/namespaces/dr/events", headers=h,
                              json={"text": "after the signal"}, timeout=5)
            assert late.status_code == 503
        except httpx.HTTPError:
            pass  # or the listener is already closed: either way nothing is accepted
        assert srv.proc.wait(60) == 0, srv.log.read_text()
        assert ended.wait(5)
    ids, last, cursor = _store_state(db)["dr"]
    assert backlog > 0, "nothing was pending at SIGTERM: the test did not test draining"
    assert len(ids) == 800 and cursor == last
    assert "Traceback" not in srv.log.read_text()


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_serve_without_auth_on_loopback(tmp_path: Path) -> None:
    with serve(tmp_path, tmp_path / "open.db", "--no-auth") as srv:
        r = httpx.post(f"{srv.base}/v1/namespaces/dev/events", json={"text": "no key needed"})
        assert r.status_code == 202
        srv.proc.send_signal(signal.SIGINT)
        assert srv.proc.wait(30) == 0
