"""No event can stop its namespace from folding (issue 25, items 1, 5, 9 and 12).

Times are range-checked where they enter (an event's ``ts``, a recall's or tick's ``at``, a
plan's time attributes, a parsed expression); whatever still goes wrong while one event is
planned — an exception of any type in a planner, the executor or the intent layer — falls
back along the planner chain, and an event no planner can fold is admitted bare, marked with
the error, and the cursor moves on. ``add()`` never raises for an event it has stored.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from enfold import Memory, UpdatePlan
from enfold.cli import cli
from enfold.errors import InputError, PlanError, StoreError
from enfold.events import EventIn, event_record
from enfold.graph import WorkingGraph
from enfold.model import TIME_MAX, TIME_MIN, Node, NodeKind
from enfold.settings import Settings
from enfold.write.planner_local import LocalPlanner

TS = 1_760_000_000.0  # 2025-10-09


def _memory(path: Path | str = "memory:", **kw: Any) -> Memory:
    return Memory.open(path, embedder="hash", planner="local", **kw)


def _normal_event_folds_and_is_recalled(m: Memory) -> None:
    eid = m.add("Booked the piano tuner Odalys for the Steinway", ts=TS + 86400)
    stats = m.stats()
    assert stats["pending"] == 0 and stats["folded"] == stats["events"]
    assert eid in [e.id for e in m.recall("piano tuner Odalys", k=5).evidence]


# ------------------------------------------------------------- item 1: times
@pytest.mark.parametrize("ts", [1e300, -1e12, 1e20, -1e300, "9999-12-31", "0001-01-01",
                                "0999-12-31T23:59:59Z", "9000-01-01T00:00:00Z",
                                float("inf"), float("nan")])
def test_an_event_time_outside_the_supported_range_is_refused_and_nothing_is_stored(
        ts: Any) -> None:
    m = _memory()
    with pytest.raises(InputError, match="time"):
        m.add("hello", ts=ts)
    with pytest.raises(InputError, match="event 1"):
        m.add_many([{"text": "fine", "ts": TS}, {"text": "hello", "ts": ts}])
    assert m.stats()["events"] == 0
    _normal_event_folds_and_is_recalled(m)


def test_the_range_ends_are_the_documented_ones() -> None:
    m = _memory()
    m.add("the earliest moment enfold accepts", ts=TIME_MIN)
    m.add("the last moment it accepts", ts=TIME_MAX - 1)
    with pytest.raises(InputError):
        m.add("one second too late", ts=TIME_MAX)
    with pytest.raises(InputError):
        m.add("one second too early", ts=TIME_MIN - 1)
    assert m.stats()["folded"] == 2


@pytest.mark.parametrize("text, ts", [
    ("Submit the report by 9999-12-31", TS),
    ("Submit the report by 0001-01-01", TS),
    ("I must call mom tomorrow", "8999-12-31T23:00:00Z"),
    ("I went running yesterday", "1000-01-01T01:00:00Z"),
    ("The lease renews in 9000 years, next year and on 31 December 9999", "8999-06-01"),
])
def test_dates_near_the_calendar_ends_fold_without_an_anchor_past_them(text: str, ts: Any
                                                                       ) -> None:
    m = _memory()
    eid = m.add(text, ts=ts)
    stats = m.stats()
    assert stats["folded"] == 1 and stats["unplanned_events"] == 0
    assert "fold_error" not in m.get(eid).attrs
    g = m.graph()
    for tid in g.of_kind(NodeKind.TIME):
        a = g.nodes[tid].attrs
        assert TIME_MIN <= a["start"] and a["end"] <= TIME_MAX
    _normal_event_folds_and_is_recalled(m)


@pytest.mark.parametrize("at", [1e300, -1e12, "9999-12-31", True, float("nan")])
def test_a_query_time_outside_the_range_is_an_input_error(at: Any) -> None:
    m = _memory()
    m.add("Renewed the passport", ts=TS)
    with pytest.raises(InputError):
        m.recall("passport", at=at)
    with pytest.raises(InputError):
        m.tick(at)
    _normal_event_folds_and_is_recalled(m)


def _append_raw(m: Memory, text: str, ts: float) -> str:
    """Store an event the way a store written before the range checks holds it."""
    rec = event_record(EventIn(text, ts), m.namespace)
    return m.store.append_events(m.namespace, [rec])[0].id


def test_events_stored_before_the_checks_fold_bare_marked_and_the_namespace_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    m = _memory(tmp_path / "m.db")
    bad = [_append_raw(m, "I must call mom tomorrow", 1e300),
           _append_raw(m, "I went running yesterday", -1e12)]
    with caplog.at_level(logging.ERROR, logger="enfold.fold"):
        _normal_event_folds_and_is_recalled(m)
    for eid in bad:
        error = m.get(eid).attrs["fold_error"]
        assert error.startswith("local: ") and "range" in error
    stats = m.stats()
    assert stats["unplanned_events"] == 2 and stats["planner_failures"] == {"local": 2}
    assert any("Traceback" in r.exc_text for r in caplog.records if r.exc_text)
    # Stored, searchable and shown: rendering a time past the calendar does not fail.
    pack = m.recall("call mom tomorrow")
    assert bad[0] in [e.id for e in pack.evidence]
    assert "call mom tomorrow" in pack.render(2000)
    m.close()
    m = _memory(tmp_path / "m.db")  # the counters survive a restart
    assert m.stats()["unplanned_events"] == 2
    m.close()


# -------------------------------------------------- item 1: any planner error
class Exploding:
    """A planner with a bug: an exception that is not an enfold error."""

    name = "exploding"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.calls = 0

    def plan(self, event: Node, graph: WorkingGraph) -> UpdatePlan:
        self.calls += 1
        raise self.exc


def test_an_unexpected_planner_exception_falls_back_to_the_next_planner() -> None:
    boom = Exploding(ZeroDivisionError("division by zero"))
    m = Memory.open("memory:", embedder="hash",
                    planner=None)
    m.planners = [boom, LocalPlanner(m.settings, m.embedder)]
    eid = m.add("Ran 5 km with Priya along the canal", ts=TS)
    stats = m.stats()
    assert boom.calls == 1 and stats["planner_failures"] == {"exploding": 1}
    assert stats["unplanned_events"] == 0 and "fold_error" not in m.get(eid).attrs
    assert stats["nodes"].get("person") == 1  # the local planner folded it: Priya


def test_when_every_planner_fails_the_event_is_folded_bare_and_marked() -> None:
    m = Memory.open("memory:", embedder="hash", planner=None)
    m.planners = [Exploding(KeyError("x")), Exploding(RecursionError("deep"))]
    eid = m.add("Ran 5 km with Priya along the canal", ts=TS)
    stats = m.stats()
    assert stats["folded"] == 1 and stats["unplanned_events"] == 1
    assert m.get(eid).attrs["fold_error"] == "exploding: RecursionError: deep"
    assert [e.id for e in m.recall("canal").evidence] == [eid]  # stored and searchable
    m.planners = []  # no planner configured is not an error: nothing is marked
    other = m.add("Another note", ts=TS + 1)
    assert "fold_error" not in m.get(other).attrs
    assert m.stats()["unplanned_events"] == 1


def test_interrupts_are_not_swallowed_and_the_event_folds_later() -> None:
    m = Memory.open("memory:", embedder="hash", planner=None)
    m.planners = [Exploding(KeyboardInterrupt())]
    with pytest.raises(KeyboardInterrupt):
        m.add("Ran 5 km", ts=TS)
    assert m.stats()["pending"] == 1
    m.planners = [LocalPlanner(m.settings, m.embedder)]
    assert m.fold().folded == 1


class PickyEmbedder:
    """The hashing embedder, except that it fails on texts holding ``poison`` (or on
    everything once ``down``)."""

    def __init__(self) -> None:
        from enfold.embed import HashingEmbedder

        self.inner = HashingEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.down = False

    def embed(self, texts: list[str]) -> Any:
        if self.down or any("poison" in t for t in texts):
            raise RuntimeError("tokenizer crashed")
        return self.inner.embed(texts)


def test_a_text_the_embedder_fails_on_folds_without_a_vector_and_its_batch_with_one() -> None:
    emb = PickyEmbedder()
    m = Memory.open("memory:", embedder=emb, planner="local")  # type: ignore[arg-type]
    ids = m.add_many([{"text": f"Swam {i} lengths at the lido", "ts": TS + i} for i in range(3)]
                     + [{"text": "poison pill text", "ts": TS + 9}])
    assert m.stats()["folded"] == 4
    g = m.graph()
    assert all(g.vector(i) is not None for i in ids[:3]) and g.vector(ids[3]) is None


def test_an_embedder_that_is_down_leaves_events_pending_and_add_still_returns_their_ids(
        ) -> None:
    emb = PickyEmbedder()
    m = Memory.open("memory:", embedder=emb, planner="local")  # type: ignore[arg-type]
    emb.down = True
    eid = m.add("Swam 20 lengths at the lido", ts=TS)  # stored: add() does not raise
    stats = m.stats()
    assert stats["events"] == 1 and stats["pending"] == 1
    assert "tokenizer crashed" in stats["fold_error"]
    emb.down = False
    _normal_event_folds_and_is_recalled(m)
    assert m.graph().vector(eid) is not None and "fold_error" not in m.stats()


# --------------------------------------------- item 9: add() after the append
def test_add_returns_the_id_of_an_event_it_stored_when_folding_then_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    m = _memory()
    real = m.store.commit

    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise StoreError("SQLite: database or disk is full")

    monkeypatch.setattr(m.store, "commit", disk_full)
    eid = m.add("Paid the water bill", ts=TS)
    assert eid.startswith("ev_")
    stats = m.stats()
    assert stats["events"] == 1 and stats["pending"] == 1
    assert "disk is full" in stats["fold_error"]
    with pytest.raises(StoreError):  # an explicit fold() does report the failure
        m.fold()
    monkeypatch.setattr(m.store, "commit", real)
    assert m.add("Paid the water bill", ts=TS) == eid  # a retry is the same event
    _normal_event_folds_and_is_recalled(m)
    assert m.stats()["events"] == 2


# ----------------------------------------------------- item 5: plan attributes
@pytest.mark.parametrize("attrs", [
    {"category": "deadline", "status": "pending", "due": 1e300},
    {"category": "deadline", "status": "pending", "due": -1e12},
    {"category": "deadline", "status": "pending", "due": TIME_MAX},
])
def test_apply_refuses_an_intent_due_outside_the_range(attrs: dict[str, Any]) -> None:
    m = _memory()
    eid = m.add("Call the bank about the mortgage", ts=TS)
    plan = {"operations": [{"op": "ADD_NODE", "ref": "i", "kind": "intent",
                            "text": "Call the bank", "attrs": attrs, "grounded_in": [eid]}]}
    with pytest.raises(PlanError, match="'due' is a time outside"):
        m.apply(plan)
    assert m.intents(status="all") == []
    _normal_event_folds_and_is_recalled(m)


def test_apply_refuses_out_of_range_times_on_updates_and_other_kinds() -> None:
    m = _memory()
    eid = m.add("Ran 5 km with Priya", ts=TS)
    made = m.apply({"operations": [{"op": "ADD_NODE", "ref": "f", "kind": "fact",
                                    "text": "Priya runs", "attrs": {"first": TS, "last": TS},
                                    "grounded_in": [eid]}]})
    fid = made.created["f"]
    with pytest.raises(PlanError, match="'last' is a time outside"):
        m.apply({"operations": [{"op": "UPDATE_NODE", "id": fid,
                                 "attrs": {"last": 1e20}}]})
    assert m.get(fid).attrs["last"] == TS


# ------------------------------------------------------- item 12: deep meta
def test_deeply_nested_meta_is_an_input_error_not_a_recursion_error() -> None:
    m = _memory()
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = {"k": deep}
    with pytest.raises(InputError, match="nested more than 32 levels"):
        m.add("hello", ts=TS, meta=deep)
    listy: Any = []
    for _ in range(40):
        listy = [listy]
    with pytest.raises(InputError, match="nested"):
        m.add_many([{"text": "hello", "ts": TS, "meta": {"a": listy}}])
    ok: Any = 1
    for _ in range(31):
        ok = {"k": ok}
    m.add("fine", ts=TS, meta=ok)
    assert m.stats()["events"] == 1


def test_the_meta_depth_is_a_setting() -> None:
    def nested(depth: int) -> Any:
        out: Any = 1
        for _ in range(depth):
            out = {"k": out}
        return out

    m = Memory.open("memory:", embedder="hash", planner=None,
                    settings=Settings().with_(max_meta_depth=4))
    m.add("fine", ts=TS, meta=nested(4))
    with pytest.raises(InputError, match="nested more than 4 levels"):
        m.add("hello", ts=TS, meta=nested(5))
    m.close()
    m = Memory.open("memory:", embedder="hash", planner=None,
                    settings=Settings().with_(max_meta_depth=500))
    m.add("deep, at the bound", ts=TS, meta=nested(500))  # within the JSON encoder's reach
    assert m.stats()["events"] == 1
    m.close()


def _nested_json(depth: int) -> str:
    return '{"k": ' * depth + '"leaf"' + "}" * depth


def test_json_nested_past_the_parser_is_a_one_line_error_everywhere(tmp_path: Path) -> None:
    """A line or argument nested past the JSON parser's stack (a RecursionError inside
    json.loads) is an input error: `enfold ingest` and `enfold add --meta` fail in one line,
    `enfold watch` skips the line and goes on, Memory.import_ raises InputError."""
    deep = f'{{"text": "hello", "ts": {TS}, "meta": {_nested_json(100_000)}}}'
    src = tmp_path / "events.jsonl"
    src.write_text(json.dumps({"text": "fine", "ts": TS}) + "\n" + deep + "\n")
    db = tmp_path / "m.db"
    base = ["--db", str(db), "--create", "--embedder", "hash"]
    r = CliRunner().invoke(cli, [*base, "ingest", str(src)])
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output and "line 2" in r.output and "deeply" in r.output
    r = CliRunner().invoke(cli, [*base, "add", "hello", "--meta", _nested_json(100_000)])
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output and "deeply" in r.output
    r = CliRunner().invoke(cli, [*base, "watch", "--once", str(src)])
    assert r.exit_code == 0, r.output
    assert "line 2: skipped (JSON nested too deeply)" in r.output
    m = _memory(db)
    assert m.stats()["events"] == 1  # the good line, from watch
    with pytest.raises(InputError, match="line 1.*deeply"):
        m.import_([_nested_json(100_000)])
    _normal_event_folds_and_is_recalled(m)
    m.close()


# --------------------------------------------------------------------- CLI
def test_ingest_names_the_bad_line_in_one_line_and_stores_nothing(tmp_path: Path) -> None:
    src = tmp_path / "events.jsonl"
    src.write_text("\n".join(json.dumps(e) for e in [
        {"text": "fine", "ts": TS}, {"text": "hello", "ts": 1e300}]) + "\n")
    db = tmp_path / "m.db"
    r = CliRunner().invoke(cli, ["--db", str(db), "--create", "--embedder", "hash", "ingest",
                                 str(src)])
    assert r.exit_code != 0
    assert "Traceback" not in r.output and "line 2" in r.output and "range" in r.output
    m = _memory(db)
    assert m.stats()["events"] == 0
