"""ToMi answered from enfold's graph: participation records written, then read back.

:mod:`enfold.bench.tomi` answers a question from :class:`~enfold.bench.tomi.WitnessedEvent`
records. Here those records go through the product: each story is ingested as events, one
per sentence (``source`` = the actor, ``meta.participants`` = the people present, so the
local planner writes a PARTICIPATES edge from each of them), and the records are then
*rebuilt from the graph* — the event texts in log order and, for each event, the people with
a PARTICIPATES edge into it — before :func:`~enfold.bench.tomi.answer` sees them. Who
witnessed what therefore comes from the graph, not from the story.

What the text still determines is the event's structure (action, object, container and the
room it happened in): :func:`~enfold.bench.tomi.story_events` is run on the texts read back
from the graph and its witnesses are replaced by the graph's.

Stories that repeat the same sentences (ToMi asks several questions of one story, one per
copy) are ingested once; each copy's questions are answered from that one graph.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from enfold.bench.tomi import (
    Semantics,
    Sentence,
    Story,
    WitnessedEvent,
    answer,
    parse_tomi,
    story_events,
)
from enfold.errors import InputError
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind

__all__ = ["SEMANTICS", "Tally", "evaluate_graph", "ingest_story", "rebuild_events", "run",
           "tally_graph", "tomi_files"]

SEMANTICS: tuple[Semantics, ...] = ("tomi", "strict")
_T0 = 1_700_000_000.0  # story time: one sentence a minute from here

NOTE = ("The 'tomi' semantics (a later entrance into the object's room resets second-order "
        "beliefs to the true location) was inferred from ToMi's validation split "
        "(fb_all_val), so its accuracy there is not a held-out number; 'strict' is the "
        "plain symbolic belief tracker (each person believes what they last witnessed).")


def ingest_story(memory: Any, story: Story, *, namespace: str | None = None) -> list[str]:
    """Ingest a story's sentences as events carrying who was present; returns event ids."""
    events = [{
        "text": ev.text,
        "ts": _T0 + 60.0 * i,
        "source": ev.actor,
        "kind": "note",
        "id": f"line{story.line}:{i + 1}",
        "meta": {"participants": sorted(ev.witnesses)},
    } for i, ev in enumerate(story_events(story))]
    ids: list[str] = memory.add_many(events, namespace=namespace)
    return ids


def rebuild_events(graph: WorkingGraph, source: str = "graph") -> list[WitnessedEvent]:
    """The participation records of a story namespace, read back from its graph.

    Events come in log (``seq``) order; each record's witnesses are the names of the
    people with a PARTICIPATES edge into the event and its actor is the event's source.
    """
    nodes = sorted((graph.nodes[i] for i in graph.of_kind(NodeKind.EVENT)),
                   key=lambda n: int(n.attrs.get("seq") or 0))
    sentences = tuple(Sentence(i + 1, i + 1, n.text) for i, n in enumerate(nodes))
    structure = story_events(Story(source, 1, sentences, ()))
    records = []
    for node, ev in zip(nodes, structure, strict=True):
        witnesses = frozenset(
            graph.nodes[e.src].text for e in graph.in_edges(node.id)
            if e.type is EdgeType.PARTICIPATES and e.src in graph.nodes
            and graph.nodes[e.src].kind is NodeKind.PERSON)
        actor = node.attrs.get("source")
        records.append(replace(ev, actor=str(actor) if actor else None, witnesses=witnesses))
    return records


@dataclass
class Tally:
    """Right and total answers by question type and kind, per semantics."""

    right: dict[str, Counter[str]] = field(default_factory=dict)
    right_kind: dict[str, Counter[str]] = field(default_factory=dict)
    total: Counter[str] = field(default_factory=Counter)
    total_kind: Counter[str] = field(default_factory=Counter)
    stories: int = 0
    events: int = 0
    records_mismatched: int = 0

    def add(self, other: Tally) -> None:
        for sem, c in other.right.items():
            self.right.setdefault(sem, Counter()).update(c)
        for sem, c in other.right_kind.items():
            self.right_kind.setdefault(sem, Counter()).update(c)
        self.total.update(other.total)
        self.total_kind.update(other.total_kind)
        self.stories += other.stories
        self.events += other.events
        self.records_mismatched += other.records_mismatched

    def rates(self, semantics: str) -> dict[str, Any]:
        """``{"accuracy", "by_type", "by_kind", "n"}`` under one semantics."""
        right = self.right.get(semantics, Counter())
        right_kind = self.right_kind.get(semantics, Counter())
        n = sum(self.total.values())
        return {"accuracy": round(sum(right.values()) / n, 4) if n else None,
                "by_type": {t: round(right[t] / self.total[t], 4) for t in sorted(self.total)},
                "by_kind": {k: round(right_kind[k] / self.total_kind[k], 4)
                            for k in sorted(self.total_kind)},
                "n": n}


def tally_graph(
    stories: Sequence[Story],
    *,
    embedder: Any,
    semantics: Sequence[Semantics] = SEMANTICS,
    progress: Callable[[str], None] | None = None,
) -> Tally:
    """Answer every question from graph-rebuilt records, under each semantics.

    ``records_mismatched`` counts the distinct stories whose rebuilt records differ from
    :func:`story_events` (0 when the graph carries the participation faithfully).
    """
    from enfold.memory import Memory
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    groups: dict[tuple[str, ...], list[Story]] = {}
    for story in stories:
        groups.setdefault(tuple(s.text for s in story.sentences), []).append(story)
    tally = Tally(right={s: Counter() for s in semantics},
                  right_kind={s: Counter() for s in semantics}, stories=len(groups))
    memory = Memory(open_store("memory:"), embedder=embedder,
                    planners=[LocalPlanner(None, embedder)])
    try:
        for n, copies in enumerate(groups.values(), start=1):
            ns = f"tomi-{n}"
            ingest_story(memory, copies[0], namespace=ns)
            records = rebuild_events(memory.graph(ns), copies[0].source)
            memory.wipe(ns)
            tally.events += len(records)
            tally.records_mismatched += records != story_events(copies[0])
            for story in copies:
                for q in story.questions:
                    tally.total[q.qtype] += 1
                    tally.total_kind[q.kind] += 1
                    for sem in semantics:
                        if answer(q, records[:q.position], semantics=sem) == q.answer:
                            tally.right[sem][q.qtype] += 1
                            tally.right_kind[sem][q.kind] += 1
            if progress is not None and n % 500 == 0:
                progress(f"{n}/{len(groups)} stories")
    finally:
        memory.close()
    return tally


def evaluate_graph(stories: Sequence[Story], *, embedder: Any,
                   semantics: Semantics = "tomi") -> dict[str, Any]:
    """Like :func:`enfold.bench.tomi.evaluate`, but answering from the graph's records."""
    return tally_graph(stories, embedder=embedder, semantics=(semantics,)).rates(semantics)


def tomi_files(data: Path) -> list[Path]:
    """The ToMi splits of ``data``: the file itself, or every ``*.txt`` of a directory."""
    if data.is_dir():
        files = sorted(data.glob("*.txt"))
        if not files:
            raise InputError(f"{data}: no ToMi *.txt split in this directory")
        return files
    return [data]


def run(
    data: Path,
    *,
    embedder: Any,
    stories: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Evaluate every split; returns (systems, details).

    ``systems["enfold"]`` uses the ToMi semantics, ``systems["enfold_strict"]`` the strict
    one; with several splits their numbers are pooled over all questions and each split's
    accuracy is in ``details["splits"]``. ``stories`` keeps the first N stories of a split.
    """
    from enfold.bench.tomi import evaluate

    splits: dict[str, dict[str, Any]] = {}
    text_only: dict[str, float] = {}
    pooled = Tally()
    for path in tomi_files(data):
        t0 = time.perf_counter()
        parsed = parse_tomi(path)[:stories]
        tally = tally_graph(parsed, embedder=embedder, progress=progress)
        pooled.add(tally)
        text_only[path.stem] = round(float(evaluate(parsed)["accuracy"]),  # type: ignore[arg-type]
                                     4)
        tomi, strict = tally.rates("tomi"), tally.rates("strict")
        splits[path.stem] = {"questions": tomi["n"], "stories": tally.stories,
                             "events": tally.events, "accuracy_tomi": tomi["accuracy"],
                             "accuracy_strict": strict["accuracy"],
                             "records_mismatched": tally.records_mismatched,
                             "elapsed_s": round(time.perf_counter() - t0, 2)}
        if progress is not None:
            progress(f"{path.name}: {tomi['n']} questions, {tally.stories} distinct stories, "
                     f"tomi {tomi['accuracy']}, strict {strict['accuracy']}")
    systems = {"enfold": pooled.rates("tomi"), "enfold_strict": pooled.rates("strict")}
    details = {"splits": splits, "stories": pooled.stories, "events": pooled.events,
               "records_mismatched": pooled.records_mismatched,
               "text_records_accuracy": text_only, "note": NOTE,
               "published": {"CogniFold ToMi accuracy": 0.835}}
    return systems, details
