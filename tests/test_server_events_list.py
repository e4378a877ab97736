"""Listing a namespace's events: ``GET /v1/namespaces/{ns}/events`` through the real ASGI
app, ``Memory.events`` under it, and the store's time-ordered read on both backends.

Pages come in time order (log order at equal times), the cursor is stable while events are
appended, ``since``/``until`` are a half-open window, namespaces stay apart, and bad
parameters are a problem+json 4xx that names the parameter."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from enfold.memory import Memory
from enfold.model import Node, NodeKind, content_hash, new_id
from enfold.server import ServerSettings, create_app
from enfold.server.auth import create_key
from enfold.store import open_store
from enfold.store.base import EventRecord
from enfold.timeline import decode_cursor, encode_cursor

ADMIN = "admin-secret-for-tests"
DAY = 86_400.0
T0 = 1_790_000_000.0  # 2026-09-21


class Api:
    def __init__(self, client: TestClient, memory: Memory, keys: dict[str, str]) -> None:
        self.c = client
        self.memory = memory
        self.keys = keys

    def h(self, ns: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[ns]}"}

    def post(self, ns: str, events: list[dict[str, Any]]) -> list[str]:
        r = self.c.post(f"/v1/namespaces/{ns}/events", json={"events": events},
                        headers=self.h(ns))
        assert r.status_code == 202, r.text
        ids: list[str] = r.json()["ids"]
        return ids

    def list(self, ns: str, **params: Any) -> httpx.Response:
        return self.c.get(f"/v1/namespaces/{ns}/events", params=params, headers=self.h(ns))

    def pages(self, ns: str, **params: Any) -> list[list[dict[str, Any]]]:
        """Every page, following next_cursor to the end."""
        out = []
        cursor = None
        while True:
            r = self.list(ns, **params, **({"cursor": cursor} if cursor else {}))
            assert r.status_code == 200, r.text
            body = r.json()
            out.append(body["events"])
            cursor = body["next_cursor"]
            if cursor is None:
                return out
            assert len(out) < 100, "the cursor does not advance"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    memory = Memory.open(tmp_path / "m.db", embedder="hash", planner="local")
    keys = {ns: create_key(memory.store, ns)[1] for ns in ("alice", "bob")}
    with TestClient(create_app(memory, ServerSettings(admin_key=ADMIN))) as client:
        yield Api(client, memory, keys)
    memory.close()


def _problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["detail"]
    return body


# ------------------------------------------------------------------ the route
def test_pages_list_every_event_once_in_time_order(api: Api) -> None:
    # Appended out of time order, with ties: the listing sorts by ts, then by log order.
    times = [5, 1, 3, 3, 9, 0, 3, 7, 2, 8, 6, 4]
    ids = api.post("alice", [{"text": f"note {i}", "ts": T0 + t * DAY, "source": "Maya"}
                             for i, t in enumerate(times)])
    pages = api.pages("alice", limit=5)
    assert [len(p) for p in pages] == [5, 5, 2]
    listed = [e for p in pages for e in p]
    expected = sorted(range(len(times)), key=lambda i: (times[i], i))
    assert [e["id"] for e in listed] == [ids[i] for i in expected]
    assert [e["attrs"]["ts"] for e in listed] == sorted(T0 + t * DAY for t in times)
    first = listed[0]
    assert first["kind"] == "event" and first["text"] == "note 5"
    assert first["attrs"]["source"] == "Maya" and first["attrs"]["seq"] == 6
    # One page holding everything has no next cursor; the default limit is 100.
    whole = api.list("alice").json()
    assert whole["next_cursor"] is None and len(whole["events"]) == len(times)


def test_since_until_is_a_half_open_window_in_epoch_or_iso(api: Api) -> None:
    ids = api.post("alice", [{"text": f"day {d}", "ts": T0 + d * DAY} for d in range(10)])
    iso = [datetime.fromtimestamp(T0 + d * DAY, tz=UTC).isoformat() for d in range(10)]
    r = api.list("alice", since=str(T0 + 2 * DAY), until=str(T0 + 5 * DAY))
    assert [e["id"] for e in r.json()["events"]] == ids[2:5]
    r = api.list("alice", since=iso[7])
    assert [e["id"] for e in r.json()["events"]] == ids[7:]
    r = api.list("alice", until=iso[1])
    assert [e["id"] for e in r.json()["events"]] == ids[:1]
    # The window and the cursor combine: paging inside the window stays inside it.
    pages = api.pages("alice", since=iso[1], until=iso[8], limit=3)
    assert [e["id"] for p in pages for e in p] == ids[1:8]
    assert api.list("alice", since=iso[9], until="2030-01-01").json()["events"][0]["id"] == ids[9]


def test_the_cursor_survives_appends_and_never_repeats(api: Api) -> None:
    ids = api.post("alice", [{"text": f"e{d}", "ts": T0 + d * DAY} for d in range(6)])
    first = api.list("alice", limit=3).json()
    assert [e["id"] for e in first["events"]] == ids[:3]
    # New events: one later than the cursor, one at the cursor's very time, one earlier.
    later, tie, earlier = api.post("alice", [{"text": "later", "ts": T0 + 10 * DAY},
                                             {"text": "tie", "ts": T0 + 2 * DAY},
                                             {"text": "earlier", "ts": T0 - DAY}])
    rest = api.list("alice", limit=50, cursor=first["next_cursor"]).json()
    # The tie was appended after the page's last event, so it sorts after it: listed.
    assert [e["id"] for e in rest["events"]] == [tie, *ids[3:], later]
    assert earlier not in {e["id"] for e in rest["events"]}
    assert rest["next_cursor"] is None
    # The same cursor gives the same page again.
    again = api.list("alice", limit=50, cursor=first["next_cursor"]).json()
    assert again["events"] == rest["events"]


def test_unfolded_events_are_listed_too(api: Api) -> None:
    api.memory.add("logged, not folded", ts=T0, source="Omar", namespace="alice", fold=False)
    events = api.list("alice").json()["events"]
    assert [e["text"] for e in events] == ["logged, not folded"]


def test_events_stay_in_their_namespace(api: Api) -> None:
    api.post("alice", [{"text": "alice's secret", "ts": T0}])
    bob = api.post("bob", [{"text": "bob's note", "ts": T0}])
    assert [e["id"] for e in api.list("bob").json()["events"]] == bob
    # A key of another namespace sees a 404 (the namespace is hidden), no key a 401.
    r = api.c.get("/v1/namespaces/alice/events", headers=api.h("bob"))
    _problem(r, 404)
    _problem(api.c.get("/v1/namespaces/alice/events"), 401)
    r = api.c.get("/v1/namespaces/alice/events", headers={"Authorization": f"Bearer {ADMIN}"})
    assert [e["text"] for e in r.json()["events"]] == ["alice's secret"]


@pytest.mark.parametrize("params, status, words", [
    ({"limit": 0}, 422, "limit"),
    ({"limit": 1001}, 422, "limit"),
    ({"limit": "many"}, 422, "limit"),
    ({"since": "the day before"}, 400, "'since'"),
    ({"until": "nan"}, 400, "'until'"),
    ({"since": "1e300"}, 400, "'since'"),
    ({"since": "2026-10-05", "until": "2026-10-01"}, 400, "earlier than"),
    ({"since": "2026-10-05", "until": "2026-10-05"}, 400, "earlier than"),
    ({"cursor": "not-a-cursor"}, 400, "cursor"),
    ({"cursor": encode_cursor(T0, 3)[:-2] + "!!"}, 400, "cursor"),
    ({"cursor": "x" * 201}, 422, "cursor"),
])
def test_bad_parameters_are_a_problem_naming_them(api: Api, params: dict[str, Any],
                                                  status: int, words: str) -> None:
    api.post("alice", [{"text": "something", "ts": T0}])
    assert words in _problem(api.list("alice", **params), status)["detail"]


def test_an_empty_namespace_lists_nothing(api: Api) -> None:
    assert api.list("alice").json() == {"events": [], "next_cursor": None}


# ------------------------------------------------------------------ the library and the store
def test_memory_events_takes_datetimes_and_checks_the_limit(tmp_path: Path) -> None:
    from enfold.errors import InputError

    with Memory.open(tmp_path / "m.db", embedder="hash", planner="local") as mem:
        for d in range(4):
            mem.add(f"day {d}", ts=T0 + d * DAY, fold=False)
        page = mem.events(since=datetime.fromtimestamp(T0 + DAY, tz=UTC), limit=2)
        assert [e.text for e in page.events] == ["day 1", "day 2"]
        assert decode_cursor(page.next_cursor or "") == (T0 + 2 * DAY, 3)
        assert [e.text for e in mem.events(cursor=page.next_cursor).events] == ["day 3"]
        with pytest.raises(InputError, match="limit"):
            mem.events(limit=0)
        with pytest.raises(InputError, match="cursor"):
            mem.events(cursor=encode_cursor(float("inf"), 1))


def _event(ns: str, text: str, ts: float) -> EventRecord:
    node = Node(id=new_id(NodeKind.EVENT), namespace=ns, kind=NodeKind.EVENT, text=text,
                attrs={"ts": ts, "source": None, "external_id": None}, created_at=ts,
                updated_at=ts, last_access=ts)
    return EventRecord(node, content_hash(text, None, ts), None)


def test_store_reads_events_by_time_on_both_backends(store_url: str) -> None:
    store = open_store(store_url)
    try:
        # seq 1..6; times out of order, with a tie at T0 + 2 (seq 2 and seq 5).
        times = [T0 + 4, T0 + 2, T0 + 0.5, T0 + 9, T0 + 2, T0 - 3]
        store.append_events("A", [_event("A", f"a{i}", t) for i, t in enumerate(times)])
        store.append_events("B", [_event("B", "b", T0 + 2)])

        def texts(**kw: Any) -> list[str]:
            return [n.text for n in store.events_by_time("A", **kw)]

        assert texts() == ["a5", "a2", "a1", "a4", "a0", "a3"]
        assert texts(since=T0 + 0.5, until=T0 + 4) == ["a2", "a1", "a4"]
        assert texts(after=(T0 + 2, 2)) == ["a4", "a0", "a3"]  # the tie, then later ones
        assert texts(after=(T0 + 2, 5), limit=1) == ["a0"]
        assert texts(since=T0, after=(T0 - 10, 0), limit=2) == ["a2", "a1"]
        assert [n.attrs["seq"] for n in store.events_by_time("A", limit=2)] == [6, 3]
    finally:
        store.close()
