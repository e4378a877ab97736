"""Fuzzing the entry points (issue 25): random texts (dates near the calendar's ends, control
characters, huge numbers), random ``ts`` and ``at`` values and random plans, through
``Memory.add`` / ``add_many`` / ``recall`` / ``tick`` / ``apply`` and the HTTP routes.

Whatever is thrown at them, the only exceptions are enfold's typed errors (HTTP: a 4xx
problem+json, never a 5xx), and afterwards every accepted event is stored once and folded,
and a normal event added next is folded and recalled.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from enfold import Memory
from enfold.errors import EnfoldError
from enfold.model import NodeKind

TS = 1_760_000_000.0

_YEARS = st.sampled_from([1, 2, 999, 1000, 1969, 1970, 2026, 8999, 9000, 9998, 9999])
_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([1e300, -1e300, 1e20, -1e12, 2**63, -(2**63), 253402300799, 0, -1]),
)


@st.composite
def date_texts(draw: st.DrawFn) -> str:
    """Sentences whose dates and durations sit near the limits of the calendar."""
    y = draw(_YEARS)
    m = draw(st.integers(1, 12))
    d = draw(st.integers(1, 31))
    n = draw(st.one_of(st.integers(0, 10**6), st.sampled_from([10**9, 10**18, 10**30])))
    template = draw(st.sampled_from([
        "Submit the report by {y:04d}-{m:02d}-{d:02d}",
        "I must call mom tomorrow and again on {d} March {y}",
        "I went running yesterday, {n} km",
        "Booked flights for May {d} to May {d2}, {y}",
        "The lease renews in {n} years, next year, on 31 December {y}",
        "Dentist in {n} days at 3pm, or {n} weeks ago, or {n} months from now",
        "Deadline: {m}/{d}/{y} at 11:59pm; moved from {y}-{m:02d} to {y2}",
        "Priya thinks the launch should slip to week {n} of {y}",
        "We met {n} years ago at {h}:{mi:02d}",
    ]))
    return template.format(y=y, m=m, d=d, d2=min(31, d + 3), n=n, y2=min(9999, y + 1),
                           h=draw(st.integers(0, 30)), mi=draw(st.integers(0, 99)))


_TEXTS = st.one_of(
    date_texts(),
    st.text(min_size=1, max_size=120),
    st.text(alphabet=st.characters(max_codepoint=0x20), min_size=1, max_size=20),
    st.text(alphabet=st.sampled_from("0123456789-:/., eE+"), min_size=1, max_size=40),
    _NUMBERS.map(str),
)


@st.composite
def times(draw: st.DrawFn) -> Any:
    """Any value a caller might pass as a time."""
    return draw(st.one_of(
        st.none(),
        _NUMBERS,
        st.booleans(),
        st.builds(lambda y, m, d: f"{y:04d}-{m:02d}-{d:02d}", _YEARS, st.integers(1, 12),
                  st.integers(1, 28)),
        st.sampled_from(["9999-12-31T23:59:59+14:00", "0001-01-01T00:00:00-12:00",
                         "1:56 pm on 8 May, 2023", "yesterday", "", " ", "nan", "1e300"]),
        st.datetimes(timezones=st.just(UTC)),
        st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    ))


_KINDS = ["concept", "intent", "fact", "claim", "person", "time", "event", "nope"]
_ATTR_VALUES = st.one_of(_NUMBERS, st.text(max_size=10), st.booleans(), st.none(),
                         st.lists(st.text(max_size=5), max_size=3))


@st.composite
def plans(draw: st.DrawFn, event_ids: list[str]) -> dict[str, Any]:
    """A random, mostly invalid, sometimes valid plan over the stream's events."""
    refs = [*event_ids, "a", "b", "ev_missing"]
    ops: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["ADD_NODE", "UPDATE_NODE", "ADD_EDGE", "REMOVE_NODE",
                                     "MERGE_NODES"]))
        attrs = draw(st.dictionaries(
            st.sampled_from(["due", "first", "last", "start", "end", "last_ts", "score",
                             "category", "status", "strength", "aliases", "x"]),
            _ATTR_VALUES, max_size=4))
        if kind == "ADD_NODE":
            ops.append({"op": kind, "ref": draw(st.sampled_from(["a", "b"])),
                        "kind": draw(st.sampled_from(_KINDS)), "text": draw(_TEXTS),
                        "attrs": attrs,
                        "grounded_in": draw(st.lists(st.sampled_from(refs), max_size=2))})
        elif kind == "UPDATE_NODE":
            ops.append({"op": kind, "id": draw(st.sampled_from(refs)), "attrs": attrs})
        elif kind == "ADD_EDGE":
            ops.append({"op": kind, "src": draw(st.sampled_from(refs)),
                        "dst": draw(st.sampled_from(refs)),
                        "type": draw(st.sampled_from(["GROUNDS", "MENTIONS", "AT_TIME",
                                                      "BOGUS"])),
                        "weight": draw(st.one_of(st.none(), _NUMBERS))})
        elif kind == "REMOVE_NODE":
            ops.append({"op": kind, "id": draw(st.sampled_from(refs))})
        else:
            ops.append({"op": kind, "keep": draw(st.sampled_from(refs)),
                        "absorb": draw(st.sampled_from(refs))})
    return {"operations": ops}


def _check_after(m: Memory, accepted: set[str]) -> None:
    stats = m.stats()
    assert stats["pending"] == 0 and stats["folded"] == stats["events"] == len(accepted)
    g = m.graph()
    assert set(g.of_kind(NodeKind.EVENT)) == accepted
    eid = m.add("Booked the piano tuner Odalys for the Steinway",
                ts=TS + 86400 * 400)
    assert m.stats()["pending"] == 0
    assert eid in [e.id for e in m.recall("piano tuner Odalys", k=5).evidence]


_FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_FUZZ
@given(st.data())
def test_the_library_folds_everything_it_accepts(data: st.DataObject) -> None:
    m = Memory.open("memory:", embedder="hash", planner="local")
    accepted: set[str] = set()
    try:
        for _ in range(data.draw(st.integers(1, 8), label="steps")):
            action = data.draw(st.sampled_from(["add", "add_many", "recall", "tick",
                                                "apply"]), label="action")
            try:
                if action == "add":
                    accepted.add(m.add(data.draw(_TEXTS), ts=data.draw(times()),
                                       source=data.draw(st.one_of(st.none(),
                                                                  st.text(max_size=8)))))
                elif action == "add_many":
                    batch = data.draw(st.lists(st.fixed_dictionaries(
                        {"text": _TEXTS, "ts": times()}), min_size=1, max_size=5))
                    accepted.update(m.add_many(batch))
                elif action == "recall":
                    pack = m.recall(data.draw(_TEXTS), at=data.draw(times()),
                                    k=data.draw(st.integers(-1, 30)))
                    pack.render(data.draw(st.integers(0, 4000)))
                elif action == "tick":
                    m.tick(data.draw(times()))
                else:
                    m.apply(data.draw(plans(sorted(accepted))))
            except EnfoldError:
                pass  # a typed refusal is the expected answer to bad input
        _check_after(m, accepted)
    finally:
        m.close()


# ------------------------------------------------------------------- HTTP
fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from enfold.server import ServerSettings, create_app
from enfold.server.auth import create_key


def _json_time(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN or infinity; send them as strings
    return value


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = Path(tmp_path_factory.mktemp("fuzz")) / "m.db"
    memory = Memory.open(path, embedder="hash", planner="local")
    _, key = create_key(memory.store, "fz", label="fuzz")
    app = create_app(memory, ServerSettings(admin_key="admin-fuzz", scan_interval_s=0.1))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {key}"}, memory
    memory.close()


def _answered(r: Any) -> None:
    assert r.status_code < 500, (r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json"), r.text[:300]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_http_routes_answer_every_input_with_a_status_below_500(
        served: Any, data: st.DataObject) -> None:
    client, auth, _ = served
    base = "/v1/namespaces/fz"
    for _ in range(data.draw(st.integers(1, 4), label="steps")):
        action = data.draw(st.sampled_from(["event", "batch", "recall", "answer"]))
        if action == "event":
            body: Any = {"text": data.draw(_TEXTS), "ts": _json_time(data.draw(times()))}
            r = client.post(f"{base}/events", json=body, headers=auth)
        elif action == "batch":
            body = {"events": [{"text": data.draw(_TEXTS), "ts": _json_time(data.draw(times()))}
                               for _ in range(data.draw(st.integers(1, 3)))]}
            r = client.post(f"{base}/events", json=body, headers=auth)
        else:
            params = {"q": data.draw(_TEXTS), "at": str(_json_time(data.draw(times())))}
            r = client.get(f"{base}/{action}", params=params, headers=auth)
        _answered(r)


def test_after_the_http_fuzz_every_accepted_event_folds_and_a_new_one_is_recalled(
        served: Any) -> None:
    client, auth, memory = served
    base = "/v1/namespaces/fz"
    r = client.post(f"{base}/events", json={"text": "Lent the ladder to Teodor on Sunday",
                                            "ts": TS}, headers=auth)
    assert r.status_code == 202
    eid = r.json()["ids"][0]
    stats: dict[str, Any] = {}
    for _ in range(200):
        stats = client.get(f"{base}/stats", headers=auth).json()
        if stats["pending"] == 0:
            break
        import time

        time.sleep(0.05)
    assert stats["pending"] == 0 and stats["folded"] == stats["events"]
    pack = client.get(f"{base}/recall", params={"q": "Who has the ladder, Teodor?"},
                      headers=auth).json()
    assert eid in [e["id"] for e in pack["evidence"]]
    assert memory.store.counts("fz")["events"] == stats["events"]


