"""Tests for enfold.llm.strict_schema and the reply schemas generated with it.

The schemas the LLM is asked to fill used to be written by hand beside their pydantic
models; they are generated now. ``_handwritten_reply_schema`` is the last hand-written
reply schema, kept as the reference the generated one must equal (the request sent to the
model is unchanged), and the generated schemas must accept what their models accept.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from enfold.llm import strict_schema
from enfold.write import prompts as P

jsonschema = pytest.importorskip("jsonschema")


def _handwritten_reply_schema() -> dict[str, Any]:
    nullable = {"type": ["string", "null"]}
    strings = {"type": "array", "items": {"type": "string"}}
    attribute = {"type": "object", "properties": {"key": {"type": "string"},
                                                  "value": {"type": "string"}},
                 "required": ["key", "value"], "additionalProperties": False}
    op_props: dict[str, Any] = {
        "op": {"type": "string", "enum": list(P.OPS)},
        "ref": nullable,
        "kind": {"type": ["string", "null"],
                 "enum": [k.value for k in P.LLM_NODE_KINDS] + [None]},
        "text": nullable,
        "src": nullable,
        "dst": nullable,
        "type": {"type": ["string", "null"],
                 "enum": [t.value for t in P.LLM_EDGE_TYPES] + [None]},
        "target": nullable,
        "grounded_in": strings,
        "attributes": {"type": "array", "items": attribute},
        "reasoning": {"type": "string"},
    }
    operation = {"type": "object", "properties": op_props, "required": list(op_props),
                 "additionalProperties": False}
    return {"type": "object",
            "properties": {"reasoning": {"type": "string"},
                           "operations": {"type": "array", "items": operation}},
            "required": ["reasoning", "operations"], "additionalProperties": False}


def _walk(schema: Any) -> Any:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def _assert_strict(schema: dict[str, Any]) -> None:
    """OpenAI strict mode: closed objects, every property required, no references left."""
    jsonschema.Draft202012Validator.check_schema(schema)
    for node in _walk(schema):
        assert not {"$ref", "$defs", "title", "default"} & set(node)
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])


SCHEMAS = {"reply": (P.reply_schema, P.PlanReply),
           "statement": (lambda: P.STATEMENT_SCHEMA, P.StatementReply),
           "label": (lambda: P.LABEL_SCHEMA, P.LabelReply)}


@pytest.mark.parametrize("name", SCHEMAS)
def test_generated_schemas_are_strict(name: str) -> None:
    make, _ = SCHEMAS[name]
    _assert_strict(make())


def test_the_reply_schema_sent_is_the_handwritten_one() -> None:
    assert json.dumps(P.reply_schema()) == json.dumps(_handwritten_reply_schema())
    assert P.STATEMENT_SCHEMA == {
        "type": "object", "properties": {"statement": {"type": "string"}},
        "required": ["statement"], "additionalProperties": False}
    assert P.LABEL_SCHEMA == {
        "type": "object", "properties": {"label": {"type": "string"}},
        "required": ["label"], "additionalProperties": False}


def _op(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"op": "ADD_NODE", "ref": None, "kind": None, "text": None,
                            "src": None, "dst": None, "type": None, "target": None,
                            "grounded_in": [], "attributes": [], "reasoning": ""}
    return {**base, **fields}


ACCEPTED = [
    {"reasoning": "", "operations": []},
    {"reasoning": "a run", "operations": [
        _op(ref="n1", kind="concept", text="Running", grounded_in=["E1"]),
        _op(op="ADD_EDGE", src="E1", dst="n1", type="GROUNDS"),
        _op(op="UPDATE_NODE", target="C2", attributes=[{"key": "due", "value": "May"}]),
        _op(op="REMOVE_EDGE", src="E1", dst="C2", type="ABOUT", reasoning="wrong"),
    ]},
]
REJECTED = [
    {"reasoning": "", "operations": [], "extra": 1},
    {"reasoning": "", "operations": [_op(op="DROP_TABLE")]},
    {"reasoning": "", "operations": [_op(kind="event")]},
    {"reasoning": "", "operations": [_op(op="ADD_EDGE", type="HOLDS")]},  # automatic
    {"reasoning": "", "operations": [{**_op(), "id": "x"}]},
    {"reasoning": "", "operations": [_op(attributes=[{"key": "k"}])]},
]


@pytest.mark.parametrize("data", ACCEPTED)
def test_the_reply_schema_accepts_what_the_model_accepts(data: dict[str, Any]) -> None:
    parsed = P.PlanReply.model_validate(data)
    jsonschema.validate(data, P.reply_schema())
    # A reply the model wrote back out (every key, nulls included) passes too.
    jsonschema.validate(parsed.model_dump(mode="json"), P.reply_schema())


@pytest.mark.parametrize("data", REJECTED)
def test_the_reply_schema_rejects_what_the_model_rejects(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        P.PlanReply.model_validate(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, P.reply_schema())


@pytest.mark.parametrize(("model", "good", "bad"), [
    (P.StatementReply, {"statement": "Maya runs."}, {"statement": 3}),
    (P.LabelReply, {"label": "Submit the proposal"}, {"label": "x", "more": "y"}),
])
def test_writer_schemas_agree_with_their_models(
    model: type[BaseModel], good: dict[str, Any], bad: dict[str, Any]
) -> None:
    model.model_validate(good)
    jsonschema.validate(good, strict_schema(model))
    with pytest.raises(ValidationError):
        model.model_validate(bad)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, strict_schema(model))


class _Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["fast"]
    note: str | None = None
    count: int | None = None


class _Tree(BaseModel):
    """A docstring for readers of the code, not for the model."""

    leaves: list[_Leaf]
    first: _Leaf | None = None


class _Loop(BaseModel):
    child: _Loop | None = None


class _Loose(BaseModel):
    attrs: dict[str, Any]


def test_strict_schema_inlines_defs_and_makes_optional_fields_nullable() -> None:
    schema = strict_schema(_Tree)
    _assert_strict(schema)
    assert "description" not in schema
    leaf = schema["properties"]["leaves"]["items"]
    assert leaf["properties"] == {"mode": {"type": "string", "enum": ["fast"]},
                                  "note": {"type": ["string", "null"]},
                                  "count": {"type": ["integer", "null"]}}
    # An optional nested model stays a union of the object and null.
    assert schema["properties"]["first"]["anyOf"] == [leaf, {"type": "null"}]
    jsonschema.validate({"leaves": [{"mode": "fast", "note": None, "count": 2}],
                         "first": None}, schema)


def test_strict_schema_refuses_what_strict_mode_cannot_say() -> None:
    with pytest.raises(TypeError, match="recursive"):
        strict_schema(_Loop)
    with pytest.raises(TypeError, match="free-form"):
        strict_schema(_Loose)
