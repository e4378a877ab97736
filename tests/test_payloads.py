"""Typed node payloads (enfold.payloads): the models declare what the writers write, the
executor refuses a wrongly typed attribute with a clear message, and nothing is rewritten."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from enfold import Memory, NodeKind, PlanError, Settings
from enfold.bench.perf import synthetic_events
from enfold.demo import demo_events
from enfold.model import Node
from enfold.payloads import (
    INTENT_CATEGORIES,
    KIND_FIELDS,
    PAYLOADS,
    IntentAttrs,
    LLMWrites,
    attrs_errors,
    payload,
    payloads_json_schema,
)
from enfold.plan import AddNode, UpdateNode, UpdatePlan
from enfold.write.apply import validate_plan

TS = 1_790_000_000.0


@pytest.fixture(scope="module")
def folded(tmp_path_factory: pytest.TempPathFactory) -> list[Node]:
    """Every node of the demo and a slice of the synthetic stream folded by the local
    planner, consolidated, with an intent's feedback and a forgotten event on top."""
    path = tmp_path_factory.mktemp("payloads") / "m.db"
    mem = Memory.open(path, embedder="hash", planner="local")
    mem.add_many(demo_events())
    events = list(synthetic_events(400))
    for i in range(0, len(events), 100):
        mem.add_many(events[i:i + 100])
    mem.consolidate()
    intents = mem.intents(status="all")
    mem.feedback(intents[0].id, "accept")
    mem.feedback(intents[1].id, "modify", label="A corrected label")
    concept = next(n for n in mem.graph().nodes.values() if n.kind is NodeKind.CONCEPT)
    mem.forget(concept.grounded_in[0])
    nodes = list(mem.graph().nodes.values())
    mem.close()
    return nodes


def test_every_attr_the_writers_write_is_declared_and_well_typed(folded: list[Node]) -> None:
    """A writer that adds an attribute no model declares, or writes a declared one with
    another type, fails here: the models are what is written."""
    undeclared: dict[str, set[str]] = defaultdict(set)
    wrong: list[str] = []
    for node in folded:
        undeclared[node.kind.value] |= set(node.attrs) - set(KIND_FIELDS[node.kind])
        wrong += [f"{node.kind.value} {node.id}: {e}"
                  for e in attrs_errors(dict(node.attrs), node.text, 10**9, node.kind)]
        payload(node)  # typed access works on every folded node
    assert {k: v for k, v in undeclared.items() if v} == {}
    assert wrong == []
    kinds = {n.kind for n in folded}
    assert kinds == set(NodeKind)


def _of_kind(schema: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"$defs": schema["$defs"], "$ref": schema["properties"][kind]["$ref"]}


def test_the_json_schema_accepts_every_folded_node(folded: list[Node]) -> None:
    schema = payloads_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    for kind in NodeKind:
        validator = jsonschema.Draft202012Validator(_of_kind(schema, kind.value))
        for node in (n for n in folded if n.kind is kind):
            assert list(validator.iter_errors(dict(node.attrs))) == [], node.id


def test_the_json_schema_refuses_what_the_executor_refuses() -> None:
    schema = payloads_json_schema()
    validator = jsonschema.Draft202012Validator(_of_kind(schema, "intent"))
    assert not validator.is_valid({"due": "tomorrow"})
    assert not validator.is_valid({"due": 1e20})
    assert not validator.is_valid({"aliases": [1]})
    assert validator.is_valid({"due": None, "mood": [1, {"x": 2}]})


def _memory() -> tuple[Memory, str]:
    mem = Memory.open("memory:", embedder="hash", planner=None)
    return mem, mem.add("Call the bank about the mortgage", ts=TS)


@pytest.mark.parametrize(("kind", "attrs", "message"), [
    ("concept", {"aliases": "Running"}, "attr 'aliases' must be a list of strings"),
    ("concept", {"keywords": ["run", 3]}, "attr 'keywords' must be a list of strings"),
    ("concept", {"strength": True}, "attr 'strength' must be a number"),
    ("concept", {"event_count": "3"}, "attr 'event_count' must be a number"),
    ("concept", {"level": 1.5}, "attr 'level' must be an integer"),
    ("intent", {"due": "2026-11-13"}, "attr 'due' must be a number"),
    ("intent", {"due": 1e20}, "attr 'due' is a time outside 1000-01-01 to 8999-12-31 (UTC)"),
    ("intent", {"status": 3}, "attr 'status' must be a string"),
    ("intent", {"confirmed": "yes"}, "attr 'confirmed' must be a boolean"),
    ("intent", {"history": [{"at": "noon"}]}, "attr 'history' must be a list of status changes"),
    ("claim", {"reported": 1}, "attr 'reported' must be a boolean"),
    ("claim", {"valid_from": -1e12},
     "attr 'valid_from' is a time outside 1000-01-01 to 8999-12-31 (UTC)"),
    ("time", {"start": "9am"}, "attr 'start' must be a number"),
    # a key another kind declares is checked as that kind declares it
    ("person", {"due": 1e20}, "attr 'due' is a time outside 1000-01-01 to 8999-12-31 (UTC)"),
    ("person", {"strength": "high"}, "attr 'strength' must be a number"),
])
def test_a_wrongly_typed_attr_is_refused_with_its_name_and_reason(
        kind: str, attrs: dict[str, Any], message: str) -> None:
    mem, eid = _memory()
    g = mem.graph()
    add = UpdatePlan(operations=[AddNode(ref="n", kind=NodeKind(kind), text="Call the bank",
                                         attrs=attrs, grounded_in=[eid])])
    assert validate_plan(add, g, Settings()) == [f"op 0: {message}"]
    with pytest.raises(PlanError, match="must be|outside"):
        mem.apply(add)
    assert [n for n in mem.graph().nodes.values() if n.kind is not NodeKind.EVENT] == []
    made = mem.apply(UpdatePlan(operations=[
        AddNode(ref="n", kind=NodeKind(kind), text="Call the bank", grounded_in=[eid])]))
    nid = made.created["n"]
    update = UpdatePlan(operations=[UpdateNode(id=nid, attrs=attrs)])
    assert validate_plan(update, mem.graph(), Settings()) == [f"op 0: {message}"]


def test_an_llm_shaped_plan_cannot_store_a_wrong_type() -> None:
    """A plan as parsed from JSON (the LLM's and the HTTP API's path) is checked the same."""
    mem, eid = _memory()
    plan = {"planner": "llm", "operations": [
        {"op": "ADD_NODE", "ref": "i", "kind": "intent", "text": "Call the bank",
         "attrs": {"category": "deadline", "due": "friday", "score": "high"},
         "grounded_in": [eid]}]}
    with pytest.raises(PlanError) as caught:
        mem.apply(plan)
    assert "op 0: attr 'due' must be a number" in caught.value.errors
    assert "op 0: attr 'score' must be a number" in caught.value.errors
    assert mem.intents(status="all") == []


def test_unknown_attrs_are_kept_and_nothing_is_rewritten() -> None:
    mem, eid = _memory()
    attrs = {"mood": [1, {"x": 2}], "strength": 2, "aliases": [], "summary": "as given",
             "superseded_by": None}
    made = mem.apply(UpdatePlan(operations=[
        AddNode(ref="c", kind=NodeKind.CONCEPT, text="Mortgage", attrs=attrs,
                grounded_in=[eid])]))
    node = mem.get(made.created["c"])
    assert node.attrs["mood"] == [1, {"x": 2}]
    assert node.attrs["strength"] == 2 and type(node.attrs["strength"]) is int  # not 2.0
    assert node.attrs["superseded_by"] is None
    # an update's null still deletes
    mem.apply(UpdatePlan(operations=[UpdateNode(id=node.id, attrs={"summary": None})]))
    assert "summary" not in mem.get(node.id).attrs


def test_payload_gives_typed_access() -> None:
    node = Node("in_1", "default", NodeKind.INTENT, "Call the bank",
                {"category": "deadline", "due": TS, "history": [{"status": "pending", "at": TS}],
                 "extra": "kept"})
    p = payload(node)
    assert isinstance(p, IntentAttrs)
    assert p.due == TS and p.history is not None and p.history[0].status == "pending"
    assert p.model_extra == {"extra": "kept"}


def test_one_name_has_one_type_across_kinds() -> None:
    """``support``, ``aliases``, ``source``, ``last_ts``, ... mean the same type everywhere,
    so the cross-kind check is well defined."""
    seen: dict[str, tuple[Any, str]] = {}
    for kind, model in PAYLOADS.items():
        for name, info in model.model_fields.items():
            # The type, not who may write it (LLM_WRITES marks a kind's field, not a name).
            shape = (info.annotation,
                     repr([m for m in info.metadata if not isinstance(m, LLMWrites)]))
            assert seen.setdefault(name, (shape, kind.value))[0] == shape, (name, kind)
        assert all(info.description for info in model.model_fields.values()), kind


def test_the_tables_other_modules_keep_name_declared_attrs() -> None:
    """forget()'s text attributes are declared by the models (as strings, lists of strings
    or the history). The LLM planner keeps no table: its writable attributes are the
    fields marked LLM_WRITES (tests/test_planner_llm.py)."""
    from enfold.write.traces import TEXT_ATTRS

    for kind, keys in TEXT_ATTRS.items():
        assert set(keys) <= set(KIND_FIELDS[kind]), kind
    for kind, keys in TEXT_ATTRS.items():
        fields = PAYLOADS[kind].model_fields
        assert all(fields[k].annotation in (str | None, list[str] | None)
                   or k == "history" for k in keys), kind


def test_the_intent_categories_are_listed_once() -> None:
    """The engine's categories, the LLM planner's allowed values and the attribute's
    meaning (which its prompt shows) are the one tuple of payloads, in its order."""
    from enfold.intents import CATEGORIES
    from enfold.write.planner_llm import convert_attrs
    from enfold.write.prompts import Attribute

    assert CATEGORIES is INTENT_CATEGORIES
    assert IntentAttrs.model_fields["category"].description == \
        "goal, deadline, follow_up or habit"
    for category in INTENT_CATEGORIES:
        attrs = convert_attrs(NodeKind.INTENT, [Attribute(key="category", value=category)])
        assert attrs == {"category": category}
    with pytest.raises(ValueError, match="is not one of goal, deadline, follow_up, habit"):
        convert_attrs(NodeKind.INTENT, [Attribute(key="category", value="chore")])


def test_enfold_schema_prints_the_models_schema(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from enfold.cli import cli

    out = CliRunner().invoke(cli, ["schema"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == payloads_json_schema()
    one = CliRunner().invoke(cli, ["schema", "--kind", "claim"])
    assert one.exit_code == 0, one.output
    assert json.loads(one.output)["title"] == "ClaimAttrs"
