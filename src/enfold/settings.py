"""The settings table: every tunable number of enfold, with its default and why.

One frozen dataclass, :class:`Settings`; each field's metadata carries its help text and the
SPEC section it comes from. The docs and ``enfold settings`` are generated from
:func:`settings_table`, so a setting cannot exist undocumented. Nothing here reads the
environment: the CLI and the server pass overrides explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from enfold.ann import AnnOptions
from enfold.errors import ConfigError


def _s(default: Any, help: str, section: str = "") -> Any:
    return field(default=default, metadata={"help": help, "section": section})


@dataclass(frozen=True)
class Settings:
    """All of enfold's defaults (SPEC §11). Override with ``Settings().with_(name=value)``."""

    # Proactive context assembly (SPEC §4.3, CogniFold Eq. 1)
    alpha: float = _s(0.4, "weight of PageRank in the context score", "§4.3")
    beta: float = _s(0.4, "weight of recency exp(-λΔt) in the context score", "§4.3")
    gamma: float = _s(0.2, "weight of access frequency in the context score", "§4.3")
    recency_lambda: float = _s(0.01, "recency decay λ per hour since last access", "§4.3")
    urgency_max: float = _s(2.0, "urgency multiplier U(v) reached at a deadline", "§4.3")
    urgency_window_h: float = _s(24.0, "hours before a deadline over which U rises 1→max", "§4.3")
    context_window: int = _s(100, "candidate nodes considered for the context window", "§4.3")
    tier_immediate: float = _s(0.10, "share of the window in the Immediate tier", "§4.3")
    tier_working: float = _s(0.30, "share of the window in the Working tier", "§4.3")
    tier_background: float = _s(0.50, "share of the window in the Background tier", "§4.3")
    context_nearest: int = _s(5, "nearest concepts/facts/claims by embedding added", "§4.3")
    context_recent_vectors: int = _s(
        4096, "facts/claims searched for the nearest: the most recent ones", "§4.3")
    pagerank_damping: float = _s(0.85, "PageRank damping factor", "§4.3")
    pagerank_tol: float = _s(1e-6, "PageRank convergence tolerance (L1)", "§4.3")
    pagerank_every: int = _s(25, "events between warm-started PageRank refreshes", "§4.6")

    # Executor (SPEC §5)
    merge_threshold: float = _s(0.85, "label similarity / centroid cosine for near-duplicates", "§5")
    max_ops_per_plan: int = _s(200, "operations a single plan may carry", "§5")
    max_node_text: int = _s(4000, "characters of a derived node's text", "§5")
    max_event_text: int = _s(32_000, "characters of an event's text (larger is refused)", "§3")
    max_meta_bytes: int = _s(16_384, "bytes of an event's JSON meta", "§3")
    edge_reinforce: float = _s(0.1, "weight added when an edge is reinforced", "§2")
    strength_reinforce: float = _s(0.1, "strength added to a reinforced concept", "§6")

    # Local planner (SPEC §4, local mode); thresholds are per embedder, see calibration
    assign_threshold: float = _s(0.0, "cosine to a concept centroid to reinforce it "
                                 "(0 = use the embedder's calibration)", "§4")
    cluster_threshold: float = _s(0.0, "cosine for pending events to cluster "
                                  "(0 = use the embedder's calibration)", "§4")
    group_events: bool = _s(False, "consolidation groups the recent unfolded events by "
                            "average linkage (enfold.consolidate.group; off: on the CogEval "
                            "tuning and measuring scenarios it folds more events but matches "
                            "the gold themes no better)", "§6")
    group_threshold: float = _s(0.0, "mean cosine at which grouping joins two groups "
                                "(0: the embedder's calibration)", "§6")
    cluster_min_events: int = _s(3, "pending events needed to form a concept", "§4")
    cluster_window_days: float = _s(30.0, "window within which pending events cluster", "§4")
    pending_max: int = _s(500, "pending (unfolded) events kept as cluster candidates", "§4")
    label_max_terms: int = _s(3, "key phrases in a concept label", "§4")

    fold_group_events: int = _s(256, "events folded per store transaction (group commit)", "§3")
    fold_group_ms: float = _s(500.0, "longest a fold group collects events before its write "
                              "(a crash refolds them from the log)", "§3")

    # Consolidation (SPEC §6)
    consolidate_every: int = _s(50, "events between automatic consolidation passes", "§6")
    consolidate_idle_s: float = _s(60.0, "idle seconds before a consolidation pass", "§6")
    decay_delta: float = _s(0.005, "edge decay δ per hour since last reinforcement", "§6")
    prune_floor: float = _s(0.05, "weight below which derived edges are archived", "§6")
    provenance_floor: float = _s(0.3, "weight below which provenance edges never decay", "§6")
    knn_k: int = _s(3, "neighbours for kNN completion", "§6")
    knn_min_cosine: float = _s(0.30, "cosine for kNN completion", "§6")
    fact_min_events: int = _s(3, "events sharing a person and a concept that form a fact", "§6")
    fact_window_days: float = _s(30.0, "window for fact consolidation", "§6")

    # Intents (SPEC §7)
    intent_ema_alpha: float = _s(0.3, "EMA rate of per-category feedback", "§7")
    feedback_accept: float = _s(1.5, "feedback score of accept", "§7")
    feedback_modify: float = _s(1.1, "feedback score of modify", "§7")
    feedback_defer: float = _s(0.8, "feedback score of defer", "§7")
    feedback_reject: float = _s(0.3, "feedback score of reject", "§7")
    intent_density: float = _s(0.5, "base weighted-density threshold θ for goal intents", "§7")
    habit_min_events: int = _s(3, "occurrences within the habit window that make a habit", "§7")
    habit_window_days: float = _s(7.0, "window of a habit", "§7")

    # Recall (SPEC §8)
    bm25_k1: float = _s(1.5, "BM25 k1 (reference BM25; FTS5 uses its built-in 1.2)", "§8")
    bm25_b: float = _s(0.75, "BM25 b", "§8")
    rrf_k: int = _s(60, "reciprocal rank fusion constant", "§8")
    traverse_depth: int = _s(3, "maximum traversal hops", "§8")
    traverse_decay: float = _s(0.7, "score decay per traversal hop", "§8")
    ppr_blend: float = _s(0.4, "share of personalized PageRank in traversal scores", "§8")
    recall_k: int = _s(10, "items returned by recall", "§8")
    lexical_rows: int = _s(4000, "index rows a lexical (BM25) search scores at most: the "
                           "query's commonest words are left out first (0 = no bound)", "§8")
    context_tokens: int = _s(2000, "token budget of a rendered context", "§8")

    # Vector search
    ann_threshold: int = _s(20_000, "vectors in an index (events, or one kind of derived node) "
                            "from which search uses an HNSW graph instead of an exact scan "
                            "(0 = always exact)", "§8")
    ann_connectivity: int = _s(16, "HNSW links per node and layer (M)", "§8")
    ann_expansion_add: int = _s(128, "HNSW candidates kept while inserting (efConstruction)",
                                "§8")
    ann_expansion_search: int = _s(128, "HNSW candidates kept while searching (ef)", "§8")

    # Embeddings and LLM
    embedding_dtype: str = _s("float32", "float32 or float16 embedding blobs", "§3")
    embed_batch: int = _s(64, "texts per embedding batch", "§4")
    embed_threads_single: int = _s(1, "threads a local model (MiniLM) embeds one text with: a "
                                   "query, one add() (0 = the library's default)", "§4")
    embed_threads_batch: int = _s(0, "threads a local model embeds a batch with "
                                  "(0 = every core)", "§4")
    llm_batch: int = _s(1, "events folded per LLM call (micro-batching)", "§4")
    llm_breaker_failures: int = _s(
        5, "consecutive failed LLM calls (timeouts, unreachable, 5xx/429 after retries) that "
        "open the circuit breaker: calls then fail fast and events fold locally (0: never)", "§1")
    llm_breaker_cooldown_s: float = _s(
        60.0, "seconds an open LLM circuit breaker refuses calls before one probe call "
        "(success closes it, failure reopens it)", "§1")

    def ann_options(self) -> AnnOptions:
        """The vector indexes' search options these settings give."""
        return AnnOptions(threshold=self.ann_threshold, connectivity=self.ann_connectivity,
                          expansion_add=self.ann_expansion_add,
                          expansion_search=self.ann_expansion_search)

    def with_(self, **overrides: Any) -> Settings:
        """A copy with some settings changed; unknown names are a ConfigError."""
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise ConfigError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(self, **overrides)


def settings_table() -> list[dict[str, Any]]:
    """Rows of (name, default, help, section) for docs and ``enfold settings``."""
    return [
        {
            "name": f.name,
            "default": f.default,
            "help": f.metadata.get("help", ""),
            "section": f.metadata.get("section", ""),
        }
        for f in fields(Settings)
    ]
