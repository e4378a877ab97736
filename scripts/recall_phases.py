"""CPU time per recall and per phase on a kept store.

``python scripts/recall_phases.py STORE.db [--other]``

Opens the store (hash embedder, local planner), asks the 200 questions of the synthetic
stream (``--other``: of the other-wording stream, :func:`enfold.bench.scale.other_queries`,
for a store folded from :func:`enfold.bench.scale.other_events`) once each (a first pass:
each question new to the process) and prints recall's wall time p50 / p95 / p99 (what
``bench perf --scale`` reports), its CPU time p50 / p95 and, per phase, the mean over all
questions and over the slowest tenth. The phases are the module functions of
:mod:`enfold.recall` wrapped with timers; nested ones count in their callers too
(``gather`` holds the lexical search, the anchor and grounding). Recalls write access
statistics: run it on a copy of the store.
"""

from __future__ import annotations

import collections
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import enfold.recall.analyze as analyze_module
from enfold import Memory
from enfold.bench.perf import synthetic_stream
from enfold.bench.scale import other_queries
from enfold.recall import controller, rank
from enfold.text import terms

spent: dict[str, float] = collections.defaultdict(float)


def timed(owner: Any, name: str, label: str | None = None) -> None:
    """Replace ``owner.name`` by a wrapper that adds its CPU time to ``spent[label]``."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label or name] += time.process_time() - t0
    setattr(owner, name, wrapper)


def main(path: str, other: bool = False) -> None:
    timed(analyze_module, "analyze")
    for name in ("gather", "candidate_set", "feature_matrix", "_opinions", "anchor", "ground",
                 "traverse", "_claims", "_closest_utterances", "_holder_first", "_facts_first",
                 "_paths", "_item"):
        timed(controller, name)
    timed(rank.TreeModel, "score", "model_score")
    timed(rank.RankModel, "score", "model_score")
    timed(terms.QueryTerms, "cover")
    mem = Memory.open(path, embedder="hash", planner="local")
    timed(mem.store, "search_text")
    timed(mem.store, "word_weights")
    timed(mem, "_touch")
    timed(mem.graph().event_vectors, "search", "vector_search")
    questions = other_queries(200, 0) if other else synthetic_stream(0).queries(200)
    mem.recall("warm up", k=10)
    rows = []
    wall = []
    candidates: list[int] = []
    for q in questions:
        spent.clear()
        t0, w0 = time.process_time(), time.perf_counter()
        pack = mem.recall(q, k=10)
        wall.append(time.perf_counter() - w0)
        fused = [st for st in pack.steps if st.get("op") == "fuse"]
        candidates.append(int(str(fused[0]["candidates"])) if fused else 0)
        rows.append((time.process_time() - t0, dict(spent)))
    mem.close()
    total = np.array([r[0] for r in rows]) * 1000
    slow = [r for r in rows if r[0] * 1000 >= np.percentile(total, 90)]
    ms = np.array(wall) * 1000
    print("recall wall ms " + "  ".join(f"p{p} {np.percentile(ms, p):.1f}" for p in (50, 95, 99)))
    print(f"recall CPU ms p50 {np.percentile(total, 50):.1f}  p95 {np.percentile(total, 95):.1f}")
    print("candidates scored p50 / p95 / max: " + " / ".join(
        f"{v:.0f}" for v in (np.percentile(candidates, 50), np.percentile(candidates, 95),
                             max(candidates, default=0))))
    print(f"{'phase':<16} {'mean':>8} {'slow10%':>8}")
    for key in sorted({k for _, phases in rows for k in phases}):
        mean = 1000 * np.mean([phases.get(key, 0.0) for _, phases in rows])
        tail = 1000 * np.mean([phases.get(key, 0.0) for _, phases in slow])
        print(f"{key:<16} {mean:8.2f} {tail:8.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[2:] not in ([], ["--other"]):
        sys.exit(__doc__)
    main(sys.argv[1], other=sys.argv[2:] == ["--other"])
