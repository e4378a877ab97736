"""Typed node payloads: one pydantic model per node kind, declaring the attributes (``attrs``)
enfold writes on a node of that kind, with their types and meanings.

The models are the one description of the attributes: the executor validates every plan's
attributes through them (:func:`attrs_errors`, the security boundary for LLM plans), the
JSON Schemas (:func:`payloads_json_schema`, ``enfold schema``) and ``docs/attrs.md``
(:func:`payloads_markdown`, ``enfold schema --markdown``) are generated from them, and
:data:`KIND_FIELDS` is read off them. An attribute annotated with :data:`LLM_WRITES` is one
the LLM planner may write: its prompt lists them (:func:`llm_writable`) with their types and
meanings, and it refuses any other.

Validation never rewrites: a node's stored ``attrs`` stay exactly the dict the writer gave
(the types are strict, so nothing is coerced; an int is a number, a bool is not). Unknown
attributes are allowed and kept. An attribute name means one thing across kinds: a key that
the node's kind does not declare but another kind does is checked as that kind declares it
(``due`` on a person is still a time; ``aliases`` on anything a list of strings).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from enfold.model import TIME_MAX, TIME_MIN, Node, NodeKind

__all__ = [
    "COUNT", "FLAG", "INTENT_CATEGORIES", "KIND_FIELDS", "LLM_WRITES", "NUMBER", "OBJECT",
    "PAYLOADS", "STRINGS", "TEXT", "TIME", "ClaimAttrs", "ConceptAttrs", "EventAttrs", "Expect", "FactAttrs",
    "HistoryEntry", "IntentAttrs", "LLMWrites", "PersonAttrs", "TimeAttrs", "attrs_errors",
    "expect", "llm_writable", "payload", "payloads_json_schema", "payloads_markdown",
]


class Expect:
    """Annotation metadata of an attribute type: what a wrong value is told it must be
    (``"a list of strings"``) and the type's name in the docs table."""

    __slots__ = ("doc", "phrase")

    def __init__(self, phrase: str, doc: str) -> None:
        self.phrase, self.doc = phrase, doc


class LLMWrites:
    """Annotation metadata of an attribute the LLM planner may write (:data:`LLM_WRITES`)."""

    __slots__ = ()


#: Marks an attribute the LLM planner may write: ``summary: Annotated[Text, LLM_WRITES]``.
LLM_WRITES = LLMWrites()

# What each attribute type expects; :func:`expect` tells a field's.
TEXT = Expect("a string", "string")
STRINGS = Expect("a list of strings", "list of strings")
NUMBER = Expect("a number", "number")
COUNT = Expect("an integer", "integer")
FLAG = Expect("a boolean", "boolean")
OBJECT = Expect("an object", "object")
TIME = Expect("a number", "time (epoch s, UTC)")

# The attribute types. Every one admits None: a plan may store a null (``"due": None``, an
# intent without a due time) and an UPDATE_NODE's null deletes the attribute.
Text = Annotated[str | None, TEXT]
Strings = Annotated[list[str] | None, STRINGS]
Number = Annotated[float | None, NUMBER]
Count = Annotated[int | None, COUNT]
Flag = Annotated[bool | None, FLAG]
Object = Annotated[dict[str, Any] | None, OBJECT]
#: An epoch time (UTC seconds) inside 1000-01-01 .. 8999-12-31, so that no later date
#: arithmetic on it (an intent's due date, a fact's span) can leave the calendar.
Time = Annotated[float | None, Field(ge=TIME_MIN, lt=TIME_MAX), TIME]

_TIME_RANGE = "is a time outside 1000-01-01 to 8999-12-31 (UTC)"
_STRICT = ConfigDict(strict=True, extra="allow", frozen=True)


def _d(text: str) -> Any:
    """An optional attribute described by ``text`` (the docs table's meaning column)."""
    return Field(default=None, description=text)


def _either(values: tuple[str, ...]) -> str:
    """``("a", "b", "c")`` as ``"a, b or c"``."""
    return " or ".join(filter(None, (", ".join(values[:-1]), values[-1])))


#: An intent's categories, the one list of them: the intent engine's vocabulary
#: (``enfold.intents.CATEGORIES``), the values the LLM planner may write and the meaning of
#: :class:`IntentAttrs`'s ``category`` (so the planner's prompt lists them in this order).
INTENT_CATEGORIES: tuple[str, ...] = ("goal", "deadline", "follow_up", "habit")


class EventAttrs(BaseModel):
    """An event's attributes (written by the event log, never by a plan)."""

    model_config = _STRICT

    ts: Time = _d("when it happened")
    ingested_at: Time = _d("when it entered the log")
    source: Text = _d("who said or wrote it (the speaker or channel)")
    event_kind: Text = _d("what it is (note by default; message, email, calendar, ...)")
    meta: Object = _d("the caller's metadata (a JSON object; patchable with update_meta)")
    external_id: Text = _d("the caller's id of the event (the idempotency key when given)")
    seq: Count = _d("its place in the namespace's event log (set by the store)")
    fold_error: Text = _d("why no planner folded it (the event is still stored and searchable)")


class ConceptAttrs(BaseModel):
    """A concept's attributes: a theme folded from the events that ground it."""

    model_config = _STRICT

    summary: Annotated[Text, LLM_WRITES] = _d(
        "a one-line note on the theme (without an LLM: its grounding event closest to the "
        "centroid, or a parent theme's note)")
    keywords: Annotated[Strings, LLM_WRITES] = _d(
        "the theme's key phrases (without an LLM: those its label was chosen from, the label "
        "first)")
    aliases: Annotated[Strings, LLM_WRITES] = _d(
        "other names: former labels and the labels of concepts merged into it")
    strength: Number = _d("reinforcement strength, 1 at creation, at most 10")
    event_count: Number = _d("the number of events grounding it")
    last_ts: Time = _d("the time of its latest grounding event")
    level: Count = _d("0 or absent for a concept, 1 for a parent theme of two concepts")
    named_at: Count = _d("the number of events it had when last (re)named")
    source: Text = _d("who proposed it: llm for the LLM planner (absent: local rules)")


class HistoryEntry(BaseModel):
    """One status change of an intent."""

    model_config = _STRICT

    status: Text = _d("the status it changed to")
    at: Number = _d("when (epoch seconds, UTC; the event clock)")
    by: Text = _d("what changed it: rule or feedback")
    reason: Text = _d("why, in words")


class IntentAttrs(BaseModel):
    """An intent's attributes: a goal, deadline, follow-up or habit that emerged."""

    model_config = _STRICT

    category: Annotated[Text, LLM_WRITES] = _d(_either(INTENT_CATEGORIES))
    status: Text = _d("pending, suppressed, deferred, resolved, rejected or expired")
    score: Number = _d("the emergence score the admission threshold is compared with")
    due: Annotated[Time, LLM_WRITES] = _d("the due time (null: none)")
    due_end: Time = _d("the end of the due time's span (a day's deadline: its end)")
    history: Annotated[list[HistoryEntry] | None,
                       Expect("a list of status changes", "list of history entries")] = _d(
        "every status change, oldest first")
    source: Text = _d("what raised it: obligation, planner, llm, habit, density")
    clause: Text = _d("the words that stated an obligation (the label is the goal)")
    summary: Annotated[Text, LLM_WRITES] = _d("a one-line note on it (written by the LLM planner)")
    aliases: Strings = _d("labels of intents merged into it")
    concept: Text = _d("a habit's concept (its id)")
    concepts: Strings = _d("a goal's converging concepts (their ids)")
    density: Number = _d("a goal's concept density when it emerged")
    last_ts: Time = _d("the time of its latest evidence")
    reinforced: Count = _d("how often new evidence reinforced it")
    resolved_by: Text = _d("the event that completed it (its id)")
    near_notified: Time = _d("when the near-deadline notification was sent (event clock)")
    feedback: Text = _d("the user's latest feedback: accept, modify, defer or reject")
    confirmed: Flag = _d("the user accepted or corrected it")


class TimeAttrs(BaseModel):
    """A time anchor's attributes: a normalized date, datetime or interval."""

    model_config = _STRICT

    value: Text = _d("the normalized value (also the node's text), e.g. 2026-11-13T17:00")
    granularity: Text = _d("day, datetime, week, weekend, month or year")
    start: Time = _d("the start of its span")
    end: Time = _d("the end of its span (exclusive)")
    expressions: Strings = _d("the words that named it (\"due November 13 at 5pm\")")
    aliases: Strings = _d("the values of time anchors merged into it")


class PersonAttrs(BaseModel):
    """A person's attributes (the name is the node's text)."""

    model_config = _STRICT

    aliases: Strings = _d("other names of the person (merged people's names)")


class ClaimAttrs(BaseModel):
    """A claim's attributes: a source-attributed subjective statement."""

    model_config = _STRICT

    holder: Text = _d("the person who holds it (their name)")
    predicate: Text = _d("think, believe, say, love, want, ... (the verb of holding)")
    stance: Text = _d("positive, negative or neutral towards the target")
    target: Text = _d("what it is about, in the words used")
    target_key: Text = _d("the target normalized, to match claims about the same thing")
    reported: Flag = _d("someone else reported it (\"Maya says Gina thinks ...\")")
    valid_from: Time = _d("when it was made (its event's time)")
    superseded_by: Text = _d("the newer claim that changed this stance (its id; null: current)")
    superseded_at: Time = _d("when it was superseded")
    supersedes: Text = _d("the older claim whose stance this one changed (its id)")
    reaffirmed_at: Time = _d("when it was last made again")
    support: Count = _d("how many events made it")
    revises: Flag = _d("its event revises an earlier view (\"I no longer think ...\")")
    states_facts: Flag = _d("its event also states facts (not only opinion)")
    addressee: Text = _d("the person told, when named (\"told Omar that ...\")")
    audience: Text = _d("public or private, when an adverb says so")
    aliases: Strings = _d("the texts of claims merged into it")


class FactAttrs(BaseModel):
    """A fact's attributes: a person's recurring activity on a theme, with its envelope."""

    model_config = _STRICT

    first: Time = _d("the time of its earliest supporting event")
    last: Time = _d("the time of its latest supporting event")
    support: Count = _d("the number of supporting events")
    key: Text = _d("person id|concept id: the pair it is about")
    person: Text = _d("the person it is about (their id)")
    concept: Text = _d("the concept it is about (its id)")
    subject: Text = _d("the person's name")
    theme: Text = _d("the concept's label")
    statement_by: Text = _d("who wrote the statement: template or llm")
    phrases: Strings = _d("recurring phrases of its events the template statement names")
    phrased_at: Count = _d("the support when the phrases were last read")
    stale: Flag = _d("forget() retracted one of its events (cleared when new support extends it)")
    aliases: Strings = _d("the statements of facts merged into it")


#: The payload model of each node kind.
PAYLOADS: Mapping[NodeKind, type[BaseModel]] = {
    NodeKind.EVENT: EventAttrs,
    NodeKind.CONCEPT: ConceptAttrs,
    NodeKind.INTENT: IntentAttrs,
    NodeKind.TIME: TimeAttrs,
    NodeKind.PERSON: PersonAttrs,
    NodeKind.CLAIM: ClaimAttrs,
    NodeKind.FACT: FactAttrs,
}

#: The documented attrs of each kind (others are allowed and kept).
KIND_FIELDS: Mapping[NodeKind, tuple[str, ...]] = {
    kind: tuple(model.model_fields) for kind, model in PAYLOADS.items()
}


def _any_kind() -> type[BaseModel]:
    """Every attribute any kind declares, as that kind declares it (the first in kind order;
    a test keeps one name's type the same across kinds)."""
    fields: dict[str, Any] = {}
    for model in PAYLOADS.values():
        for name, info in model.model_fields.items():
            fields.setdefault(name, (info.annotation, info))
    made: type[BaseModel] = create_model("AnyAttrs", __config__=_STRICT, **fields)
    return made


_ANY_KIND = _any_kind()
# Field names read once: a model class's ``model_fields`` is not a cheap attribute.
_NAMES: dict[NodeKind | None, frozenset[str]] = {
    kind: frozenset(model.model_fields) for kind, model in PAYLOADS.items()}
_NAMES[None] = frozenset()
_ANY_NAMES = frozenset(_ANY_KIND.model_fields)


def expect(info: FieldInfo) -> Expect | None:
    """What a field's type expects (:data:`TEXT`, :data:`TIME`, ...; None: undeclared)."""
    return next((m for m in info.metadata if isinstance(m, Expect)), None)


def llm_writable(kind: NodeKind) -> dict[str, FieldInfo]:
    """The attributes of ``kind`` the LLM planner may write, in declaration order (empty:
    none). Their types (:func:`expect`) and descriptions are what its prompt shows."""
    return {name: info for name, info in PAYLOADS[kind].model_fields.items()
            if any(isinstance(m, LLMWrites) for m in info.metadata)}


def _reason(model: type[BaseModel], error: Mapping[str, Any]) -> str:
    if error["type"] in ("greater_than_equal", "less_than"):
        return _TIME_RANGE
    found = expect(model.model_fields[str(error["loc"][0])])
    return f"must be {found.phrase if found is not None else 'valid'}"


def _type_errors(model: type[BaseModel], attrs: Mapping[str, Any]) -> list[str]:
    try:
        model.model_validate(attrs)
    except ValidationError as exc:
        seen: dict[str, str] = {}
        for e in exc.errors():
            key = str(e["loc"][0])
            seen.setdefault(key, _reason(model, e))
        return [f"attr {key!r} {why}" for key, why in seen.items()]
    return []


def attrs_errors(attrs: dict[str, Any], text: str | None, max_bytes: int,
                 kind: NodeKind | None = None) -> list[str]:
    """Why a node's text or attributes cannot be stored or read back (empty: fine).

    ``max_bytes``: the attributes' JSON at most. ``kind``: the node's kind, whose model
    checks the attributes it declares; every other key another kind declares is checked as
    that kind declares it (so without a kind, each known attribute by its one type). Each
    error names the attribute and the reason."""
    errors: list[str] = []
    try:
        if text is not None:
            text.encode("utf-8")
        encoded = json.dumps(attrs, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        return [f"text or attrs cannot be stored: {exc}"]
    if len(encoded) > max_bytes:
        errors.append(f"attrs exceed {max_bytes} bytes")
    names = _NAMES[kind]
    mine = {k: v for k, v in attrs.items() if k in names}
    others = {k: v for k, v in attrs.items() if k not in names and k in _ANY_NAMES}
    if mine and kind is not None:
        errors += _type_errors(PAYLOADS[kind], mine)
    if others:
        errors += _type_errors(_ANY_KIND, others)
    return errors


def payload(node: Node) -> BaseModel:
    """``node.attrs`` as its kind's model (typed read access); raises
    :class:`pydantic.ValidationError` for attributes of the wrong type (an imported node)."""
    return PAYLOADS[node.kind].model_validate(dict(node.attrs))


def payloads_json_schema() -> dict[str, Any]:
    """The JSON Schema of every kind's attributes (``enfold schema`` prints it), generated
    from the models: ``{"$defs": {...}, "properties": {kind: {"$ref": ...}}}``."""
    defs: dict[str, Any] = {}
    props: dict[str, Any] = {}
    for kind, model in PAYLOADS.items():
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[model.__name__] = schema
        props[kind.value] = {"$ref": f"#/$defs/{model.__name__}"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "enfold node attributes",
        "description": ("The attrs of a node, by kind. Every attribute is optional; "
                        "others are allowed and kept."),
        "type": "object",
        "properties": props,
        "$defs": dict(sorted(defs.items())),
    }


def _doc_type(info: FieldInfo) -> str:
    found = expect(info)
    return found.doc if found is not None else "any"


def payloads_markdown() -> str:
    """``docs/attrs.md``: a table of each kind's attributes, generated from the models
    (``enfold schema --markdown`` prints it; a docs test keeps the file current)."""
    out = [
        "# Node attributes",
        "",
        ("Generated from the models in `enfold.payloads` by `enfold schema --markdown`; do "
         "not edit by hand. `enfold schema` prints the same as JSON Schema."),
        "",
        ("A node's kind-specific fields live in its `attrs` (JSON values). The executor "
         "checks every plan's attributes against these types (a time must lie within "
         "1000-01-01 … 8999-12-31 UTC); every attribute is optional and may be null, and "
         "attributes not listed are allowed and kept. A name means the same on every kind."),
    ]
    for kind, model in PAYLOADS.items():
        out += ["", f"## {kind.value}", "", (model.__doc__ or "").strip(), "",
                "| attribute | type | meaning |", "|---|---|---|"]
        for name, info in model.model_fields.items():
            text = str(info.description or "").replace("|", "\\|")
            out.append(f"| `{name}` | {_doc_type(info)} | {text} |")
    entry = HistoryEntry
    out += ["", "### an intent's history entry", "", (entry.__doc__ or "").strip(), "",
            "| key | type | meaning |", "|---|---|---|"]
    for name, info in entry.model_fields.items():
        out.append(f"| `{name}` | {_doc_type(info)} | {info.description} |")
    return "\n".join(out) + "\n"
