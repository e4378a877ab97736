"""Hi-ToM (He et al., 2023): nested beliefs, with lies, answered from who saw and who was told.

A Hi-ToM story has one to three chapters. In each, a few agents enter a room, an object is
put in a container, the agents move it in turn and leave one by one; in half the stories the
agents then talk in the waiting room — "Charlotte publicly claimed that the carrot is in the
green_envelope.", "Hannah privately told Charlotte that the carrot is in the blue_container."
— and what they say may be a lie. The question asks for a belief of order 0 to 4: "Where is
the carrot really?", "Where does Jack really think the carrot is?", "Where does Jack think
Hannah thinks William thinks the carrot is?".

enfold answers from records, as :mod:`enfold.bench.tomi` does: :func:`story_records` turns a
story into :class:`Record` values (what happened, in which room, who perceived it — the people
present, or for a communication the people who heard it), and :class:`BeliefTracker` reads
only those records. :mod:`enfold.bench.hitom_graph` rebuilds the records from enfold's graph
(presence as PARTICIPATES edges, communications as claims with holder, addressee and audience)
and calls the same tracker.

Two rule sets (:data:`SEMANTICS`):

``strict`` — the data set's stated assumptions, applied to beliefs of any order. A *chain*
``(a1, …, ak)`` is "a1 thinks a2 thinks … ak thinks the object is in C".

- An **observation** (the object placed, moved, or seen on entering its room) is seen by
  everyone present, and each of them sees the others see it: every chain whose members were
  all present takes its container. A chain with a member who was away keeps its value
  (an agent witnesses everything before it leaves, nothing after).
- A **claim** by ``s`` is heard by everyone (public) or by ``s`` and the addressee (private).
  A chain whose members all heard it changes when its innermost agent ``ak`` trusts ``s`` —
  ``s`` left the object's room later than ``ak`` did (or ``ak`` was never there); the exit
  order is known to all, so everyone knows who trusts whom — or when ``ak`` is ``s`` and
  ``a(k-1)`` trusts ``s`` (who trusts a speaker takes the claim for the speaker's belief).
  What ``s`` says never changes ``s``'s own belief.

``generator`` — the update rules of the data set's public generator (``dynamic_actions.py``
of ``ying-hui-he/Hi-ToM_dataset``), which the gold answers follow where they depart from the
stated assumptions:

- entering and placement set every chain of distinct people present, as above; but a **move**
  sets only the chains whose members appear in the order of the list *witnesses who stay, by
  the order they entered, then the mover* (the generator builds them with
  ``itertools.combinations`` over that list): the mover never updates what it thinks the
  others saw, and a later leaver never updates what it thinks an earlier leaver saw;
- a **public claim** makes every agent that trusts the speaker believe it and think the speaker
  believes it, and the speaker think *every* listener believes it; a **private claim** does
  the same for a trusting addressee, and the speaker always thinks the addressee believes it;
  no other chain changes (nothing of order 3 or 4, and no third party's view of a listener).

Every answer comes with its operator path: the records that set the asked chain, in order.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise, permutations, product
from pathlib import Path
from typing import Any, Literal

from enfold.errors import InputError

__all__ = ["MAX_ORDER", "SEMANTICS", "Answer", "BeliefTracker", "Item", "Record", "Rules",
           "duplicate_conflicts", "is_hitom", "load_hitom", "parse_claim_content",
           "parse_question", "score", "story_key", "story_lines", "story_records"]

MAX_ORDER = 4

# --------------------------------------------------------------------------- data set


@dataclass(frozen=True)
class Item:
    """One Hi-ToM question: its story, the gold answer and the labels it is reported by."""

    sample_id: int
    story: str
    question: str
    answer: str
    choices: tuple[str, ...]
    order: int
    deception: bool
    length: int
    prompting: str


_REQUIRED = ("story", "question", "answer", "question_order", "deception", "story_length")
_CHOICE = re.compile(r"(?:^|,\s*)[A-Z]\.\s*([^,]+)")


def is_hitom(path: Path) -> bool:
    """Whether ``path`` is a Hi-ToM JSON file: ``{"data": [{"story", "question", ...}]}``.

    A file whose content opens a JSON object and that is named ``*.json`` or names the data
    set's fields near its start; :func:`load_hitom` then reports what is wrong with it.
    """
    if not path.is_file():
        return False
    try:
        with path.open("rb") as fp:
            head = fp.read(4096).lstrip()
    except OSError:
        return False
    if not head.startswith(b"{"):
        return False
    return path.suffix.lower() == ".json" or (b'"data"' in head and b'"story"' in head)


def load_hitom(path: str | Path) -> list[Item]:
    """Read a Hi-ToM JSON file; any malformed item raises :class:`InputError`."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a JSON file ({exc})") from None
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, list):
        raise InputError(f'{path}: expected {{"data": [items]}}')
    items = []
    for n, obj in enumerate(data):
        where = f"{path}: item {n}"
        if not isinstance(obj, dict):
            raise InputError(f"{where}: not an object")
        missing = [k for k in _REQUIRED if k not in obj]
        if missing:
            raise InputError(f"{where}: missing {', '.join(missing)}")
        try:
            order, length = int(obj["question_order"]), int(obj["story_length"])
        except (TypeError, ValueError):
            raise InputError(f"{where}: question_order and story_length must be "
                             "integers") from None
        if not 0 <= order <= MAX_ORDER:
            raise InputError(f"{where}: question_order {order} is not 0..{MAX_ORDER}")
        deception = obj["deception"]
        if isinstance(deception, str):
            deception = deception.strip().lower() == "true"
        items.append(Item(
            sample_id=int(obj.get("sample_id", n)), story=str(obj["story"]),
            question=str(obj["question"]).strip(), answer=str(obj["answer"]).strip(),
            choices=tuple(c.strip() for c in _CHOICE.findall(str(obj.get("choices") or ""))),
            order=order, deception=bool(deception), length=length,
            prompting=str(obj.get("prompting_type") or "")))
    return items


# --------------------------------------------------------------------------- grammar
_NAME = r"[A-Z][\w'-]*"
_T = r"[\w-]+"
_LINE = re.compile(r"^\s*(\d+)\s+(.*?)\s*$")
_SENTENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("enter", re.compile(rf"^(?P<names>{_NAME}(?:, {_NAME})*(?:,? and {_NAME})?) entered the "
                         rf"(?P<room>{_T})\.?$")),
    ("exit", re.compile(rf"^(?P<actor>{_NAME}) (?:exited|left|went out of) the (?P<room>{_T})"
                        r"(?: and stayed in the [\w-]+)?\.?$")),
    ("place", re.compile(rf"^The (?P<obj>{_T}) (?:is|are) in the (?P<container>{_T})\.?$")),
    ("move", re.compile(rf"^(?P<actor>{_NAME}) moved the (?P<obj>{_T}) to the "
                        rf"(?P<container>{_T})\.?$")),
    ("stay", re.compile(rf"^(?P<actor>{_NAME}) made no movements and stayed in the "
                        rf"(?P<room>{_T})\b.*$")),
    ("claim", re.compile(rf"^(?P<actor>{_NAME}) (?P<audience>publicly) claimed that (?:the )?"
                         rf"(?P<obj>{_T}) (?:is|are) in the (?P<container>{_T})\.?$")),
    ("claim", re.compile(rf"^(?P<actor>{_NAME}) (?P<audience>privately) told "
                         rf"(?P<addressee>{_NAME}) that (?:the )?(?P<obj>{_T}) (?:is|are) in "
                         rf"the (?P<container>{_T})\.?$")),
    ("aside", re.compile(rf"^(?P<actor>{_NAME}) (?:(?:likes|dislikes|loves|hates) the {_T}"
                         r"|saw an? [\w-]+|lost (?:his|her|their) [\w-]+)\.?$")),
)
_CONTENT = re.compile(rf"^(?:the )?(?P<obj>{_T}) (?:is|are) in the (?P<container>{_T})\.?$",
                      re.IGNORECASE)
_QUESTIONS = (
    re.compile(rf"^Where is the (?P<obj>{_T}) really\?$"),
    re.compile(rf"^Where does (?P<a1>{_NAME}) really think the (?P<obj>{_T}) is\?$"),
    re.compile(rf"^Where does (?P<a1>{_NAME}) think (?P<rest>(?:{_NAME} thinks )+)the "
               rf"(?P<obj>{_T}) is\?$"),
)


def parse_question(text: str) -> tuple[tuple[str, ...], str]:
    """``(chain, object)`` of a Hi-ToM question; the chain is empty for "really" (order 0)."""
    text = text.strip()
    for pattern in _QUESTIONS:
        m = pattern.match(text)
        if m is None:
            continue
        groups = m.groupdict()
        chain = [groups["a1"]] if groups.get("a1") else []
        chain += re.findall(rf"({_NAME}) thinks", groups.get("rest") or "")
        return tuple(chain), groups["obj"]
    raise InputError(f"not a Hi-ToM question: {text!r}")


def parse_claim_content(text: str) -> tuple[str, str] | None:
    """``(object, container)`` of "the O is in the C", the content of a Hi-ToM claim."""
    m = _CONTENT.match(text.strip())
    return (m["obj"], m["container"]) if m else None


def story_lines(story: str) -> tuple[tuple[int, str], ...]:
    """The numbered lines of a story as ``(number, text)``; the prompt header, separators
    and blank lines are not part of it."""
    out = []
    for raw in story.splitlines():
        m = _LINE.match(raw)
        if m:
            out.append((int(m[1]), m[2]))
    return tuple(out)


def story_key(item: Item) -> str:
    """The story's numbered lines, one per line: items with the same key share a story."""
    return "\n".join(f"{n} {t}" for n, t in story_lines(item.story))


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Record:
    """What happened at one story line and who perceived it.

    ``action`` is ``enter``, ``exit``, ``place`` ("The O is in the C."), ``move``, ``stay``
    ("X made no movements and stayed in the R ..."), ``claim`` (a communication) or
    ``aside`` (a distractor). ``agents`` are the people entering, in the order named, or the
    actor (the speaker of a claim). ``witnesses`` are the people present — for a claim, the
    people who heard it — what the graph stores as PARTICIPATES edges. A claim has an
    ``audience`` ("public" or "private"), the ``addressee`` of a private one, and ``obj`` and
    ``container`` for what it asserts.
    """

    index: int
    line: int
    text: str
    action: str
    agents: tuple[str, ...] = ()
    obj: str | None = None
    container: str | None = None
    room: str | None = None
    witnesses: frozenset[str] = frozenset()
    addressee: str | None = None
    audience: str | None = None

    @property
    def actor(self) -> str | None:
        return self.agents[0] if len(self.agents) == 1 else None


def _match(text: str) -> tuple[str, re.Match[str]] | None:
    for action, pattern in _SENTENCES:
        m = pattern.match(text)
        if m:
            return action, m
    return None


def story_records(lines: Sequence[tuple[int, str]], *, source: str = "story") -> list[Record]:
    """The story as records, one per line, with the people who perceived each.

    Entering puts people in a room (and out of any other), leaving takes them out; "stayed in
    the R" places its actor there. A placement happens in the room most recently entered by
    someone still in it, a move in the mover's room; their witnesses are the people in that
    room. A public claim is heard by everyone the story has named so far, a private one by the
    speaker and the addressee. An unknown sentence raises :class:`InputError`.
    """
    room_of: dict[str, str] = {}
    entered: list[str] = []  # rooms by their latest entrance
    people: dict[str, None] = {}

    def present(room: str | None) -> frozenset[str]:
        return frozenset(p for p, r in room_of.items() if r == room) if room else frozenset()

    def scene() -> str | None:
        occupied = set(room_of.values())
        return next((r for r in reversed(entered) if r in occupied),
                    entered[-1] if entered else None)

    records: list[Record] = []
    for index, (number, text) in enumerate(lines):
        parsed = _match(text)
        if parsed is None:
            raise InputError(f"{source}: line {number}: not a Hi-ToM sentence: {text!r}")
        action, m = parsed
        g = m.groupdict()
        actor = g.get("actor")
        if actor:
            people.setdefault(actor, None)
        if action == "enter":
            names = tuple(re.split(r",\s*(?:and\s+)?|,?\s+and\s+", g["names"]))
            room = g["room"]
            for name in names:
                people.setdefault(name, None)
                room_of[name] = room
            if room in entered:
                entered.remove(room)
            entered.append(room)
            records.append(Record(index, number, text, action, names, room=room,
                                  witnesses=present(room)))
            continue
        assert actor is not None or action == "place"
        agents = (actor,) if actor else ()
        if action == "exit":
            room = g["room"]
            witnesses = present(room) | {str(actor)}
            room_of.pop(str(actor), None)
            records.append(Record(index, number, text, action, agents, room=room,
                                  witnesses=frozenset(witnesses)))
        elif action == "stay":
            room_of[str(actor)] = g["room"]
            records.append(Record(index, number, text, action, agents, room=g["room"],
                                  witnesses=present(g["room"])))
        elif action == "place":
            room = scene()
            records.append(Record(index, number, text, action, (), g["obj"], g["container"],
                                  room, present(room)))
        elif action == "move":
            room = room_of.get(str(actor)) or scene()
            records.append(Record(index, number, text, action, agents, g["obj"],
                                  g["container"], room, present(room) | {str(actor)}))
        elif action == "claim":
            addressee = g.get("addressee")
            audience = "private" if addressee else "public"
            if addressee:
                people.setdefault(addressee, None)
                heard = frozenset({str(actor), addressee})
            else:
                heard = frozenset(people)
            records.append(Record(index, number, text, action, agents, g["obj"],
                                  g["container"], room_of.get(str(actor)), heard, addressee,
                                  audience))
        else:
            room = room_of.get(str(actor))
            records.append(Record(index, number, text, action, agents, room=room,
                                  witnesses=present(room) | {str(actor)}))
    return records


# --------------------------------------------------------------------------- beliefs
@dataclass(frozen=True)
class Rules:
    """How observations and claims update nested beliefs (see the module docstring)."""

    observation: Literal["witnessed", "generator"] = "witnessed"
    claims: Literal["trust", "generator"] = "trust"


SEMANTICS: Mapping[str, Rules] = {
    "strict": Rules("witnessed", "trust"),
    "generator": Rules("generator", "generator"),
}

Chain = tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    """A tracker's answer and the operator path that produced it."""

    container: str
    path: tuple[str, ...]


def _chains(people: Sequence[str], max_order: int) -> Iterator[Chain]:
    """Every chain of 1..max_order people with no one twice in a row."""
    for k in range(1, max_order + 1):
        for chain in product(people, repeat=k):
            if all(a != b for a, b in pairwise(chain)):
                yield chain


def _ordered_chains(people: Sequence[str], max_order: int) -> Iterator[Chain]:
    """Chains of distinct people in the order of ``people`` (``itertools.combinations``)."""
    for k in range(1, max_order + 1):
        yield from combinations(people, k)


def _distinct_chains(people: Sequence[str], max_order: int) -> Iterator[Chain]:
    """Chains of distinct people in any order."""
    for k in range(1, max_order + 1):
        yield from permutations(people, k)


def _collapse(chain: Iterable[str]) -> Chain:
    """"X thinks X thinks" is what X thinks: drop a person repeated in a row."""
    out: list[str] = []
    for person in chain:
        if not out or out[-1] != person:
            out.append(person)
    return tuple(out)


@dataclass
class BeliefTracker:
    """Nested beliefs about objects' containers, updated record by record.

    Feed it a story's records with :meth:`run` (or one at a time with :meth:`step`), then ask
    :meth:`answer`. It reads nothing but the records.
    """

    rules: Rules = field(default_factory=Rules)
    max_order: int = MAX_ORDER
    beliefs: dict[tuple[Chain, str], tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # object -> its container now
    first: dict[str, str] = field(default_factory=dict)  # object -> its first container
    seen_at: dict[str, tuple[str, ...]] = field(default_factory=dict)  # object -> reality path
    _room_of_container: dict[str, str] = field(default_factory=dict)
    _room_of: dict[str, str] = field(default_factory=dict)
    _left: dict[tuple[str, str], int] = field(default_factory=dict)  # (person, room) -> index
    _entry: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    _index: int = 0

    def run(self, records: Iterable[Record]) -> BeliefTracker:
        for record in records:
            self.step(record)
        return self

    # ------------------------------------------------------------------ updates
    def step(self, r: Record) -> None:
        self._index = r.index
        if r.action == "enter" and r.room is not None:
            for pos, name in enumerate(r.agents):
                self._room_of[name] = r.room
                self._entry[(name, r.room)] = (r.index, pos)
            for obj, container in list(self.where.items()):
                if self._room_of_container.get(container) == r.room:
                    entering = r.agents if self.rules.observation == "generator" else ()
                    self._observe(r, obj, container, r.witnesses, entering)
        elif r.action == "exit" and r.actor is not None:
            room = r.room or self._room_of.get(r.actor)
            if room is not None:
                self._left[(r.actor, room)] = r.index
            self._room_of.pop(r.actor, None)
        elif r.action == "stay" and r.actor is not None and r.room is not None:
            self._room_of.setdefault(r.actor, r.room)
        elif r.action in ("place", "move") and r.obj and r.container:
            old = self.where.get(r.obj)
            if r.room is not None:
                self._room_of_container.setdefault(r.container, r.room)
                if old is not None:
                    self._room_of_container.setdefault(old, r.room)
            self.where[r.obj] = r.container
            self.first.setdefault(r.obj, r.container)
            self.seen_at[r.obj] = (*self.seen_at.get(r.obj, ()), f"L{r.line} {r.text}")
            self._observe(r, r.obj, r.container, r.witnesses, ())
        elif r.action == "claim" and r.actor and r.obj and r.container:
            if self.rules.claims == "generator":
                self._claim_generator(r, r.actor, r.obj, r.container)
            else:
                self._claim_trust(r, r.actor, r.obj, r.container)

    def _set(self, chain: Chain, obj: str, container: str, step: str) -> None:
        old = self.beliefs.get((chain, obj))
        self.beliefs[(chain, obj)] = (container, (*(old[1] if old else ()), step))

    def _observe(self, r: Record, obj: str, container: str, witnesses: frozenset[str],
                 entering: Sequence[str]) -> None:
        present = sorted(witnesses)
        who = ", ".join(present)
        step = f"L{r.line} saw ({who}): {r.text}"
        if self.rules.observation == "witnessed":
            chains: Iterable[Chain] = _chains(present, self.max_order)
        elif r.action == "move" and r.actor is not None:
            room = r.room or ""
            stay = sorted((p for p in present if p != r.actor),
                          key=lambda p: (self._entry.get((p, room), (1 << 30, 0)), p))
            chains = _ordered_chains([*stay, r.actor], self.max_order)
        else:
            chains = _distinct_chains(list(entering) or present, self.max_order)
        for chain in chains:
            self._set(chain, obj, container, step)

    def _last_in_room(self, person: str, room: str | None) -> int:
        """When ``person`` was last in ``room`` (now, if still there; -1 if never)."""
        if room is None:
            return -1
        if self._room_of.get(person) == room:
            return self._index
        return self._left.get((person, room), -1)

    def trusts(self, listener: str, speaker: str, obj: str) -> bool:
        """Whether ``listener`` trusts ``speaker`` about ``obj``: the speaker left the
        object's room later than the listener did (or the listener was never there)."""
        room = self._room_of_container.get(self.where.get(obj, ""))
        return self._last_in_room(speaker, room) > self._last_in_room(listener, room)

    def _trust_note(self, listener: str, speaker: str, obj: str) -> str:
        room = self._room_of_container.get(self.where.get(obj, ""), "the room")
        return f"{listener} trusts {speaker} (left the {room} later)"

    def _claim_trust(self, r: Record, speaker: str, obj: str, container: str) -> None:
        heard = sorted(r.witnesses | {speaker})
        notes: dict[str, str] = {}
        for chain in _chains(heard, self.max_order):
            inner = chain[-1]
            if inner != speaker:
                truster = inner
            elif len(chain) >= 2:
                truster = chain[-2]
            else:
                continue  # what a speaker says does not change its own belief
            if not self.trusts(truster, speaker, obj):
                continue
            if truster not in notes:
                notes[truster] = (f"L{r.line} heard ({r.audience}): {r.text}; "
                                  f"{self._trust_note(truster, speaker, obj)}")
            self._set(chain, obj, container, notes[truster])

    def _claim_generator(self, r: Record, speaker: str, obj: str, container: str) -> None:
        step = f"L{r.line} heard ({r.audience}): {r.text}"
        if r.audience == "private" and r.addressee:
            listeners = [r.addressee]
            believers = [r.addressee] if self.trusts(r.addressee, speaker, obj) else []
        else:
            listeners = sorted(r.witnesses)
            believers = [p for p in listeners if p != speaker and self.trusts(p, speaker, obj)]
        for b in believers:
            note = f"{step}; {self._trust_note(b, speaker, obj)}"
            self._set((b,), obj, container, note)
            self._set((b, speaker), obj, container, note)
        for listener in listeners:
            if listener != speaker:
                self._set((speaker, listener), obj, container,
                          f"{step}; the speaker takes {listener} to believe it")

    # ------------------------------------------------------------------ answers
    def answer(self, chain: Sequence[str], obj: str) -> Answer:
        """Where ``chain`` (empty: reality) thinks ``obj`` is, with the operator path.

        A chain no record reached falls back on its holder's own view (the chain without its
        innermost person), and at last on the object's first container. An object no record
        places raises :class:`InputError`.
        """
        if obj not in self.where:
            raise InputError(f"no record places the {obj}")
        if not chain:
            return Answer(self.where[obj], (*self.seen_at.get(obj, ()),
                                            f"reality: {self.where[obj]}"))
        asked = _collapse(chain)[: self.max_order]
        probe = asked
        fallback: list[str] = []
        while probe:
            found = self.beliefs.get((probe, obj))
            if found is not None:
                label = " > ".join(asked)
                return Answer(found[0], (*found[1], *fallback,
                                         f"belief of {label}: {found[0]}"))
            fallback.append(f"no record reaches {' > '.join(probe)}; "
                            f"{probe[0] if len(probe) > 1 else 'default'} projects")
            probe = probe[:-1]
        return Answer(self.first[obj], (*fallback, f"first container: {self.first[obj]}"))


# --------------------------------------------------------------------------- scoring
def _rates(right: Counter[str], total: Counter[str]) -> dict[str, float]:
    return {k: round(right[k] / total[k], 4) for k in sorted(total)}


def score(items: Sequence[Item], records: Mapping[str, Sequence[Record]],
          rules: Rules) -> dict[str, Any]:
    """Accuracy of one rule set over ``items``, answering each from its story's records.

    ``records`` maps :func:`story_key` to the records of that story. Returns ``{"accuracy",
    "by_order", "by_deception", "by_length", "by_prompting", "n", "wrong"}``; ``wrong`` lists
    the sample ids answered wrongly.
    """
    trackers: dict[str, BeliefTracker] = {}
    right: dict[str, Counter[str]] = defaultdict(Counter)
    total: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[int] = []
    for item in items:
        key = story_key(item)
        if key not in trackers:
            trackers[key] = BeliefTracker(rules).run(records[key])
        chain, obj = parse_question(item.question)
        ok = trackers[key].answer(chain, obj).container == item.answer
        labels = {"by_order": str(item.order), "by_deception": str(item.deception).lower(),
                  "by_length": str(item.length), "by_prompting": item.prompting or "-"}
        for dim, label in labels.items():
            total[dim][label] += 1
            right[dim][label] += ok
        if not ok:
            wrong.append(item.sample_id)
    n = len(items)
    out: dict[str, Any] = {"accuracy": round((n - len(wrong)) / n, 4) if n else None}
    for dim in ("by_order", "by_deception", "by_length", "by_prompting"):
        out[dim] = _rates(right[dim], total[dim])
    out["n"] = n
    out["wrong"] = wrong
    return out


def duplicate_conflicts(items: Sequence[Item]) -> dict[str, Any]:
    """Questions asked twice of the same story with different gold answers.

    Hi-ToM's file holds each story and question once per prompting style; where the two
    copies disagree, no tracker that answers a question the same way twice can get both.
    Returns the number of such pairs and the accuracy ceiling they leave, overall and by order.
    """
    groups: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for item in items:
        groups[(story_key(item), item.question)].append(item)
    lost = Counter[str]()
    total = Counter(str(i.order) for i in items)
    pairs = 0
    for copies in groups.values():
        answers = Counter(i.answer for i in copies)
        if len(answers) > 1:
            pairs += 1
            lost[str(copies[0].order)] += len(copies) - answers.most_common(1)[0][1]
    n = len(items)
    return {"pairs": pairs, "questions_in_conflict": sum(
                len(c) for c in groups.values() if len({i.answer for i in c}) > 1),
            "ceiling": round((n - sum(lost.values())) / n, 4) if n else None,
            "ceiling_by_order": {k: round((total[k] - lost[k]) / total[k], 4)
                                 for k in sorted(total)}}
