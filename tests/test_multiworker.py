"""Three server processes on one PostgreSQL database, one SIGKILLed mid-way.

Writers post to six namespaces at once, each event to a random live server. Server 0 is
killed with SIGKILL once a third of the events are in: its namespace leases run out and the
other two take its namespaces over. Afterwards every accepted event is in the log once, in
the order it was posted, folded exactly once (checked in the op log), in the order of its
namespace's events. Workers that take turns on a namespace fold onto one consistent graph:
each reloads its working graph when another process changed the namespace since it last
held it. Under load (writers and readers on every server), a recall served by one worker
right after another worker folded new events returns them.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from enfold.bench.multiworker import event_text, feed, kill, launch, stop, wait_folded
from enfold.store import open_store

NAMESPACES = [f"ns{i}" for i in range(6)]
PER_NAMESPACE = 30


def test_three_workers_one_killed_fold_everything_exactly_once(pg_url: str) -> None:
    servers = launch(pg_url, 3, lease_ttl_s=2.0)
    killed = threading.Event()

    def progress(done: int) -> None:
        if done >= len(NAMESPACES) * PER_NAMESPACE // 3 and not killed.is_set():
            killed.set()
            kill(servers[0])

    try:
        fed = feed(servers, NAMESPACES, PER_NAMESPACE, on_progress=progress)
        assert killed.is_set() and servers[0].proc.returncode == -9
        store = open_store(pg_url)
        try:
            wait_folded(store, NAMESPACES, timeout=90)
            for ns in NAMESPACES:
                check_namespace(store, ns, fed.ids[ns])
        finally:
            store.close()
    finally:
        stop(servers)


def check_namespace(store: object, ns: str, accepted: list[str]) -> None:
    s: object = store
    events = s.events_after(ns, 0, 10_000)  # type: ignore[attr-defined]
    # Every accepted event once, in posting order; nothing else.
    assert [e.id for e in events] == accepted
    assert [e.text for e in events] == [event_text(ns, i) for i in range(PER_NAMESPACE)]
    assert [e.attrs["seq"] for e in events] == list(range(1, PER_NAMESPACE + 1))
    assert s.get_cursor(ns) == s.last_seq(ns) == PER_NAMESPACE  # type: ignore[attr-defined]
    ops = s.oplog(ns)  # type: ignore[attr-defined]
    assert [o.seq for o in ops] == list(range(1, len(ops) + 1)), "op log has gaps"
    # Folded exactly once: the fold of an event links its speaker to it (one ADD_EDGE
    # PARTICIPATES op); a second fold would add it again. Those ops follow event order.
    first_op: list[int] = []
    for e in events:
        speaker = [o for o in ops if o.op == "ADD_EDGE" and e.id in (o.target, o.peer)
                   and (o.after or {}).get("type") == "PARTICIPATES"]
        assert len(speaker) == 1, f"event {e.attrs['seq']} of {ns} folded {len(speaker)} times"
        first_op.append(speaker[0].seq)
    assert first_op == sorted(first_op), f"{ns} was folded out of order"


def test_workers_taking_turns_fold_onto_one_consistent_graph(pg_url: str) -> None:
    servers = launch(pg_url, 2, lease_ttl_s=2.0)
    try:
        feed(servers, NAMESPACES[:2], 20)
        store = open_store(pg_url)
        try:
            wait_folded(store, NAMESPACES[:2], timeout=60)
            for ns in NAMESPACES[:2]:
                ops = store.oplog(ns)  # type: ignore[attr-defined]
                people = [str((o.after or {}).get("text")) for o in ops
                          if o.op == "ADD_NODE" and o.target.startswith("pe_")]
                assert "Maya" in people
                twice = {p for p in people if people.count(p) > 1}
                assert not twice, f"{ns}: {sorted(twice)} created more than once"
        finally:
            store.close()
    finally:
        stop(servers)


PROBES = ["the cellar smelled of damp apples", "a heron stood on the frozen canal",
          "grandmother's violin needs new strings", "the tram to Zurich was cancelled",
          "we repainted the garden shed teal", "a parcel of saffron arrived from Iran",
          "the telescope lens has a scratch", "Priya adopted a one-eyed tabby cat",
          "our landlord raised the rent in March", "the choir rehearses Brahms on Sundays",
          "a wasp nest hangs under the balcony", "the kayak trip moved to Lake Bled"]


def test_a_recall_on_any_worker_returns_what_another_worker_just_folded(pg_url: str) -> None:
    """Probes go one by one to a server of the ``probes`` namespace; once its cursor passed
    a probe, every server's recall returns it — whichever of them folded it — while other
    threads post to other namespaces and recall the probe namespace on every server."""
    servers = launch(pg_url, 3, lease_ttl_s=2.0)
    done = threading.Event()
    errors: list[BaseException] = []

    def load(k: int) -> None:
        rng = random.Random(k)
        ns = NAMESPACES[k % 3]
        try:
            with httpx.Client(timeout=30) as client:
                i = 0
                while not done.is_set():
                    s = rng.choice(servers)
                    if k % 2 == 0:
                        body = {"events": [{"text": event_text(ns, i), "source": "Maya",
                                            "ts": 1_700_000_000 + 60 * i, "id": f"{k}-{i}"}]}
                        r = client.post(f"{s.base}/v1/namespaces/{ns}/events", json=body)
                        assert r.status_code == 202, r.text
                    else:  # keeps every server's graph of the probes loaded, and busy
                        r = client.get(f"{s.base}/v1/namespaces/probes/recall",
                                       params={"q": rng.choice(PROBES), "k": 5})
                        assert r.status_code == 200, r.text
                    i += 1
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(k,)) for k in range(6)]
    store = open_store(pg_url)
    try:
        with httpx.Client(timeout=30) as client:
            for p, text in enumerate(PROBES[:6]):  # the rest only as recall queries
                writer = servers[p % len(servers)]
                r = client.post(f"{writer.base}/v1/namespaces/probes/events",
                                json={"text": text, "source": "Maya", "ts": 1_800_000_000 + p})
                assert r.status_code == 202, r.text
                probe = r.json()["ids"][0]
                if p == 0:
                    for t in threads:
                        t.start()
                node = store.get_node("probes", probe)
                assert node is not None
                deadline = time.monotonic() + 30
                while store.get_cursor("probes") < int(node.attrs["seq"]):
                    assert time.monotonic() < deadline, f"probe {p} was not folded"
                    time.sleep(0.02)
                for reader in servers:  # the one that folded it and the others
                    r = client.get(f"{reader.base}/v1/namespaces/probes/recall",
                                   params={"q": text, "k": 20})
                    assert r.status_code == 200, r.text
                    found = [e["id"] for e in r.json()["evidence"]]
                    assert probe in found, (f"server {servers.index(reader)} did not recall "
                                            f"probe {p} (posted to server "
                                            f"{servers.index(writer)}) once it was folded")
    finally:
        done.set()
        for t in threads:
            if t.is_alive():
                t.join(60)
        store.close()
        stop(servers)
    assert not errors, errors
