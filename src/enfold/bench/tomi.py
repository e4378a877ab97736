"""ToMi (Le et al., 2019): theory-of-mind questions answered from participation records.

A ToMi story is a handful of bAbI-format sentences ("Ella entered the garage.", "The spinach
is in the green_crate.", "Avery moved the spinach to the green_treasure_chest.") followed
by one question of four kinds:

==============  =====================================================  =====================
kind            template                                               answer
==============  =====================================================  =====================
memory          Where was the O at the beginning?                      first container
reality         Where is the O really?                                 last container
first_order     Where will X look for the O?                           X's belief
second_order    Where does X think that Y searches for the O?          X's belief about Y's
==============  =====================================================  =====================

enfold answers them the way the product does: from *who was present* at each event — the
PARTICIPATES edges of its graph — not from the text. :func:`story_events` turns a story into
:class:`WitnessedEvent` records (the people in the room at that moment are the witnesses),
and :func:`answer` reads only those records, so the product can rebuild them from its graph
and call the same function.

Belief semantics (``semantics="strict"``): an *observation* of the object is an event that
places or moves it, or someone entering (or being in) the room where it lies; everyone
present witnesses it. X believes what X last observed; X thinks Y believes what the last
observation witnessed by both showed (each saw the other see it).

ToMi's generator differs on one point, and ``semantics="tomi"`` (the default, because the
gold labels follow it) reproduces it: every *later entrance* into the object's room — any
entrance other than X's and Y's first one, by anyone, watched or not — resets X's belief
about Y's belief to where the object really is. This is what makes the classic second-order
false belief (Y leaves, X moves the object and leaves, Y comes back) a "no_tom" question
whose gold answer is the true location. On ``fb_all_val`` strict semantics scores 0.920
(second-order questions 0.759) and ToMi semantics 1.000; the first-order, memory and reality
answers are the same under both.

The ``.trace`` file beside a ToMi ``.txt`` has one line per question: the story's actions,
then the question type (``first_order_1_tom``, ``second_order_0_no_tom``, ``memory``,
``reality``, …) and the story type (``true_belief``, ``false_belief``,
``second_order_false_belief``). :func:`evaluate` reports accuracy by that question type.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from enfold.errors import InputError

Semantics = Literal["tomi", "strict"]

# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Sentence:
    """One story line: its line in the file, its bAbI number and its text."""

    line: int
    number: int
    text: str


@dataclass(frozen=True)
class Question:
    """A question line, with its gold answer and (when a .trace is present) its labels."""

    line: int
    number: int
    text: str
    answer: str
    supporting: tuple[int, ...]
    position: int  # how many sentences of the story precede it
    kind: str  # memory | reality | first_order | second_order (from the text)
    qtype: str  # the trace's question type, or ``kind`` without a trace
    story_type: str = ""  # the trace's story type
    actions: tuple[str, ...] = ()  # the trace's story actions


@dataclass(frozen=True)
class Story:
    """A bAbI story: numbered sentences and the questions asked along the way."""

    source: str
    line: int
    sentences: tuple[Sentence, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class WitnessedEvent:
    """What happened at one sentence and who was there to see it.

    ``action`` is one of ``enter``, ``exit``, ``locate`` ("X is in the Y."), ``place``
    ("The O is in the C."), ``move`` and ``opinion`` ("X likes the O", a distractor).
    ``location`` is the room the event happened in (``None`` when the story never says);
    ``witnesses`` are the people present there — what the graph stores as PARTICIPATES
    edges from people to the event.
    """

    index: int
    text: str
    actor: str | None
    action: str
    obj: str | None
    container: str | None
    location: str | None
    witnesses: frozenset[str]


@dataclass(frozen=True)
class BeliefQuery:
    """A parsed question: its kind, the object, and the one or two people it is about."""

    kind: str
    obj: str
    agent: str | None = None
    other: str | None = None


# --------------------------------------------------------------------------- grammar
_NAME = r"(?P<actor>[A-Z][\w-]*)"
_THING = r"(?P<{}>[\w-]+)"
_SENTENCES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("place", re.compile(rf"^The {_THING.format('obj')} (?:is|are) in the "
                         rf"{_THING.format('container')}\.?$")),
    ("enter", re.compile(rf"^{_NAME} entered the {_THING.format('place')}\.?$")),
    ("exit", re.compile(rf"^{_NAME} exited the {_THING.format('place')}\.?$")),
    ("locate", re.compile(rf"^{_NAME} (?:is|was) in the {_THING.format('place')}\.?$")),
    ("move", re.compile(rf"^{_NAME} moved the {_THING.format('obj')} to the "
                        rf"{_THING.format('container')}\.?$")),
    ("opinion", re.compile(rf"^{_NAME} (?:likes|loves|hates|dislikes) the "
                           rf"{_THING.format('obj')}\.?$")),
)
_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("memory", re.compile(r"^Where was the (?P<obj>[\w-]+) at the beginning\?$")),
    ("reality", re.compile(r"^Where is the (?P<obj>[\w-]+) really\?$")),
    ("first_order", re.compile(r"^Where will (?P<agent>[\w-]+) look for the (?P<obj>[\w-]+)\?$")),
    ("second_order", re.compile(r"^Where does (?P<agent>[\w-]+) think that (?P<other>[\w-]+) "
                                r"searches for the (?P<obj>[\w-]+)\?$")),
)


def _match_sentence(text: str) -> tuple[str, re.Match[str]] | None:
    for action, pattern in _SENTENCES:
        m = pattern.match(text)
        if m:
            return action, m
    return None


def parse_question(text: str) -> BeliefQuery:
    """Parse a ToMi question into a :class:`BeliefQuery`; unknown forms raise InputError."""
    for kind, pattern in _QUESTIONS:
        m = pattern.match(text.strip())
        if m:
            groups = m.groupdict()
            return BeliefQuery(kind, groups["obj"], groups.get("agent"), groups.get("other"))
    raise InputError(f"not a ToMi question: {text!r}")


# --------------------------------------------------------------------------- parsing
_LINE = re.compile(r"^(?P<number>\d+) (?P<body>.*)$")


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _read_trace(path: Path) -> list[tuple[tuple[str, ...], str, str]]:
    rows = []
    for lineno, raw in enumerate(_read_lines(path), start=1):
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.split(",")]
        if len(fields) < 2 or not all(fields):
            raise InputError(f"{path}:{lineno}: expected 'actions…,question_type,story_type', "
                             f"got {raw!r}")
        rows.append((tuple(fields[:-2]), fields[-2], fields[-1]))
    return rows


def parse_tomi(txt_path: str | Path, trace_path: str | Path | None = None) -> list[Story]:
    """Read a ToMi ``.txt`` file (bAbI format) and label its questions from the ``.trace``.

    Lines are ``N text`` (a sentence) or ``N question<TAB>answer<TAB>supporting ids`` (a
    question); N restarts at 1 for each new story and otherwise increases by one. Every
    sentence and question must match a known ToMi template. ``trace_path`` defaults to the
    ``.trace`` file beside ``txt_path``; when that does not exist, question types are the
    kinds parsed from the text. Any malformed line raises :class:`InputError` naming the
    file and line, as does a trace whose line count differs from the number of questions.
    """
    path = Path(txt_path)
    stories: list[Story] = []
    sentences: list[Sentence] = []
    questions: list[Question] = []
    start = 0
    expected = 1

    def close() -> None:
        if sentences or questions:
            stories.append(Story(str(path), start, tuple(sentences), tuple(questions)))

    for lineno, raw in enumerate(_read_lines(path), start=1):
        if not raw.strip():
            continue
        m = _LINE.match(raw)
        if m is None:
            raise InputError(f"{path}:{lineno}: expected 'N text', got {raw!r}")
        number, body = int(m["number"]), m["body"]
        where = f"{path}:{lineno}"
        if number == 1:
            close()
            sentences, questions, start = [], [], lineno
        elif number != expected:
            raise InputError(f"{where}: expected line number {expected}, got {number}")
        expected = number + 1
        if "\t" in body:
            questions.append(_parse_question_line(body, where, lineno, number, len(sentences)))
        else:
            text = body.strip()
            if _match_sentence(text) is None:
                raise InputError(f"{where}: not a ToMi sentence: {text!r}")
            sentences.append(Sentence(lineno, number, text))
    close()

    trace = Path(trace_path) if trace_path is not None else path.with_suffix(".trace")
    if trace_path is not None or trace.exists():
        stories = _apply_trace(stories, trace)
    return stories


def _parse_question_line(body: str, where: str, lineno: int, number: int, position: int
                         ) -> Question:
    parts = body.split("\t")
    if len(parts) < 2 or not parts[1].strip():
        raise InputError(f"{where}: a question needs '<question>\\t<answer>'")
    text, gold = parts[0].strip(), parts[1].strip()
    try:
        supporting = tuple(int(x) for x in parts[2].split()) if len(parts) > 2 else ()
    except ValueError:
        raise InputError(f"{where}: supporting fact ids must be integers: "
                         f"{parts[2]!r}") from None
    try:
        kind = parse_question(text).kind
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return Question(lineno, number, text, gold, supporting, position, kind, kind)


def _apply_trace(stories: list[Story], trace: Path) -> list[Story]:
    rows = _read_trace(trace)
    n_questions = sum(len(s.questions) for s in stories)
    if len(rows) != n_questions:
        raise InputError(f"{trace}: {len(rows)} trace lines but {n_questions} questions "
                         f"in {stories[0].source if stories else 'the story file'}")
    out: list[Story] = []
    i = 0
    for story in stories:
        labelled = []
        for q in story.questions:
            actions, qtype, story_type = rows[i]
            i += 1
            labelled.append(Question(q.line, q.number, q.text, q.answer, q.supporting,
                                     q.position, q.kind, qtype, story_type, actions))
        out.append(Story(story.source, story.line, story.sentences, tuple(labelled)))
    return out


# --------------------------------------------------------------------------- records
def _container_rooms(sentences: Sequence[Sentence]) -> dict[str, str]:
    """Which room each container is in, learnt from moves by someone whose room is known.

    "The O is in the C." does not say where C is; a later "X moved the O to the D." does
    (X's room holds both O's old container and D). Containers do not move.
    """
    room_of: dict[str, str] = {}
    holder: dict[str, str] = {}  # object -> container
    rooms: dict[str, str] = {}
    for s in sentences:
        parsed = _match_sentence(s.text)
        if parsed is None:
            continue
        action, m = parsed
        if action in ("enter", "locate"):
            room_of[m["actor"]] = m["place"]
        elif action == "exit":
            room_of.pop(m["actor"], None)
        elif action == "place":
            holder[m["obj"]] = m["container"]
        elif action == "move":
            room = room_of.get(m["actor"])
            if room is not None:
                rooms.setdefault(m["container"], room)
                if m["obj"] in holder:
                    rooms.setdefault(holder[m["obj"]], room)
            holder[m["obj"]] = m["container"]
    return rooms


def story_events(story: Story) -> list[WitnessedEvent]:
    """The story as participation records: one :class:`WitnessedEvent` per sentence.

    People are tracked room by room: entering (or "X is in the Y") puts X in Y and out of
    any other room, exiting takes X out. The witnesses of an event are the people in its
    room at that moment — for an exit, including the one leaving; for a move, always the
    mover. A placement happens in its container's room (see :func:`_container_rooms`),
    or, when no move reveals it, in the room most recently entered by someone still there.
    """
    crooms = _container_rooms(story.sentences)
    room_of: dict[str, str] = {}
    last_entered: list[str] = []  # rooms in order of their latest entrance

    def present(room: str | None) -> frozenset[str]:
        return frozenset(p for p, r in room_of.items() if r == room) if room else frozenset()

    def scene() -> str | None:
        occupied = set(room_of.values())
        for room in reversed(last_entered):
            if room in occupied:
                return room
        return last_entered[-1] if last_entered else None

    events: list[WitnessedEvent] = []
    for index, s in enumerate(story.sentences):
        parsed = _match_sentence(s.text)
        if parsed is None:
            raise InputError(f"{story.source}:{s.line}: not a ToMi sentence: {s.text!r}")
        action, m = parsed
        groups = m.groupdict()
        actor, obj, container = groups.get("actor"), groups.get("obj"), groups.get("container")
        location: str | None
        if action in ("enter", "locate"):
            assert actor is not None
            location = groups["place"]
            room_of[actor] = location
            if location in last_entered:
                last_entered.remove(location)
            last_entered.append(location)
            witnesses = present(location)
        elif action == "exit":
            assert actor is not None
            location = groups["place"]
            witnesses = present(location) | {actor}
            room_of.pop(actor, None)
        elif action == "place":
            assert container is not None
            location = crooms.get(container) or scene()
            witnesses = present(location)
        elif action == "move":
            assert actor is not None and container is not None
            location = room_of.get(actor) or crooms.get(container) or scene()
            witnesses = present(location) | {actor}
        else:  # opinion: a distractor, witnessed by whoever shares the room
            assert actor is not None
            location = room_of.get(actor)
            witnesses = present(location) | {actor}
        events.append(WitnessedEvent(index, s.text, actor, action, obj, container, location,
                                     witnesses))
    return events


# --------------------------------------------------------------------------- beliefs
@dataclass(frozen=True)
class _Observation:
    index: int
    container: str
    witnesses: frozenset[str]


def _observations(events: Sequence[WitnessedEvent], obj: str
                  ) -> tuple[list[_Observation], str | None]:
    """Every moment someone saw where ``obj`` was, and the room it ends up in."""
    seen: list[_Observation] = []
    container: str | None = None
    room: str | None = None
    for ev in events:
        if ev.action in ("place", "move") and ev.obj == obj and ev.container is not None:
            container, room = ev.container, ev.location
            seen.append(_Observation(ev.index, container, ev.witnesses))
        elif (ev.action in ("enter", "locate") and container is not None
              and ev.location is not None and ev.location == room):
            seen.append(_Observation(ev.index, container, ev.witnesses))
    return seen, room


def _later_entrance(events: Sequence[WitnessedEvent], room: str | None,
                    pair: tuple[str, str]) -> bool:
    """ToMi's resync: an entrance into ``room`` that is not a first entrance of the pair."""
    entered: set[str] = set()
    for ev in events:
        if ev.action != "enter" or ev.actor is None:
            continue
        first_of_pair = ev.actor in pair and ev.actor not in entered
        entered.add(ev.actor)
        if ev.location == room and not first_of_pair:
            return True
    return False


def answer(question: Question | BeliefQuery | str, events: Sequence[WitnessedEvent], *,
           semantics: Semantics = "tomi") -> str:
    """Answer a ToMi question from participation records alone.

    - memory: the object's first container; reality: its last;
    - first order (X): the container in the last observation X witnessed;
    - second order (X about Y): the container in the last observation both witnessed — or,
      with ``semantics="tomi"``, the real container once anyone has (re-)entered the
      object's room after the pair's first entrances (see the module docstring).

    Someone who never observed the object is assumed to believe its first container; X with
    no shared observation with Y projects X's own belief onto Y. A question about an object
    no record places raises :class:`InputError`.
    """
    if semantics not in ("tomi", "strict"):
        raise InputError(f"semantics must be 'tomi' or 'strict', got {semantics!r}")
    if isinstance(question, BeliefQuery):
        query = question
    else:
        query = parse_question(question.text if isinstance(question, Question) else question)
    seen, room = _observations(events, query.obj)
    if not seen:
        raise InputError(f"no record places the {query.obj}")
    if query.kind == "memory":
        return seen[0].container
    if query.kind == "reality":
        return seen[-1].container
    assert query.agent is not None
    agent = query.agent
    own = next((o.container for o in reversed(seen) if agent in o.witnesses),
               seen[0].container)
    if query.kind == "first_order":
        return own
    assert query.other is not None
    other = query.other
    if semantics == "tomi" and _later_entrance(events, room, (agent, other)):
        return seen[-1].container
    return next((o.container for o in reversed(seen)
                 if agent in o.witnesses and other in o.witnesses), own)


def evaluate(stories: Sequence[Story], *, semantics: Semantics = "tomi"
             ) -> dict[str, object]:
    """Accuracy of :func:`answer` over every question, overall and by question type.

    Each question is answered from the records of the sentences before it. ``by_type`` is
    keyed by the trace's question type (or the parsed kind without a trace).
    """
    total: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for story in stories:
        events = story_events(story)
        for q in story.questions:
            total[q.qtype] += 1
            if answer(q, events[:q.position], semantics=semantics) == q.answer:
                right[q.qtype] += 1
    n = sum(total.values())
    return {
        "accuracy": sum(right.values()) / n if n else 0.0,
        "by_type": {t: right[t] / total[t] for t in sorted(total)},
        "n": n,
    }
