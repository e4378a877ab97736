"""The HTTP API through the real ASGI app (FastAPI's TestClient runs the lifespan, so the
fold workers run too): every route, its problem+json errors, auth and namespace isolation,
limits, backpressure, drain, the SSE stream on a real uvicorn server, signed webhooks, and
the ``enfold keys`` / ``enfold serve`` commands."""

from __future__ import annotations

import http.server
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

pytest.importorskip("fastapi")

from click.testing import CliRunner
from fastapi.testclient import TestClient

from enfold.cli import cli
from enfold.memory import Memory
from enfold.server import ServerSettings, create_app
from enfold.server.auth import create_key, revoke_key
from enfold.server.push import SIGNATURE_HEADER, verify

ADMIN = "admin-secret-for-tests"
OBLIGATION = "I need to pick up the dry cleaning"


class Api:
    """A TestClient with the keys of two namespaces and the admin key."""

    def __init__(self, client: TestClient, memory: Memory, keys: dict[str, tuple[str, str]]):
        self.c = client
        self.memory = memory
        self.keys = keys  # ns -> (key id, key)

    def h(self, ns: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[ns][1]}"}

    def url(self, ns: str, path: str = "") -> str:
        return f"/v1/namespaces/{ns}{path}"

    def post_events(self, ns: str, body: Any, **headers: str) -> httpx.Response:
        return self.c.post(self.url(ns, "/events"), json=body, headers={**self.h(ns), **headers})

    def settle(self, ns: str, timeout: float = 20.0) -> dict[str, Any]:
        """Wait until the background workers folded everything of ``ns``."""
        deadline = time.monotonic() + timeout
        while True:
            stats = self.c.get(self.url(ns, "/stats"), headers=self.h(ns)).json()
            if stats["pending"] == 0 and stats["backlog"] == 0:
                return stats
            assert time.monotonic() < deadline, f"not folded in {timeout}s: {stats}"
            time.sleep(0.05)


def _memory(path: Path) -> Memory:
    return Memory.open(path, embedder="hash", planner="local")


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    memory = _memory(tmp_path / "m.db")
    keys = {}
    for ns in ("alice", "bob"):
        row, key = create_key(memory.store, ns, label=f"{ns}'s agent")
        keys[ns] = (row.id, key)
    app = create_app(memory, ServerSettings(admin_key=ADMIN, scan_interval_s=0.2))
    with TestClient(app) as client:
        yield Api(client, memory, keys)
    memory.close()


def _is_problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert set(body) >= {"type", "title", "status", "detail"}
    assert body["status"] == status and body["detail"]
    return body


# ------------------------------------------------------------------ events
def test_post_event_is_202_then_folded_in_the_background_and_recalled(api: Api) -> None:
    r = api.post_events("alice", {"text": "Maya ran 10k along the river", "source": "Maya",
                                  "ts": "2024-05-01T08:00:00Z", "meta": {"app": "t"}})
    assert r.status_code == 202
    body = r.json()
    assert body["created"] == [True] and body["ids"][0].startswith("ev_")
    stats = api.settle("alice")
    assert stats["events"] == stats["folded"] == 1
    pack = api.c.get(api.url("alice", "/recall"), params={"q": "Who ran along the river?"},
                     headers=api.h("alice")).json()
    assert [e["id"] for e in pack["evidence"]] == body["ids"]
    assert pack["evidence"][0]["source"] == "Maya"
    # `at` as epoch seconds and `kinds` filter the pack.
    pack = api.c.get(api.url("alice", "/recall"),
                     params={"q": "river", "k": 3, "at": "1714600000", "kinds": "concept"},
                     headers=api.h("alice")).json()
    assert pack["evidence"] == []


def test_batches_and_idempotency_keys_return_the_same_ids(api: Api) -> None:
    batch = {"events": [{"text": f"lap {i} of the track"} for i in range(3)]}
    first = api.post_events("alice", batch, **{"Idempotency-Key": "req-1"})
    again = api.post_events("alice", batch, **{"Idempotency-Key": "req-1"})
    assert first.status_code == again.status_code == 202
    assert first.json()["created"] == [True] * 3
    assert again.json() == {"ids": first.json()["ids"], "created": [False] * 3}
    # A single event: the key is its external id; without a ts the content differs each
    # time, so only the key makes the retry a no-op.
    one = api.post_events("alice", {"text": "hello"}, **{"Idempotency-Key": "req-2"})
    two = api.post_events("alice", {"text": "hello"}, **{"Idempotency-Key": "req-2"})
    three = api.post_events("alice", {"text": "hello"})
    assert two.json() == {"ids": one.json()["ids"], "created": [False]}
    assert three.json()["ids"] != one.json()["ids"]
    # The event's own id wins over the header; the same id in another namespace is new.
    own = api.post_events("alice", {"text": "x", "id": "mine"}, **{"Idempotency-Key": "k"})
    assert api.memory.get(own.json()["ids"][0], namespace="alice").attrs["external_id"] == "mine"
    bob = api.post_events("bob", {"text": "x", "id": "mine"})
    assert bob.json()["created"] == [True]
    assert api.settle("alice")["events"] == 6


@pytest.mark.parametrize("body, status, words", [
    ({"source": "Maya"}, 422, "text"),
    ({"text": "hi", "colour": "red"}, 422, "colour"),
    ({"text": "   "}, 400, "empty"),
    ({"text": "hi", "ts": "not a time at all"}, 400, "timestamp"),
    ({"text": "hi", "meta": []}, 422, "meta"),
    ({"events": []}, 422, "events"),
    ({"events": [{"text": "fine"}, {"text": ""}]}, 400, "event 1"),
    ({"text": "x" * 40_000}, 400, "max_event_text"),
    ({"text": "hi", "ts": True}, 400, "boolean"),
    ({"text": "hi", "ts": False}, 400, "boolean"),
    ({"events": [{"text": "fine", "ts": 5}, {"text": "hi", "ts": True}]}, 400, "event 1"),
    ({"text": "hi", "ts": [1]}, 400, "ts"),
])
def test_bad_events_are_refused_with_a_problem_and_store_nothing(
        api: Api, body: Any, status: int, words: str) -> None:
    problem = _is_problem(api.post_events("alice", body), status)
    assert words in json.dumps(problem)
    assert api.memory.store.last_seq("alice") == 0


def _nested(depth: int) -> str:
    return '{"k": ' * depth + '"leaf"' + "}" * depth


@pytest.mark.parametrize("depth", [40, 100_000])
def test_deeply_nested_meta_is_a_400_problem_on_every_route(api: Api, depth: int) -> None:
    """Issue 25, item 12 over HTTP: meta past the depth limit, or a body past the JSON
    parser's recursion limit, is a 400 problem+json (not a RecursionError's 500) on
    POST /events, POST /events/import and PATCH /events/{id}; nothing is stored or changed."""
    h = {**api.h("alice"), "Content-Type": "application/json"}
    body = '{"text": "hello", "ts": 1714550400, "meta": ' + _nested(depth) + "}"
    _is_problem(api.c.post(api.url("alice", "/events"), content=body, headers=h), 400)
    _is_problem(_import(api, "alice", body + "\n"), 400)
    assert api.memory.store.last_seq("alice") == 0
    event_id = api.post_events("alice", {"text": "Lunch with Omar", "meta": {"a": 1}}
                               ).json()["ids"][0]
    patch = '{"meta": ' + _nested(depth) + "}"
    _is_problem(api.c.patch(api.url("alice", f"/events/{event_id}"), content=patch,
                            headers=h), 400)
    assert api.memory.get(event_id, namespace="alice").attrs["meta"] == {"a": 1}
    assert api.c.get(api.url("alice", "/stats"), headers=api.h("alice")).status_code == 200


def test_size_limits_give_413(api: Api) -> None:
    limit = ServerSettings().max_body_bytes
    big = b'{"text": "' + b"x" * limit + b'"}'
    r = api.c.post(api.url("alice", "/events"), content=big,
                   headers={**api.h("alice"), "Content-Type": "application/json"})
    _is_problem(r, 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
        yield b'{"text": "'
        for _ in range(limit // 65536 + 1):
            yield b"y" * 65536
        yield b'"}'

    r = api.c.post(api.url("alice", "/events"), content=chunks(),
                   headers={**api.h("alice"), "Content-Type": "application/json"})
    _is_problem(r, 413)
    many = {"events": [{"text": f"e{i}"} for i in range(ServerSettings().max_batch + 1)]}
    assert "limit is 1000" in _is_problem(api.post_events("alice", many), 413)["detail"]
    r = api.post_events("alice", {"text": "ok"}, **{"Idempotency-Key": "k" * 201})
    _is_problem(r, 400)
    assert api.memory.store.last_seq("alice") == 0


# ------------------------------------------------------------------ import, metadata
def _import(api: Api, ns: str, body: str, **params: str) -> httpx.Response:
    return api.c.post(api.url(ns, "/events/import"), content=body.encode("utf-8"),
                      params=params,
                      headers={**api.h(ns), "Content-Type": "application/x-ndjson"})


def _jsonl(*events: dict[str, Any]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_import_jsonl_stores_each_event_once_and_says_what_was_new(api: Api) -> None:
    body = _jsonl({"text": "Ran 5 miles", "ts": "2024-05-01T08:00:00Z", "source": "Maya"},
                  {"text": "took my pills"}, {"text": "took my pills"},  # two events
                  {"text": "with an id", "id": "x-1"}) + "\n"
    first = _import(api, "alice", body)
    assert first.status_code == 202, first.text
    assert first.json() == {"ingested": 4, "new": 4, "already_stored": 0}
    again = _import(api, "alice", body)  # a retry stores nothing twice
    assert again.json() == {"ingested": 4, "new": 0, "already_stored": 4}
    # Another file (origin) with an equal line that has neither id nor ts: a new event.
    other = _import(api, "alice", body, origin="tuesday.jsonl")
    assert other.json() == {"ingested": 4, "new": 2, "already_stored": 2}
    stats = api.settle("alice")
    assert stats["events"] == stats["folded"] == 6
    assert api.memory.stats("bob")["events"] == 0


def test_import_is_validated_whole_and_bounded(api: Api, tmp_path: Path) -> None:
    good = _jsonl({"text": "fine", "ts": 1_714_550_400})
    bad = _is_problem(_import(api, "alice", good + '{"text": 5}\n'), 400)
    assert "line 2" in bad["detail"] and "text" in bad["detail"]
    bad = _is_problem(_import(api, "alice", good + "not json\n"), 400)
    assert "line 2" in bad["detail"] and "JSON" in bad["detail"]
    bad = _is_problem(_import(api, "alice", good + '{"text": "x", "colour": "red"}\n'), 400)
    assert "colour" in bad["detail"]
    _is_problem(_import(api, "alice", "\n\n"), 400)
    assert api.memory.stats("alice")["events"] == 0  # nothing of a bad body is stored

    memory = _memory(tmp_path / "small.db")
    settings = ServerSettings(auth=False, max_body_bytes=1024, max_import_bytes=4096)
    with TestClient(create_app(memory, settings)) as c:
        lines = _jsonl(*({"text": f"note number {i:03d} of the day"} for i in range(60)))
        assert 2048 < len(lines) < 4096
        r = c.post("/v1/namespaces/n/events/import", content=lines.encode())
        assert r.status_code == 202 and r.json()["new"] == 60
        r = c.post("/v1/namespaces/n/events", json={"text": "x" * 2000})
        assert r.status_code == 413  # the import's bound is its own
        r = c.post("/v1/namespaces/n/events/import", content=(lines * 2).encode())
        assert r.status_code == 413
    memory.close()


def test_patch_changes_only_an_events_metadata(api: Api) -> None:
    r = api.post_events("alice", {"text": "Lunch with Omar at noon", "source": "Maya",
                                  "meta": {"app": "cal", "tags": {"a": 1}}})
    event_id = r.json()["ids"][0]
    api.settle("alice")
    url = api.url("alice", f"/events/{event_id}")
    r = api.c.patch(url, json={"meta": {"app": None, "tags": {"b": 2}, "n": 1}},
                    headers=api.h("alice"))
    assert r.status_code == 200, r.text
    assert r.json()["attrs"]["meta"] == {"tags": {"a": 1, "b": 2}, "n": 1}  # merge patch
    node = api.c.get(api.url("alice", f"/nodes/{event_id}"), headers=api.h("alice")).json()
    assert node["node"]["attrs"]["meta"] == {"tags": {"a": 1, "b": 2}, "n": 1}
    assert node["node"]["text"] == "Lunch with Omar at noon"
    ops = api.c.get(api.url("alice", f"/nodes/{event_id}/history"),
                    headers=api.h("alice")).json()
    assert ops[-1]["op"] == "UPDATE_META" and ops[-1]["before"]["meta"]["app"] == "cal"
    r = api.c.patch(url, json={"meta": {"only": True}, "replace": True}, headers=api.h("alice"))
    assert r.json()["attrs"]["meta"] == {"only": True}

    # The text (and time, speaker, kind, id) never change; the meta is checked as on input.
    bad = _is_problem(api.c.patch(url, json={"meta": {}, "text": "Dinner"},
                                  headers=api.h("alice")), 400)
    assert "text cannot change" in bad["detail"]
    _is_problem(api.c.patch(url, json={"meta": [1]}, headers=api.h("alice")), 422)
    _is_problem(api.c.patch(url, json={"meta": {"x": "a" * 20_000}}, headers=api.h("alice")),
                400)
    assert api.memory.get(event_id, namespace="alice").text == "Lunch with Omar at noon"
    # Only events, only in their namespace.
    _is_problem(api.c.patch(api.url("alice", "/events/ev_nope"), json={"meta": {}},
                            headers=api.h("alice")), 404)
    person = next(n for n in api.c.get(api.url("alice", "/graph"), headers=api.h("alice"))
                  .json()["nodes"] if n["kind"] != "event")
    _is_problem(api.c.patch(api.url("alice", f"/events/{person['id']}"), json={"meta": {}},
                            headers=api.h("alice")), 404)
    _is_problem(api.c.patch(api.url("bob", f"/events/{event_id}"), json={"meta": {"x": 1}},
                            headers=api.h("bob")), 404)
    assert api.memory.get(event_id, namespace="alice").attrs["meta"] == {"only": True}


def test_metadata_of_an_event_not_yet_folded_survives_its_folding(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder="hash", planner="local",
                     auto_fold=False) as m:
        event_id = m.add("Ran 10k this morning", source="Maya", meta={"app": "watch"})
        assert m.stats()["pending"] == 1
        assert m.update_event(event_id, {"km": 10}).attrs["meta"] == {"app": "watch", "km": 10}
        m.fold()
        assert m.stats()["pending"] == 0
        assert m.get(event_id).attrs["meta"] == {"app": "watch", "km": 10}
    with Memory.open(tmp_path / "m.db", embedder="hash", planner="local") as m:
        assert m.get(event_id).attrs["meta"] == {"app": "watch", "km": 10}
        assert [op.op for op in m.history(event_id)].count("UPDATE_META") == 1


def test_the_model_warms_up_at_start_not_on_the_first_request(tmp_path: Path) -> None:
    from enfold.embed import HashingEmbedder

    class Counting(HashingEmbedder):
        texts: ClassVar[list[str]] = []

        def embed(self, texts):  # type: ignore[no-untyped-def]
            Counting.texts += list(texts)
            return super().embed(texts)

    memory = Memory.open(tmp_path / "m.db", embedder=Counting(), planner="local")
    with TestClient(create_app(memory, ServerSettings(auth=False))) as c:
        assert Counting.texts == ["warm up"]  # before any request
        assert c.get("/v1/namespaces/n/recall", params={"q": "x"}).status_code == 200
    memory.close()


def test_feedback_modify_without_a_label_is_refused(api: Api) -> None:
    api.post_events("alice", {"text": OBLIGATION, "source": "Alice"})
    api.settle("alice")
    intent = api.c.get(api.url("alice", "/intents"), headers=api.h("alice")).json()[0]
    url = api.url("alice", f"/intents/{intent['id']}/feedback")
    bad = _is_problem(api.c.post(url, json={"kind": "modify"}, headers=api.h("alice")), 400)
    assert "label" in bad["detail"]
    assert api.memory.get(intent["id"], namespace="alice").attrs.get("status") == "pending"
    ok = api.c.post(url, json={"kind": "modify", "label": "Collect the dry cleaning"},
                    headers=api.h("alice"))
    assert ok.status_code == 200 and ok.json()["text"] == "Collect the dry cleaning"


# ------------------------------------------------------------------ auth
ROUTES = [
    ("POST", "/events", {"text": "secret of bob"}),
    ("POST", "/events/import", {"text": "secret of bob"}),
    ("PATCH", "/events/ev_x", {"meta": {"a": 1}}),
    ("GET", "/recall?q=secret", None),
    ("POST", "/answer", {"query": "secret?"}),
    ("GET", "/intents", None),
    ("POST", "/intents/in_x/feedback", {"kind": "accept"}),
    ("GET", "/nodes/ev_x", None),
    ("GET", "/nodes/ev_x/history", None),
    ("GET", "/graph", None),
    ("GET", "/search?q=secret", None),
    ("GET", "/stream", None),
    ("GET", "/export", None),
    ("POST", "/forget", {"event_id": "ev_x"}),
    ("DELETE", "", None),
    ("GET", "/stats", None),
]


def _call(api: Api, method: str, ns: str, path: str, body: Any,
          headers: dict[str, str]) -> httpx.Response:
    return api.c.request(method, api.url(ns, path), json=body, headers=headers)


@pytest.mark.parametrize("method, path, body", ROUTES)
def test_every_route_needs_a_key_of_its_namespace(api: Api, method: str, path: str,
                                                  body: Any) -> None:
    api.post_events("bob", {"text": "the secret of bob is the blue door", "source": "Bob"})
    api.settle("bob")
    missing = _call(api, method, "bob", path, body, {})
    assert _is_problem(missing, 401) and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = {"Authorization": f"Bearer {api.keys['bob'][1][:-4]}abcd"}
    _is_problem(_call(api, method, "bob", path, body, wrong), 401)
    _is_problem(_call(api, method, "bob", path, body, {"Authorization": "Basic Ym9iOng="}),
                401)
    # Alice's key on bob: 404, exactly as for a namespace that does not exist, and no data.
    r = _call(api, method, "bob", path, body, api.h("alice"))
    problem = _is_problem(r, 404)
    assert "secret" not in r.text and "blue door" not in r.text
    ghost = _is_problem(_call(api, method, "nobody", path, body, api.h("alice")), 404)
    assert {**problem, "detail": ""} == {**ghost, "detail": ""}
    assert api.memory.stats("bob")["events"] == 1  # nothing was written or wiped


def test_revoked_keys_and_the_admin_key(api: Api) -> None:
    assert api.post_events("alice", {"text": "one"}).status_code == 202
    revoke_key(api.memory.store, api.keys["alice"][0])
    assert "revoked" in _is_problem(api.post_events("alice", {"text": "two"}), 401)["detail"]
    admin = {"Authorization": f"Bearer {ADMIN}"}
    for ns in ("alice", "bob"):
        assert api.c.get(api.url(ns, "/stats"), headers=admin).status_code == 200
    # Admin on an invalid namespace name: the name is refused, not silently created.
    _is_problem(api.c.get(api.url("bad%24name", "/stats"), headers=admin), 400)


# ------------------------------------------------------------------ reads and intents
def test_intents_feedback_nodes_history_graph_and_search(api: Api) -> None:
    ev = api.post_events("alice", {"text": OBLIGATION, "source": "Maya"}).json()["ids"][0]
    api.post_events("alice", {"text": "Maya ran 5k before work", "source": "Maya"})
    api.settle("alice")
    h = api.h("alice")
    intents = api.c.get(api.url("alice", "/intents"), headers=h).json()
    assert [i["text"] for i in intents] == ["Pick up the dry cleaning"]  # the goal
    intent = intents[0]
    assert intent["attrs"]["status"] == "pending" and intent["grounded_in"] == [ev]

    node = api.c.get(api.url("alice", f"/nodes/{intent['id']}"), headers=h).json()
    assert node["node"]["id"] == intent["id"]
    assert [p["id"] for p in node["provenance"]] == [ev]
    assert any(e["src"] == intent["id"] or e["dst"] == intent["id"] for e in node["edges"])
    hist = api.c.get(api.url("alice", f"/nodes/{intent['id']}/history"), headers=h).json()
    assert hist and hist[0]["target"] == intent["id"]

    done = api.c.post(api.url("alice", f"/intents/{intent['id']}/feedback"), headers=h,
                      json={"kind": "accept"})
    assert done.status_code == 200 and done.json()["attrs"]["confirmed"] is True
    _is_problem(api.c.post(api.url("alice", f"/intents/{intent['id']}/feedback"), headers=h,
                           json={"kind": "love"}), 400)
    _is_problem(api.c.post(api.url("alice", "/intents/in_nope/feedback"), headers=h,
                           json={"kind": "accept"}), 404)
    _is_problem(api.c.post(api.url("alice", f"/intents/{intent['id']}/feedback"), headers=h,
                           json={}), 422)
    both = api.c.get(api.url("alice", "/intents"), params={"status": "pending,resolved"},
                     headers=h)
    assert [i["id"] for i in both.json()] == [intent["id"]]
    _is_problem(api.c.get(api.url("alice", "/intents"), params={"status": "sleeping"},
                          headers=h), 400)
    _is_problem(api.c.get(api.url("alice", "/nodes/co_missing"), headers=h), 404)
    _is_problem(api.c.get(api.url("alice", "/nodes/co_missing/history"), headers=h), 404)

    graph = api.c.get(api.url("alice", "/graph"), headers=h).json()
    ids = {n["id"] for n in graph["nodes"]}
    assert {ev, intent["id"]} <= ids and graph["truncated"] is False
    assert graph["edges"] and all(e["src"] in ids and e["dst"] in ids for e in graph["edges"])
    assert {"id", "kind", "label", "text", "strength", "degree"} <= set(graph["nodes"][0])
    small = api.c.get(api.url("alice", "/graph"), params={"limit": 2}, headers=h).json()
    assert len(small["nodes"]) == 2 and small["truncated"] is True
    # truncated: the best-connected derived node, and an event that grounds it, joined
    assert [n["kind"] == "event" for n in small["nodes"]] == [False, True]
    assert len(small["edges"]) >= 1
    only = api.c.get(api.url("alice", "/graph"), params={"kinds": "intent"}, headers=h).json()
    assert [n["kind"] for n in only["nodes"]] == ["intent"]
    _is_problem(api.c.get(api.url("alice", "/graph"), params={"kinds": "dragon"}, headers=h),
                400)
    _is_problem(api.c.get(api.url("alice", "/graph"), params={"limit": 0}, headers=h), 422)

    found = api.c.get(api.url("alice", "/search"), params={"q": "dry cleaning"}, headers=h)
    assert ev in [n["id"] for n in found.json()]
    assert all("score" in n for n in found.json())
    _is_problem(api.c.get(api.url("alice", "/search"), headers=h), 422)


def test_answer_without_an_llm_says_so(api: Api) -> None:
    api.post_events("alice", {"text": "The boiler was serviced on Monday"})
    api.settle("alice")
    r = api.c.post(api.url("alice", "/answer"), json={"query": "When was the boiler serviced?"},
                   headers=api.h("alice"))
    assert r.status_code == 200
    assert r.json()["answer"] is None and "no LLM" in r.json()["note"]
    assert r.json()["evidence"]
    _is_problem(api.c.post(api.url("alice", "/answer"), json={}, headers=api.h("alice")), 422)
    _is_problem(api.c.get(api.url("alice", "/recall"), headers=api.h("alice")), 422)
    _is_problem(api.c.get(api.url("alice", "/recall"), params={"q": "x", "k": 0},
                          headers=api.h("alice")), 422)


def test_export_forget_wipe_and_stats(api: Api) -> None:
    h = api.h("alice")
    ids = api.post_events("alice", {"events": [{"text": "the garden needs water"},
                                               {"text": "bought tomato seeds"}]}).json()["ids"]
    api.settle("alice")
    r = api.c.get(api.url("alice", "/export"), headers=h)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert lines[0]["record"] == "enfold-export" and lines[0]["namespace"] == "alice"
    assert [x["id"] for x in lines if x["record"] == "event"] == ids

    report = api.c.post(api.url("alice", "/forget"), json={"event_id": ids[0]}, headers=h)
    assert report.status_code == 200
    assert api.c.get(api.url("alice", "/stats"), headers=h).json()["events"] == 1
    _is_problem(api.c.post(api.url("alice", "/forget"), json={"event_id": ids[0]}, headers=h),
                404)
    _is_problem(api.c.post(api.url("alice", "/forget"), json={"id": ids[1]}, headers=h), 422)

    assert api.c.delete(api.url("alice"), headers=h).status_code == 204
    stats = api.c.get(api.url("alice", "/stats"), headers=h).json()
    assert stats["events"] == 0 and stats["nodes"] == {}
    assert api.post_events("alice", {"text": "a fresh start"}).status_code == 202
    assert api.settle("alice")["events"] == 1


def test_health_readiness_openapi_and_unknown_routes(api: Api) -> None:
    assert api.c.get("/healthz").json() == {"status": "ok"}
    assert api.c.get("/readyz").json()["status"] == "ready"
    assert spec_of_ts(api) == [{"type": "number"}, {"type": "string"}, {"type": "null"}]
    spec = api.c.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/events", "/events/import", "/events/{event_id}", "/recall", "/answer",
                 "/intents", "/intents/{intent_id}/feedback", "/nodes/{node_id}", "/nodes/{node_id}/history", "/graph", "/search",
                 "/stream", "/export", "/forget", "", "/stats"):
        assert f"/v1/namespaces/{{ns}}{path}" in paths, path
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    assert paths["/v1/namespaces/{ns}/events"]["post"]["responses"].get("202")
    _is_problem(api.c.get("/v2/nothing"), 404)
    _is_problem(api.c.put(api.url("alice", "/events"), headers=api.h("alice")), 405)
    page = api.c.get("/ui")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_openapi_types_node_attrs_by_kind_with_the_payload_schemas(api: Api) -> None:
    """Every kind's payload model (enfold.payloads) is a component, generated from the
    model; a node's attrs are described by its kind's, and the node routes' bodies — the
    library's dicts, unchanged — validate against what the document says."""
    import jsonschema

    from enfold.model import NodeKind
    from enfold.payloads import PAYLOADS

    spec = api.c.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    ref = "#/components/schemas/{model}"

    def same(component: dict[str, Any], generated: dict[str, Any]) -> bool:
        """The same schema, but for the ``"default": null`` FastAPI leaves out."""
        props = {k: {f: v for f, v in p.items() if f != "default"}
                 for k, p in generated.get("properties", {}).items()}
        return component == {**generated, "properties": props}

    for kind, model in PAYLOADS.items():
        generated = model.model_json_schema(mode="serialization", ref_template=ref)
        nested = generated.pop("$defs", {})
        assert same(schemas[model.__name__], generated), kind
        assert all(same(schemas[name], schema) for name, schema in nested.items())
        node = schemas[f"{kind.value.capitalize()}Node"]["properties"]
        assert node["kind"]["const"] == kind.value
        assert node["attrs"] == {"$ref": ref.format(model=model.__name__)}
    detail = schemas["NodeDetail"]["properties"]["node"]
    assert detail["discriminator"]["propertyName"] == "kind"
    assert detail["discriminator"]["mapping"] == {
        k.value: ref.format(model=f"{k.value.capitalize()}Node") for k in NodeKind}

    def body_schema(path: str, method: str) -> dict[str, Any]:
        response = spec["paths"][f"/v1/namespaces/{{ns}}{path}"][method]["responses"]["200"]
        return {**response["content"]["application/json"]["schema"],
                "components": spec["components"]}

    def check(path: str, method: str, body: Any) -> None:
        jsonschema.Draft202012Validator(body_schema(path, method)).validate(body)

    ev = api.post_events("alice", {"text": OBLIGATION, "source": "Maya"}).json()["ids"][0]
    api.settle("alice")
    h = api.h("alice")
    intents = api.c.get(api.url("alice", "/intents"), headers=h).json()
    check("/intents", "get", intents)
    for node_id in (ev, intents[0]["id"]):
        got = api.c.get(api.url("alice", f"/nodes/{node_id}"), headers=h).json()
        assert got["node"] == api.memory.get(node_id, namespace="alice").to_dict()
        check("/nodes/{node_id}", "get", got)
    kinds = set()
    for node_id in {end for e in api.memory.edges(ev, namespace="alice")
                    for end in (e.src, e.dst)}:
        got = api.c.get(api.url("alice", f"/nodes/{node_id}"), headers=h).json()
        check("/nodes/{node_id}", "get", got)
        kinds.add(got["node"]["kind"])
    assert {"event", "intent", "person"} <= kinds, kinds
    done = api.c.post(api.url("alice", f"/intents/{intents[0]['id']}/feedback"), headers=h,
                      json={"kind": "accept"}).json()
    check("/intents/{intent_id}/feedback", "post", done)
    patched = api.c.patch(api.url("alice", f"/events/{ev}"), headers=h,
                          json={"meta": {"n": 1}}).json()
    assert patched == api.memory.get(ev, namespace="alice").to_dict()
    check("/events/{event_id}", "patch", patched)
    with pytest.raises(jsonschema.ValidationError):  # the schema does say something
        check("/intents/{intent_id}/feedback", "post", {**done, "attrs": {"due": "soon"}})


def test_docs_and_redoc_work_offline(api: Api) -> None:
    """The pages load Swagger UI and ReDoc from the server itself, never from a CDN."""
    for page, wanted in (("/docs", {".js", ".css"}), ("/redoc", {".js"})):
        r = api.c.get(page)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        assert "cdn" not in r.text.lower() and "fonts.googleapis" not in r.text
        urls = re.findall(r'(?:src|href)="([^"]+)"', r.text)
        assert {Path(u).suffix for u in urls} >= wanted, urls
        for url in urls:
            assert url.startswith("/docs-assets/"), url
            asset = api.c.get(url)
            assert asset.status_code == 200, url
            kind = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
            assert kind[Path(url).suffix] in asset.headers["content-type"], url
            assert len(asset.content) > (100_000 if url.endswith((".js", ".css")) else 100)
    assert "SwaggerUIBundle" in api.c.get("/docs-assets/swagger-ui-bundle.js").text
    assert "/openapi.json" in api.c.get("/docs").text


def spec_of_ts(api: Api) -> Any:
    """How the OpenAPI document describes an event's ``ts`` (validated by the library)."""
    schemas = api.c.get("/openapi.json").json()["components"]["schemas"]
    return schemas["EventBody"]["properties"]["ts"]["anyOf"]


def test_readiness_shows_counts_only_to_a_key(api: Api) -> None:
    """A probe without a key learns ready or not, never the server's backlog."""
    api.post_events("alice", {"text": "a note for the backlog"})
    assert api.c.get("/readyz").json() == {"status": "ready"}
    admin = api.c.get("/readyz", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    assert admin["status"] == "ready" and {"backlog", "folded"} <= set(admin)
    mine = api.c.get("/readyz", headers=api.h("bob")).json()
    assert mine == {"status": "ready", "namespace": "bob", "backlog": 0,
                    "unplanned_events": 0}
    _is_problem(api.c.get("/readyz", headers={"Authorization": "Bearer enf_nope_nope"}), 401)


def test_readiness_counts_the_events_folded_bare(api: Api) -> None:
    """An event no planner could fold (here: one stored before times were range-checked)
    is folded bare, and /readyz and /stats count it."""
    from enfold.events import EventIn, event_record

    api.memory.store.append_events("alice", [event_record(EventIn("call mom tomorrow", 1e300),
                                                          "alice")])
    api.post_events("alice", {"text": "a normal note after it"})
    stats = api.settle("alice")
    assert stats["folded"] == stats["events"] == 2 and stats["unplanned_events"] == 1
    mine = api.c.get("/readyz", headers=api.h("alice")).json()
    assert mine["unplanned_events"] == 1
    admin = api.c.get("/readyz", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    assert admin["unplanned_events"] == 1


def test_readiness_without_auth_shows_the_counts(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "m.db")
    with TestClient(create_app(memory, ServerSettings(auth=False))) as client:
        body = client.get("/readyz").json()
    memory.close()
    assert body["status"] == "ready" and {"backlog", "folded"} <= set(body)


@pytest.mark.parametrize("at", ["1e300", "-1e300", "nan", "inf", "true", "not a time"])
def test_bad_at_is_a_400_problem(api: Api, at: str) -> None:
    """``at`` takes the library's rules for times and the range of dates (1e300 used to be
    a text/plain 500 that also dropped the connection)."""
    h = api.h("alice")
    body = _is_problem(api.c.get(api.url("alice", "/recall"), params={"q": "x", "at": at},
                                 headers=h), 400)
    assert "'at'" in body["detail"]
    value: Any = json.loads(at) if at in ("1e300", "-1e300", "true") else at
    _is_problem(api.c.post(api.url("alice", "/answer"), json={"query": "x", "at": value},
                           headers=h), 400)


def test_good_at_is_accepted(api: Api) -> None:
    """The control: epoch seconds (as text or a number) and ISO 8601."""
    h = api.h("alice")
    for at in ("1700000000", "1700000000.5", "2023-11-14T22:13:20Z"):
        r = api.c.get(api.url("alice", "/recall"), params={"q": "x", "at": at}, headers=h)
        assert r.status_code == 200, r.text
    r = api.c.post(api.url("alice", "/answer"), json={"query": "x", "at": 1_700_000_000},
                   headers=h)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("ns", ["alice%0A", "c%0A", "alice%0D%0A"])
def test_a_namespace_with_a_trailing_newline_is_refused(api: Api, ns: str) -> None:
    admin = {"Authorization": f"Bearer {ADMIN}"}
    for method, path, body in (("GET", "/stats", None), ("POST", "/events", {"text": "hi"}),
                               ("GET", "/recall?q=hi", None)):
        r = api.c.request(method, f"/v1/namespaces/{ns}{path}", json=body, headers=admin)
        assert "invalid namespace" in _is_problem(r, 400)["detail"]
    assert api.memory.namespaces() == []


def test_an_unexpected_error_is_a_500_problem_and_the_connection_lives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a real uvicorn server: an exception no handler takes is answered as problem+json
    (not Starlette's text/plain), and the same keep-alive connection serves the next
    request (uvicorn closes it when the exception escapes the app)."""
    import uvicorn

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OverflowError("timestamp out of range for platform time_t")

    memory = _memory(tmp_path / "m.db")
    monkeypatch.setattr(memory, "recall", broken)
    app = create_app(memory, ServerSettings(admin_key=ADMIN, scan_interval_s=0.2))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            reader = sock.makefile("rb")
            first = _exchange(sock, reader, "/v1/namespaces/alice/recall?q=x", ADMIN)
            assert first[0] == 500 and first[1]["content-type"] == "application/problem+json"
            problem = json.loads(first[2])
            assert problem["status"] == 500 and "OverflowError" in problem["detail"]
            assert "time_t" not in problem["detail"]  # the details stay in the log
            second = _exchange(sock, reader, "/healthz", ADMIN)
            assert second[0] == 200 and json.loads(second[2]) == {"status": "ok"}
    finally:
        server.should_exit = True
        thread.join(20)
        memory.close()
    assert not thread.is_alive()


def _exchange(sock: socket.socket, reader: Any, path: str, key: str
              ) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 keep-alive request on an open socket: (status, headers, body)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {key}\r\n\r\n"
                 .encode())
    status_line = reader.readline()
    assert status_line, "the server closed the connection"
    status = int(status_line.split()[1])
    headers = {}
    while (line := reader.readline().decode().strip()):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, reader.read(int(headers["content-length"]))


def test_draining_refuses_new_work_with_503(api: Api) -> None:
    api.c.app.state.enfold.draining = True  # type: ignore[attr-defined]
    try:
        r = api.post_events("alice", {"text": "too late"})
        assert _is_problem(r, 503) and int(r.headers["retry-after"]) > 0
        _is_problem(api.c.get("/readyz"), 503)
        assert api.c.get("/healthz").status_code == 200
    finally:
        api.c.app.state.enfold.draining = False  # type: ignore[attr-defined]
    assert api.memory.store.last_seq("alice") == 0


# ------------------------------------------------------------------ backpressure
def test_backlog_beyond_the_limits_gives_429_then_503_with_retry_after(tmp_path: Path) -> None:
    memory = _memory(tmp_path / "m.db")
    for ns in "abc":  # another server process holds the leases: nothing here gets folded
        assert memory.store.try_lease(ns, "elsewhere", 60)
    settings = ServerSettings(admin_key=ADMIN, max_backlog=5, max_total_backlog=8,
                              scan_interval_s=0.2)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    with TestClient(create_app(memory, settings)) as c:
        def post(ns: str, n: int) -> httpx.Response:
            return c.post(f"/v1/namespaces/{ns}/events", headers=admin,
                          json={"events": [{"text": f"{ns} item {i} {time.time()}"}
                                           for i in range(n)]})

        assert post("a", 6).status_code == 202
        r = post("a", 1)
        assert _is_problem(r, 429) and 1 <= int(r.headers["retry-after"]) <= 60
        assert post("b", 3).status_code == 202  # b is under its own limit
        r = post("c", 1)
        assert _is_problem(r, 503) and int(r.headers["retry-after"]) >= 1
        assert memory.store.last_seq("a") == 6 and memory.store.last_seq("c") == 0
        for ns in "abc":
            memory.store.release_lease(ns, "elsewhere")
        deadline = time.monotonic() + 20
        while post("a", 1).status_code != 202:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    memory.close()


def test_events_logged_before_start_are_folded_on_start(tmp_path: Path) -> None:
    with _memory(tmp_path / "m.db") as m:
        m.add_many([{"text": f"before the server {i}"} for i in range(40)], namespace="old",
                   fold=False)
        assert m.stats("old")["pending"] == 40
    memory = _memory(tmp_path / "m.db")
    with TestClient(create_app(memory, ServerSettings(auth=False))) as c:
        deadline = time.monotonic() + 20
        while c.get("/v1/namespaces/old/stats").json()["pending"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert c.get("/v1/namespaces/old/stats").json()["folded"] == 40
    memory.close()


# ------------------------------------------------------------------ push
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sse_stream_carries_only_its_namespace_intents(tmp_path: Path) -> None:
    """On a real uvicorn server in this process (the TestClient does not stream), alone on
    its file: a second running app on the same file (the ``api`` fixture's) may win the
    namespace's lease and fold the event, and its notifications go to its own streams."""
    import uvicorn

    memory = _memory(tmp_path / "sse.db")
    key = create_key(memory.store, "carol")[1]
    app = create_app(memory, ServerSettings(admin_key=ADMIN, scan_interval_s=0.2,
                                            sse_ping_s=1))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        h = {"Authorization": f"Bearer {key}"}
        admin = {"Authorization": f"Bearer {ADMIN}"}
        events: list[tuple[str, dict[str, Any]]] = []
        with httpx.Client(base_url=base, timeout=10) as c, \
                c.stream("GET", "/v1/namespaces/carol/stream", headers=h) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            # Dave's obligation first: it must never reach carol's stream.
            c.post("/v1/namespaces/dave/events", headers=admin,
                   json={"text": "I need to renew the passport", "source": "Dave"})
            c.post("/v1/namespaces/carol/events", headers=h,
                   json={"text": OBLIGATION, "source": "Carol"})
            name = None
            for line in stream.iter_lines():  # keep-alive pings arrive every second
                assert time.monotonic() < deadline + 20, "no intent on the stream"
                if line.startswith("event:"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and name:
                    events.append((name, json.loads(line.split(":", 1)[1])))
                    break
        assert events[0][0] == "intent"
        note = events[0][1]
        assert note["type"] == "intent_emerged" and note["namespace"] == "carol"
        assert note["label"] and note["event_id"].startswith("ev_")
    finally:
        server.should_exit = True
        thread.join(20)
        memory.close()
    assert not thread.is_alive()


class _Receiver(http.server.BaseHTTPRequestHandler):
    """Answers 500 to the first ``fail`` calls, then 204; records every call."""

    calls: ClassVar[list[tuple[dict[str, str], bytes]]] = []
    fail = 2

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls.append((dict(self.headers), body))
        self.send_response(500 if len(type(self).calls) <= type(self).fail else 204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_webhooks_are_signed_and_retried_with_backoff(tmp_path: Path) -> None:
    _Receiver.calls = []
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    memory = _memory(tmp_path / "m.db")
    settings = ServerSettings(auth=False, webhooks=(("alice", url),), webhook_secret="s3cret",
                              webhook_backoff_s=0.1, scan_interval_s=0.2)
    try:
        with TestClient(create_app(memory, settings)) as c:
            c.post("/v1/namespaces/bob/events", json={"text": "I need to call the bank"})
            c.post("/v1/namespaces/alice/events", json={"text": OBLIGATION})
            deadline = time.monotonic() + 20
            while len(_Receiver.calls) < 3:
                assert time.monotonic() < deadline, _Receiver.calls
                time.sleep(0.05)
            stats = c.app.state.enfold.webhooks.stats  # type: ignore[attr-defined]
            assert stats.delivered == 1 and stats.attempts == 3
    finally:
        receiver.shutdown()
        memory.close()
    assert len(_Receiver.calls) == 3  # bob's intent had no webhook; no fourth attempt
    ids = set()
    for headers, body in _Receiver.calls:
        assert verify(b"s3cret", body, headers[SIGNATURE_HEADER])
        assert not verify(b"wrong", body, headers[SIGNATURE_HEADER])
        payload = json.loads(body)
        ids.add(headers["X-Enfold-Delivery"])
        assert payload["id"] == headers["X-Enfold-Delivery"]
        assert payload["event"] == headers["X-Enfold-Event"] == "intent"
        assert payload["notification"]["namespace"] == "alice"
    assert len(ids) == 1  # the same delivery, retried


# ------------------------------------------------------------------ the commands
def test_keys_commands_create_list_revoke(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    run = CliRunner().invoke
    made = run(cli, ["--db", db, "--create", "--json", "keys", "create", "--namespace", "team",
                     "--label", "ci"])
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    assert created["key"].startswith(f"enf_{created['id']}_")
    listed = run(cli, ["--db", db, "--json", "keys", "list"])
    rows = json.loads(listed.output)
    assert [(r["id"], r["namespace"], r["label"], r["revoked_at"]) for r in rows] == \
        [(created["id"], "team", "ci", None)]
    assert created["key"].split("_", 2)[2] not in Path(db).read_bytes().decode("latin-1")
    assert run(cli, ["--db", db, "keys", "revoke", created["id"]]).exit_code == 0
    text = run(cli, ["--db", db, "keys", "list"]).output
    assert created["id"] in text and "revoked" in text
    again = run(cli, ["--db", db, "keys", "revoke", created["id"]])
    assert again.exit_code == 1 and "no active API key" in again.output
    bad = run(cli, ["--db", db, "keys", "create", "--namespace", "no spaces"])
    assert bad.exit_code == 1


def test_keys_create_prints_only_the_key_on_stdout(tmp_path: Path) -> None:
    """So that ``KEY=$(enfold keys create ...)`` holds the key and nothing else."""
    db = str(tmp_path / "k.db")
    made = CliRunner().invoke(cli, ["--db", db, "--create", "keys", "create", "--namespace",
                                    "maya"])
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert made.stdout == key + "\n" and key.startswith("enf_")
    assert "maya" in made.stderr and "shown only now" in made.stderr
    memory = _memory(Path(db))
    try:
        assert memory.store.list_api_keys("maya")[0].id == key.split("_")[1]
    finally:
        memory.close()
    app = create_app(_memory(Path(db)), ServerSettings(admin_key=ADMIN))
    with TestClient(app) as c:
        r = c.get("/v1/namespaces/maya/stats", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200
    app.state.enfold.memory.close()


def test_serve_refuses_no_auth_on_a_public_address(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "s.db"), "--create", "serve",
                                 "--no-auth", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "loopback" in r.output
