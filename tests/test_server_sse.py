"""The SSE stream ends when the key it was opened with is revoked; every event has an id, and
a reconnect with Last-Event-ID replays the kept ones it missed (on a real uvicorn server in
this process: the TestClient does not stream)."""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from enfold.memory import Memory
from enfold.server import ServerSettings, create_app
from enfold.server.auth import create_key, revoke_key

ADMIN = "admin-secret-for-tests"
END = object()


@dataclass
class Served:
    base: str
    memory: Memory
    app: Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    import uvicorn

    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    app = create_app(memory, ServerSettings(admin_key=ADMIN, scan_interval_s=0.2,
                                            sse_ping_s=1))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Served(f"http://127.0.0.1:{port}", memory, app)
    finally:
        server.should_exit = True
        thread.join(20)
        memory.close()
    assert not thread.is_alive()


def _listen(base: str, key: str, into: queue.Queue[Any], opened: threading.Event,
            stop: threading.Event) -> None:
    """Stream the namespace's notifications into ``into``; ``END`` when the stream ends.
    ``stop`` hangs up (checked on every line: keep-alive pings come every second)."""
    try:
        with httpx.Client(base_url=base, timeout=30) as c, \
                c.stream("GET", "/v1/namespaces/carol/stream",
                         headers={"Authorization": f"Bearer {key}"}) as stream:
            assert stream.status_code == 200
            opened.set()
            name = None
            for line in stream.iter_lines():
                if stop.is_set():
                    return
                if line.startswith("event:"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and name:
                    into.put((name, json.loads(line.split(":", 1)[1])))
                    name = None
    finally:
        opened.set()
        into.put(END)


def _next(q: queue.Queue[Any], timeout: float = 15.0) -> Any:
    return q.get(timeout=timeout)


def _post(base: str, text: str) -> None:
    r = httpx.post(f"{base}/v1/namespaces/carol/events", json={"text": text, "source": "Carol"},
                   headers={"Authorization": f"Bearer {ADMIN}"}, timeout=10)
    assert r.status_code == 202, r.text


def test_a_revoked_key_stops_its_stream_and_only_its_stream(served: Served) -> None:
    revoked_row, revoked = create_key(served.memory.store, "carol", label="to revoke")
    _, kept = create_key(served.memory.store, "carol", label="kept")
    streams: dict[str, queue.Queue[Any]] = {"revoked": queue.Queue(), "kept": queue.Queue()}
    threads = []
    stop = threading.Event()
    for name, key in (("revoked", revoked), ("kept", kept)):
        opened = threading.Event()
        t = threading.Thread(target=_listen, daemon=True,
                             args=(served.base, key, streams[name], opened, stop))
        t.start()
        assert opened.wait(10)
        threads.append(t)

    # Both streams hear the first obligation.
    _post(served.base, "I need to pick up the dry cleaning")
    for q in streams.values():
        name, note = _next(q)
        assert name == "intent" and note["type"] == "intent_emerged"

    # Revoke one key in the store (as `enfold keys revoke` does from another process), then
    # at once cause another notification: the revoked stream must not deliver it.
    revoke_key(served.memory.store, revoked_row.id)
    started = time.monotonic()
    _post(served.base, "I have to renew the passport by Friday")
    name, note = _next(streams["kept"])
    assert name == "intent" and "passport" in json.dumps(note).lower()
    assert _next(streams["revoked"], timeout=10) is END  # the stream ended, with nothing
    assert time.monotonic() - started < 5
    for t in threads[:1]:
        t.join(5)
        assert not t.is_alive()

    # Reconnecting with the revoked key is refused; the kept stream is still open.
    r = httpx.get(f"{served.base}/v1/namespaces/carol/stream",
                  headers={"Authorization": f"Bearer {revoked}"}, timeout=5)
    assert r.status_code == 401
    # The kept stream may have heard more (a later notification about the passport intent,
    # a consolidation): what matters is that it has not ended.
    heard = []
    while not streams["kept"].empty():
        heard.append(streams["kept"].get_nowait())
    assert threads[1].is_alive() and END not in heard, heard
    stop.set()
    threads[1].join(5)


def test_a_stream_ends_within_a_poll_interval_of_the_revocation(served: Served) -> None:
    """No notification needed: the key is also checked on an interval."""
    row, key = create_key(served.memory.store, "carol")
    q: queue.Queue[Any] = queue.Queue()
    opened = threading.Event()
    t = threading.Thread(target=_listen, args=(served.base, key, q, opened, threading.Event()),
                         daemon=True)
    t.start()
    assert opened.wait(10)
    time.sleep(0.3)
    assert t.is_alive()
    revoke_key(served.memory.store, row.id)
    started = time.monotonic()
    assert _next(q, timeout=10) is END
    assert time.monotonic() - started < 3
    t.join(5)


# ------------------------------------------------------------------ ids and replay
def _events(lines: Iterator[str], n: int, timeout: float = 20.0
            ) -> list[tuple[str, str, dict[str, Any]]]:
    """The next ``n`` SSE events of a stream's lines as (id, event, data); comments are
    skipped."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    fields: dict[str, str] = {}
    for line in lines:  # keep-alive pings come every second
        assert time.monotonic() < deadline, f"only {len(out)} of {n} events"
        if not line:
            if "data" in fields:
                out.append((fields.get("id", ""), fields.get("event", ""),
                            json.loads(fields["data"])))
                if len(out) == n:
                    return out
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    raise AssertionError("the stream ended")


def test_events_carry_ids_and_a_reconnect_replays_the_missed_ones(served: Served) -> None:
    admin = {"Authorization": f"Bearer {ADMIN}"}
    url = "/v1/namespaces/carol/stream"
    with httpx.Client(base_url=served.base, timeout=30) as c:
        with c.stream("GET", url, headers=admin) as stream:
            _post(served.base, "I need to pick up the dry cleaning")
            [(first_id, name, _)] = _events(stream.iter_lines(), 1)
        assert name == "intent" and first_id
        # Missed while disconnected: two more intents (undated: no deadline notices).
        _post(served.base, "I have to renew the passport")
        _post(served.base, "I need to call the bank")
        deadline = time.monotonic() + 20
        while len(served.app.state.enfold.replay.kept("carol")) < 3:
            assert time.monotonic() < deadline, "the intents did not emerge"
            time.sleep(0.05)
        with c.stream("GET", url, headers={**admin, "Last-Event-ID": first_id}) as stream:
            lines = stream.iter_lines()
            replayed = _events(lines, 2)
            _post(served.base, "I must send the invoice to Omar")
            [live] = _events(lines, 1)
    assert [n["type"] for _, _, n in [*replayed, live]] == ["intent_emerged"] * 3
    labels = [n["label"].lower() for _, _, n in replayed]
    assert "passport" in labels[0] and "bank" in labels[1]
    ids = [first_id] + [i for i, _, _ in replayed] + [live[0]]
    assert len(set(ids)) == 4
    seqs = [int(i.rsplit("-", 1)[1]) for i in ids]
    assert seqs == sorted(seqs) and seqs[0] < seqs[1]
    assert "invoice" in live[2]["label"].lower()


def _note(i: int, ns: str = "a", event: str | None = None) -> Any:
    from enfold.notify import INTENT_EMERGED, Notification

    return Notification(INTENT_EMERGED, ns, f"in_{i}", f"intent {i}", float(i),
                        event_id=event or f"ev_{i}")


def test_the_replay_buffer_is_bounded_per_namespace() -> None:
    import asyncio

    from enfold.server.push import GAP_COMMENT, Replay, sse_events

    replay = Replay(size=2)
    for i in range(1, 6):
        replay.record(_note(i))
    replay.record(_note(99, ns="b"))
    run = replay.run

    async def drain(last: str | None, live: int = 0) -> tuple[bool, list[int], list[Any]]:
        listener = replay.listen("a", last)
        for i in range(live):
            replay.record(_note(100 + i))
        got = []
        messages = []
        gen = sse_events(listener, stopping=lambda: False, poll_s=0.05)
        while True:
            try:
                msg = await asyncio.wait_for(anext(gen), 0.3)
            except TimeoutError:
                break
            messages.append(msg)
            if "id" in msg:
                got.append(int(msg["id"].rsplit("-", 1)[1]))
        await gen.aclose()
        return listener.gap, got, messages

    # An id still in the buffer: what came after it, no gap.
    assert asyncio.run(drain(f"{run}-4"))[:2] == (False, [5])
    # An id older than the buffer: what is kept, and a comment that some were lost.
    gap, got, messages = asyncio.run(drain(f"{run}-1"))
    assert (gap, got) == (True, [4, 5]) and messages[0] == {"comment": GAP_COMMENT}
    # An id of an earlier run of the server (or garbage): what is kept, with the comment.
    assert asyncio.run(drain("0123abcd-3"))[:2] == (True, [4, 5])
    assert asyncio.run(drain("nonsense"))[:2] == (True, [4, 5])
    # No Last-Event-ID: only what comes next, numbered on from the last.
    assert asyncio.run(drain(None, live=2))[:2] == (False, [6, 7])
    assert [i.seq for i in replay.kept("a")] == [6, 7]  # still two kept
    assert [i.note.node_id for i in replay.kept("b")] == ["in_99"]  # its own numbering
    assert replay.kept("b")[0].seq == 1


def test_forget_and_wipe_leave_the_replay_buffer() -> None:
    from enfold.server.push import Replay

    replay = Replay(size=10)
    for i in range(1, 4):
        replay.record(_note(i))
    replay.drop("a", node_ids={"in_1"}, event_id="ev_2")
    assert [i.note.node_id for i in replay.kept("a")] == ["in_3"]
    replay.drop("a")
    assert replay.kept("a") == []
