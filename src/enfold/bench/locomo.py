"""LoCoMo evidence recall: enfold against flat baselines on the same turns and embedder.

Each conversation is ingested turn by turn into its own namespace (``source`` = speaker,
``ts`` = the session's date-time plus 30 s per turn to keep order, external id = the turn's
``D<session>:<turn>``), then every question of categories 1–4 is recalled as of the last
session's date. Evidence recall@k is the share of a question's evidence turns among the
top-k evidence events. BM25 (FTS5), dense (same embedder), hybrid RRF and hybrid RRF with
the ±2 neighbouring turns of each hit index the same turn texts in the same run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from enfold.bench.baselines import (
    BM25Retriever,
    DenseRetriever,
    HybridRRF,
    Retriever,
    WithNeighbours,
)
from enfold.bench.datasets import LocomoConversation, load_locomo
from enfold.bench.metrics import percentiles, recall_at_k

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10, 20)
TURN_GAP_S = 30.0  # added per turn to its session's date-time, to keep the turns in order


def turn_events(conv: LocomoConversation, *, id_prefix: str = "") -> list[dict[str, Any]]:
    """A conversation's turns as events, as this benchmark ingests them (``bench perf
    --data`` reads them the same way): the text, the speaker as source, the session's
    date-time plus :data:`TURN_GAP_S` per turn, and the turn's id after ``id_prefix``."""
    return [{"text": t.text, "source": t.speaker, "kind": "chat", "id": id_prefix + t.dia_id,
             "ts": (t.ts + timedelta(seconds=TURN_GAP_S * i)).isoformat()}
            for i, t in enumerate(conv.turns)]


def _summary(hits: dict[int, dict[int, list[float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in KS:
        row: dict[str, Any] = {}
        every: list[float] = []
        for cat, name in CATEGORIES.items():
            vals = hits[k][cat]
            every += vals
            row[name] = round(float(np.mean(vals)), 4) if vals else None
        row["overall"] = round(float(np.mean(every)), 4) if every else None
        out[f"recall@{k}"] = row
    return out


def run(
    data: Path,
    *,
    embedder: Any,
    conversations: int | None = None,
    questions: int | None = None,
    only: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Run the benchmark; returns (systems, details). ``only``: these conversations
    (sample ids) alone."""
    from enfold.memory import Memory
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    convs = [c for c in load_locomo(data)[:conversations] if only is None or c.sample_id in only]
    systems = ("enfold", "bm25", "dense", "hybrid", "hybrid+nb2")
    hits: dict[str, dict[int, dict[int, list[float]]]] = {
        s: {k: {c: [] for c in CATEGORIES} for k in KS} for s in systems}
    latency: list[float] = []
    n_questions = 0
    ingest_s = 0.0
    for conv in convs:
        mem = Memory(open_store("memory:"), namespace="locomo", embedder=embedder,
                     planners=[LocalPlanner(None, embedder)])
        events = turn_events(conv)
        t0 = time.perf_counter()
        mem.add_many(events)
        ingest_s += time.perf_counter() - t0
        ids = [t.dia_id for t in conv.turns]
        texts = [t.text for t in conv.turns]
        bm25 = BM25Retriever()
        dense = DenseRetriever(embedder.embed)
        bm25.index(ids, texts)
        dense.index(ids, texts)
        hybrid = HybridRRF([bm25, dense], k=60)
        around = WithNeighbours(hybrid, width=2, indexed=ids)
        baselines: dict[str, Retriever] = {"bm25": bm25, "dense": dense, "hybrid": hybrid,
                                           "hybrid+nb2": around}
        asked = conv.turns[-1].ts + timedelta(days=1)
        qs = [q for q in conv.questions(CATEGORIES) if q.evidence][:questions]
        for q in qs:
            n_questions += 1
            t0 = time.perf_counter()
            pack = mem.recall(q.question, k=max(KS), at=asked, touch=False)
            latency.append((time.perf_counter() - t0) * 1000)
            rankings: dict[str, Sequence[str]] = {
                "enfold": [e.external_id or "" for e in pack.evidence]}
            for name, r in baselines.items():
                rankings[name] = [i for i, _ in r.search(q.question, max(KS))]
            for name, ranking in rankings.items():
                for k in KS:
                    value = recall_at_k(ranking, q.evidence, k)
                    if value is not None:
                        hits[name][k][q.category].append(value)
        if progress is not None:
            progress(f"{conv.sample_id}: {len(conv.turns)} turns, {len(qs)} questions")
        mem.close()
    result = {s: _summary(hits[s]) for s in systems}
    result["enfold"]["latency_ms"] = {k: round(v, 2) for k, v in percentiles(latency).items()} \
        if latency else None
    details = {"conversations": len(convs), "questions": n_questions,
               "ingest_s": round(ingest_s, 2)}
    return result, details
