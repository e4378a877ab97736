"""Benchmark and demo datasets: typed records and the loaders that validate them.

Four datasets feed ``enfold bench`` and ``enfold demo``:

- **CogEval-Bench** scenarios (one JSON file each): a gold concept graph plus the event stream
  generated from it. :func:`load_cogeval` also checks the cross-references — every event,
  concept and hierarchy id a scenario mentions must exist, and ``gold_concept`` must agree with
  ``expected_events`` — because a benchmark whose gold data points nowhere scores nonsense
  silently.
- the **collapse** probe (JSON Lines): a fact and one or two opinions that share its
  vocabulary, with queries that expect one or the other (:func:`load_collapse`).
- **LoCoMo** conversations (:func:`load_locomo`): turns in order and their QA. The published
  file has a few broken evidence ids; they are repaired when unambiguous, otherwise kept aside
  as ``unresolved`` and listed in ``issues`` — never silently dropped.
- the packaged **demo** stream and its gold annotations (:func:`load_demo`).

Files are trust boundaries, so records are pydantic models (frozen); LoCoMo, whose session keys
are dynamic, is checked by hand into frozen dataclasses. Every malformed input raises
:class:`enfold.errors.InputError` naming the file, the record and the field, e.g.
``collapse.jsonl: line 7 (id "c07"): field "claim.holder" is missing``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, ValidationError

from enfold.errors import InputError

__all__ = [
    "COGEVAL_SETS", "LOCOMO_CATEGORIES", "ClaimUtterance", "CollapseItem", "CollapseQuery", "DemoEvent",
    "DemoGold", "GoldChain", "GoldConcept", "GoldGraph", "GoldIntent", "GoldParent", "GoldRelation",
    "LocomoConversation", "LocomoQA", "LocomoTurn", "Scenario", "ScenarioEvent", "Utterance",
    "load_cogeval", "load_collapse", "load_demo", "load_locomo",
]

PathLike = str | Path
_M = TypeVar("_M", bound=BaseModel)


# --------------------------------------------------------------------------- shared pieces

def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _has_timezone(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must carry a timezone, e.g. a trailing Z")
    return value


Text = Annotated[str, AfterValidator(_not_blank)]
Timestamp = Annotated[datetime, AfterValidator(_has_timezone)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _path(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _fail(source: str, record: str | None, field: str | None, problem: str) -> InputError:
    where = f"{source}: {record}" if record else source
    return InputError(f'{where}: field "{field}" {problem}' if field else f"{where}: {problem}")


def _ident(raw: Any, key: str = "id") -> str:
    value = raw.get(key) if isinstance(raw, dict) else None
    return f' ({key} "{value}")' if isinstance(value, str) else ""


def _validate(model: type[_M], raw: Any, source: str, record: str | None) -> _M:
    """Validate ``raw`` as ``model``; translate the first pydantic error into an InputError.

    Without ``record`` the record is the first list element on the error's path, e.g.
    ``events[3] (id "e04")``, and the rest of the path is the field.
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        if record is None:
            cut = next((i + 1 for i, p in enumerate(loc) if isinstance(p, int)), 0)
            node: Any = raw
            for part in loc[:cut]:
                if isinstance(node, dict):
                    node = node.get(part)
                elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                    node = node[part]
                else:
                    node = None
            record = (_path(loc[:cut]) + _ident(node)) if cut else None
            loc = loc[cut:]
        kind, msg = err["type"], err["msg"].removeprefix("Value error, ")
        if kind == "missing":
            problem = "is missing"
        elif kind == "extra_forbidden":
            problem = "is not a known field"
        else:
            problem = f"is invalid: {msg} (got {json.dumps(err['input'], default=str)[:60]})"
        more = len(exc.errors()) - 1
        problem += f" (and {more} more error{'s' * (more > 1)})" if more else ""
        raise _fail(source, record, _path(loc) or None, problem) from None


def _read(path: PathLike | Traversable) -> tuple[str, str]:
    """Return (display name, text) of a file on disk or inside the installed package."""
    name = str(path) if isinstance(path, (str, Path)) else path.name
    target = Path(path) if isinstance(path, str) else path
    try:
        return name, target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: cannot be read ({exc})") from None


def _load_json(path: PathLike | Traversable) -> tuple[str, Any]:
    name, text = _read(path)
    try:
        return name, json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: not valid JSON ({exc})") from None


def _jsonl(path: PathLike | Traversable, model: type[_M]) -> tuple[str, list[tuple[str, _M]]]:
    """Parse one ``model`` per non-blank line; ids must be unique. Returns (name, [(where, m)])."""
    name, text = _read(path)
    rows: list[tuple[str, _M]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(name, f"line {number}", None, f"is not valid JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise _fail(name, f"line {number}", None, "must be a JSON object")
        where = f"line {number}{_ident(raw)}"
        item = _validate(model, raw, name, where)
        item_id = raw["id"]  # validated: every JSON Lines model here has a string id
        if item_id in seen:
            raise _fail(name, where, "id", f'repeats "{item_id}"')
        seen.add(item_id)
        rows.append((where, item))
    if not rows:
        raise InputError(f"{name}: contains no records")
    return name, rows


def _packaged(*parts: str) -> Traversable:
    return resources.files("enfold").joinpath(*parts)


# --------------------------------------------------------------------------- CogEval-Bench

RelationType = Literal["PART_OF", "TRIGGERS", "REINFORCES", "CAUSES"]


class GoldConcept(_Record):
    """A concept the scenario's events were generated from."""

    id: Text
    label: Text
    description: Text
    keywords: tuple[Text, ...]
    expected_events: tuple[Text, ...] = Field(min_length=1)


class GoldParent(_Record):
    """A superordinate concept over some gold concepts (tests hierarchical abstraction)."""

    id: Text
    label: Text
    children: tuple[Text, ...] = Field(min_length=1)


class GoldRelation(_Record):
    source: Text
    target: Text
    type: RelationType


class GoldIntent(_Record):
    id: Text
    label: Text
    supporting: tuple[Text, ...] = Field(min_length=1)
    trigger: Text


class GoldChain(_Record):
    """A planted multi-hop chain: events linked causally or temporally across concepts."""

    id: Text
    description: Text
    events: tuple[Text, ...] = Field(min_length=2)


class GoldGraph(_Record):
    """The gold concept graph a scenario's events were generated from."""

    concepts: tuple[GoldConcept, ...] = Field(min_length=1)
    hierarchy: tuple[GoldParent, ...] = ()
    relations: tuple[GoldRelation, ...] = ()
    intents: tuple[GoldIntent, ...] = ()
    chains: tuple[GoldChain, ...] = ()


class ScenarioEvent(_Record):
    id: Text
    ts: Timestamp
    source: Text
    text: Text
    gold_concept: Text | None


class Scenario(_Record):
    """One CogEval-Bench scenario: the gold graph and the event stream built from it."""

    id: Text
    domain: Text
    description: Text
    start: date
    end: date
    gold: GoldGraph
    events: tuple[ScenarioEvent, ...] = Field(min_length=1)

    @property
    def distractors(self) -> tuple[ScenarioEvent, ...]:
        """Events that belong to no gold concept."""
        return tuple(e for e in self.events if e.gold_concept is None)

    def event(self, event_id: str) -> ScenarioEvent:
        for e in self.events:
            if e.id == event_id:
                return e
        raise KeyError(event_id)

    def concept(self, concept_id: str) -> GoldConcept:
        for c in self.gold.concepts:
            if c.id == concept_id:
                return c
        raise KeyError(concept_id)


def _unique(name: str, items: Iterable[Any], list_name: str, taken: set[str]) -> None:
    for i, item in enumerate(items):
        if item.id in taken:
            raise _fail(name, f'{list_name}[{i}] (id "{item.id}")', "id",
                        f'repeats "{item.id}", already used in this scenario')
        taken.add(item.id)


def _check_refs(name: str, record: str, field: str, refs: Iterable[str], known: set[str],
                what: str) -> None:
    for ref in refs:
        if ref not in known:
            raise _fail(name, record, field, f'refers to unknown {what} "{ref}"')


def _check_scenario(name: str, sc: Scenario) -> None:
    """Cross-reference checks a schema cannot express."""
    g = sc.gold
    events = {e.id: e for e in sc.events}
    if len(events) != len(sc.events):
        _unique(name, sc.events, "events", set())
    concepts: set[str] = set()
    _unique(name, g.concepts, "gold.concepts", concepts)
    parents: set[str] = set()
    _unique(name, g.hierarchy, "gold.hierarchy", set(concepts) | parents)
    parents = {p.id for p in g.hierarchy}
    _unique(name, g.intents, "gold.intents", set())
    _unique(name, g.chains, "gold.chains", set())
    if sc.end < sc.start:
        raise _fail(name, f'scenario "{sc.id}"', "end", "is before start")
    previous: datetime | None = None
    for i, e in enumerate(sc.events):
        rec = f'events[{i}] (id "{e.id}")'
        day = e.ts.astimezone(UTC).date()
        if not sc.start <= day <= sc.end:
            raise _fail(name, rec, "ts", f"falls outside the scenario ({sc.start}..{sc.end})")
        if previous is not None and e.ts < previous:
            raise _fail(name, rec, "ts", "is earlier than the event before it (events must be "
                                         "in time order)")
        previous = e.ts
        if e.gold_concept is not None:
            _check_refs(name, rec, "gold_concept", [e.gold_concept], concepts, "concept")
            if e.id not in sc.concept(e.gold_concept).expected_events:
                raise _fail(name, rec, "gold_concept", f'is "{e.gold_concept}" but that '
                            "concept does not list this event in expected_events")
    for i, c in enumerate(g.concepts):
        rec = f'gold.concepts[{i}] (id "{c.id}")'
        _check_refs(name, rec, "expected_events", c.expected_events, set(events), "event")
        for eid in c.expected_events:
            if events[eid].gold_concept != c.id:
                raise _fail(name, rec, "expected_events", f'lists event "{eid}" whose '
                            f'gold_concept is "{events[eid].gold_concept}"')
    for i, p in enumerate(g.hierarchy):
        _check_refs(name, f'gold.hierarchy[{i}] (id "{p.id}")', "children", p.children,
                    concepts, "concept")
    for i, r in enumerate(g.relations):
        rec = f"gold.relations[{i}]"
        _check_refs(name, rec, "source", [r.source], concepts | parents, "concept")
        _check_refs(name, rec, "target", [r.target], concepts | parents, "concept")
    for i, it in enumerate(g.intents):
        _check_refs(name, f'gold.intents[{i}] (id "{it.id}")', "supporting", it.supporting,
                    concepts, "concept")
    for i, ch in enumerate(g.chains):
        _check_refs(name, f'gold.chains[{i}] (id "{ch.id}")', "events", ch.events, set(events),
                    "event")


def _scenario(path: PathLike | Traversable) -> Scenario:
    name, raw = _load_json(path)
    if not isinstance(raw, dict):
        raise InputError(f"{name}: must be a JSON object (one scenario)")
    scenario = _validate(Scenario, raw, name, None)
    _check_scenario(name, scenario)
    return scenario


#: The packaged scenario sets: the six bundled ones, and the development scenarios written
#: for issue 20, split into a part to tune on and a part only measured, and eight more
#: written in session 37 by four helpers with fresh briefs to fit models on ("train").
COGEVAL_SETS = {"bundled": "cogeval", "tune": "cogeval-tune", "measure": "cogeval-measure",
                "train": "cogeval-train"}


def load_cogeval(path: PathLike | None = None, *, part: str = "bundled") -> list[Scenario]:
    """Load CogEval-Bench scenarios from a ``.json`` file or a directory of them.

    Without a path, the packaged set ``part`` is loaded (:data:`COGEVAL_SETS`; "bundled" is
    the six scenarios). Scenarios come back sorted by file name; scenario ids must be unique
    across the directory.
    """
    files: Sequence[PathLike | Traversable]
    if path is None:
        if part not in COGEVAL_SETS:
            raise InputError(f"unknown cogeval set {part!r}; one of {', '.join(COGEVAL_SETS)}")
        found = [f for f in _packaged("bench", "data", COGEVAL_SETS[part]).iterdir()
                 if f.name.endswith(".json")]
        found.sort(key=lambda f: f.name)
        files = found
        where = f"packaged cogeval data ({part})"
    else:
        p = Path(path)
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        where = str(p)
    if not files:
        raise InputError(f"{where}: no *.json scenario files")
    scenarios = [_scenario(f) for f in files]
    ids = [s.id for s in scenarios]
    for f, s in zip(files, scenarios):
        if ids.count(s.id) > 1:
            raise _fail(str(f), f'scenario "{s.id}"', "id", "is used by another file too")
    return scenarios


# --------------------------------------------------------------------------- collapse probe

class Utterance(_Record):
    speaker: Text
    text: Text


class ClaimUtterance(_Record):
    """An opinion; ``reported`` is True when the speaker relays someone else's (the holder's)."""

    speaker: Text
    holder: Text
    text: Text
    reported: StrictBool


class CollapseQuery(_Record):
    q: Text
    expects: Literal["fact", "claim"]
    holder: Text | None = None


class CollapseItem(_Record):
    """A fact, a claim sharing its vocabulary, an optional rival claim, and probing queries."""

    id: Text
    fact: Utterance
    claim: ClaimUtterance
    counter_claim: ClaimUtterance | None = None
    queries: tuple[CollapseQuery, ...] = Field(min_length=1)

    @property
    def claims(self) -> tuple[ClaimUtterance, ...]:
        return (self.claim,) if self.counter_claim is None else (self.claim, self.counter_claim)


def _check_item(name: str, where: str, item: CollapseItem) -> None:
    for key, claim in (("claim", item.claim), ("counter_claim", item.counter_claim)):
        if claim is not None and claim.reported != (claim.speaker != claim.holder):
            said = "differs from" if claim.reported is False else "equals"
            raise _fail(name, where, f"{key}.reported", f"is {str(claim.reported).lower()} "
                        f"but the speaker {said} the holder")
    if item.counter_claim is not None and item.counter_claim.holder == item.claim.holder:
        raise _fail(name, where, "counter_claim.holder", "must differ from claim.holder")
    holders = {c.holder for c in item.claims}
    for i, query in enumerate(item.queries):
        if query.expects == "claim" and query.holder is None:
            raise _fail(name, where, f"queries[{i}].holder", "is missing (a claim query "
                        "names the holder it expects)")
        if query.expects == "fact" and query.holder is not None:
            raise _fail(name, where, f"queries[{i}].holder", "is set on a fact query")
        if query.holder is not None and query.holder not in holders:
            raise _fail(name, where, f"queries[{i}].holder",
                        f'is "{query.holder}", who holds none of this item\'s claims')


def load_collapse(path: PathLike | None = None) -> list[CollapseItem]:
    """Load the semantic-collapse probe (JSON Lines); the packaged copy without a path."""
    name, rows = _jsonl(_packaged("bench", "data", "collapse.jsonl") if path is None else path,
                        CollapseItem)
    for where, item in rows:
        _check_item(name, where, item)
    return [item for _, item in rows]


# --------------------------------------------------------------------------- LoCoMo

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                     5: "adversarial"}
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_DIA_ID_LOOSE = re.compile(r"D\W*(\d+)\W+(\d+)")  # e.g. "D:11:26" in the published file
_SESSION = re.compile(r"session_(\d+)")
_DATE_TIME = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class LocomoTurn:
    """One dialogue turn. ``text`` carries ``[shares: caption]`` when captions are on."""

    position: int
    session: int
    date_time: str
    ts: datetime
    dia_id: str
    speaker: str
    text: str
    caption: str | None = None


@dataclass(frozen=True)
class LocomoQA:
    """A question with its evidence turns: resolved ids, ids that match no turn, repairs."""

    index: int
    question: str
    answer: str | None
    adversarial_answer: str | None
    category: int
    evidence: tuple[str, ...]
    unresolved: tuple[str, ...] = ()
    repaired: tuple[tuple[str, str], ...] = ()

    @property
    def category_name(self) -> str:
        return LOCOMO_CATEGORIES[self.category]


@dataclass(frozen=True)
class LocomoConversation:
    """A LoCoMo sample: its turns in order, its questions, and data issues found on loading."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: tuple[LocomoTurn, ...]
    qa: tuple[LocomoQA, ...]
    issues: tuple[str, ...] = ()

    def turn(self, dia_id: str) -> LocomoTurn:
        for t in self.turns:
            if t.dia_id == dia_id:
                return t
        raise KeyError(dia_id)

    def questions(self, categories: Iterable[int] = (1, 2, 3, 4)) -> list[LocomoQA]:
        wanted = set(categories)
        return [q for q in self.qa if q.category in wanted]

    @property
    def unresolved_evidence(self) -> int:
        return sum(len(q.unresolved) for q in self.qa)


@dataclass(frozen=True)
class _Sample:
    """Where in a LoCoMo file we are, so that every check can name file, record and field."""

    name: str
    record: str

    def fail(self, field: str, problem: str) -> InputError:
        return _fail(self.name, self.record, field, problem)

    def text(self, value: Any, field: str) -> str:
        if value is None:
            raise self.fail(field, "is missing")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(field, f"must be a string (got {type(value).__name__})")
        if not str(value).strip():
            raise self.fail(field, "must not be blank")
        return str(value)  # some answers are bare numbers, e.g. a year

    def optional(self, value: Any, field: str) -> str | None:
        return None if value is None or value == "" else self.text(value, field)


def _turns(at: _Sample, conv: dict[str, Any], captions: bool,
           issues: list[str]) -> list[LocomoTurn]:
    sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.fullmatch(k)))
    if not sessions:
        raise at.fail("conversation", "has no session_N lists")
    for key in sorted(conv):
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m and f"session_{m.group(1)}" not in conv:
            issues.append(f"conversation.{key} has no session_{m.group(1)}")
    turns: list[LocomoTurn] = []
    seen: set[str] = set()
    last_ts: datetime | None = None
    for number, key in sessions:
        field = f"conversation.{key}"
        stamp = at.text(conv.get(f"{key}_date_time"), f"{field}_date_time")
        try:
            ts = datetime.strptime(stamp.strip(), _DATE_TIME).replace(tzinfo=UTC)
        except ValueError:
            raise at.fail(f"{field}_date_time",
                          f'is not like "1:56 pm on 8 May, 2023" (got "{stamp}")') from None
        if last_ts is not None and ts < last_ts:
            issues.append(f"{field}_date_time is earlier than the session before it")
        last_ts = ts
        if not isinstance(conv[key], list):
            raise at.fail(field, "must be a list of turns")
        for i, raw in enumerate(conv[key]):
            tf = f"{field}[{i}]"
            if not isinstance(raw, dict):
                raise at.fail(tf, "must be an object")
            dia_id = at.text(raw.get("dia_id"), f"{tf}.dia_id")
            speaker = at.text(raw.get("speaker"), f"{tf}.speaker")
            text = at.text(raw.get("text"), f"{tf}.text")
            caption = at.optional(raw.get("blip_caption"), f"{tf}.blip_caption")
            if dia_id in seen:
                raise at.fail(f"{tf}.dia_id", f'repeats "{dia_id}"')
            seen.add(dia_id)
            m = _DIA_ID.fullmatch(dia_id)
            if m is None or int(m.group(1)) != number:
                issues.append(f'{tf}.dia_id "{dia_id}" does not name session {number}')
            if captions and caption:
                text = f"{text} [shares: {caption}]"
            turns.append(LocomoTurn(len(turns), number, stamp, ts, dia_id, speaker, text,
                                    caption))
    return turns


def _evidence(at: _Sample, raw: Any, field: str, ids: set[str],
              issues: list[str]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Split multi-id strings, repair unambiguous typos, and set aside ids that match no turn."""
    if not isinstance(raw, list) or not all(isinstance(e, str) for e in raw):
        raise at.fail(field, "must be a list of dia_id strings")
    found: list[str] = []
    lost: list[str] = []
    fixed: list[tuple[str, str]] = []
    for entry in raw:
        tokens = [t for t in re.split(r"[;,\s]+", entry) if t]
        if len(tokens) > 1:
            issues.append(f'{field}: "{entry}" holds {len(tokens)} ids; split')
        for token in tokens:
            m = _DIA_ID.fullmatch(token) or _DIA_ID_LOOSE.fullmatch(token)
            canonical = f"D{int(m.group(1))}:{int(m.group(2))}" if m else token
            if canonical not in ids:
                lost.append(token)
                issues.append(f'{field}: "{token}" matches no turn')
                continue
            found.append(canonical)
            if canonical != token:
                fixed.append((token, canonical))
                issues.append(f'{field}: "{token}" read as {canonical}')
    return found, lost, fixed


def _qa(at: _Sample, raw: Any, i: int, ids: set[str], issues: list[str]) -> LocomoQA:
    field = f"qa[{i}]"
    if not isinstance(raw, dict):
        raise at.fail(field, "must be an object")
    question = at.text(raw.get("question"), f"{field}.question")
    category = raw.get("category")
    if not isinstance(category, int) or isinstance(category, bool) \
            or category not in LOCOMO_CATEGORIES:
        problem = "is missing" if category is None else f"must be 1-5 (got {category!r})"
        raise at.fail(f"{field}.category", problem)
    answer = at.optional(raw.get("answer"), f"{field}.answer")
    adversarial = at.optional(raw.get("adversarial_answer"), f"{field}.adversarial_answer")
    if answer is None and adversarial is None:
        raise at.fail(f"{field}.answer", "is missing (and so is adversarial_answer)")
    found, lost, fixed = _evidence(at, raw.get("evidence", []), f"{field}.evidence", ids,
                                   issues)
    return LocomoQA(i, question, answer, adversarial, int(category), tuple(found), tuple(lost),
                    tuple(fixed))


def load_locomo(path: PathLike, *, image_captions: bool = True) -> list[LocomoConversation]:
    """Load LoCoMo conversations (``locomo10.json`` format).

    Turns are returned in session order with their session's date-time; with
    ``image_captions`` a turn that shared a photo reads ``"<text> [shares: <caption>]"``.
    Evidence ids are normalized: a string holding several ids is split, an unambiguous typo
    (``D:11:26``) is repaired, and an id that names no turn goes to ``unresolved``. Each such
    case is described in the conversation's ``issues``.
    """
    name, raw = _load_json(path)
    if not isinstance(raw, list):
        raise InputError(f"{name}: must be a JSON list of samples")
    conversations: list[LocomoConversation] = []
    for n, sample in enumerate(raw):
        if not isinstance(sample, dict):
            raise _fail(name, f"sample {n}", None, "must be an object")
        at = _Sample(name, f"sample {n}{_ident(sample, 'sample_id')}")
        sample_id = at.text(sample.get("sample_id"), "sample_id")
        conv = sample.get("conversation")
        if not isinstance(conv, dict):
            raise at.fail("conversation", "is missing" if conv is None else "must be an object")
        speakers = [at.text(conv.get(k), f"conversation.{k}") for k in ("speaker_a", "speaker_b")]
        issues: list[str] = []
        turns = _turns(at, conv, image_captions, issues)
        raw_qa = sample.get("qa")
        if not isinstance(raw_qa, list):
            raise at.fail("qa", "is missing" if raw_qa is None else "must be a list")
        ids = {t.dia_id for t in turns}
        qa = [_qa(at, q, i, ids, issues) for i, q in enumerate(raw_qa)]
        conversations.append(LocomoConversation(sample_id, speakers[0], speakers[1],
                                                tuple(turns), tuple(qa), tuple(issues)))
    return conversations


# --------------------------------------------------------------------------- demo

class DemoEvent(_Record):
    """One event of the demo stream, in the ``enfold ingest`` JSON Lines format."""

    id: Text
    ts: Timestamp
    source: Text
    kind: Literal["chat", "note", "calendar", "email"]
    text: Text


class _DemoConcept(_Record):
    id: Text
    label: Text
    keywords: tuple[Text, ...]
    events: tuple[Text, ...] = Field(min_length=1)


class _DemoParent(_Record):
    label: Text
    children: tuple[Text, ...] = Field(min_length=1)


class _DemoDeadline(_Record):
    id: Text
    event: Text
    expression: Text
    due: date


class _DemoHabit(_Record):
    concept: Text
    events: tuple[Text, ...] = Field(min_length=3)


class _DemoClaim(_Record):
    event: Text
    holder: Text
    predicate: Text
    reported: StrictBool


class _DemoUpdate(_Record):
    holder: Text
    old: Text
    new: Text


class _DemoObligation(_Record):
    id: Text
    event: Text
    due: date


class _DemoCausal(_Record):
    cause: Text
    effect: Text


class _DemoResolution(_Record):
    event: Text
    resolves: Text


class DemoGold(_Record):
    """What a good memory should make of the demo stream (concepts, intents, claims, ...)."""

    concepts: tuple[_DemoConcept, ...] = Field(min_length=1)
    hierarchy: tuple[_DemoParent, ...] = ()
    distractors: tuple[Text, ...] = ()
    deadlines: tuple[_DemoDeadline, ...] = ()
    habits: tuple[_DemoHabit, ...] = ()
    claims: tuple[_DemoClaim, ...] = ()
    updates: tuple[_DemoUpdate, ...] = ()
    obligations: tuple[_DemoObligation, ...] = ()
    causal: tuple[_DemoCausal, ...] = ()
    resolutions: tuple[_DemoResolution, ...] = ()


def _check_demo(name: str, events: list[DemoEvent], gold: DemoGold) -> None:
    order = {e.id: i for i, e in enumerate(events)}
    concepts = {c.id for c in gold.concepts}

    def refs(record: str, field: str, ids: Iterable[str], known: Iterable[str],
             what: str = "event") -> None:
        _check_refs(name, record, field, ids, set(known), what)

    for i, c in enumerate(gold.concepts):
        refs(f'concepts[{i}] (id "{c.id}")', "events", c.events, order)
    for i, p in enumerate(gold.hierarchy):
        refs(f"hierarchy[{i}]", "children", p.children, concepts, "concept")
    refs("distractors", "distractors", gold.distractors, order)
    for i, h in enumerate(gold.habits):
        refs(f"habits[{i}]", "concept", [h.concept], concepts, "concept")
        refs(f"habits[{i}]", "events", h.events, order)
    for key in ("deadlines", "claims", "obligations", "resolutions"):
        for i, entry in enumerate(getattr(gold, key)):
            refs(f"{key}[{i}]", "event", [entry.event], order)
    for i, u in enumerate(gold.updates):
        refs(f"updates[{i}]", "old", [u.old], order)
        refs(f"updates[{i}]", "new", [u.new], order)
    for i, link in enumerate(gold.causal):
        refs(f"causal[{i}]", "cause", [link.cause], order)
        refs(f"causal[{i}]", "effect", [link.effect], order)
        if order[link.cause] > order[link.effect]:
            raise _fail(name, f"causal[{i}]", "effect", "comes before its cause")
    targets = concepts | {o.id for o in gold.obligations} | {d.id for d in gold.deadlines}
    for i, r in enumerate(gold.resolutions):
        refs(f"resolutions[{i}]", "resolves", [r.resolves], targets,
             "concept, obligation or deadline")


def load_demo(events_path: PathLike | None = None,
              gold_path: PathLike | None = None) -> tuple[list[DemoEvent], DemoGold]:
    """Load the demo stream and its gold annotations (the packaged ones by default)."""
    name, rows = _jsonl(_packaged("data", "demo.jsonl") if events_path is None else events_path,
                        DemoEvent)
    events = [e for _, e in rows]
    for (where, e), prev in zip(rows[1:], events):
        if e.ts < prev.ts:
            raise _fail(name, where, "ts", "is earlier than the event before it")
    gname, raw = _load_json(_packaged("data", "demo_gold.json") if gold_path is None
                            else gold_path)
    if not isinstance(raw, dict):
        raise InputError(f"{gname}: must be a JSON object")
    gold = _validate(DemoGold, raw, gname, None)
    _check_demo(gname, events, gold)
    return events, gold
