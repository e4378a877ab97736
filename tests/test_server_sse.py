"""The SSE stream ends when the key it was opened with is revoked (on a real uvicorn server
in this process: the TestClient does not stream)."""

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
        yield Served(f"http://127.0.0.1:{port}", memory)
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
    assert threads[1].is_alive() and streams["kept"].empty()
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
