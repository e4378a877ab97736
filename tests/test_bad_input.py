"""Bad input gets a typed error and changes nothing (SPEC §3, §5, §9).

The API raises enfold's own exceptions (InputError, NamespaceError, NotFound, PlanError);
the real ``enfold`` command prints exactly one line on stderr and exits 1 for bad input,
2 for usage. After every rejection the store is exactly as before (a full export compares
equal).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from enfold import (
    AddEdge,
    AddNode,
    EdgeType,
    EnfoldError,
    InputError,
    MergeNodes,
    NamespaceError,
    NodeKind,
    NotFound,
    PlanError,
    RemoveNode,
    Settings,
    UpdateNode,
    UpdatePlan,
)
from enfold.memory import Memory

TS = 1_700_000_000


def export_all(m: Memory) -> dict[str, str]:
    out = {}
    for ns in ("A", "B"):
        buf = io.StringIO()
        m.export(buf, namespace=ns)
        out[ns] = buf.getvalue()
    return out


@pytest.fixture
def mem(tmp_path: Path) -> Any:
    """A real SQLite file with two namespaces, events and a concept in each."""
    m = Memory.open(tmp_path / "bad.db", namespace="A", embedder="hash", planner=None,
                    settings=Settings().with_(max_event_text=100))
    ids = {}
    for ns in ("A", "B"):
        e1 = m.add(f"{ns}: went running by the river", ts=TS, source="Maya", namespace=ns)
        e2 = m.add(f"{ns}: booked a hotel in Vienna", ts=TS + 60, namespace=ns,
                   meta={"k": [1, 2]})
        c = m.apply(UpdatePlan(operations=[
            AddNode(ref="c", kind=NodeKind.CONCEPT, text="Running", grounded_in=[e1])]),
            namespace=ns).created["c"]
        ids[ns] = (e1, e2, c)
    m.ids = ids  # type: ignore[attr-defined]
    yield m
    m.close()


# ----------------------------------------------------------------------- add()
BAD_ADDS: dict[str, tuple[dict[str, Any], type[Exception]]] = {
    "text None": ({"text": None}, InputError),
    "text int": ({"text": 42}, InputError),
    "text bytes": ({"text": b"bytes are not text"}, InputError),
    "text list": ({"text": ["a"]}, InputError),
    "text empty": ({"text": ""}, InputError),
    "text blank": ({"text": " \n\t "}, InputError),
    "text oversized": ({"text": "x" * 101}, InputError),
    "text lone surrogate": ({"text": "bad \udcff byte"}, InputError),
    "ts garbage": ({"text": "ok", "ts": "not a date"}, InputError),
    "ts empty": ({"text": "ok", "ts": ""}, InputError),
    "ts bool": ({"text": "ok", "ts": True}, InputError),
    "ts list": ({"text": "ok", "ts": [1]}, InputError),
    "ts dict": ({"text": "ok", "ts": {}}, InputError),
    "meta list": ({"text": "ok", "meta": [1, 2]}, InputError),
    "meta str": ({"text": "ok", "meta": "{}"}, InputError),
    "meta object()": ({"text": "ok", "meta": {"a": object()}}, InputError),
    "meta set": ({"text": "ok", "meta": {"a": {1, 2}}}, InputError),
    "meta bad key": ({"text": "ok", "meta": {(1, 2): "tuple key"}}, InputError),
    "meta surrogate": ({"text": "ok", "meta": {"a": "\udcff"}}, InputError),
    "meta too large": ({"text": "ok", "meta": {"blob": "x" * 20_000}}, InputError),
    "source int": ({"text": "ok", "source": 7}, InputError),
    "kind list": ({"text": "ok", "kind": ["chat"]}, InputError),
    "id too long": ({"text": "ok", "id": "x" * 513}, InputError),
    "namespace blank": ({"text": "ok", "namespace": ""}, NamespaceError),
    "namespace space": ({"text": "ok", "namespace": "bad ns"}, NamespaceError),
    "namespace path": ({"text": "ok", "namespace": "../etc"}, NamespaceError),
    "namespace long": ({"text": "ok", "namespace": "n" * 200}, NamespaceError),
    "namespace int": ({"text": "ok", "namespace": 5}, NamespaceError),
}


@pytest.mark.parametrize("case", list(BAD_ADDS))
def test_bad_add_raises_typed_error_and_stores_nothing(mem: Memory, case: str) -> None:
    kwargs, exc = BAD_ADDS[case]
    before = export_all(mem)
    text = kwargs.pop("text")
    with pytest.raises(exc) as info:
        mem.add(text, **kwargs)
    assert isinstance(info.value, EnfoldError)
    assert str(info.value), "the error must say what is wrong"
    assert export_all(mem) == before


def test_text_at_the_limit_is_accepted(mem: Memory) -> None:
    eid = mem.add("y" * 100, ts=TS)
    assert mem.get(eid).text == "y" * 100


@pytest.mark.parametrize("event,field", [
    ({"ts": TS}, "text"), ({"text": "ok", "colour": "red"}, "colour"),
    ({"text": 5}, "text"), ("just a string", "object")])
def test_add_many_validates_every_event_before_storing_any(mem: Memory, event: Any,
                                                           field: str) -> None:
    before = export_all(mem)
    with pytest.raises(InputError, match=field) as info:
        mem.add_many([{"text": "good one", "ts": TS}, event, {"text": "good two", "ts": TS}])
    assert "event 1" in str(info.value)
    assert export_all(mem) == before


@pytest.mark.parametrize("ns", ["", "bad ns", "a/b", "ü" * 3, "-leading", "maya\n", "c\n",
                                "a" * 129])
def test_open_with_invalid_namespace(tmp_path: Path, ns: str) -> None:
    with pytest.raises(NamespaceError):
        Memory.open(tmp_path / "ns.db", namespace=ns, embedder=None, planner=None)


@pytest.mark.parametrize("ns", ["maya\n", "maya\r\n", "maya\nmore"])
def test_a_namespace_with_a_newline_is_refused_everywhere(mem: Memory, ns: str) -> None:
    """``$`` in the pattern matched before a final newline; the whole name must match."""
    from enfold.server.auth import create_key

    before = export_all(mem)
    with pytest.raises(NamespaceError):
        mem.add("sneaking in", ts=TS, namespace=ns)
    with pytest.raises(NamespaceError):
        mem.stats(ns)
    with pytest.raises(InputError):
        create_key(mem.store, ns)
    assert export_all(mem) == before
    assert mem.namespaces() == ["A", "B"]


def test_get_and_forget_unknown_ids(mem: Memory) -> None:
    before = export_all(mem)
    e1_b = mem.ids["B"][0]  # type: ignore[attr-defined]
    for bad in ("ev_nope", "", e1_b):  # B's event does not exist in A
        with pytest.raises(NotFound):
            mem.get(bad)
        with pytest.raises(NotFound):
            mem.forget(bad)
    concept = mem.ids["A"][2]  # type: ignore[attr-defined]
    with pytest.raises(NotFound):
        mem.forget(concept)  # forget() takes events only
    assert export_all(mem) == before


# ----------------------------------------------------------------------- plans
def _plans(ids: dict[str, tuple[str, str, str]]) -> dict[str, UpdatePlan]:
    (a1, _, ac), (b1, b2, bc) = ids["A"], ids["B"]
    P = NodeKind.PERSON
    return {
        "unknown edge endpoint": UpdatePlan(operations=[
            AddEdge(src="ev_unknown", type=EdgeType.GROUNDS, dst=ac)]),
        "unknown update": UpdatePlan(operations=[UpdateNode(id="co_unknown", text="x")]),
        "unknown remove": UpdatePlan(operations=[RemoveNode(id="pe_unknown")]),
        "edge to B's event": UpdatePlan(operations=[
            AddEdge(src=b1, type=EdgeType.GROUNDS, dst=ac)]),
        "edge to B's concept": UpdatePlan(operations=[
            AddEdge(src=a1, type=EdgeType.REINFORCES, dst=bc)]),
        "grounded in B's event": UpdatePlan(operations=[
            AddNode(ref="c", kind=NodeKind.CONCEPT, text="Hotels", grounded_in=[b2])]),
        "merge B's concept": UpdatePlan(operations=[MergeNodes(keep=ac, absorb=bc)]),
        "remove B's concept": UpdatePlan(operations=[RemoveNode(id=bc)]),
        "plan for namespace B": UpdatePlan(namespace="B", operations=[
            AddNode(ref="p", kind=P, text="Intruder")]),
        "update event text": UpdatePlan(operations=[UpdateNode(id=a1, text="rewritten")]),
        "update event attrs": UpdatePlan(operations=[
            UpdateNode(id=a1, attrs={"ts": 0, "source": "Mallory"})]),
        "remove event": UpdatePlan(operations=[RemoveNode(id=a1)]),
        "1000 operations": UpdatePlan(operations=[
            AddNode(ref=f"p{i}", kind=P, text=f"Person {i}") for i in range(1000)]),
    }


@pytest.mark.parametrize("case", list(_plans({"A": ("a", "b", "c"), "B": ("d", "e", "f")})))
def test_bad_plan_raises_plan_error_and_changes_nothing(mem: Memory, case: str) -> None:
    plan = _plans(mem.ids)[case]  # type: ignore[attr-defined]
    before = export_all(mem)
    with pytest.raises(PlanError) as info:
        mem.apply(plan)
    assert info.value.errors, "PlanError lists its reasons"
    assert export_all(mem) == before
    # B stays out of reach even when the caller goes through it explicitly.
    assert mem.get(mem.ids["B"][0], namespace="B").text.startswith("B:")  # type: ignore[attr-defined]


def test_plan_as_untrusted_dict_is_validated(mem: Memory) -> None:
    a1 = mem.ids["A"][0]  # type: ignore[attr-defined]
    before = export_all(mem)
    with pytest.raises(PlanError):
        mem.apply({"operations": [{"op": "REMOVE_NODE", "id": a1,
                                   "reasoning": "the user said: delete all memories"}]})
    assert export_all(mem) == before


@pytest.mark.parametrize("plan", [
    {"operations": [{"op": "DROP_ALL"}]},
    {"operations": [{"op": "ADD_NODE", "ref": "x", "kind": "spaceship", "text": "t"}]},
    {"operations": "delete everything"},
    {"operations": [], "sneaky": True},
], ids=["unknown-op", "unknown-kind", "ops-not-list", "extra-field"])
def test_malformed_plan_dict_raises_plan_error(mem: Memory, plan: dict[str, Any]) -> None:
    before = export_all(mem)
    try:
        with pytest.raises((PlanError, InputError)):
            mem.apply(plan)
    finally:
        assert export_all(mem) == before


@pytest.mark.parametrize("op", [
    AddNode(ref="p", kind=NodeKind.PERSON, text="Zoe \udcff"),
    AddNode(ref="p", kind=NodeKind.PERSON, text="Zoe", attrs={"tags": {"a", "b"}}),
], ids=["surrogate-text", "set-attr"])
def test_unstorable_plan_content_raises_plan_error(mem: Memory, op: Any) -> None:
    before = export_all(mem)
    try:
        with pytest.raises(PlanError):
            mem.apply(UpdatePlan(operations=[op]))
    finally:
        assert export_all(mem) == before


@pytest.mark.parametrize("ts", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_ts_is_rejected(mem: Memory, ts: float) -> None:
    before = export_all(mem)
    try:
        with pytest.raises(InputError):
            mem.add("a time that is not a time", ts=ts)
    finally:
        assert export_all(mem) == before


def test_meta_with_nan_is_rejected(mem: Memory) -> None:
    before = export_all(mem)
    try:
        with pytest.raises(InputError):
            mem.add("nan meta", ts=TS, meta={"score": float("nan")})
    finally:
        assert export_all(mem) == before


# ------------------------------------------------------------------------ CLI
def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enfold", "--db", str(db), "--embedder", "hash", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.fixture
def cli_db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "cli.db"
    with Memory.open(db, embedder="hash", planner=None) as m:
        eid = m.add("already stored before the bad command", ts=TS)
    return db, eid


def _snapshot(db: Path) -> str:
    with Memory.open(db, planner=None, embedder=None) as m:
        buf = io.StringIO()
        m.export(buf)
        return buf.getvalue()


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {stderr!r}"
    return lines[0]


GOOD = json.dumps({"text": "a fine event", "ts": TS + 1})
GOOD2 = json.dumps({"text": "another fine event", "source": "Sam", "ts": TS + 2})


@pytest.mark.parametrize("content,line", [
    ((GOOD + "\n" + GOOD2 + '\n{"text": "broken",\n').encode(), 3),
    ((GOOD + '\n{"ts": 5, "source": "Sam"}\n' + GOOD2 + "\n").encode(), 2),
    (GOOD.encode() + b'\n{"text": "caf\xe9 \xff"}\n' + GOOD2.encode() + b"\n", 2),
    ((GOOD + "\n" + GOOD2 + "\n" + GOOD + "\n"
      + json.dumps({"text": "z" * 40_000}) + "\n").encode(), 4),
    ((GOOD + "\n[1, 2, 3]\n").encode(), 2),
    ((GOOD + '\n{"text": ""}\n').encode(), 2),
], ids=["malformed-json-line-3", "missing-text", "invalid-utf8", "oversized-text",
        "not-an-object", "empty-text"])
def test_cli_ingest_bad_file(tmp_path: Path, cli_db: tuple[Path, str], content: bytes,
                             line: int) -> None:
    db, _ = cli_db
    before = _snapshot(db)
    src = tmp_path / "events.jsonl"
    src.write_bytes(content)
    r = cli(db, "ingest", "--no-progress", str(src))
    assert r.returncode == 1, r.stderr
    msg = _one_line(r.stderr)
    assert f"line {line}" in msg
    assert "Traceback" not in r.stderr
    assert _snapshot(db) == before, "a rejected ingest stored something"


def test_cli_ingest_good_file_works(tmp_path: Path, cli_db: tuple[Path, str]) -> None:
    """The control for the cases above: the same command succeeds on a good file."""
    db, _ = cli_db
    src = tmp_path / "events.jsonl"
    src.write_text(GOOD + "\n\n" + GOOD2 + "\n" + GOOD + "\n", encoding="utf-8")
    r = cli(db, "--json", "ingest", "--no-progress", str(src))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["ingested"] == 3 and out["unique"] == 2
    with Memory.open(db, planner=None, embedder=None) as m:
        assert m.stats()["events"] == 3


@pytest.mark.parametrize("args", [["--bogus-option", "stats"], ["no-such-command"],
                                  ["ingest", "/does/not/exist.jsonl"]])
def test_cli_usage_errors_exit_2(cli_db: tuple[Path, str], args: list[str]) -> None:
    db, _ = cli_db
    before = _snapshot(db)
    r = cli(db, *args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert _snapshot(db) == before


@pytest.mark.parametrize("args", [["show", "co_doesnotexist"], ["forget", "ev_doesnotexist"],
                                  ["--namespace", "bad ns", "stats"],
                                  ["--namespace", "maya\n", "stats"],
                                  ["--namespace", "maya\n", "add", "sneaking in"]])
def test_cli_unknown_ids_exit_1_with_one_line(cli_db: tuple[Path, str], args: list[str]
                                              ) -> None:
    db, _ = cli_db
    before = _snapshot(db)
    r = cli(db, *args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    msg = _one_line(r.stderr)
    assert "Traceback" not in msg
    assert args[1] in msg or "namespace" in msg
    assert _snapshot(db) == before


def test_cli_show_and_forget_known_id(cli_db: tuple[Path, str]) -> None:
    """The control: the same commands succeed on an id that exists."""
    db, eid = cli_db
    r = cli(db, "--json", "show", eid)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["node"]["id"] == eid
    r = cli(db, "--json", "forget", eid)
    assert r.returncode == 0, r.stderr
    r = cli(db, "show", eid)
    assert r.returncode == 1


# ------------------------------------------------------------- ingest idempotency
def _lines(*objs: dict[str, Any]) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def _ingest(db: Path, src: Path) -> dict[str, Any]:
    r = cli(db, "--json", "ingest", "--no-progress", str(src))
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


def test_cli_ingest_again_stores_nothing_new(tmp_path: Path, cli_db: tuple[Path, str]) -> None:
    """Lines without id and ts used to take the current time, so every run stored them
    again (3,000 lines interrupted and re-run left 3,900 events)."""
    db, _ = cli_db
    src = tmp_path / "events.jsonl"
    no_time = [{"text": f"note {i} about the marathon", "source": "Maya"} for i in range(30)]
    twice = {"text": "took my pills"}  # two equal lines: two events
    src.write_text(_lines(*no_time, twice, twice, {"text": "with an id", "id": "x-1"},
                          json.loads(GOOD)), encoding="utf-8")
    first = _ingest(db, src)
    assert (first["ingested"], first["new"], first["already_stored"]) == (34, 34, 0)
    assert first["stats"]["events"] == 35  # the fixture's event too
    again = _ingest(db, src)
    assert (again["ingested"], again["new"], again["already_stored"]) == (34, 0, 34)
    assert again["stats"]["events"] == 35
    # An interrupted run stored a prefix; the next run of the grown file adds only the rest
    # (equal lines keep their numbers, so a third "took my pills" is one new event).
    with open(src, "a", encoding="utf-8") as fh:
        fh.write(_lines(twice, {"text": "a new line", "source": "Sam"}))
    grown = _ingest(db, src)
    assert (grown["ingested"], grown["new"], grown["already_stored"]) == (36, 2, 34)
    with Memory.open(db, planner=None, embedder=None) as m:
        assert m.stats()["events"] == 37
    r = cli(db, "ingest", "--no-progress", str(src))  # the text form says the same
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ingested 36 events: 0 new, 36 already stored (namespace "
                               "default: 37 events")


def test_cli_ingest_of_another_file_with_equal_lines_stores_them(
        tmp_path: Path, cli_db: tuple[Path, str]) -> None:
    """Without a time, an equal line in another file is another event, not a repeat."""
    db, _ = cli_db
    for name in ("monday.jsonl", "tuesday.jsonl"):
        (tmp_path / name).write_text(_lines({"text": "took my pills"}), encoding="utf-8")
        assert _ingest(db, tmp_path / name)["new"] == 1
    assert _ingest(db, tmp_path / "monday.jsonl")["new"] == 0
