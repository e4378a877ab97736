"""``enfold bench namespaces``: many namespaces served by one process within a memory budget.

One :class:`~enfold.memory.Memory` over one SQLite file folds N namespaces of M events each
(defaults 1,000 × 200, hash embedder), one namespace after the other, as a server with many
users would. The namespaces' streams vary: even ones take
:func:`~enfold.bench.perf.synthetic_events`, odd ones
:func:`~enfold.bench.scale.other_events`, each with its own seed. The memory keeps its
namespace sessions within ``session_budget_mb`` (``--budget-mb``); the run reports:

* ``rss_mb`` — the process's RSS at start (after the parser and embedder are warm), at its
  peak (VmHWM) and at the end, and ``rss_growth_mb`` (peak minus start) against the budget;
* ``sessions`` — sessions resident at the end and at most, their estimated MB at the end and
  at most (:func:`enfold.session.estimate_bytes`), loads from the store and evictions;
* ``ingest`` — events per second overall and each namespace's ``add_many`` milliseconds
  (p50/p95/p99);
* ``recall_ms`` — ``recall(q, k=10)`` latency of the checked namespaces with their session
  resident, and ``reopened``: an evicted namespace's first recall, which rebuilds its
  session from the store;
* ``same_recall`` — once every namespace is in, ``--check`` resident namespaces (their
  graphs the ones folding built) answer three queries (``touch=False``, so that access
  statistics do not move the ranking); the oldest other namespaces are then recalled until
  those are evicted, and the checked ones asked again, rebuilt from the store: how many
  were evicted and how many gave the same top-k ids. (Not right after each namespace is
  folded: SQLite FTS5's bm25 scores use the whole file's statistics, so a namespace's
  lexical scores move as other namespaces are added — evicted or not.)
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from enfold.bench.metrics import percentiles
from enfold.bench.perf import rss_mb, synthetic_events, synthetic_stream
from enfold.bench.report import markdown_table
from enfold.bench.scale import other_events, other_queries
from enfold.settings import Settings

__all__ = ["DEFAULT_BUDGET_MB", "render_namespaces", "run_namespaces"]

DEFAULT_NAMESPACES = 1_000
DEFAULT_EVENTS = 200
DEFAULT_BUDGET_MB = 256.0
QUERIES = 3  # recall queries per checked namespace
K = 10
Progress = Callable[[str], None]


def _events(i: int, n: int) -> Iterator[dict[str, Any]]:
    """Namespace ``i``'s stream: the two synthetic streams in turn, seeded by ``i``."""
    return synthetic_events(n, seed=i) if i % 2 == 0 else other_events(n, seed=i)


def _queries(i: int) -> list[str]:
    return synthetic_stream(i).queries(QUERIES) if i % 2 == 0 else other_queries(QUERIES, i)


def _top(mem: Any, ns: str, queries: list[str]) -> tuple[list[list[str]], list[float]]:
    """Each query's top-k evidence ids, and each recall's milliseconds."""
    ids, ms = [], []
    for q in queries:
        t = time.perf_counter()
        pack = mem.recall(q, k=K, namespace=ns, touch=False)
        ms.append((time.perf_counter() - t) * 1000)
        ids.append([item.id for item in pack.evidence])
    return ids, ms


def run_namespaces(namespaces: int = DEFAULT_NAMESPACES, events: int = DEFAULT_EVENTS, *,
                   budget_mb: float = DEFAULT_BUDGET_MB, max_sessions: int = 0,
                   check: int = 20, db: Path | None = None,
                   progress: Progress | None = None) -> dict[str, Any]:
    """Run the benchmark (see the module) and return its systems' metrics and config."""
    from enfold import Memory

    settings = Settings().with_(session_budget_mb=budget_mb, session_max=max_sessions)
    with tempfile.TemporaryDirectory(prefix="enfold-ns-") as tmp:
        path = db if db is not None else Path(tmp) / "namespaces.db"
        mem = Memory.open(path, embedder="hash", settings=settings)
        try:
            return _run(mem, namespaces, events, check, settings, progress)
        finally:
            mem.close()


def _run(mem: Any, namespaces: int, events: int, check: int, settings: Settings,
         progress: Progress | None) -> dict[str, Any]:
    mem.warm_up()
    mem.recall("warm up the query parser", namespace="warm-up", touch=False)
    mem.wipe("warm-up")
    rss_start = rss_mb()[0]
    ingest_s: list[float] = []
    rss_samples: list[float] = []
    t_all = time.perf_counter()
    for i in range(namespaces):
        ns = _name(i)
        batch = list(_events(i, events))
        t = time.perf_counter()
        mem.add_many(batch, namespace=ns)
        ingest_s.append(time.perf_counter() - t)
        now = rss_mb()[0]
        if now is not None:
            rss_samples.append(now)
        if progress is not None and (i + 1) % max(1, namespaces // 20) == 0:
            st = mem.sessions.stats
            progress(f"{i + 1}/{namespaces} namespaces, {time.perf_counter() - t_all:.0f} s, "
                     f"RSS {now:.0f} MB, {st.resident} resident, {st.evictions} evictions")
    ingest_total = time.perf_counter() - t_all
    rss_after_ingest = rss_mb()[0]

    # The same recall after eviction. Lexical scores (SQLite FTS5's bm25) use the whole
    # file's statistics, so recall of a namespace moves while other namespaces are added:
    # the comparison is made once every namespace is in. The checked namespaces are resident
    # ones, their graphs those folding built in this process; recall is then asked of the
    # oldest other namespaces (rebuilding them) until the checked ones are evicted, and the
    # checked ones are asked again, rebuilt from the store.
    resident = [s.namespace for s in mem.sessions.resident()]
    step = max(1, len(resident) // max(1, check))
    checked = resident[::step][:check] if check else []
    before: dict[str, list[list[str]]] = {}
    resident_ms: list[float] = []
    reopened_ms: list[float] = []
    for ns in checked:
        before[ns], ms = _top(mem, ns, _queries(_index(ns)))
        resident_ms += ms
    others = (_name(i) for i in range(namespaces) if _name(i) not in before)
    walked = 0
    while any(s.namespace in before for s in mem.sessions.resident()):
        other = next(others, None)
        if other is None:
            break
        was_resident = any(s.namespace == other for s in mem.sessions.resident())
        _, ms = _top(mem, other, _queries(_index(other))[:1])
        (resident_ms if was_resident else reopened_ms).extend(ms)
        walked += 1
    still = {s.namespace for s in mem.sessions.resident()} & set(before)
    same = 0
    differing: list[str] = []
    for ns in checked:
        after, ms = _top(mem, ns, _queries(_index(ns)))
        reopened_ms.append(ms[0])  # the first one rebuilds the session
        resident_ms.extend(ms[1:])
        if after == before[ns]:
            same += 1
        else:
            differing.append(ns)
    st = mem.sessions.stats
    rss_end, rss_peak = rss_mb()
    total_events = namespaces * events
    return {
        "namespaces": namespaces,
        "events_per_namespace": events,
        "events": total_events,
        "budget_mb": settings.session_budget_mb,
        "session_max": settings.session_max,
        "rss_mb": {"start": _round(rss_start), "peak": _round(rss_peak),
                   "peak_sampled": _round(max(rss_samples) if rss_samples else None),
                   "after_ingest": _round(rss_after_ingest), "end": _round(rss_end)},
        "rss_growth_mb": _round(None if rss_peak is None or rss_start is None
                                else rss_peak - rss_start),
        "sessions": {"resident": st.resident, "peak_resident": st.peak_resident,
                     "estimated_mb": round(st.estimated_bytes / 2**20, 1),
                     "peak_estimated_mb": round(st.peak_estimated_bytes / 2**20, 1),
                     "loads": st.loads, "evictions": st.evictions},
        "ingest": {"events_per_s": round(total_events / ingest_total, 1),
                   "total_s": round(ingest_total, 1),
                   "namespace_ms": percentiles([s * 1000 for s in ingest_s])},
        "recall_ms": {"resident": percentiles(resident_ms) if resident_ms else None,
                      "reopened": percentiles(reopened_ms) if reopened_ms else None},
        "same_recall": {"checked": len(before), "evicted_before_reopen": len(before) - len(still),
                        "same_top_k": same, "differing": differing, "k": K,
                        "queries": QUERIES, "namespaces_walked_to_evict": walked},
    }


def _name(i: int) -> str:
    return f"ns{i:05d}"


def _index(ns: str) -> int:
    return int(ns[2:])


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def render_namespaces(metrics: dict[str, Any]) -> str:
    """A short Markdown summary of a run."""
    rows = [{
        "namespaces × events": f"{metrics['namespaces']} × {metrics['events_per_namespace']}",
        "budget MB": metrics["budget_mb"],
        "RSS start/peak/end MB": "/".join(str(metrics["rss_mb"][k])
                                         for k in ("start", "peak", "end")),
        "RSS growth MB": metrics["rss_growth_mb"],
        "resident (peak)": f"{metrics['sessions']['resident']} "
                           f"({metrics['sessions']['peak_resident']})",
        "estimated MB (peak)": f"{metrics['sessions']['estimated_mb']} "
                               f"({metrics['sessions']['peak_estimated_mb']})",
        "evictions": metrics["sessions"]["evictions"],
        "ingest ev/s": metrics["ingest"]["events_per_s"],
        "recall p50 ms resident / reopened": " / ".join(
            "-" if metrics["recall_ms"][k] is None else f"{metrics['recall_ms'][k]['p50']:.1f}"
            for k in ("resident", "reopened")),
        "same top-k / checked (evicted)": f"{metrics['same_recall']['same_top_k']}/"
                                          f"{metrics['same_recall']['checked']} "
                                          f"({metrics['same_recall']['evicted_before_reopen']})",
    }]
    return markdown_table(rows, list(rows[0]))
