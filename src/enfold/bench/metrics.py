"""Benchmark metrics as plain functions over plain inputs.

Everything here takes node ids, edge lists, rankings, strings or numpy arrays — never a
store or a graph object — so that the same function scores enfold and every baseline, and so
that each one can be checked by hand on a toy input.

CogEval-Bench (CogniFold, Appendix F.4):

- :func:`gold_f1`, :func:`gold_f1_sensitivity` — concept emergence against the gold concepts;
- :func:`event_overlap_f1`, :func:`bcubed` — concept recovery by grounding events, without
  labels;
- :func:`purity` — how coherent the events grounding each concept are;
- :func:`chain_discovery`, :func:`clustering_coefficient`, :func:`modularity`,
  :func:`edge_type_entropy` — relationship topology;
- :func:`compression`, :func:`gini`, :func:`proactivity` — compression and proactivity.

Retrieval and QA (LoCoMo): :func:`recall_at_k`, :func:`normalize_answer`, :func:`token_f1`.
Speed: :func:`percentiles`.

Edges are tuples ``(u, v)`` or ``(u, v, weight)``; direction is ignored by every topology
metric here, because the paper's metrics are defined on the undirected graph.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from enfold.errors import InputError

Edge = tuple[Hashable, Hashable] | tuple[Hashable, Hashable, float]

DEFAULT_THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.9)


# --------------------------------------------------------------------------- helpers
def _as_matrix(vecs: Any, name: str) -> np.ndarray:
    """A 2-D float64 array (an empty input becomes shape (0, 0))."""
    arr = np.asarray(vecs, dtype=np.float64)
    if arr.size == 0:
        return arr.reshape(0, arr.shape[-1] if arr.ndim == 2 else 0)
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D array (n, d), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} contains NaN or infinite values")
    return arr


def _normalize_rows(mat: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; an all-zero row stays zero (cosine 0 with anything)."""
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    out: np.ndarray = mat / np.where(norms == 0.0, 1.0, norms)
    return out


def cosine_matrix(a: Any, b: Any) -> np.ndarray:
    """Pairwise cosine similarities between the rows of ``a`` (n, d) and ``b`` (m, d)."""
    ma, mb = _as_matrix(a, "a"), _as_matrix(b, "b")
    if ma.shape[0] == 0 or mb.shape[0] == 0:
        return np.zeros((ma.shape[0], mb.shape[0]))
    if ma.shape[1] != mb.shape[1]:
        raise InputError(f"dimension mismatch: {ma.shape[1]} vs {mb.shape[1]}")
    cos: np.ndarray = np.clip(_normalize_rows(ma) @ _normalize_rows(mb).T, -1.0, 1.0)
    return cos


def _edge_parts(edge: Sequence[Any]) -> tuple[Hashable, Hashable, float]:
    if len(edge) == 2:
        return edge[0], edge[1], 1.0
    if len(edge) == 3:
        weight = float(edge[2])
        if not math.isfinite(weight) or weight < 0:
            raise InputError(f"edge weight must be finite and >= 0, got {edge[2]!r}")
        return edge[0], edge[1], weight
    raise InputError(f"an edge is (u, v) or (u, v, weight), got {edge!r}")


def _adjacency(edges: Iterable[Edge]) -> dict[Hashable, set[Hashable]]:
    """Neighbour sets of the undirected simple graph (self-loops and parallels dropped)."""
    adj: dict[Hashable, set[Hashable]] = {}
    for edge in edges:
        u, v, _ = _edge_parts(edge)
        adj.setdefault(u, set())
        adj.setdefault(v, set())
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    return adj


# --------------------------------------------------------------------------- Track A
def _f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _gold_f1_from_cos(cos: np.ndarray, threshold: float) -> dict[str, Any]:
    n_sys, n_gold = cos.shape
    if n_sys == 0 or n_gold == 0:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "matches": []}
    # Pairs under the threshold can never count, so they get no weight in the assignment:
    # maximizing raw similarity could otherwise trade two valid matches for one valid and
    # one invalid pair with a larger sum.
    eligible = np.where(cos >= threshold, cos, 0.0)
    rows, cols = linear_sum_assignment(eligible, maximize=True)
    matches = [
        (int(i), int(j), float(cos[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if cos[i, j] >= threshold
    ]
    precision = len(matches) / n_sys
    recall = len(matches) / n_gold
    return {"precision": precision, "recall": recall, "f1": _f1(precision, recall),
            "matches": matches}


def gold_f1(system_vecs: Any, gold_vecs: Any, threshold: float = 0.75) -> dict[str, Any]:
    """Precision, recall and F1 of system concepts against gold concepts (CogEval Gold F1).

    Each concept is an embedding (one row). The cosine matrix is solved as a one-to-one
    assignment (Hungarian algorithm, maximizing the total similarity of the pairs that reach
    ``threshold``), and a pair counts as a match only when its cosine is ``>= threshold``.
    Precision is matches / system concepts, recall is matches / gold concepts; with no system
    or no gold concepts all three are 0.0. ``matches`` lists ``(system_row, gold_row, cos)``.
    """
    return _gold_f1_from_cos(cosine_matrix(system_vecs, gold_vecs), threshold)


def gold_f1_sensitivity(
    system_vecs: Any, gold_vecs: Any, thresholds: Iterable[float] = DEFAULT_THRESHOLDS
) -> dict[float, dict[str, float | int]]:
    """Gold F1 at several thresholds (the paper's Table 15), keyed by threshold.

    The cosine matrix is computed once; each entry holds precision, recall, f1 and
    ``n_matches``.
    """
    cos = cosine_matrix(system_vecs, gold_vecs)
    out: dict[float, dict[str, float | int]] = {}
    for t in thresholds:
        res = _gold_f1_from_cos(cos, float(t))
        out[float(t)] = {"precision": res["precision"], "recall": res["recall"],
                         "f1": res["f1"], "n_matches": len(res["matches"])}
    return out


def event_overlap_f1(system: Sequence[Iterable[Hashable]], gold: Sequence[Iterable[Hashable]],
                     threshold: float = 0.3) -> dict[str, Any]:
    """Label-free concept recovery: system concepts matched to gold concepts by their events.

    Each concept is the set of events it rests on. The Jaccard matrix of the two sides is
    solved as a one-to-one assignment (Hungarian algorithm, maximizing the total overlap of
    the pairs that reach ``threshold``); a pair counts at Jaccard ``>= threshold``.
    Precision is matches / system concepts, recall is matches / gold concepts.
    ``matches`` lists ``(system_index, gold_index, jaccard)``.
    """
    sys_sets = [set(s) for s in system]
    gold_sets = [set(g) for g in gold]
    jac = np.zeros((len(sys_sets), len(gold_sets)))
    for i, a in enumerate(sys_sets):
        for j, b in enumerate(gold_sets):
            union = len(a | b)
            jac[i, j] = len(a & b) / union if union else 0.0
    return _gold_f1_from_cos(jac, threshold)


def bcubed(system: Mapping[Hashable, Hashable], gold: Mapping[Hashable, Hashable]
           ) -> dict[str, float]:
    """B-cubed precision, recall and F1 of a clustering of items against the gold one.

    ``system`` and ``gold`` map every item to its cluster; the items are the gold's keys (an
    item the system leaves out is a cluster of its own). For each item, precision is the
    share of its system cluster that shares its gold cluster, recall the share of its gold
    cluster that shares its system cluster; both are averaged over items (Bagga & Baldwin).
    """
    items = list(gold)
    if not items:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    sys_of = {i: system.get(i, ("__alone__", i)) for i in items}
    by_sys: dict[Hashable, set[Hashable]] = {}
    by_gold: dict[Hashable, set[Hashable]] = {}
    for i in items:
        by_sys.setdefault(sys_of[i], set()).add(i)
        by_gold.setdefault(gold[i], set()).add(i)
    p = r = 0.0
    for i in items:
        s, g = by_sys[sys_of[i]], by_gold[gold[i]]
        both = len(s & g)
        p += both / len(s)
        r += both / len(g)
    precision, recall = p / len(items), r / len(items)
    return {"precision": precision, "recall": recall, "f1": _f1(precision, recall)}


def purity(groups: Sequence[Any]) -> float:
    """Mean, over concepts, of the mean pairwise cosine of the events grounding each concept.

    ``groups`` holds one (k, d) array per concept: the embeddings of its grounding events.
    A concept grounded in fewer than two events has no pairs and is left out of the mean
    (it is neither pure nor impure); if no concept has two events the purity is 0.0, which is
    what the paper reports for systems without event grounding.
    """
    scores: list[float] = []
    for idx, group in enumerate(groups):
        mat = _as_matrix(group, f"groups[{idx}]")
        k = mat.shape[0]
        if k < 2:
            continue
        unit = _normalize_rows(mat)
        sims = unit @ unit.T
        upper = sims[np.triu_indices(k, 1)]
        scores.append(float(np.clip(upper, -1.0, 1.0).mean()))
    return float(np.mean(scores)) if scores else 0.0


# --------------------------------------------------------------------------- Track B
def chain_discovery(edges: Iterable[Edge], chains: Sequence[Sequence[Hashable]]) -> float:
    """Share of planted chains whose first and last event are connected in the graph.

    Connectivity is an undirected path of any length (breadth-first search), as in the
    paper's "recoverable via BFS between endpoints". An endpoint missing from the graph is
    not connected. Chains with fewer than two events have no endpoints to connect and are
    left out; with no chain left the rate is 0.0.
    """
    adj = _adjacency(edges)
    usable = [c for c in chains if len(c) >= 2]
    if not usable:
        return 0.0
    found = sum(1 for c in usable if _connected(adj, c[0], c[-1]))
    return found / len(usable)


def _connected(adj: Mapping[Hashable, set[Hashable]], src: Hashable, dst: Hashable) -> bool:
    if src not in adj or dst not in adj:
        return False
    if src == dst:
        return True
    seen = {src}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        for nxt in adj[node]:
            if nxt == dst:
                return True
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False


def clustering_coefficient(edges: Iterable[Edge], nodes: Iterable[Hashable] | None = None
                           ) -> float:
    """Average local clustering coefficient of the undirected simple graph.

    Local clustering of v is (links among v's neighbours) / (deg(v)·(deg(v)−1)/2), and a node
    of degree < 2 counts as 0 — the networkx definition, so isolated and pendant nodes pull
    the average down. Direction, weights, parallel edges and self-loops are ignored. With
    ``nodes`` the average runs over those nodes (one absent from the graph counts as 0);
    otherwise over every node that appears in an edge. No nodes → 0.0.
    """
    adj = _adjacency(edges)
    targets = list(adj) if nodes is None else list(nodes)
    if not targets:
        return 0.0
    total = 0.0
    for v in targets:
        neigh = adj.get(v, set())
        deg = len(neigh)
        if deg < 2:
            continue
        # each link among neighbours is seen once from each of its two ends
        links = sum(len(adj[u] & neigh) for u in neigh) / 2
        total += links / (deg * (deg - 1) / 2)
    return total / len(targets)


def modularity(edges: Iterable[Edge], communities: Iterable[Iterable[Hashable]],
               resolution: float = 1.0) -> float:
    """Newman's modularity Q of a partition of an undirected, optionally weighted graph.

    ``Q = Σ_c [ L_c / m − resolution · (d_c / 2m)² ]`` where m is the total edge weight, L_c
    the weight of edges inside community c and d_c the summed (weighted) degree of its nodes.
    Edges without a weight weigh 1; parallel edges add their weights (the graph is a
    multigraph); a self-loop adds its weight twice to its node's degree. Every node of an
    edge must be in exactly one community (else :class:`InputError`); a graph without edge
    weight has Q = 0.0.
    """
    member: dict[Hashable, int] = {}
    for cid, comm in enumerate(communities):
        for node in comm:
            if node in member:
                raise InputError(f"node {node!r} is in more than one community")
            member[node] = cid
    intra: dict[int, float] = {}
    degree: dict[int, float] = {}
    m = 0.0
    for edge in edges:
        u, v, w = _edge_parts(edge)
        for node in (u, v):
            if node not in member:
                raise InputError(f"node {node!r} is in no community")
        m += w
        degree[member[u]] = degree.get(member[u], 0.0) + w
        degree[member[v]] = degree.get(member[v], 0.0) + w
        if member[u] == member[v]:
            intra[member[u]] = intra.get(member[u], 0.0) + w
    if m == 0:
        return 0.0
    return float(sum(intra.get(c, 0.0) / m - resolution * (degree[c] / (2 * m)) ** 2
                     for c in degree))


def edge_type_entropy(edge_types: Iterable[str]) -> float:
    """Shannon entropy, in bits (log base 2), of the distribution of edge types.

    k equally frequent types give log2(k) bits; a single type (or no edges) gives 0.0.
    """
    counts = Counter(edge_types)
    total = sum(counts.values())
    if total == 0:
        return 0.0
    h = -sum((c / total) * math.log2(c / total) for c in counts.values())
    return max(0.0, h)  # -0.0 for a single type


# --------------------------------------------------------------------------- Track C
def compression(n_events: int, n_concepts: int) -> float | None:
    """Compression ratio: input events per output concept (the paper's "4.6×").

    Undefined — ``None`` — when there are no concepts.
    """
    if n_events < 0 or n_concepts < 0:
        raise InputError("event and concept counts must be >= 0")
    return None if n_concepts == 0 else n_events / n_concepts


def gini(values: Iterable[float]) -> float:
    """Gini coefficient of non-negative values (used on PageRank scores).

    0 for perfect equality, approaching 1 when one value holds everything. Computed from the
    sorted values as ``Σ (2i − n − 1)·x_(i) / (n·Σx)``; empty or all-zero input gives 0.0.
    """
    arr = np.sort(np.asarray(list(values), dtype=np.float64))
    if arr.size == 0:
        return 0.0
    if not np.all(np.isfinite(arr)) or arr[0] < 0:
        raise InputError("gini needs finite, non-negative values")
    total = arr.sum()
    if total == 0:
        return 0.0
    n = arr.size
    ranks = np.arange(1, n + 1)
    return float(np.sum((2 * ranks - n - 1) * arr) / (n * total))


def proactivity(intent_grounding_counts: Iterable[int], min_support: int = 2) -> float:
    """Share of intents with at least ``min_support`` grounding connections (paper: ≥ 2).

    No intents → 0.0, which is what a system that emits none scores.
    """
    counts = list(intent_grounding_counts)
    if not counts:
        return 0.0
    return sum(1 for c in counts if c >= min_support) / len(counts)


# --------------------------------------------------------------------------- retrieval
def recall_at_k(ranked_ids: Sequence[Hashable], gold_ids: Iterable[Hashable], k: int
                ) -> float | None:
    """Fraction of the gold ids found among the first ``k`` ranked ids.

    ``None`` when there is no gold (the question cannot be scored and should be skipped,
    not counted as 0 or 1). Duplicates in the ranking count once.
    """
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")
    gold = set(gold_ids)
    if not gold:
        return None
    return len(gold & set(ranked_ids[:k])) / len(gold)


_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_ASCII_PUNCT = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """LoCoMo's answer normalization: lowercase, drop punctuation, drop a/an/the/and,
    collapse whitespace.

    Punctuation is ASCII punctuation plus any Unicode punctuation character (curly quotes,
    dashes), so typographic variants of the same answer normalize alike.
    """
    lowered = text.lower()
    no_punct = "".join(
        ch for ch in lowered
        if ch not in _ASCII_PUNCT and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def token_f1(pred: str, gold: str, *, stem: Callable[[str], str] | None = None) -> float:
    """Token-level F1 between a predicted and a gold answer, after :func:`normalize_answer`.

    LoCoMo's reference scorer also Porter-stems every token (with NLTK). enfold has no NLTK
    dependency, so tokens are compared unstemmed unless a ``stem`` function is passed (e.g.
    ``nltk.stem.PorterStemmer().stem``); unstemmed scores are slightly lower when prediction
    and gold differ only in inflection ("run" / "running"). As in LoCoMo, no shared token —
    including two empty answers — scores 0.0.
    """
    p_tokens = normalize_answer(pred).split()
    g_tokens = normalize_answer(gold).split()
    if stem is not None:
        p_tokens = [stem(t) for t in p_tokens]
        g_tokens = [stem(t) for t in g_tokens]
    same = sum((Counter(p_tokens) & Counter(g_tokens)).values())
    if same == 0:
        return 0.0
    return _f1(same / len(p_tokens), same / len(g_tokens))


# --------------------------------------------------------------------------- speed
def percentiles(samples_ms: Iterable[float]) -> dict[str, float]:
    """p50, p95 and p99 of latency samples (linear interpolation between order statistics)."""
    arr = np.asarray(list(samples_ms), dtype=np.float64)
    if arr.size == 0:
        raise InputError("percentiles of no samples")
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99)}
