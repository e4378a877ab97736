"""Two writers on one SQLite namespace, as real processes (issue 25, items 3 and 14).

Processes opening a new file at the same moment both migrate it (or find it migrated);
two processes calling ``add_many`` on one file and namespace, and ``enfold ingest`` next to
a running ``enfold serve``, leave one consistent graph: every person once, every edge end
and alias target present, every event folded exactly once, every concept's event count
equal to its provenance rows; a process recalling (touching nodes) while another folds
never writes a stale copy of a node back. The store-level fences and increments they rest
on are tested on both backends.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
import traceback
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from enfold.errors import StaleGraph
from enfold.graph import ChangeSet
from enfold.memory import Memory
from enfold.model import Node, NodeKind
from enfold.store import open_store
from enfold.store.base import Fence

SPAWN = mp.get_context("spawn")
NS = "default"
BASE_TS = 1_700_000_000
TOPICS = ["went running in the park with Sam", "booked a hotel in Vienna for the concert",
          "I need to renew my passport by Friday", "Maya thinks the new office is too far",
          "chess club moved to Thursday evenings", "ran 10k along the river again",
          "Lena said the garden needs water", "Tom and Priya planned the trip to Rome"]
PEOPLE = ["Maya", "Sam", "Lena", "Tom", "Priya", "Omar"]


def stream(writer: str, n: int) -> list[dict[str, Any]]:
    """``n`` events of one writer: the even ones shared with every writer (same id, text,
    speaker and time), the odd ones its own."""
    out = []
    for i in range(n):
        tag = "shared" if i % 2 == 0 else writer
        out.append({"id": f"{tag}-{i}", "source": PEOPLE[i % len(PEOPLE)],
                    "ts": BASE_TS + 600 * i,
                    "text": f"{tag} note {i}: {TOPICS[i % len(TOPICS)]} with "
                            f"{PEOPLE[(3 * i + 1) % len(PEOPLE)]}"})
    return out


def check_namespace(url: str, ns: str = NS) -> dict[str, Any]:
    """Assert that the namespace is one consistent graph; returns a few counts."""
    store: Any = open_store(url)
    try:
        rows = {t: store.dump_rows(t, ns) for t in ("nodes", "edges", "aliases", "provenance",
                                                    "events")}
        ids = {r[1] for r in rows["nodes"]}
        people = Counter(r[3] for r in rows["nodes"] if r[2] == NodeKind.PERSON.value)
        assert people and max(people.values()) == 1, \
            f"people stored twice: {sorted(p for p, n in people.items() if n > 1)}"
        dangling = [r[1:4] for r in rows["edges"] if r[1] not in ids or r[3] not in ids]
        assert not dangling, f"{len(dangling)} edges with a missing end, e.g. {dangling[:3]}"
        lost = [r[1:3] for r in rows["aliases"] if r[2] not in ids]
        assert not lost, f"{len(lost)} aliases pointing at no node, e.g. {lost[:3]}"
        assert store.get_cursor(ns) == store.last_seq(ns) == len(rows["events"]) > 0
        prov = Counter(r[1] for r in rows["provenance"])
        off = [(r[1], json.loads(r[4]).get("event_count"), prov[r[1]]) for r in rows["nodes"]
               if r[2] == NodeKind.CONCEPT.value
               and json.loads(r[4]).get("event_count") != prov[r[1]]]
        assert not off, f"concepts whose event_count is not their provenance: {off[:3]}"
        # Folded exactly once: folding an event links its speaker to it (one ADD_EDGE
        # PARTICIPATES op); a second fold would add it again.
        ops = store.oplog(ns)
        assert [o.seq for o in ops] == list(range(1, len(ops) + 1)), "op log has gaps"
        admitted = Counter(e for o in ops if o.op == "ADD_EDGE"
                           and (o.after or {}).get("type") == "PARTICIPATES"
                           for e in (o.target, o.peer))
        folds = Counter(admitted[r[2]] for r in rows["events"])
        assert folds == {1: len(rows["events"])}, f"events by number of folds: {dict(folds)}"
        return {"events": len(rows["events"]), "people": len(people),
                "concepts": sum(1 for r in rows["nodes"] if r[2] == NodeKind.CONCEPT.value)}
    finally:
        store.close()


def _join(procs: list[Any], results: Any, timeout: float = 120) -> list[str]:
    out = [results.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout)
        assert p.exitcode == 0, f"{p.name} exited with {p.exitcode}"
    return out


# ------------------------------------------------------------ item 14: migrations
def _open_new_files(folder: str, rounds: int, barrier: Any, results: Any) -> None:
    failures = []
    for r in range(rounds):
        barrier.wait()  # every process opens round r's new file at the same moment
        try:
            open_store(os.path.join(folder, f"r{r}.db")).close()
        except Exception:  # noqa: BLE001 - reported to the parent
            failures.append(traceback.format_exc(limit=1))
    results.put(json.dumps(failures))


def test_processes_opening_a_new_file_at_once_each_get_a_migrated_store(tmp_path: Path
                                                                       ) -> None:
    rounds, barrier, results = 20, SPAWN.Barrier(3), SPAWN.Queue()
    procs = [SPAWN.Process(target=_open_new_files, args=(str(tmp_path), rounds, barrier,
                                                         results)) for _ in range(3)]
    for p in procs:
        p.start()
    failures = [f for r in _join(procs, results) for f in json.loads(r)]
    assert not failures, f"{len(failures)} opens failed, e.g. {failures[0]}"
    folder = resources.files("enfold.store") / "migrations" / "sqlite"
    every = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    for r in range(rounds):
        store: Any = open_store(tmp_path / f"r{r}.db")
        assert store.migrations() == every  # each once, none missing
        store.close()


# ----------------------------------------------------- item 3: add_many x add_many
def _add_many(path: str, writer: str, n: int, chunk: int, start: Any, results: Any) -> None:
    try:
        start.wait()  # both open the new file at the same moment, then add
        with Memory.open(path, embedder="hash", planner="local") as m:
            events = stream(writer, n)
            for i in range(0, n, chunk):
                m.add_many(events[i:i + chunk])
            m.recall("running in the park")
        results.put("ok")
    except BaseException:  # noqa: BLE001 - reported to the parent
        results.put(traceback.format_exc())


def two_processes_add(tmp_path: Path, n: int, chunk: int) -> dict[str, Any]:
    path = str(tmp_path / "two.db")
    start, results = SPAWN.Event(), SPAWN.Queue()
    procs = [SPAWN.Process(target=_add_many, args=(path, w, n, chunk, start, results),
                           name=w) for w in ("a", "b")]
    for p in procs:
        p.start()
    time.sleep(1.0)  # let both import enfold
    start.set()
    assert _join(procs, results) == ["ok", "ok"]
    counts = check_namespace(path)
    assert counts["events"] == n + n // 2  # the shared half stored once
    return counts


def test_two_processes_add_many_to_one_namespace(tmp_path: Path) -> None:
    two_processes_add(tmp_path, n=240, chunk=40)


@pytest.mark.slow
def test_two_processes_add_many_to_one_namespace_long(tmp_path: Path) -> None:
    two_processes_add(tmp_path, n=2000, chunk=100)


# -------------------------------------------- item 3: recall (touch) x fold
def _fold_stream(path: str, n: int, start: Any, done: Any, results: Any) -> None:
    try:
        with Memory.open(path, embedder="hash", planner="local") as m:
            start.wait()
            events = stream("b", n)
            for i in range(0, n, 5):  # many small commits
                m.add_many(events[i:i + 5])
        results.put("ok")
    except BaseException:  # noqa: BLE001
        results.put(traceback.format_exc())
    finally:
        done.set()


def _recall_loop(path: str, start: Any, done: Any, results: Any) -> None:
    try:
        with Memory.open(path, embedder="hash", planner="local") as m:
            m.fold_on_read = False  # this process only reads: its recalls touch nodes
            start.wait()
            recalls = 0
            while not done.is_set() or recalls < 20:
                pack = m.recall(TOPICS[recalls % len(TOPICS)], k=10)
                assert pack.concepts or pack.evidence
                recalls += 1
        results.put("ok")
    except BaseException:  # noqa: BLE001
        results.put(traceback.format_exc())


def test_recalls_in_one_process_while_another_folds_write_no_stale_node(tmp_path: Path
                                                                        ) -> None:
    path = str(tmp_path / "touch.db")
    with Memory.open(path, embedder="hash", planner="local") as m:
        m.add_many(stream("a", 24))  # something to recall from the start
    start, done, results = SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
    procs = [SPAWN.Process(target=_fold_stream, args=(path, 200, start, done, results)),
             SPAWN.Process(target=_recall_loop, args=(path, start, done, results))]
    for p in procs:
        p.start()
    time.sleep(1.0)
    start.set()
    assert _join(procs, results) == ["ok", "ok"]
    check_namespace(path)
    with Memory.open(path, embedder="hash", planner="local") as m:
        touched = [n for n in m.graph().nodes.values() if n.access_count > 0]
        assert touched, "the recalls counted no access"


# ---------------------------------------------------- item 3: ingest x serve
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _enfold(path: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "enfold", "--db", path, "--create", "--embedder", "hash",
            "--planner", "local", *args]


def test_cli_ingest_next_to_a_running_server(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("uvicorn")
    path = str(tmp_path / "served.db")
    port = _free_port()
    server_log = (tmp_path / "serve.log").open("w+")
    server = subprocess.Popen(_enfold(path, "serve", "--no-auth", "--port", str(port),
                                      "--fold-threads", "2"),
                              stdout=subprocess.DEVNULL, stderr=server_log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.1)
        feed = tmp_path / "feed.jsonl"
        feed.write_text("".join(json.dumps(e) + "\n" for e in stream("cli", 300)))
        ingest = subprocess.Popen(_enfold(path, "ingest", str(feed), "--no-progress"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Post to the server for as long as the CLI ingests (its own folding runs all along).
        posted = stream("http", 600)
        sent = 0
        with httpx.Client(timeout=30) as client:
            while (ingest.poll() is None or sent < 60) and sent < len(posted):
                r = client.post(f"{base}/v1/namespaces/{NS}/events",
                                json={"events": posted[sent:sent + 6]})
                assert r.status_code == 202, r.text
                sent += 6
                time.sleep(0.02)
        _, ingest_err = ingest.communicate(timeout=180)
        assert ingest.returncode == 0, ingest_err
        assert "Traceback" not in ingest_err, ingest_err
        store = open_store(path)
        try:
            deadline = time.monotonic() + 60
            while store.get_cursor(NS) < store.last_seq(NS):
                assert time.monotonic() < deadline, "the server did not fold the rest"
                time.sleep(0.1)
        finally:
            store.close()
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        server_log.seek(0)
        log = server_log.read()
        server_log.close()
    assert server.returncode == 0, log[-3000:]
    assert "Traceback" not in log and "failed" not in log, log[-3000:]
    counts = check_namespace(path)
    assert counts["events"] == len({e["id"] for e in (*stream("cli", 300), *posted[:sent])})


# ----------------------------------------------- the store mechanisms, both backends
def _concept(ns: str, node_id: str, events: tuple[str, ...]) -> Node:
    return Node(namespace=ns, id=node_id, kind=NodeKind.CONCEPT, text="running",
                attrs={"event_count": len(events)}, grounded_in=events, created_at=1.0,
                updated_at=1.0, last_access=1.0)


def test_a_commit_from_a_stale_graph_is_refused_and_writes_nothing(store_url: str) -> None:
    a, b = open_store(store_url), open_store(store_url)  # two processes' stores
    try:
        a.commit("n", ChangeSet(nodes={"co_1": _concept("n", "co_1", ())}))
        snap_a, snap_b = a.load_graph("n"), b.load_graph("n")
        assert snap_a.token == snap_b.token == a.change_token("n")
        fa, fb = Fence(snap_a.token), Fence(snap_b.token)
        with b.fenced("n", fb):  # b writes first; its fence follows its own commits
            b.commit("n", ChangeSet(meta={"who": "b"}))
            b.commit("n", ChangeSet(meta={"again": "b"}))
        assert fb.token == b.change_token("n") != snap_b.token
        with a.fenced("n", fa), pytest.raises(StaleGraph):
            a.commit("n", ChangeSet(nodes={"co_1": _concept("n", "co_1", ("ev_x",))},
                                    meta={"who": "a"}))
        assert a.get_meta("n", "who") == "b" and a.get_node("n", "co_1").grounded_in == ()
        assert fa.token == snap_a.token  # refused: the fence stays where it was
        fa.token = a.change_token("n")  # (a reloaded its graph)
        with a.fenced("n", fa):
            a.commit("n", ChangeSet(meta={"who": "a"}))
        assert a.get_meta("n", "who") == "a"
        # Outside a fence (or with no graph loaded) commits are not checked.
        b.commit("n", ChangeSet(meta={"who": "b"}))
        with b.fenced("n", Fence()):
            b.commit("n", ChangeSet(meta={"who": "b2"}))
        assert a.get_meta("n", "who") == "b2"
    finally:
        a.close()
        b.close()


def test_touches_add_up_and_a_stale_row_never_lowers_them(store_url: str) -> None:
    a, b = open_store(store_url), open_store(store_url)
    try:
        node = _concept("n", "co_1", ())
        a.commit("n", ChangeSet(nodes={"co_1": node}))
        a.touch("n", ["co_1", "co_1"], at=50.0)
        b.touch("n", ["co_1", "co_missing"], at=40.0)
        got = a.get_node("n", "co_1")
        assert got is not None and (got.access_count, got.last_access) == (3, 50.0)
        # A writer whose copy of the node predates the touches rewrites it (unfenced):
        # its other fields win, the access statistics keep the larger values.
        b.commit("n", ChangeSet(nodes={"co_1": node.with_changes(text="jogging")}))
        got = a.get_node("n", "co_1")
        assert got is not None and got.text == "jogging"
        assert (got.access_count, got.last_access) == (3, 50.0)
        assert a.change_token("n") == b.change_token("n")
        token = a.change_token("n")
        a.touch("n", ["co_1"], at=60.0)
        assert a.change_token("n") == token, "a touch is not a change of the graph"
    finally:
        a.close()
        b.close()


def test_a_wipe_by_another_writer_makes_the_graph_stale(store_url: str) -> None:
    a, b = Memory.open(store_url, embedder="hash", planner="local"), \
        Memory.open(store_url, embedder="hash", planner="local")
    try:
        a.add("went running in the park with Sam", source="Maya", ts=BASE_TS)
        assert a.graph().count(NodeKind.EVENT) == 1
        b.wipe()
        assert a.graph().count(NodeKind.EVENT) == 0
        a.add("ran 10k along the river again", source="Maya", ts=BASE_TS + 60)
        people = [n.text for n in a.graph().nodes.values() if n.kind is NodeKind.PERSON]
        assert people.count("Maya") == 1 and a.graph().count(NodeKind.EVENT) == 1
    finally:
        a.close()
        b.close()


def test_fenced_commits_in_a_transaction_move_the_fence_when_it_commits(store_url: str
                                                                         ) -> None:
    store = open_store(store_url)
    try:
        store.commit("n", ChangeSet(meta={"a": 0}))
        fence = Fence(store.change_token("n"))
        with store.fenced("n", fence):
            with pytest.raises(RuntimeError), store.transaction():
                store.commit("n", ChangeSet(meta={"a": 1}))
                raise RuntimeError("the caller rolls back")
            assert fence.token == store.change_token("n") and store.get_meta("n", "a") == 0
            with store.transaction():
                store.commit("n", ChangeSet(meta={"a": 2}))
                store.commit("n", ChangeSet(meta={"a": 3}))  # expects the first one's token
                assert fence.token != store.change_token("n")  # moved at the commit only
            assert fence.token == store.change_token("n") and store.get_meta("n", "a") == 3
    finally:
        store.close()


def test_the_stale_retries_and_the_ingest_chunk_are_settings() -> None:
    from enfold.events import EventIn
    from enfold.ingest import append_new
    from enfold.settings import Settings

    tries: list[int] = []

    def stale() -> None:
        tries.append(1)
        raise StaleGraph("another writer changed it")

    for retries in (Settings().stale_retries, 3):
        m = Memory.open("memory:", embedder="hash", planner=None,
                        settings=Settings().with_(stale_retries=retries))
        tries.clear()
        with pytest.raises(StaleGraph):
            m._write(m.namespace, stale, lease=False)
        assert len(tries) == retries
        m.close()
    m = Memory.open("memory:", embedder="hash", planner=None,
                    settings=Settings().with_(ingest_chunk=3))
    sizes: list[int] = []
    events = [EventIn(f"note {i}", 1_790_000_000.0 + i, None, "note", None, {})
              for i in range(7)]
    report = append_new(m, events, fold=False, progress=sizes.append)
    assert sizes == [3, 3, 1] and report.new == 7
    m.close()
