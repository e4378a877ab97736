"""``enfold bench perf``: how fast events fold, and whether that stays flat as the graph grows.

For each size (1k, 10k, 100k events by default) a synthetic event stream is ingested into a
fresh SQLite memory with the local planner, through the public API (``Memory.add_many`` in
chunks, folding after each chunk as in normal use). Measured in the same run:

* ``ingest_events_per_s`` and ``ms_per_event`` — wall time of the whole ingest (append,
  embed, annotate, plan, apply, commit);
* ``ms_per_event_last_1k`` — the same over the last 1,000 events only, when the graph is
  at its largest: if folding cost grows with the graph, this column grows with the size;
  ``ms_per_event_curve`` — ms/event over successive tenths of each size;
* ``annotate_only_ms_per_text`` — the text readers alone (the spaCy parse, times, people,
  claims, obligations: :func:`enfold.text.annotate.annotate`) on the ingest's first 2,000
  texts with an empty parse cache, parsed in folding's batches, and ``annotate_to_embed_cost``, its ratio to the
  embedder's own cost per text;
* ``embed_only_texts_per_s`` — the embedder alone on exactly the texts, in exactly the
  batches, that the write path sent it (recorded by a timing wrapper), and its ratio to the
  ingest rate; ``folding_share`` = 1 − (time inside the embedder) / (ingest time);
* ``stage_ms_per_event_last_1k`` — the last 1,000 events' ms/event split by folding stage
  (:data:`enfold.write.fold.STAGES`: embed, plan, apply, intents, consolidate, commit, and
  "other"); ``fold_ms_per_event_last_1k`` — all of it but the embedder: folding's own
  cost; ``fold_to_embed_cost`` — that cost over the embedder's own cost per text
  (``embed_only_ms_per_text``): how big folding is next to embedding;
* ``rss_mb`` (VmRSS after the ingest, memory still open) and ``peak_rss_mb`` (VmHWM, the
  process's peak so far — sizes run in increasing order, so it is that size's peak);
* node and edge counts (by kind), the database size;
* ``recall_ms`` p50/p95/p99 of :data:`RECALL_QUERIES` recalls after the ingest (the
  stream's own questions);
* ``incremental_pass_s`` — one incremental consolidation pass over a fixed batch of
  :data:`PASS_BATCH` new events appended after the ingest (automatic passes held off for
  that batch): its cost must follow the batch, not the size of the graph behind it;
  ``full_pass_s`` — a full pass over the whole graph, reported separately;
* ``live_ms_per_event`` — :data:`LIVE_EVENTS` further events added one ``add()`` call
  each, as a live agent sends them (each appended durably, embedded alone and folded
  before the call returns); ``live_fold_ms_per_event`` — all of that but the embedder;
  ``live_embed_only_ms_per_text`` — the embedder alone on the same one-text calls, and
  ``live_fold_to_embed_cost`` their ratio.

The stream (:func:`synthetic_events`) is deterministic from a seed and has a constant rate
(events per day), so the stream of 1k events is a prefix of the stream of 100k: the sizes
differ only in how much graph lies behind the last events, not in what those events say.
Its texts are short (about 15 words): what MiniLM costs per text depends on the text's
length, what folding costs much less so. ``--data`` takes a LoCoMo file instead
(:func:`locomo_stream`): its real conversation turns (about 26 words, photo captions
included) are the stream, as one memory, and its questions the recall queries; sizes then
stop at the turns it holds. ``--history N`` puts N synthetic events, unmeasured, before
them. ``mean_words_per_text`` reports which kind of text each size measured.
A time budget per size (``budget_s``) stops a run that folds too slowly and reports it as
incomplete, with metrics over the events ingested.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import platform
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from enfold.bench.metrics import percentiles
from enfold.bench.report import markdown_table, write_result
from enfold.errors import InputError
from enfold.write.fold import STAGES

if TYPE_CHECKING:
    from enfold.embed import Embedder

__all__ = [
    "DEFAULT_SIZES",
    "PerfRun",
    "TimedEmbedder",
    "default_sizes",
    "render_summary",
    "run_perf",
    "synthetic_events",
]

DEFAULT_SIZES = (1_000, 10_000, 100_000)
# MiniLM is embedding-bound (~480 short synthetic texts/s on 2 cores): 100k events would
# take ~7 minutes of embedding (the ingest, then the embed-only replay), so it stops at 10k.
DEFAULT_SIZES_MINILM = (1_000, 10_000)
CHUNK = 500  # events per add_many call, as a bulk importer would send them
LAST = 1_000  # the tail over which ms_per_event_last_1k is measured
RECALL_QUERIES = 50
PASS_BATCH = 200  # the new events an incremental consolidation pass is timed over
LIVE_EVENTS = 200  # events then added one at a time with add(), as a live agent sends them
Progress = Callable[[str], None]

# ----------------------------------------------------------------------------- the stream
# Each topic: a short anchor (what the speaker calls it) and the things that come up in it.
# Texts of one topic share the anchor and some of its phrases, as real notes on one
# subject do; frames are shared by all topics, as a person's way of writing is.
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("marathon training", ("long run", "tempo pace", "interval session", "running shoes",
                           "hill repeats", "race bib", "recovery jog")),
    ("kitchen renovation", ("kitchen cabinets", "countertop quote", "tile samples",
                            "plumber visit", "sink install", "renovation budget")),
    ("quarterly report", ("revenue numbers", "churn chart", "board slides", "finance review",
                          "forecast model", "executive summary")),
    ("garden", ("tomato seedlings", "raised beds", "compost heap", "drip irrigation",
                "aphids on the roses", "mulch delivery")),
    ("Spanish lessons", ("verb conjugations", "subjunctive mood", "vocabulary flashcards",
                         "conversation practice", "listening exercises", "grammar quiz")),
    ("mobile app release", ("login screen", "push notifications", "crash reports",
                            "app store review", "beta testers", "release notes")),
    ("wedding planning", ("venue deposit", "guest list", "catering tasting", "seating chart",
                          "photographer contract", "wedding invitations")),
    ("piano practice", ("Chopin nocturne", "scales and arpeggios", "left hand voicing",
                        "metronome work", "sight reading", "recital piece")),
    ("car maintenance", ("oil change", "brake pads", "tyre rotation", "check engine light",
                         "inspection sticker", "windshield wipers")),
    ("tax return", ("receipts folder", "deduction list", "accountant meeting",
                    "charitable donations", "1099 forms", "estimated payments")),
    ("sourdough baking", ("sourdough starter", "levain feeding", "bulk fermentation",
                          "dutch oven", "crumb structure", "rye flour")),
    ("book club", ("club novel", "chapter discussion", "reading list", "book club host",
                   "author interview", "next pick")),
    ("database migration", ("schema change", "replication lag", "backfill job",
                            "index rebuild", "rollback plan", "migration window")),
    ("dog training", ("puppy recall", "leash pulling", "clicker treats", "obedience class",
                      "crate routine", "vet checkup")),
    ("home solar panels", ("solar installer", "inverter quote", "roof survey",
                           "battery storage", "net metering", "panel layout")),
    ("hiring a designer", ("designer candidates", "portfolio review", "design interview",
                           "offer letter", "reference calls", "onboarding plan")),
    ("camping trip", ("tent and sleeping bags", "campsite booking", "trail map", "camp stove",
                      "bear canister", "packing list")),
    ("thesis writing", ("literature review", "methods chapter", "advisor feedback",
                        "citation manager", "thesis draft", "defense date")),
    ("cycling commute", ("bike lane", "rain jacket", "bike lock", "flat tire",
                         "commute route", "bike lights")),
    ("budget spreadsheet", ("monthly budget", "grocery spending", "savings goal",
                            "subscription costs", "rent payment", "emergency fund")),
    ("machine learning course", ("gradient descent", "homework notebook", "lecture videos",
                                 "neural network assignment", "course project",
                                 "loss curves")),
    ("moving apartments", ("moving boxes", "lease signing", "moving truck", "utility transfer",
                           "packing tape", "new apartment keys")),
    ("photography hobby", ("prime lens", "golden hour shots", "photo editing",
                           "camera settings", "photo walk", "print portfolio")),
    ("customer support backlog", ("support tickets", "refund requests", "escalation queue",
                                  "help center articles", "response times",
                                  "ticket triage")),
    ("climbing gym", ("bouldering problems", "climbing shoes", "finger strength",
                      "top rope session", "belay check", "overhang route")),
    ("podcast side project", ("podcast episode", "microphone setup", "audio editing",
                              "guest booking", "show notes", "episode artwork")),
    ("family reunion", ("reunion venue", "family photo", "potluck dishes", "travel plans",
                        "grandma's birthday", "cousins' schedule")),
    ("security audit", ("penetration test", "access reviews", "password rotation",
                        "audit findings", "firewall rules", "compliance checklist")),
    ("meal prep", ("lentil curry", "batch cooking", "lunch containers", "grocery list",
                   "protein portions", "freezer meals")),
    ("volunteering at the shelter", ("shelter shift", "food drive", "volunteer roster",
                                     "donation sorting", "shelter coordinator",
                                     "winter coats")),
    ("knee injury recovery", ("physio exercises", "knee brace", "swelling",
                              "MRI results", "stretching routine", "orthopedic appointment")),
    ("conference talk", ("talk abstract", "slide deck", "speaker rehearsal", "demo video",
                         "conference travel", "Q&A prep")),
    ("vegetable CSA box", ("CSA pickup", "kale bunch", "farm newsletter", "squash recipes",
                           "share swap", "farm volunteer day")),
    ("open source library", ("pull request", "issue tracker", "release tag",
                             "documentation fixes", "CI pipeline", "contributor guide")),
    ("insurance claim", ("claim adjuster", "damage photos", "claim form", "repair estimate",
                         "policy number", "deductible")),
    ("chess improvement", ("opening repertoire", "endgame drills", "tactics puzzles",
                           "rapid games", "blunder review", "chess club night")),
    ("kid's school", ("parent teacher meeting", "science fair", "school lunches",
                      "homework folder", "field trip form", "school bus")),
    ("house plants", ("monstera", "repotting", "fungus gnats", "grow light",
                      "watering schedule", "fiddle leaf fig")),
    ("sales pipeline", ("enterprise lead", "pricing proposal", "demo call", "contract redlines",
                        "renewal forecast", "CRM cleanup")),
    ("Japan trip", ("rail pass", "Kyoto temples", "ryokan booking", "Tokyo itinerary",
                    "pocket wifi", "travel insurance")),
    ("yoga routine", ("morning flow", "hip openers", "yoga mat", "breathing practice",
                      "balance poses", "studio class")),
    ("band rehearsal", ("setlist", "bass amp", "drum fills", "rehearsal space", "gig booking",
                        "new song chords")),
)
PEOPLE = ("Gina", "Tom", "Priya", "Marcus", "Elena", "Sam", "Aiko", "Jonas", "Fatima",
          "Leo", "Nora", "Diego", "Hannah", "Omar", "Mei", "Lucas", "Zoe", "Ravi")
SPEAKERS = ("Maya", "Maya", "Maya", "Ben", "Ben", "Chloe")  # one main user, two occasional
STATES = ("behind schedule", "almost done", "going well", "stuck", "a mess", "on track",
          "more work than expected", "surprisingly easy", "blocked", "half finished")
OPINIONS = ("overpriced", "a great idea", "too ambitious", "worth it", "risky", "fine",
            "the right call", "a waste of time", "underrated", "too slow")
FEELINGS = ("tired", "great", "frustrated", "relieved", "excited", "distracted", "calm")
WHEN = ("yesterday", "this morning", "last Tuesday", "on Friday", "last week", "today",
        "over the weekend", "on Monday", "earlier tonight", "last night")
LATER = ("tomorrow", "next week", "this weekend", "next Monday", "on Thursday", "tonight",
         "in two weeks", "on the 20th")
DUE = ("by Friday", "by the 15th", "by next Monday", "by the end of the month", "tomorrow",
       "by Thursday", "next week")
DURATIONS = ("twenty minutes", "an hour", "two hours", "half the afternoon", "the evening",
             "all morning", "forty minutes")

# {topic} anchor, {a} {b} {c} phrases of the topic, {p} a person, and the lists below.
FRAMES: tuple[str, ...] = (
    "Spent {dur} on the {topic} today; the {a} still needs work.",
    "Quick update on the {topic}: the {a} is {state}.",
    "Made progress with the {a} for the {topic} {when}.",
    "The {topic} took longer than expected because the {a} was {state}.",
    "I need to sort out the {a} for the {topic} {due}.",
    "{p} thinks the {a} is {opinion}.",
    "{p} said the {b} for the {topic} looks {opinion}.",
    "According to {p}, the {b} is {opinion}.",
    "{p} believes the {topic} is {opinion}.",
    "Planning to go over the {a} with {p} {later}.",
    "Booked time {later} for the {b}.",
    "I think the {topic} plan is {opinion}, especially the {a}.",
    "Met {p} about the {topic} {when}; we talked about the {a} and the {b}.",
    "Finished the {a} for the {topic}, feeling {feel}.",
    "Notes on the {topic}: {a}, {b} and the {c}.",
    "Still thinking about the {topic} and how the {a} fits with the {b}.",
    "Reminder: the {a} for the {topic} is due {due}.",
    "{p} and I worked on the {a} {when}, so the {topic} is {state}.",
    "Feeling {feel} about the {topic} after the {a}.",
    "Looked into the {b} again; the {topic} depends on it.",
    "Asked {p} for help with the {a}.",
    "The {a} went {state_short} {when}, and the {b} is next.",
    "Do not forget to check the {b} before the {topic} session {due}.",
    "Had a long chat with {p} about the {topic}; {p2} joined later.",
)
STATE_SHORT = ("well", "badly", "fine", "better than last time", "slowly", "smoothly")
# Asides appended to some texts, as people do; they keep texts from repeating verbatim.
TAILS = ("", "", "", " Coffee number {n} today.", " {p} says hi.", " Weather was {weather}.",
         " Slept {n} hours.", " Need a break soon.", " Will update {p}.", " Day {n} of this.",
         " Not my favourite part.", " Bus was {n} minutes late.", " Listening to {genre}.")
WEATHER = ("grey", "sunny", "windy", "freezing", "humid", "rainy all day")
GENRES = ("jazz", "old podcasts", "lo-fi beats", "the radio", "film scores")
# One-off distractors: rare nouns in pairs, so they almost never recur or cluster.
RARE = (
    "umbrella", "lighthouse", "accordion", "pelican", "saxophone", "glacier", "origami",
    "meteor", "hammock", "chandelier", "tortoise", "harpoon", "volcano", "kaleidoscope",
    "trombone", "walrus", "labyrinth", "periscope", "cactus", "zeppelin", "typewriter",
    "flamingo", "igloo", "sundial", "catapult", "jellyfish", "telescope", "windmill",
    "porcupine", "compass", "marionette", "gazebo", "anvil", "falcon", "quill", "canoe",
    "gargoyle", "hourglass", "lantern", "mosaic", "narwhal", "obelisk", "parrot", "quartz",
    "raccoon", "scarecrow", "tambourine", "unicycle", "vinyl record", "weathervane",
    "xylophone", "yak", "zither", "bagpipes", "carousel", "dragonfly", "easel", "fossil",
    "gondola", "harmonica", "iceberg", "jukebox", "kite", "llama", "mandolin", "nutcracker",
)
DISTRACTOR_FRAMES = (
    "Saw a {x} next to a {y} on the way home, odd.",
    "Random thought: a {x} would make a good name for a {y} shop.",
    "Someone left a {x} by the door; no idea about the {y}.",
    "Dreamt about a {x} and a {y} last night.",
    "The radio had a whole segment on the {x} and the {y}.",
    "Found an old photo of a {x} wearing a {y}.",
)
START = datetime(2024, 1, 8, 8, 0, tzinfo=UTC)
PER_DAY = 60.0  # mean events per day: 1k ≈ 17 days, 10k ≈ 5.5 months, 100k ≈ 4.6 years
DISTRACTOR_SHARE = 0.10


def synthetic_events(n: int, seed: int = 0, *, per_day: float = PER_DAY,
                     distractors: float = DISTRACTOR_SHARE) -> Iterator[dict[str, Any]]:
    """A deterministic, realistic stream of ``n`` events (``{"text","ts","source","id"}``).

    Topics recur with a popularity that is skewed (a few dominate) and drifts over weeks;
    texts vary by frame, phrases and slots, mention people, times, deadlines, opinions and
    causes; about ``distractors`` of them are one-off notes that fit no topic. Timestamps
    advance by exponential gaps of mean ``1/per_day`` days, so a shorter stream is a
    prefix of a longer one with the same seed.
    """
    rng = random.Random(seed)
    k = len(TOPICS)
    order = list(range(k))
    rng.shuffle(order)
    base = np.array([1.0 / (1 + r) ** 0.8 for r in range(k)])[np.argsort(order)]
    periods = [rng.uniform(20, 120) for _ in range(k)]  # days of each topic's activity cycle
    phases = [rng.uniform(0, 2 * math.pi) for _ in range(k)]
    ts = START
    gap_mean = 86_400.0 / per_day
    for i in range(n):
        ts += timedelta(seconds=rng.expovariate(1.0 / gap_mean))
        day = (ts - START).total_seconds() / 86_400.0
        if rng.random() < distractors:
            x, y = rng.sample(RARE, 2)
            text = rng.choice(DISTRACTOR_FRAMES).format(x=x, y=y)
        else:
            weights = [base[t] * (1.2 + math.sin(2 * math.pi * day / periods[t] + phases[t]))
                       for t in range(k)]
            topic, phrases = TOPICS[rng.choices(range(k), weights=weights)[0]]
            a, b, c = rng.sample(phrases, 3)
            p, p2 = rng.sample(PEOPLE, 2)
            text = rng.choice(FRAMES).format(
                topic=topic, a=a, b=b, c=c, p=p, p2=p2, dur=rng.choice(DURATIONS),
                state=rng.choice(STATES), state_short=rng.choice(STATE_SHORT),
                when=rng.choice(WHEN), later=rng.choice(LATER), due=rng.choice(DUE),
                opinion=rng.choice(OPINIONS), feel=rng.choice(FEELINGS))
            text += rng.choice(TAILS).format(n=rng.randint(2, 40), p=rng.choice(PEOPLE),
                                             weather=rng.choice(WEATHER),
                                             genre=rng.choice(GENRES))
        yield {"id": f"perf-{seed}-{i}", "text": text, "ts": ts.isoformat(),
               "source": rng.choice(SPEAKERS)}


@dataclass(frozen=True)
class Stream:
    """Where a perf run's events and recall queries come from."""

    name: str
    events: Callable[[int], list[dict[str, Any]]]  # the first n events
    queries: Callable[[int], list[str]]  # n recall queries (seeded)
    available: int | None  # events it holds (None: unbounded)
    config: dict[str, Any]


def synthetic_stream(seed: int = 0) -> Stream:
    """:func:`synthetic_events` and questions about its topics."""
    def queries(n: int) -> list[str]:
        rng = random.Random(seed + 1)
        out = []
        for _ in range(n):
            topic, phrases = rng.choice(TOPICS)
            out.append(rng.choice((
                f"What happened with the {rng.choice(phrases)}?",
                f"What does {rng.choice(PEOPLE)} think about the {topic}?",
                f"When is the {rng.choice(phrases)} due?",
                f"How is the {topic} going?",
            )))
        return out

    return Stream("synthetic", lambda n: list(synthetic_events(n, seed)), queries, None,
                  {"source": "synthetic", "seed": seed, "topics": len(TOPICS),
                   "events_per_day": PER_DAY, "distractor_share": DISTRACTOR_SHARE})


CONVERSATION_GAP = timedelta(days=1)  # between one conversation's end and the next's start


def locomo_stream(path: Path, seed: int = 0) -> Stream:
    """The turns of a LoCoMo file (``locomo10.json`` format) as one memory's stream.

    Turns are the events ``bench locomo`` ingests (:func:`~enfold.bench.locomo.turn_events`:
    the text with a shared photo's caption appended, the speaker, the session's date-time
    plus 30 s per turn), their ids prefixed with the conversation's. Conversations follow
    one another in one namespace, each moved in time to start a day after the one before
    ends, so the stream's clock only moves forward. Recall queries are the file's questions
    (categories 1–4), sampled with ``seed``.
    """
    from enfold.bench.datasets import load_locomo
    from enfold.bench.locomo import turn_events

    conversations = load_locomo(path)
    events: list[dict[str, Any]] = []
    questions: list[str] = []
    end: datetime | None = None
    for conv in conversations:
        turns = turn_events(conv, id_prefix=f"{conv.sample_id}:")
        if not turns:
            continue
        if end is not None:
            turns = _after(turns, end + CONVERSATION_GAP)
        events += turns
        # Moved past the previous end, this conversation's latest turn is the new end.
        end = max(datetime.fromisoformat(e["ts"]) for e in turns)
        questions += [q.question for q in conv.questions()]
    if not events:
        raise InputError(f"{path}: holds no conversation turns")
    if not questions:
        raise InputError(f"{path}: holds no questions of categories 1-4 to time recall with")

    def take(n: int) -> list[dict[str, Any]]:
        return events[:n]

    def queries(n: int) -> list[str]:
        rng = random.Random(seed + 1)
        return [rng.choice(questions) for _ in range(n)]

    return Stream("locomo", take, queries, len(events),
                  {"source": "locomo", "path": str(path), "turns": len(events),
                   "conversations": len(conversations), "questions": len(questions)})


# -------------------------------------------------------------------------- measuring
class TimedEmbedder:
    """Wraps an embedder; records the batches it is asked for and the time spent in them."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.batches: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        t0 = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - t0
        self.batches.append(list(texts))
        return out


def rss_mb() -> tuple[float | None, float | None]:
    """(VmRSS, VmHWM) of this process in MB from /proc/self/status (None off Linux)."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None, None
    found: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(rest.split()[0]) / 1024.0
    return found.get("VmRSS"), found.get("VmHWM")


@dataclass
class LiveResult:
    """Events added one ``add()`` call each after the ingest (:data:`LIVE_EVENTS`)."""

    events: int
    wall_s: float
    embed_s: float  # inside the embedder, one text per call
    batches: list[list[str]]
    embed_only_s: float = 0.0  # a fresh embedder alone on the same calls
    # ms/event by folding stage, and "other": the durable append, reading the event back,
    # the embedding cache and the rest of add() outside the stages
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def ms_per_event(self) -> float:
        return 1000.0 * self.wall_s / self.events

    @property
    def fold_ms(self) -> float:
        """Everything but the embedder, per event: the durable append, folding, passes."""
        return 1000.0 * (self.wall_s - self.embed_s) / self.events

    @property
    def embed_only_ms(self) -> float | None:
        texts = sum(len(b) for b in self.batches)
        return 1000.0 * self.embed_only_s / texts if texts and self.embed_only_s else None


@dataclass
class SizeResult:
    """What one size of one embedder measured."""

    size: int
    events: int  # ingested: the size, unless a time budget cut the run short
    completed: bool
    ingest_s: float
    last_s: float
    last_n: int
    curve: list[dict[str, float]]
    embed_s: float
    embed_only_s: float
    embedded_texts: int
    annotate_only_s: float
    annotated_texts: int
    rss_mb: float | None
    peak_rss_mb: float | None
    nodes: int
    edges: int
    nodes_by_kind: dict[str, int]
    edges_by_type: dict[str, int]
    db_mb: float
    words_per_text: float = 0.0  # mean words per ingested text
    recall_ms: dict[str, float] = field(default_factory=dict)  # p50, p95, p99
    incremental_pass_s: float | None = None
    full_pass_s: float | None = None
    live: LiveResult | None = None  # events added one at a time after the ingest
    # ms/event by folding stage over the last events (enfold.write.fold.STAGES, plus
    # "other": appending, validation and the rest of the ingest outside the stages)
    stages_last: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def fold_ms_last(self) -> float:
        """Folding's own cost per event over the last events: everything but the embedder."""
        return 1000.0 * self.last_s / self.last_n - self.stages_last.get("embed", 0.0)

    @property
    def embed_only_ms(self) -> float | None:
        return 1000.0 * self.embed_only_s / self.embedded_texts \
            if self.embed_only_s and self.embedded_texts else None

    @property
    def annotate_only_ms(self) -> float | None:
        return 1000.0 * self.annotate_only_s / self.annotated_texts \
            if self.annotate_only_s and self.annotated_texts else None


def make_embedder(name: str) -> Embedder:
    from enfold.embed import make_embedder as _make

    emb = _make(name)
    load = getattr(emb, "load", None)
    if load is not None:
        load()  # model loading is start-up cost, not ingest cost
    return emb


_warmed: set[str] = set()


def warm_up(embedder: Embedder) -> None:
    """Fold a few events into a throwaway memory once per embedder, so that lazy imports
    and first-call caches (time parsing, regexes) are not charged to the first size."""
    from enfold import Memory

    if embedder.name in _warmed:
        return
    with Memory.open("memory:", embedder=embedder, planner="local") as mem:
        mem.add_many(synthetic_events(50, seed=12345))
    _warmed.add(embedder.name)


def annotate_only(events: Sequence[dict[str, Any]], limit: int = 2000) -> tuple[float, int]:
    """Seconds the text readers (:func:`enfold.text.annotate.annotate`: the spaCy parse,
    times, people, claims, obligations) take for the first ``limit`` of the ingest's texts,
    called directly with the parse cache emptied and the texts parsed in the batches
    folding parses them in, and how many texts that was."""
    from enfold.text import nlp
    from enfold.text.annotate import annotate
    from enfold.text.times import parse_timestamp

    nlp.clear_cache()
    chosen = list(events[:limit])
    t0 = time.perf_counter()
    for i in range(0, len(chosen), 256):  # parsed in the batches folding uses
        nlp.parse_many([str(e["text"]) for e in chosen[i:i + 256]])
    for e in chosen:
        annotate(str(e["text"]), ts=parse_timestamp(e["ts"]), speaker=e.get("source"))
    return time.perf_counter() - t0, len(chosen)


def embed_only(embedder: Embedder, batches: Sequence[Sequence[str]]) -> float:
    """Seconds the embedder takes for ``batches``, called directly (no store, no graph)."""
    t0 = time.perf_counter()
    for batch in batches:
        embedder.embed(batch)
    return time.perf_counter() - t0


def measure_size(size: int, embedder_name: str, seed: int, *, chunk: int = CHUNK,
                 budget_s: float | None = None, progress: Progress | None = None,
                 stream: Stream | None = None, history: int = 0) -> SizeResult:
    """Ingest the first ``size`` events of ``stream`` (default: the synthetic stream of
    ``seed``) into a fresh SQLite memory and measure it.

    ``history``: that many synthetic events are ingested first, unmeasured, and the stream
    moved in time to start a day after them: what the stream costs in a memory that
    already holds a long past.

    With ``budget_s`` the ingest stops after the first chunk that ends past the budget; the
    result then covers the events ingested so far (``completed`` is False).
    """
    from enfold import Memory

    source = stream or synthetic_stream(seed)
    # One stream for the ingest and the batches after it (each size's stream is a prefix of
    # the next, so this is the same stream the other sizes see).
    needed = size + PASS_BATCH + LIVE_EVENTS
    if source.available is not None and source.available < needed:
        raise InputError(f"the {source.name} stream holds {source.available:,} events; "
                         f"{size:,} + {PASS_BATCH + LIVE_EVENTS} held back needs {needed:,}")
    drawn = source.events(needed)
    past = list(synthetic_events(history, seed)) if history > 0 else []
    if past:
        drawn = _after(drawn, datetime.fromisoformat(past[-1]["ts"]) + timedelta(days=1))
    events, after = drawn[:size], drawn[size:size + PASS_BATCH]
    live = drawn[size + PASS_BATCH:]
    inner = make_embedder(embedder_name)
    warm_up(inner)
    timed = TimedEmbedder(inner)
    gc.collect()
    with tempfile.TemporaryDirectory(prefix="enfold-perf-") as tmp:
        db = Path(tmp) / "perf.db"
        mem = Memory.open(db, embedder=timed, planner="local")
        try:
            if past:
                mem.add_many(past, chunk=chunk)
                timed.batches.clear()
                timed.seconds = 0.0
            # Chunk boundaries include the start of the last 1k, so that tail is timed
            # exactly; marks are (events ingested, clock) after each chunk.
            cuts = sorted({*range(0, size, chunk), max(0, size - LAST), size})
            t_start = time.perf_counter()
            marks = [(0, t_start)]
            next_tenth = 1
            stage_marks: list[tuple[int, dict[str, float]]] = [(0, mem.fold_timings())]
            for start, end in itertools.pairwise(cuts):
                mem.add_many(events[start:end], chunk=chunk)
                now = time.perf_counter()
                stage_marks.append((end, mem.fold_timings()))
                marks.append((end, now))
                el = now - t_start
                if progress is not None and end * 10 >= next_tenth * size:
                    progress(f"  {embedder_name} {size:,}: {end:,} events, {el:.1f} s, "
                             f"{end / el:,.0f} ev/s")
                    next_tenth = end * 10 // size + 1
                if budget_s is not None and el > budget_s and end < size:
                    if progress is not None:
                        progress(f"  {embedder_name} {size:,}: budget of {budget_s:g} s spent "
                                 f"after {end:,} events; stopping")
                    break
            done, t_end = marks[-1]
            tail = next(m for m in marks if m[0] >= done - LAST)
            rss, hwm = rss_mb()
            stats = mem.stats()
            by_kind = {str(k): int(v) for k, v in sorted(stats["nodes"].items())}
            by_type = {str(k): int(v) for k, v in sorted(stats["edges"].items())}
            # The ingest's batches only: recall queries and the events added after it go
            # through the same embedder and must not count as the ingest's embedding.
            ingested = list(timed.batches)
            result = SizeResult(
                size=size, events=done, completed=done == size, ingest_s=t_end - t_start,
                last_s=t_end - tail[1], last_n=done - tail[0], curve=_curve(marks, size, chunk),
                embed_s=timed.seconds, embed_only_s=0.0,
                embedded_texts=sum(len(b) for b in ingested), annotate_only_s=0.0,
                annotated_texts=0, rss_mb=rss,
                peak_rss_mb=hwm, nodes=sum(by_kind.values()), edges=sum(by_type.values()),
                nodes_by_kind=by_kind, edges_by_type=by_type, db_mb=0.0,
                words_per_text=sum(len(e["text"].split()) for e in events[:done])
                / max(1, done))
            if stats["pending"]:
                result.notes.append(f"{stats['pending']} events left unfolded")
            result.stages_last = _stages(stage_marks, tail[0], done, result.last_s)
            result.recall_ms = _recall_latency(mem, source.queries(RECALL_QUERIES))
            result.incremental_pass_s = _incremental_pass_time(mem, after)
            if result.completed:
                result.live = _one_at_a_time(mem, timed, live)
            t0 = time.perf_counter()
            mem.consolidate()
            result.full_pass_s = time.perf_counter() - t0
        finally:
            mem.close()
        result.db_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20
    # A fresh embedder of the same kind, cold like the one the ingest started with.
    alone = make_embedder(embedder_name)
    result.embed_only_s = embed_only(alone, ingested)
    result.annotate_only_s, result.annotated_texts = annotate_only(events[:done])
    if result.live is not None:
        result.live.embed_only_s = embed_only(alone, result.live.batches)
    del events, drawn, past, after, live, ingested, timed, inner, mem
    gc.collect()
    return result


def _after(events: list[dict[str, Any]], start: datetime) -> list[dict[str, Any]]:
    """``events`` moved in time as one block so that the first is no earlier than ``start``."""
    if not events:
        return events
    shift = max(timedelta(0), start - datetime.fromisoformat(events[0]["ts"]))
    return [{**e, "ts": (datetime.fromisoformat(e["ts"]) + shift).isoformat()}
            for e in events]


def _stages(marks: list[tuple[int, dict[str, float]]], start: int, end: int, wall_s: float
            ) -> dict[str, float]:
    """ms/event by stage between the marks at ``start`` and ``end`` events ingested, and
    "other" for the rest of ``wall_s`` (the wall time of that stretch)."""
    before = next(m for n, m in marks if n == start)
    after = next(m for n, m in marks if n == end)
    n = max(1, end - start)
    out = {k: 1000.0 * (after.get(k, 0.0) - before.get(k, 0.0)) / n for k in STAGES}
    out["other"] = 1000.0 * wall_s / n - sum(out.values())
    return {k: round(v, 3) for k, v in out.items()}


def _curve(marks: list[tuple[int, float]], size: int, chunk: int) -> list[dict[str, float]]:
    """ms/event over consecutive windows of about a tenth of the size (whole chunks)."""
    window = max(chunk, round(size / 10 / chunk) * chunk)
    points = [m for m in marks if m[0] % window == 0 or m is marks[-1]]
    return [{"events": b[0], "ms_per_event": round(1000.0 * (b[1] - a[1]) / (b[0] - a[0]), 3)}
            for a, b in itertools.pairwise(points) if b[0] > a[0]]


def _recall_latency(mem: Any, queries: Sequence[str]) -> dict[str, float]:
    samples = []
    for q in queries:
        t0 = time.perf_counter()
        mem.recall(q, k=10)
        samples.append((time.perf_counter() - t0) * 1000.0)
    return percentiles(samples)


def _one_at_a_time(mem: Any, timed: TimedEmbedder, events: Sequence[dict[str, Any]]
                   ) -> LiveResult:
    """Add ``events`` one ``add()`` call each, as a live agent does (each appended durably,
    embedded alone and folded before the call returns), with automatic passes on."""
    seconds, batches = timed.seconds, len(timed.batches)
    before = mem.fold_timings()
    t0 = time.perf_counter()
    for e in events:
        mem.add(e["text"], ts=e["ts"], source=e.get("source"), id=e.get("id"))
    wall = time.perf_counter() - t0
    stages = _stages([(0, before), (len(events), mem.fold_timings())], 0, len(events), wall)
    return LiveResult(events=len(events), wall_s=wall, embed_s=timed.seconds - seconds,
                      batches=timed.batches[batches:], stages=stages)


def _incremental_pass_time(mem: Any, batch: Sequence[dict[str, Any]]) -> float:
    """Seconds of one incremental pass over ``batch`` (the next :data:`PASS_BATCH` events
    of the stream), appended and folded with automatic passes held off (so the pass's
    region is exactly what that batch changed)."""
    from dataclasses import replace

    saved = mem.settings
    mem.settings = replace(saved, consolidate_every=10**12, consolidate_idle_s=math.inf)
    try:
        mem.consolidate(full=False)  # settle what the ingest left dirty
        mem.add_many(batch, chunk=CHUNK)
        t0 = time.perf_counter()
        mem.consolidate(full=False)
        return time.perf_counter() - t0
    finally:
        mem.settings = saved


def system_metrics(results: Sequence[SizeResult]) -> dict[str, Any]:
    """The perf metrics of one system, each keyed by size (as a string)."""
    def by_size(f: Callable[[SizeResult], Any]) -> dict[str, Any]:
        return {str(r.size): f(r) for r in results}

    def rnd(x: float | None, digits: int = 3) -> float | None:
        return None if x is None else round(x, digits)

    return {
        "ingest_events_per_s": by_size(lambda r: rnd(r.events / r.ingest_s, 1)),
        "embed_only_texts_per_s": by_size(
            lambda r: rnd(r.embedded_texts / r.embed_only_s, 1) if r.embed_only_s else None),
        "ingest_to_embed_ratio": by_size(
            lambda r: rnd((r.events / r.ingest_s) / (r.embedded_texts / r.embed_only_s))
            if r.embed_only_s and r.embedded_texts else None),
        "ms_per_event": by_size(lambda r: rnd(1000.0 * r.ingest_s / r.events)),
        "ms_per_event_last_1k": by_size(lambda r: rnd(1000.0 * r.last_s / r.last_n)),
        "ms_per_event_curve": by_size(lambda r: r.curve),
        "folding_share": by_size(lambda r: rnd(1.0 - r.embed_s / r.ingest_s)),
        "stage_ms_per_event_last_1k": by_size(lambda r: r.stages_last),
        "fold_ms_per_event_last_1k": by_size(lambda r: rnd(r.fold_ms_last)),
        "embed_only_ms_per_text": by_size(lambda r: rnd(r.embed_only_ms, 4)),
        # the text readers alone (parse, times, people, claims) on the ingest's texts
        "annotate_only_ms_per_text": by_size(lambda r: rnd(r.annotate_only_ms, 4)),
        "annotate_to_embed_cost": by_size(
            lambda r: rnd(r.annotate_only_ms / r.embed_only_ms)
            if r.annotate_only_ms and r.embed_only_ms else None),
        "fold_to_embed_cost": by_size(
            lambda r: rnd(r.fold_ms_last / r.embed_only_ms) if r.embed_only_ms else None),
        "embed_ms_per_event": by_size(lambda r: rnd(1000.0 * r.embed_s / r.events)),
        "mean_words_per_text": by_size(lambda r: rnd(r.words_per_text, 1)),
        # add() one event at a time after the ingest (LIVE_EVENTS of them)
        "live_ms_per_event": by_size(lambda r: None if r.live is None
                                     else rnd(r.live.ms_per_event)),
        "live_fold_ms_per_event": by_size(lambda r: None if r.live is None
                                          else rnd(r.live.fold_ms)),
        "live_embed_only_ms_per_text": by_size(
            lambda r: None if r.live is None else rnd(r.live.embed_only_ms, 4)),
        "live_stage_ms_per_event": by_size(lambda r: None if r.live is None
                                           else r.live.stages),
        "live_fold_to_embed_cost": by_size(
            lambda r: rnd(r.live.fold_ms / r.live.embed_only_ms)
            if r.live is not None and r.live.embed_only_ms else None),
        "recall_ms": by_size(lambda r: {k: round(v, 3) for k, v in r.recall_ms.items()}),
        "incremental_pass_s": by_size(lambda r: rnd(r.incremental_pass_s, 4)),
        "full_pass_s": by_size(lambda r: rnd(r.full_pass_s)),
        "rss_mb": by_size(lambda r: rnd(r.rss_mb, 1)),
        "peak_rss_mb": by_size(lambda r: rnd(r.peak_rss_mb, 1)),
        "db_mb": by_size(lambda r: rnd(r.db_mb, 1)),
        "nodes": by_size(lambda r: r.nodes),
        "edges": by_size(lambda r: r.edges),
        "nodes_by_kind": by_size(lambda r: r.nodes_by_kind),
        "edges_by_type": by_size(lambda r: r.edges_by_type),
        "ingest_s": by_size(lambda r: rnd(r.ingest_s, 2)),
        "events_ingested": by_size(lambda r: r.events),
        "completed": by_size(lambda r: r.completed),
        "embedded_texts": by_size(lambda r: r.embedded_texts),
    }


@dataclass
class PerfRun:
    """A finished perf benchmark: the result object and the per-size measurements."""

    result: dict[str, Any]
    sizes: dict[str, list[SizeResult]]


def default_sizes(embedder: str) -> tuple[int, ...]:
    """1k, 10k, 100k events; MiniLM stops at 10k (it is embedding-bound, see the docs)."""
    return DEFAULT_SIZES_MINILM if embedder == "minilm" else DEFAULT_SIZES


def run_perf(
    sizes: Sequence[int] | None = None,
    embedders: Sequence[str] = ("hash",),
    *,
    seed: int = 0,
    out: Path | None = None,
    chunk: int = CHUNK,
    budget_s: float | None = None,
    progress: Progress | None = None,
    data: Path | None = None,
    history: int = 0,
) -> PerfRun:
    """Run the perf benchmark for each embedder and size; write ``out`` (+ ``.md``).

    ``sizes=None`` takes each embedder's :func:`default_sizes`. ``data``: a LoCoMo file
    whose turns are the stream (:func:`locomo_stream`) instead of the synthetic one; sizes
    past what it holds are cut to the largest it allows, and that is noted. ``history``
    (with ``data`` only): synthetic events ingested, unmeasured, before each size's stream.
    """
    if not embedders:
        raise InputError("perf needs at least one embedder")
    if history < 0:
        raise InputError(f"history must be an event count >= 0, got {history}")
    if history and data is None:
        raise InputError("history needs data: before the synthetic stream, a synthetic "
                         "past only makes a larger size of it")
    stream = synthetic_stream(seed) if data is None else locomo_stream(data, seed)
    plan = {name: sorted(set(sizes) if sizes else default_sizes(name)) for name in embedders}
    for name, chosen in plan.items():
        if any(n < 1 for n in chosen):
            raise InputError(f"sizes must be positive event counts, got {chosen}")
    cut: list[str] = []
    if stream.available is not None:
        largest = stream.available - PASS_BATCH - LIVE_EVENTS
        if largest < 1:
            raise InputError(f"{data}: {stream.available} turns; perf needs more than "
                             f"{PASS_BATCH + LIVE_EVENTS} (held back for the pass and the "
                             "one-at-a-time measurements)")
        for name, chosen in plan.items():
            if chosen[-1] > largest:
                cut += [f"{name} {n:,}" for n in chosen if n > largest]
                plan[name] = sorted({min(n, largest) for n in chosen})
        if cut:
            cut = [(f"{', '.join(cut)} cut to {largest:,} events: {data} holds "
                    f"{stream.available:,} turns and {PASS_BATCH + LIVE_EVENTS} are held "
                    "back for the pass and the one-at-a-time measurements")]
    t0 = time.perf_counter()
    measured: dict[str, list[SizeResult]] = {}
    for name in embedders:
        measured[name] = []
        for size in plan[name]:
            if progress is not None:
                progress(f"{name}: ingesting {size:,} events")
            measured[name].append(measure_size(size, name, seed, chunk=chunk,
                                               budget_s=budget_s, progress=progress,
                                               stream=stream, history=history))
    systems = {("enfold" if len(embedders) == 1 else f"enfold-{name}"): system_metrics(res)
               for name, res in measured.items()}
    notes = cut + sorted({n for res in measured.values() for r in res for n in r.notes})
    notes += [f"{name} {r.size:,}: stopped by the time budget after {r.events:,} events "
              f"({r.ingest_s:.0f} s); its metrics cover those events"
              for name, res in measured.items() for r in res if not r.completed]
    config = {
        "embedder": embedders[0] if len(embedders) == 1 else list(embedders),
        "planner": "local",
        "store": "sqlite (fresh temporary file per size)",
        "sizes": plan[embedders[0]] if len({tuple(v) for v in plan.values()}) == 1 else plan,
        "seed": seed,
        "chunk": chunk,
        "budget_s": budget_s,
        "stream": stream.config,
        "history": history,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "processor": platform.machine()},
    }
    result = write_result("perf", config, systems, time.perf_counter() - t0, out,
                          extra={"notes": notes} if notes else None)
    return PerfRun(result, measured)


def render_summary(run: PerfRun) -> str:
    """A readable table: one row per embedder and size."""
    rows = []
    for name, results in run.sizes.items():
        for r in results:
            ingest = r.events / r.ingest_s
            only = r.embedded_texts / r.embed_only_s if r.embed_only_s else None
            rows.append({
                "embedder": name,
                "events": r.size if r.completed else f"{r.events:,} of {r.size:,}",
                "words/text": r.words_per_text,
                "ingest ev/s": ingest,
                "ms/event": 1000.0 * r.ingest_s / r.events,
                "ms/event last 1k": 1000.0 * r.last_s / r.last_n,
                "embed-only texts/s": only,
                "ingest/embed": ingest / only if only else None,
                "folding share": 1.0 - r.embed_s / r.ingest_s,
                "RSS MB": r.rss_mb, "nodes": r.nodes, "edges": r.edges,
                "recall p50 ms": r.recall_ms["p50"],
                f"pass of {PASS_BATCH} new ms": None if r.incremental_pass_s is None
                else 1000.0 * r.incremental_pass_s,
                "full pass s": r.full_pass_s,
            })
    columns = list(rows[0]) if rows else ["embedder"]
    lines = [markdown_table(rows, columns), "",
             "ms/event over successive windows (events ingested at the window's end: ms/event):"]
    for name, results in run.sizes.items():
        for r in results:
            points = ", ".join(f"{int(p['events']):,}: {p['ms_per_event']:.1f}" for p in r.curve)
            lines.append(f"  {name} {r.size:,}: {points}")
    lines += ["", "ms/event by stage over the last events (folding cost = all but embed):"]
    for name, results in run.sizes.items():
        for r in results:
            parts = ", ".join(f"{k} {v:.2f}" for k, v in r.stages_last.items())
            only = r.embed_only_ms
            ratio = f"; embed-only {only:.2f} ms/text, fold/embed {r.fold_ms_last / only:.2f}" \
                if only else ""
            lines.append(f"  {name} {r.size:,}: {parts} (folding {r.fold_ms_last:.2f}{ratio})")
    lines += ["", (f"add() one event at a time ({LIVE_EVENTS} events after the ingest; "
                   "folding = all but the embedder):")]
    for name, results in run.sizes.items():
        for r in results:
            if r.live is None:
                continue
            only = r.live.embed_only_ms
            ratio = f"; embed-only {only:.2f} ms/text, fold/embed " \
                    f"{r.live.fold_ms / only:.2f}" if only else ""
            parts = ", ".join(f"{k} {v:.2f}" for k, v in r.live.stages.items())
            lines.append(f"  {name} {r.size:,}: {r.live.ms_per_event:.2f} ms/event: {parts} "
                         f"(folding {r.live.fold_ms:.2f}{ratio})")
    lines += [f"note: {n}" for n in run.result.get("notes", [])]
    lines.append(f"elapsed: {run.result['elapsed_s']:.1f} s")
    return "\n".join(lines)
