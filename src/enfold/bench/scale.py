"""``enfold bench perf --scale``: recall latency as the memory grows to a million events.

One memory grows through the sizes (default 1k, 10k, 100k and 1M events of
:func:`~enfold.bench.perf.synthetic_events`, hash embedder), and at each size the same run
measures:

* ``recall_ms`` p50/p95/p99 — :data:`QUERIES` ``Memory.recall(q, k=10)`` calls with the
  stream's own questions, as an agent makes them (access statistics written);
* ``exact_scan_ms`` p50/p95/p99 — the baseline: an exact numpy scan (matrix-vector product
  and top 50) over the same event vectors, for the same query vectors;
* ``ann_recall_at_10`` — the share of the exact top 10 that the index's search returns
  (ties with the 10th exact result count as found), and ``vector_search`` (``exact`` or
  ``hnsw``).

Sizes up to :data:`FOLD_LIMIT` are folded for real (``add_many`` with the local planner,
each size continuing the previous one's stream). Larger sizes are **built directly**, not
folded, because folding a million events takes hours here: the events are appended to the
log, embedded, and each one gets the edges to derived nodes of a folded event of the same
stream (its template, the event ``FOLD_LIMIT`` positions back): its concept, intent,
people, time anchors and facts gain an edge, and a claim the template supported is copied
as a new claim of the same holder resting on the new event. The shares of derived nodes
and edges per event stay those the planner made; hubs (concepts, speakers) grow as they
would. ``--budget-s`` stops such a build early; the size is then reported with the events
it holds.

``other_stream`` (:func:`other_events`): a stream with other wording — 24 topics, eight
people, other frames and vocabulary — folded for real to ``--other-size`` events, and its
recall latency, so that the figures are not the benchmark's own wording only.

``contention``: ``add()`` and ``recall()`` latency on a small MiniLM memory, idle and then
with a competing CPU-bound process (``python -c 'while True: pass'``) on the machine, and
their ratio.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from enfold.bench.metrics import percentiles
from enfold.bench.report import markdown_table, write_result
from enfold.errors import InputError
from enfold.settings import Settings

__all__ = ["DEFAULT_SCALE_SIZES", "ScaleRun", "other_events", "render_scale", "run_scale"]

DEFAULT_SCALE_SIZES = (1_000, 10_000, 100_000, 1_000_000)
FOLD_LIMIT = 100_000  # sizes up to this are folded for real; larger ones built directly
QUERIES = 200
CHUNK = 500
BUILD_CHUNK = 5_000
CONTENTION_EVENTS = 500  # the MiniLM memory add() and recall() are timed on
CONTENTION_CALLS = 40
Progress = Callable[[str], None]


# ------------------------------------------------------------------- the other stream
OTHER_TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("warehouse robots", ("charging dock", "pick rate", "firmware patch", "lidar fault")),
    ("payroll system", ("overtime rules", "pay slips", "bank export", "tax tables")),
    ("orchard harvest", ("apple crates", "cider press", "frost nets", "picking crew")),
    ("violin lessons", ("bow hold", "vibrato drills", "rosin", "tuning pegs")),
    ("bathroom leak", ("grout", "shower valve", "ceiling stain", "sealant")),
    ("satellite launch", ("payload fairing", "telemetry link", "launch window", "orbit burn")),
    ("bakery opening", ("croissant dough", "shop lease", "espresso machine", "health permit")),
    ("rowing club", ("erg scores", "boat rigging", "river regatta", "stroke rate")),
    ("legal contract", ("indemnity clause", "signature page", "termination notice", "redline")),
    ("beekeeping", ("queen cell", "honey super", "varroa mites", "smoker fuel")),
    ("server outage", ("load balancer", "pager alert", "postmortem", "disk quota")),
    ("novel draft", ("chapter outline", "villain arc", "copy editor", "cover blurb")),
    ("kayak expedition", ("dry bags", "tide tables", "paddle leash", "portage")),
    ("pottery studio", ("kiln firing", "glaze recipe", "throwing wheel", "clay order")),
    ("fundraising gala", ("silent auction", "sponsor list", "ticket sales", "keynote")),
    ("language model eval", ("benchmark suite", "prompt set", "scoring rubric", "eval harness")),
    ("roof repair", ("shingles", "gutter guard", "scaffold hire", "flashing")),
    ("chemistry lab", ("titration", "fume hood", "reagent stock", "lab notebook")),
    ("film festival", ("screening slot", "jury panel", "subtitle files", "red carpet")),
    ("bike shop", ("wheel truing", "chain wear", "spoke tension", "brake bleed")),
    ("retirement planning", ("pension pot", "annuity quote", "drawdown", "state pension")),
    ("aquarium", ("water chemistry", "coral frag", "protein skimmer", "reef lights")),
    ("city council", ("zoning vote", "public comment", "budget hearing", "ward map")),
    ("marathon swim", ("open water", "wetsuit", "feeding plan", "channel crossing")),
)
OTHER_PEOPLE = ("Ingrid", "Kwame", "Sofia", "Yusuf", "Beatriz", "Henrik", "Ama", "Tariq")
OTHER_FRAMES: tuple[str, ...] = (
    "Ping from {p}: the {a} on {topic} needs a decision.",
    "{p} reckons the {a} will slip; {topic} waits on it.",
    "Logged: {a} done, {b} pending ({topic}).",
    "Chased {p} about the {b}. No reply yet.",
    "Call with {p} re {topic} - agreed to revisit the {a}.",
    "Blocker on {topic}: {a}. Escalated to {p}.",
    "{p} wants the {b} sorted before anything else.",
    "Small win today, the {a} finally behaves.",
    "Budgeted three hours for the {b}; took five.",
    "Memo to self: order more {c} for {topic}.",
    "Heard from {p} that the {a} passed review.",
    "{topic}: {a} vs {b}, still undecided.",
)


OTHER_TAILS = ("", "", " #{n}", " Took {n} minutes.", " See ticket {n}.", " Before {day}.",
               " Thanks {p}!", " Round {n}.", " Costs {n} euros.", " Version {n}.",
               " Again on {day}.", " {n} left.")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend")


def other_events(n: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """A deterministic stream of ``n`` events in other words than
    :func:`~enfold.bench.perf.synthetic_events`: 24 topics, eight people, twelve terse
    frames (notes to self, pings, logs) with numbered asides, about 45 events a day."""
    rng = random.Random(seed + 7919)
    ts = datetime(2023, 3, 1, 7, 0, tzinfo=UTC)
    weights = [1.0 / (1 + r) ** 0.6 for r in range(len(OTHER_TOPICS))]
    for i in range(n):
        ts += timedelta(seconds=rng.expovariate(45 / 86_400.0))
        topic, phrases = OTHER_TOPICS[rng.choices(range(len(OTHER_TOPICS)), weights)[0]]
        a, b, c = rng.sample(phrases, 3)
        text = rng.choice(OTHER_FRAMES).format(topic=topic, a=a, b=b, c=c,
                                               p=rng.choice(OTHER_PEOPLE))
        text += rng.choice(OTHER_TAILS).format(n=rng.randint(2, 999), p=rng.choice(OTHER_PEOPLE),
                                               day=rng.choice(DAYS))
        yield {"id": f"other-{seed}-{i}", "text": text, "ts": ts.isoformat(),
               "source": rng.choice(("me", "me", rng.choice(OTHER_PEOPLE)))}


def other_queries(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed + 104729)
    out = []
    for _ in range(n):
        topic, phrases = rng.choice(OTHER_TOPICS)
        out.append(rng.choice((
            f"Any news on the {rng.choice(phrases)}?",
            f"What did {rng.choice(OTHER_PEOPLE)} say about {topic}?",
            f"Is the {rng.choice(phrases)} blocked?",
            f"Where are we with {topic}?",
        )))
    return out


# ------------------------------------------------------------------------ measuring
@dataclass
class ScaleResult:
    """What one size measured."""

    size: int
    events: int  # in the memory (fewer than size if a build budget stopped it)
    built: str  # "folded" or "direct"
    build_s: float
    recall_ms: dict[str, float]
    exact_scan_ms: dict[str, float]
    ann_recall_at_10: float | None
    vector_search: str
    nodes_by_kind: dict[str, int] = field(default_factory=dict)
    edges: int = 0
    rss_mb: float | None = None


@dataclass
class ScaleRun:
    result: dict[str, Any]
    sizes: list[ScaleResult]
    other: ScaleResult | None
    contention: dict[str, Any] | None


def _time_recall(mem: Any, queries: Sequence[str]) -> dict[str, float]:
    mem.recall(queries[0], k=10)  # warm: lazy imports, caches
    samples = []
    for q in queries:
        t0 = time.perf_counter()
        mem.recall(q, k=10)
        samples.append((time.perf_counter() - t0) * 1000.0)
    return percentiles(samples)


def _vectors_report(mem: Any, queries: Sequence[str]) -> tuple[dict[str, float],
                                                                float | None, str]:
    """The exact scan's latency over the event vectors, and the index's recall@10."""
    g = mem.graph()
    index = g.event_vectors
    qv = np.asarray(mem.embedder.embed(list(queries)), dtype=np.float32)
    samples = []
    for q in qv:
        t0 = time.perf_counter()
        index.search_exact(q, 50)
        samples.append((time.perf_counter() - t0) * 1000.0)
    found = 0
    total = 0
    for q in qv:
        exact = index.search_exact(q, 10)
        if not exact:
            continue
        floor = exact[-1][1] - 1e-6
        got = index.search(q, 10)
        found += sum(1 for _, s in got if s >= floor)
        total += len(exact)
    recall = None if not index.approximate or not total else found / total
    return percentiles(samples), recall, "hnsw" if index.approximate else "exact"


def _stats(mem: Any) -> tuple[dict[str, int], int]:
    s = mem.stats()
    return ({str(k): int(v) for k, v in sorted(s["nodes"].items())},
            int(sum(s["edges"].values())))


def _rss() -> float | None:
    from enfold.bench.perf import rss_mb

    return rss_mb()[0]


def grow_directly(mem: Any, events: Sequence[dict[str, Any]], template_back: int,
                  *, budget_s: float | None = None, progress: Progress | None = None) -> int:
    """Add ``events`` to ``mem`` without the planner (see the module docstring): appended
    to the log, embedded, and given the derived edges of the folded event
    ``template_back`` positions earlier in the stream. Returns how many were added."""
    ns = mem.graph().namespace
    start = time.perf_counter()
    done = 0
    for lo in range(0, len(events), BUILD_CHUNK):
        batch = events[lo:lo + BUILD_CHUNK]
        cursor = mem.store.get_cursor(ns)
        mem.add_many(batch, fold=False, chunk=BUILD_CHUNK)
        nodes = mem.store.events_after(ns, cursor, len(batch))
        vecs = mem.embedder.embed([n.text for n in nodes])
        # Written under the namespace's lock, as folding writes: the memory then records
        # the store's new change token, instead of taking the graph for stale and
        # reloading it at the next call.
        with mem.reading(ns) as g:
            _graft(mem, g, nodes, vecs, template_back)
        done += len(batch)
        el = time.perf_counter() - start
        if progress is not None and (lo // BUILD_CHUNK) % 20 == 19:
            progress(f"  built {done:,} of {len(events):,} directly, {el:.0f} s")
        if budget_s is not None and el > budget_s and done < len(events):
            if progress is not None:
                progress(f"  build budget of {budget_s:g} s spent after {done:,} events")
            break
    return done


def _graft(mem: Any, g: Any, nodes: Sequence[Any], vecs: Any, template_back: int) -> None:
    """One chunk of :func:`grow_directly`, in one transaction."""
    from enfold.model import EdgeType

    by_seq = g.events_by_seq
    g.begin()
    try:
        last = 0
        for node, vec in zip(nodes, vecs, strict=True):
            seq = int(node.attrs["seq"])
            last = max(last, seq)
            g.put_node(node, persist=False)
            g.set_vector(node.id, vec)
            template = by_seq.get(seq - template_back)
            if template is None:
                continue
            for e in list(g.edges_of(template)):
                other = e.dst if e.src == template else e.src
                if other.startswith("ev_"):
                    continue
                if e.type is EdgeType.SUPPORTED_BY and other.startswith("cl_"):
                    _copy_claim(g, other, node.id)
                    continue
                src, dst = (node.id, other) if e.src == template else (other, node.id)
                g.put_edge(e.with_changes(src=src, dst=dst))
        mem.store.commit(g.namespace, g.changes(), cursor=last)
    except BaseException:
        g.rollback()
        raise
    g.commit()


def _copy_claim(g: Any, claim_id: str, event_id: str) -> None:
    """A new claim like ``claim_id`` (same holder, text, concept) resting on ``event_id``."""
    from enfold.model import EdgeType, NodeKind, new_id

    claim = g.nodes.get(claim_id)
    if claim is None:
        return
    cid = new_id(NodeKind.CLAIM)
    g.put_node(claim.with_changes(id=cid, grounded_in=(event_id,)))
    for e in list(g.edges_of(claim_id)):
        if e.type is EdgeType.SUPPORTED_BY:
            g.put_edge(e.with_changes(src=cid, dst=event_id))
        elif e.src == claim_id:
            g.put_edge(e.with_changes(src=cid))
        else:
            g.put_edge(e.with_changes(dst=cid))


def _contention(progress: Progress | None, competitors: int) -> dict[str, Any]:
    """add() and recall() on a small MiniLM memory (hash if MiniLM is not installed), idle
    and with ``competitors`` CPU-bound processes running."""
    from enfold import Memory
    from enfold.bench.perf import synthetic_events, synthetic_stream
    from enfold.errors import EmbedderError

    name = "minilm"
    try:
        from enfold.embed import make_embedder

        emb = make_embedder("minilm")
        emb.load()  # type: ignore[attr-defined]
    except (EmbedderError, AttributeError):
        name, emb = "hash", make_embedder("hash")
    events = list(synthetic_events(CONTENTION_EVENTS + 3 * CONTENTION_CALLS, seed=3))
    queries = synthetic_stream(3).queries(2 * CONTENTION_CALLS)
    out: dict[str, Any] = {"embedder": name, "competitors": competitors,
                           "command": f"{sys.executable} -c 'while True: pass'"}
    with tempfile.TemporaryDirectory(prefix="enfold-contention-") as tmp, \
            Memory.open(Path(tmp) / "c.db", embedder=emb, planner="local") as mem:
        mem.add_many(events[:CONTENTION_EVENTS])
        rest = iter(events[CONTENTION_EVENTS:])

        def phase(label: str) -> None:
            adds, recalls = [], []
            for i in range(CONTENTION_CALLS):
                e = next(rest)
                t0 = time.perf_counter()
                mem.add(e["text"], ts=e["ts"], source=e["source"])
                adds.append((time.perf_counter() - t0) * 1000.0)
                t0 = time.perf_counter()
                mem.recall(queries[i + (CONTENTION_CALLS if label == "loaded" else 0)], k=10)
                recalls.append((time.perf_counter() - t0) * 1000.0)
            out[f"add_ms_{label}"] = percentiles(adds)
            out[f"recall_ms_{label}"] = percentiles(recalls)

        e = next(rest)
        mem.add(e["text"], ts=e["ts"], source=e["source"])  # warm
        if progress is not None:
            progress(f"contention: {name} add()/recall() idle")
        phase("idle")
        procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                 for _ in range(competitors)]
        try:
            time.sleep(0.5)
            if progress is not None:
                progress(f"contention: with {competitors} CPU-bound process(es)")
            phase("loaded")
        finally:
            for p in procs:
                p.kill()
                p.wait()
    for what in ("add", "recall"):
        idle, loaded = out[f"{what}_ms_idle"], out[f"{what}_ms_loaded"]
        out[f"{what}_ratio_p50"] = round(loaded["p50"] / idle["p50"], 2) if idle["p50"] else None
    return out


def run_scale(sizes: Sequence[int] | None = None, *, seed: int = 0,
              budget_s: float | None = None, other_size: int = 100_000,
              contention: bool = True, competitors: int = 1, queries: int = QUERIES,
              out: Path | None = None, progress: Progress | None = None,
              fold_limit: int = FOLD_LIMIT, settings: Settings | None = None) -> ScaleRun:
    """Measure recall at each size (see the module docstring); write ``out`` (+ ``.md``).
    ``fold_limit``: sizes up to it are folded, larger ones built directly; ``settings``:
    the memories' settings (default: the defaults)."""
    from enfold import Memory
    from enfold.bench.perf import synthetic_events, synthetic_stream

    chosen = sorted(set(sizes or DEFAULT_SCALE_SIZES))
    if any(n < 1 for n in chosen):
        raise InputError(f"sizes must be positive event counts, got {chosen}")
    if other_size < 0:
        raise InputError(f"other size must be >= 0, got {other_size}")
    t_run = time.perf_counter()
    uptime_before = _loadavg()
    qs = synthetic_stream(seed).queries(queries)
    results: list[ScaleResult] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="enfold-scale-") as tmp:
        mem = Memory.open(Path(tmp) / "scale.db", embedder="hash", planner="local",
                          settings=settings)
        try:
            have = 0
            stream = synthetic_events(chosen[-1], seed)
            for size in chosen:
                need = list(_take(stream, size - have))
                t0 = time.perf_counter()
                folded = min(size, fold_limit) - min(have, fold_limit)
                if progress is not None:
                    progress(f"scale {size:,}: adding {len(need):,} events")
                if folded > 0:
                    mem.add_many(need[:folded], chunk=CHUNK)
                added = folded
                if len(need) > folded:
                    added += grow_directly(mem, need[folded:], fold_limit,
                                           budget_s=budget_s, progress=progress)
                have += added
                build_s = time.perf_counter() - t0
                how = "folded" if size <= fold_limit else "direct"
                if have < size:
                    notes.append(f"{size:,}: the build budget stopped it at {have:,} events")
                if progress is not None:
                    progress(f"scale {size:,}: timing {len(qs)} recalls")
                recall_ms = _time_recall(mem, qs)
                scan, ann, how_search = _vectors_report(mem, qs)
                kinds, edges = _stats(mem)
                results.append(ScaleResult(size, have, how, build_s, recall_ms, scan, ann,
                                           how_search, kinds, edges, _rss()))
                if have < size:
                    break
        finally:
            mem.close()
    other = None
    if other_size:
        if progress is not None:
            progress(f"other stream: folding {other_size:,} events")
        with tempfile.TemporaryDirectory(prefix="enfold-other-") as tmp, \
                Memory.open(Path(tmp) / "o.db", embedder="hash", planner="local",
                            settings=settings) as mem:
            t0 = time.perf_counter()
            mem.add_many(other_events(other_size, seed), chunk=CHUNK)
            build_s = time.perf_counter() - t0
            oq = other_queries(queries, seed)
            recall_ms = _time_recall(mem, oq)
            scan, ann, how_search = _vectors_report(mem, oq)
            kinds, edges = _stats(mem)
            other = ScaleResult(other_size, other_size, "folded", build_s, recall_ms, scan,
                                ann, how_search, kinds, edges, _rss())
    cont = _contention(progress, competitors) if contention else None
    if chosen[-1] > fold_limit:
        notes.append(f"sizes above {fold_limit:,} events are built directly, not folded: "
                     "each new event gets the derived edges (and a copy of the claim) of "
                     f"the event {fold_limit:,} positions earlier in the stream")
    config = {"sizes": chosen, "seed": seed, "budget_s": budget_s, "queries": queries,
              "embedder": "hash", "other_size": other_size, "fold_limit": fold_limit,
              "contention": contention, "competitors": competitors,
              "load_average_before": uptime_before, "load_average_after": _loadavg(),
              "machine": {"cpus": os.cpu_count()}}
    systems = {"enfold": {
        "recall_ms": {str(r.size): r.recall_ms for r in results},
        "exact_scan_ms": {str(r.size): r.exact_scan_ms for r in results},
        "ann_recall_at_10": {str(r.size): r.ann_recall_at_10 for r in results},
        "vector_search": {str(r.size): r.vector_search for r in results},
        "events": {str(r.size): r.events for r in results},
        "built": {str(r.size): r.built for r in results},
        "build_s": {str(r.size): round(r.build_s, 1) for r in results},
        "nodes_by_kind": {str(r.size): r.nodes_by_kind for r in results},
        "edges": {str(r.size): r.edges for r in results},
        "rss_mb": {str(r.size): r.rss_mb for r in results},
        "other_stream": None if other is None else {
            "events": other.events, "recall_ms": other.recall_ms,
            "exact_scan_ms": other.exact_scan_ms, "ann_recall_at_10": other.ann_recall_at_10,
            "vector_search": other.vector_search, "build_s": round(other.build_s, 1),
            "nodes_by_kind": other.nodes_by_kind},
        "contention": cont,
    }}
    result = write_result("perf-scale", config, systems, time.perf_counter() - t_run, out,
                          extra={"notes": notes})
    return ScaleRun(result, results, other, cont)


def _take(it: Iterator[dict[str, Any]], n: int) -> Iterator[dict[str, Any]]:
    for _ in range(max(0, n)):
        try:
            yield next(it)
        except StopIteration:
            return


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def render_scale(run: ScaleRun) -> str:
    """A readable table of a :func:`run_scale` result."""
    def row(label: str, r: ScaleResult) -> dict[str, Any]:
        return {"events": label, "built": r.built, "search": r.vector_search,
                "recall p50 ms": r.recall_ms["p50"], "p95": r.recall_ms["p95"],
                "p99": r.recall_ms["p99"], "exact scan p50 ms": r.exact_scan_ms["p50"],
                "scan p95": r.exact_scan_ms["p95"],
                "ANN recall@10": r.ann_recall_at_10, "build s": r.build_s}

    rows = [row(f"{r.events:,}", r) for r in run.sizes]
    if run.other is not None:
        rows.append(row(f"{run.other.events:,} (other wording)", run.other))
    lines = [markdown_table(rows, list(rows[0]) if rows else ["events"])]
    c = run.contention
    if c is not None:
        lines += ["", (f"with {c['competitors']} competing CPU-bound process(es), "
                       f"{c['embedder']} embedder:")]
        for what in ("add", "recall"):
            idle, loaded = c[f"{what}_ms_idle"], c[f"{what}_ms_loaded"]
            lines.append(f"  {what}(): p50 {idle['p50']:.1f} → {loaded['p50']:.1f} ms, "
                         f"p95 {idle['p95']:.1f} → {loaded['p95']:.1f} ms "
                         f"(×{c[f'{what}_ratio_p50']} at p50)")
    cfg = run.result.get("config", {})
    lines.append(f"load average before / after: {cfg.get('load_average_before')} / "
                 f"{cfg.get('load_average_after')}")
    lines += [f"note: {n}" for n in run.result.get("notes", [])]
    lines.append(f"elapsed: {run.result['elapsed_s']:.1f} s")
    return "\n".join(lines)
