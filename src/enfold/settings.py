"""The settings table: every tunable number of enfold, with its default and why.

One frozen dataclass, :class:`Settings`; each field's metadata carries its help text, the
part of enfold it tunes and its bounds. The docs and ``enfold settings`` are generated from
:func:`settings_table`, so a setting cannot exist undocumented. Nothing here reads the
environment: the CLI and the server pass overrides explicitly.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from enfold.ann import AnnOptions
from enfold.errors import ConfigError


def _s(default: Any, help: str, section: str = "", *, lo: float | None = 0,
       hi: float | None = None) -> Any:
    """A setting: its default, help, section and the bounds an override must keep
    (``lo`` defaults to 0: no tunable is negative; ``None``: unbounded)."""
    return field(default=default, metadata={"help": help, "section": section, "lo": lo,
                                            "hi": hi})


@dataclass(frozen=True)
class Settings:
    """All of enfold's defaults. Override with ``Settings().with_(name=value)``."""

    # Proactive context assembly (CogniFold Eq. 1)
    alpha: float = _s(0.4, "weight of PageRank in the context score", "context", hi=1)
    beta: float = _s(0.4, "weight of recency exp(-λΔt) in the context score", "context", hi=1)
    gamma: float = _s(0.2, "weight of access frequency in the context score", "context", hi=1)
    recency_lambda: float = _s(0.01, "recency decay λ per hour since last access", "context")
    urgency_max: float = _s(2.0, "urgency multiplier U(v) reached at a deadline", "context")
    urgency_window_h: float = _s(24.0, "hours before a deadline over which U rises 1→max",
                                 "context")
    context_window: int = _s(100, "candidate nodes considered for the context window",
                             "context", lo=1)
    tier_immediate: float = _s(0.10, "share of the window in the Immediate tier", "context", hi=1)
    tier_working: float = _s(0.30, "share of the window in the Working tier", "context", hi=1)
    tier_background: float = _s(0.50, "share of the window in the Background tier", "context", hi=1)
    context_nearest: int = _s(5, "nearest concepts/facts/claims by embedding added", "context")
    context_recent_vectors: int = _s(
        4096, "facts/claims searched for the nearest: the most recent ones", "context")
    pagerank_damping: float = _s(0.85, "PageRank damping factor", "context", hi=1)
    pagerank_tol: float = _s(1e-6, "PageRank convergence tolerance (L1)", "context")
    pagerank_every: int = _s(25, "events between warm-started PageRank refreshes", "context", lo=1)
    pagerank_churn: float = _s(0.002, "PageRank is refreshed once the events folded since the "
                               "last refresh reach this share of the edge count (and "
                               "pagerank_every)", "context")
    context_concept_bonus: float = _s(1.0, "kind bonus of a concept in the Working tier's order "
                                      "(0.5 PageRank + 0.3 recency + 0.2 bonus; other kinds "
                                      "but intents have none)", "context")
    context_intent_bonus: float = _s(0.8, "kind bonus of an intent in the Working tier's order",
                                     "context")
    context_recent: int = _s(200, "recently active derived nodes kept as context candidates",
                             "context", lo=1)

    # Executor
    merge_threshold: float = _s(0.85, "label similarity / centroid cosine for near-duplicates",
                                "executor", hi=1)
    max_ops_per_plan: int = _s(200, "operations a single plan may carry", "executor", lo=1)
    max_removals_per_plan: int = _s(20, "node and edge removals a single plan may carry",
                                    "executor")
    max_attrs_bytes: int = _s(16_384, "bytes of a derived node's attributes (as JSON)",
                              "executor", lo=1)
    max_node_text: int = _s(4000, "characters of a derived node's text", "executor", lo=1)
    max_event_text: int = _s(32_000, "characters of an event's text (larger is refused)",
                             "events", lo=1)
    max_meta_bytes: int = _s(16_384, "bytes of an event's JSON meta", "events")
    max_meta_depth: int = _s(32, "levels of objects and arrays an event's JSON meta may nest "
                             "(deeper is refused; at most 500, within the JSON encoder's "
                             "recursion)", "events", lo=1, hi=500)
    edge_reinforce: float = _s(0.1, "weight added when an edge is reinforced", "graph")
    strength_reinforce: float = _s(0.1, "strength added to a reinforced concept", "consolidation")

    # Local planner; thresholds are per embedder, see calibration
    assign_threshold: float = _s(0.0, "cosine to a concept centroid to reinforce it "
                                 "(0 = use the embedder's calibration)", "write", hi=1)
    cluster_threshold: float = _s(0.0, "cosine for pending events to cluster "
                                  "(0 = use the embedder's calibration)", "write", hi=1)
    uncalibrated_assign_threshold: float = _s(
        0.55, "assign threshold of an embedder enfold/data/calibration.json records no "
        "calibration for", "write", hi=1)
    uncalibrated_cluster_threshold: float = _s(
        0.45, "cluster threshold of an embedder without a recorded calibration", "write", hi=1)
    uncalibrated_parent_threshold: float = _s(
        0.35, "cosine of a new concept's centroid to another concept at which they share a "
        "broader theme (PART_OF a parent), under an embedder without a recorded "
        "calibration", "write", hi=1)
    uncalibrated_group_threshold: float = _s(
        0.45, "grouping threshold of an embedder without a recorded calibration",
        "consolidation", hi=1)
    group_events: bool = _s(False, "consolidation groups the recent unfolded events by "
                            "average linkage (enfold.consolidate.group; off: on the CogEval "
                            "tuning and measuring scenarios it folds more events but matches "
                            "the gold themes no better)", "consolidation")
    group_threshold: float = _s(0.0, "mean cosine at which grouping joins two groups "
                                "(0: the embedder's calibration)", "consolidation", hi=1)
    group_pool_max: int = _s(400, "recent events grouping clusters at most (the linkage costs "
                             "the square of this, not the memory's size)", "consolidation", lo=1)
    hub_degree: int = _s(64, "edges past which a node joins a pass's region but is not "
                         "expanded from", "consolidation")
    cluster_min_events: int = _s(3, "pending events needed to form a concept", "write", lo=1)
    cluster_window_days: float = _s(30.0, "window within which pending events cluster", "write")
    pending_max: int = _s(500, "pending (unfolded) events kept as cluster candidates", "write")
    forget_label_events: int = _s(64, "a concept's earliest events its label is drawn from "
                                  "again when forgetting removed words of it", "write", lo=1)
    forget_quote_chars: int = _s(40, "leading characters of a forgotten event's text whose "
                                 "copy in another text is a verbatim quote of it (that text "
                                 "is rebuilt or redacted)", "write", lo=1)
    forget_min_quote_chars: int = _s(16, "characters a fragment of a forgotten event's text "
                                     "needs to be taken for a quote of it", "write", lo=1)
    name_events: int = _s(24, "events a concept's name is chosen from at most (those nearest "
                          "its centroid)", "write", lo=1)
    label_max_terms: int = _s(3, "key phrases kept as a concept's keywords (the label is "
                              "the first)", "write", lo=1)
    label_cover_weight: float = _s(0.25, "weight, in a label candidate's score, of the share of "
                                   "the theme's events that hold the phrase (beside its two "
                                   "closeness terms to the theme)", "write")
    label_short_bonus: float = _s(0.2, "bonus of a one-word label candidate (half of it when "
                                  "no phrase vectors are at hand)", "write")
    label_min_distinct: float = _s(0.2, "normalized idf below which a phrase's words are the "
                                   "namespace's background, never a theme's label", "write",
                                   hi=1)
    label_specialize: float = _s(0.5, "how far below a lone head's score a longer phrase of "
                                 "that head may name the theme instead (0: never)", "write")
    label_mmr_lambda: float = _s(0.6, "MMR balance of relevance (1) against redundancy (0) "
                                 "when choosing a concept's keywords", "write", hi=1)
    label_lead_checks: int = _s(5, "best label candidates looked at, in order, for one no "
                                "other concept has taken before a taken one may lead",
                                "write", lo=1)
    relabel_growth: float = _s(1.5, "a concept is named anew when its events have grown by "
                               "this factor since it was last named", "write", lo=1.01)

    ingest_chunk: int = _s(100, "events `enfold ingest` and the server's bulk import append "
                           "per store transaction (each chunk folded after it is durable)",
                           "events", lo=1)
    stale_retries: int = _s(8, "times a write whose commit found the namespace changed by "
                            "another writer reloads the working graph and runs again (the "
                            "last failure is raised)", "events", lo=1)
    fold_group_events: int = _s(256, "events folded per store transaction (group commit)",
                                "events", lo=1)
    fold_group_ms: float = _s(500.0, "longest a fold group collects events before its write "
                              "(a crash refolds them from the log)", "events")

    # Consolidation
    consolidate_every: int = _s(50, "events between automatic consolidation passes",
                                "consolidation")
    consolidate_idle_s: float = _s(60.0, "idle seconds before a consolidation pass",
                                   "consolidation")
    decay_delta: float = _s(0.005, "edge decay δ per hour since last reinforcement",
                            "consolidation")
    prune_floor: float = _s(0.05, "weight below which derived edges are archived",
                            "consolidation", hi=1)
    provenance_floor: float = _s(0.3, "weight below which provenance edges never decay",
                                 "consolidation", hi=1)
    knn_k: int = _s(3, "neighbours for kNN completion", "consolidation", lo=1)
    knn_min_cosine: float = _s(0.30, "cosine for kNN completion", "consolidation", hi=1)
    fact_min_events: int = _s(3, "events sharing a person and a concept that form a fact",
                              "consolidation", lo=1)
    fact_window_days: float = _s(30.0, "window for fact consolidation", "consolidation")
    fact_phrases: int = _s(3, "recurring phrases a fact's template statement names",
                           "consolidation", lo=1)
    fact_phrase_events: int = _s(50, "a fact's most central supporting events its phrases are "
                                 "read from", "consolidation", lo=1)
    fact_writer_events: int = _s(20, "a fact's most central supporting events shown to the LLM "
                                 "fact writer", "consolidation", lo=1)
    claim_revision_similarity: float = _s(
        0.2, "utterance cosine at which a claim that says the view changed (or whose target's "
        "head word meets the earlier one's) supersedes the same holder's earlier claim",
        "consolidation", hi=1)
    claim_opposite_similarity: float = _s(
        0.45, "utterance cosine at which a claim of the opposite stance alone supersedes the "
        "same holder's earlier claim", "consolidation", hi=1)
    claim_target_similarity: float = _s(
        0.5, "cosine of two claims' targets (phrase vectors) at which an opposite stance "
        "alone, with no word of one target in the other's words, is about the same thing "
        "(\"the new apartment\", \"the new flat\")", "consolidation", hi=1)
    claim_lean_floor: float = _s(
        0.2, "lean each of two claims needs, away from none, for an opposite stance alone to "
        "end the earlier one (a lean the polarity model reads as 0.1 is a guess, and a long "
        "stream holds many views of a read stance for such a guess to oppose)",
        "consolidation", lo=0, hi=1)
    claim_lean_gap: float = _s(
        0.8, "difference of two claims' leans at which they take opposite stances (a lean is "
        "in [-1, 1]: +1 or -1 for a stance the reading gave, 2p - 1 by the polarity model "
        "over the utterance for one it left neutral; 2 asks for two read stances)",
        "consolidation", lo=0, hi=2)
    claim_restatement_similarity: float = _s(
        0.5, "utterance cosine to the claim a change of mind ends at which an earlier claim "
        "of the same stance counts as its restatement, ended too", "consolidation", hi=1)
    pass_clock_samples: int = _s(1024, "(wall, stream) times of past passes kept to age edges "
                                 "by; past it the older half is thinned, which can only decay "
                                 "an edge a little early", "consolidation", lo=2)
    decay_per_event: int = _s(10, "edges an incremental pass decays at most per event in its "
                              "region, when no budget is given", "consolidation")
    decay_min: int = _s(256, "edges an incremental pass may always decay, however few its "
                        "events", "consolidation")
    decay_step_h: float = _s(24.0, "stream hours an edge ages since it was last written before "
                             "an incremental pass decays it", "consolidation")

    # Intents
    intent_ema_alpha: float = _s(0.3, "EMA rate of per-category feedback", "intents", hi=1)
    feedback_accept: float = _s(1.5, "feedback score of accept", "intents")
    feedback_modify: float = _s(1.1, "feedback score of modify", "intents")
    feedback_defer: float = _s(0.8, "feedback score of defer", "intents")
    feedback_reject: float = _s(0.3, "feedback score of reject", "intents")
    intent_density: float = _s(0.5, "base weighted-density threshold θ for goal intents",
                               "intents")
    habit_min_events: int = _s(3, "occurrences within the habit window that make a habit",
                               "intents", lo=1)
    habit_window_days: float = _s(7.0, "window of a habit", "intents")
    late_resolution_days: float = _s(7.0, "days after its due an expired intent can still be "
                                     "resolved by a completion reported late", "intents")
    intent_lapse_days: float = _s(30.0, "days without new evidence after which an undated open "
                                  "intent (a habit, a goal) rests: it stays open, but is no "
                                  "longer scanned on every event", "intents")
    intent_explicit_deadline: float = _s(
        2.0, "evidence score of an explicit dated obligation (a deadline; the threshold is 1.0 "
        "at feedback weight 1): with intent_ema_alpha, four straight rejections of deadlines "
        "(w ≈ 0.47) suppress new ones", "intents")
    intent_explicit_follow_up: float = _s(
        1.75, "evidence score of an explicit follow-up: three straight rejections of "
        "follow-ups (w ≈ 0.54) suppress new ones", "intents")
    intent_explicit_other: float = _s(1.75, "evidence score of a planner-written intent of "
                                      "another category (a goal or habit the LLM stated)",
                                      "intents")
    intent_threshold_min: float = _s(0.5, "lowest multiple of its base the feedback may bring a "
                                     "category's threshold to (so it never opens to "
                                     "everything)", "intents")
    intent_threshold_max: float = _s(3.0, "highest multiple of its base the feedback may raise "
                                     "a category's threshold to (so it is never silenced)",
                                     "intents")
    intent_recent_events: int = _s(64, "a concept's latest grounding events read for habits, "
                                   "shared grounding (goal links) and dormancy", "intents",
                                   lo=1)
    intent_max_score: float = _s(10.0, "highest evidence score reinforcement raises an intent "
                                 "to", "intents")
    intent_history_max: int = _s(50, "status changes an intent's history keeps (the first "
                                 "and the latest)", "intents", lo=2)
    goal_slack: float = _s(0.05, "link-weight drift within which a goal scan of the same "
                           "concepts reuses the last densest-group peeling (its density is "
                           "read again)", "intents")
    goal_memos: int = _s(256, "goal-scan neighbourhoods whose last peeling is remembered (past "
                         "it they are forgotten at once)", "intents", lo=1)
    dormant_days: float = _s(14.0, "a concept silent this long and then reinforced is "
                             "reactivated (its open intents are told again)", "intents")
    goal_active_days: float = _s(14.0, "a goal needs each of its concepts active within this "
                                 "many days of the stream clock", "intents")
    goal_scan: int = _s(24, "concepts explored around an event's concepts when looking for "
                        "a goal group (bounds its cost)", "intents", lo=3)
    common_term_share: float = _s(0.3, "a term in more than this share of the stream's events "
                                  "is too common to tie a completion to an intent (applied "
                                  "from 20 events)", "intents", hi=1)

    # Recall
    rrf_k: int = _s(60, "reciprocal rank fusion constant", "recall")
    traverse_decay: float = _s(0.7, "score decay per traversal hop", "recall", hi=1)
    lex_depth: int = _s(100, "BM25 hits scored per query", "recall", lo=1)
    dense_depth: int = _s(100, "nearest events (dense) scored per query", "recall", lo=1)
    window_depth: int = _s(50, "nearest events among those of the asked time, when a query "
                           "names one", "recall", lo=1)
    neighbour_sources: int = _s(10, "best lexical and best dense hits that bring their "
                                "neighbouring turns as candidates", "recall")
    neighbour_gap_s: float = _s(1800.0, "seconds within which log neighbours count as turns "
                                "of one conversation", "recall")
    ground_per_node: int = _s(100, "source events grounding gives for one derived node at "
                              "most", "recall", lo=1)
    ground_scan: int = _s(500, "a large derived node's most recent sources among which "
                          "grounding chooses", "recall", lo=1)
    ground_max_nodes: int = _s(200, "derived nodes grounding follows at most (the best "
                               "scored)", "recall", lo=1)
    holder_claims_max: int = _s(64, "a named holder's claims that no anchor found which a "
                                "question about the holder's views follows at most (those "
                                "whose events are closest to the query), so that a holder "
                                "of thousands of views costs what one of a few dozen does",
                                "recall", lo=1)
    holder_claims_scan: int = _s(1000, "a named holder's most recently added claims that no "
                                 "anchor found, among which a question about the holder's "
                                 "views picks the closest (holder_claims_max), so that its "
                                 "cost follows this number, not how many views the holder "
                                 "has; claims the anchors found count at any age", "recall",
                                 lo=1)
    holder_events_max: int = _s(200, "utterances behind the claims a question about views "
                                "follows that become candidates at most (those of the "
                                "best-scored claims, then the closest to the query), so that "
                                "a holder who said each view many times costs what one who "
                                "said it once does", "recall", lo=1)
    traverse_hub_scan: int = _s(4, "a person's most recent edges the traversal from the "
                                "people a query names looks at, in multiples of its degree "
                                "cap (200), so that expanding a hub costs the same however "
                                "many events it has", "recall", lo=1)
    turns_kept: int = _s(100_000, "events whose neighbouring turns the graph keeps between "
                         "recalls at most (past it the cache starts anew)", "recall")
    dense_floor_rank: int = _s(50, "rank of the dense search whose cosine the dense feature "
                               "scores 0 (the best scores 1; the packaged rank model was "
                               "trained with 50)", "recall", lo=1)
    facts_first_margin: float = _s(0.75, "share of the best evidence's score a claim-free "
                                   "utterance among the top three needs to go first when the "
                                   "best is an opinion and the question is not about a view "
                                   "(0: it always does; one holding the asked time, sum or "
                                   "number goes first at any score)", "recall", hi=1)
    facts_first_named_margin: float = _s(0.35, "when the best evidence is the own view of "
                                         "a person the question names: the share of its "
                                         "score another utterance among the top three "
                                         "needs for the facts-first guard to act (1: it "
                                         "always does)", "recall", hi=1)
    ppr_blend: float = _s(0.4, "share of personalized PageRank in traversal scores", "recall", hi=1)
    recall_k: int = _s(10, "items returned by recall", "recall", lo=1)
    lexical_rows: int = _s(4000, "index rows a lexical (BM25) search scores at most: the "
                           "query's commonest words are left out first (0 = no bound)", "recall")
    context_tokens: int = _s(2000, "token budget of a rendered context", "recall")
    search_ahead: bool = _s(True, "start a recall's lexical searches on a worker thread "
                            "before the question is parsed (the store's search and the parse "
                            "overlap on a second core; the results are the same)", "recall")

    passage_min_words: int = _s(60, "words a text needs before its passages (its sentences, "
                                "and each two side by side) are embedded beside it: recall "
                                "scores a long text by its best passage too", "recall", lo=1)
    passage_min_sentences: int = _s(3, "sentences a text needs before its passages are "
                                    "embedded", "recall", lo=2)
    passage_max: int = _s(48, "passages embedded per text at most (0 = none)", "recall")

    # Vector search
    ann_threshold: int = _s(20_000, "vectors in an index (events, passages, or one kind of "
                            "derived node) from which search uses an HNSW graph instead of an "
                            "exact scan (0 = always exact)", "recall")
    ann_connectivity: int = _s(16, "HNSW links per node and layer (M)", "recall", lo=1)
    ann_expansion_add: int = _s(128, "HNSW candidates kept while inserting (efConstruction)",
                                "recall", lo=1)
    ann_expansion_search: int = _s(128, "HNSW candidates kept while searching (ef)", "recall", lo=1)

    # Namespace sessions (enfold.session)
    session_budget_mb: float = _s(
        1024.0, "estimated MB the working graphs of the loaded namespaces may hold together "
        "in one process: past it the least recently used ones are evicted (their HNSW "
        "files saved) and rebuilt from the store on next use; the most recent one always "
        "stays (0 = no limit)", "sessions")
    session_max: int = _s(0, "namespaces whose working graphs stay loaded at most in one "
                          "process, least recently used evicted first (0 = no limit)",
                          "sessions")
    gc_freeze_nodes: int = _s(
        0, "nodes from which a loaded working graph is kept out of the garbage collector's "
        "full passes (gc.freeze after a full collection, when loaded, grown by half or "
        "after a slow pass; see enfold.heap): a full pass over a 100k-event graph stalls "
        "one call in a few hundred for most of a second. For a long-running process that "
        "closes its memory when done; it freezes the process's objects (0 = never)",
        "sessions")

    # Embeddings and LLM
    embedding_dtype: str = _s("float32", "float32 or float16 embedding blobs", "events", lo=None)
    embed_batch: int = _s(64, "texts per embedding batch (the embedder's batch size)", "write",
                          lo=1)
    embed_base_url: str | None = _s(None, "base URL of the OpenAI-compatible /embeddings "
                                    "endpoint of --embedder openai (None: OpenAI's own)",
                                    "embeddings", lo=None)
    embed_api_key: str | None = _s(None, "API key of --embedder openai (a secret: set it "
                                   "in ENFOLD_EMBED_API_KEY or the config file)",
                                   "embeddings", lo=None)
    embed_model: str | None = _s(None, "model of --embedder openai (e.g. "
                                 "text-embedding-3-small)", "embeddings", lo=None)
    embed_threads_single: int = _s(1, "threads a local model (MiniLM) embeds one text with: a "
                                   "query, one add() (0 = the library's default)", "write")
    embed_threads_batch: int = _s(0, "threads a local model embeds a batch with "
                                  "(0 = every core)", "write")
    llm_batch: int = _s(1, "events folded per LLM call (micro-batching)", "write", lo=1)
    llm_breaker_failures: int = _s(
        5, "consecutive failed LLM calls (timeouts, unreachable, 5xx/429 after retries) that "
        "open the circuit breaker: calls then fail fast and events fold locally (0: never)", "llm")
    llm_breaker_cooldown_s: float = _s(
        60.0, "seconds an open LLM circuit breaker refuses calls before one probe call "
        "(success closes it, failure reopens it)", "llm")

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


#: Where a setting's value came from, strongest first: ``enfold --set``, an ``ENFOLD_<NAME>``
#: environment variable, the config file (``enfold.toml`` or ``--config``), the default.
SOURCES = ("cli", "env", "file", "default")
#: Settings whose value is a secret: ``enfold settings`` shows that one is set, not what.
SECRETS = frozenset({"embed_api_key"})
#: The values ``embedding_dtype`` may take.
_CHOICES: dict[str, tuple[str, ...]] = {"embedding_dtype": ("float32", "float16")}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _types() -> dict[str, str]:
    """Each setting's type as written (``float``, ``int``, ``bool``, ``str``, ``str | None``)."""
    return {f.name: str(f.type) for f in fields(Settings)}


def parse_setting(name: str, value: Any) -> Any:
    """``value`` (a string from the CLI or the environment, or a TOML value) as setting
    ``name``'s type, checked against its bounds; anything else is a one-line ConfigError."""
    meta = {f.name: f.metadata for f in fields(Settings)}.get(name)
    if meta is None:
        raise ConfigError(f"unknown setting {name!r} (enfold settings lists them)")
    kind = _types()[name]
    text = value.strip() if isinstance(value, str) else None
    try:
        if kind == "bool":
            if isinstance(value, bool):
                out: Any = value
            elif text is not None and text.lower() in _TRUE + _FALSE:
                out = text.lower() in _TRUE
            else:
                raise ValueError
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ValueError
            out = int(value)
        elif kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise ValueError
            out = float(value)
            if not math.isfinite(out):
                raise ValueError
        else:  # str or str | None
            if not isinstance(value, str):
                raise ValueError
            out = value if value != "" or "None" not in kind else None
    except ValueError:
        what = {"bool": "a boolean (true/false)", "int": "an integer", "float": "a number"}
        raise ConfigError(f"setting {name}: {value!r} is not "
                          f"{what.get(kind, 'a string')}") from None
    lo, hi = meta.get("lo"), meta.get("hi")
    if isinstance(out, int | float) and not isinstance(out, bool):
        if lo is not None and out < lo:
            raise ConfigError(f"setting {name}: {out} is below its minimum {lo}")
        if hi is not None and out > hi:
            raise ConfigError(f"setting {name}: {out} is above its maximum {hi}")
    choices = _CHOICES.get(name)
    if choices and out not in choices:
        raise ConfigError(f"setting {name}: {out!r} is not one of {', '.join(choices)}")
    return out


def parse_assignment(text: str) -> tuple[str, str]:
    """``name=value`` (as ``enfold --set`` takes it) split into its name and raw value."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--set {text!r}: use NAME=VALUE")
    return name.strip(), value


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a TOML config file: top-level ``name = value`` pairs (a
    ``[settings]`` table is read the same way)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: {str(exc).splitlines()[0]}") from exc
    inner = data.pop("settings", None)
    if isinstance(inner, dict):
        data.update(inner)
    return data


def load_settings(*, cli: Mapping[str, Any] = {}, env: Mapping[str, str] = {},
                  file: Mapping[str, Any] = {}) -> tuple[Settings, dict[str, str]]:
    """Settings from their sources, strongest first: ``cli`` (``--set``), ``env`` (the
    ``ENFOLD_<NAME>`` variables of an environment mapping; others are ignored), ``file`` (a
    config file's pairs), then the defaults. Returns the settings and, per name, the source
    its value came from (one of :data:`SOURCES`). Every value is parsed and range-checked
    by :func:`parse_setting`; an unknown name in ``cli`` or ``file`` is a ConfigError.
    The library never reads the environment itself: the CLI and server pass it here."""
    names = [f.name for f in fields(Settings)]
    values: dict[str, Any] = {}
    origin = dict.fromkeys(names, "default")
    env_values = {n: env[f"ENFOLD_{n.upper()}"] for n in names if f"ENFOLD_{n.upper()}" in env}
    for source, given in (("file", file), ("env", env_values), ("cli", cli)):
        for name, raw in given.items():
            values[name] = parse_setting(name, raw)
            origin[name] = source
    return Settings(**values), origin


def settings_table(settings: Settings | None = None,
                   origin: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Rows of (name, type, default, value, source, bounds, help, section) for the docs and
    ``enfold settings``; without ``settings`` the value is the default. A secret's value
    is shown as ``"***"`` when set."""
    types = _types()
    rows = []
    for f in fields(Settings):
        value = getattr(settings, f.name) if settings is not None else f.default
        if f.name in SECRETS and value is not None:
            value = "***"
        rows.append({
            "name": f.name,
            "type": types[f.name],
            "default": f.default,
            "value": value,
            "source": (origin or {}).get(f.name, "default"),
            "min": f.metadata.get("lo"),
            "max": f.metadata.get("hi"),
            "choices": list(_CHOICES.get(f.name, ())),
            "help": f.metadata.get("help", ""),
            "section": f.metadata.get("section", ""),
        })
    return rows


def settings_markdown() -> str:
    """``docs/settings.md``: the table of every setting, generated from :class:`Settings`
    (``enfold settings --markdown`` prints it; a docs test keeps the file current)."""
    out = [
        "# Settings",
        "",
        ("Generated from `enfold.settings.Settings` by `enfold settings --markdown`; do not "
         "edit by hand."),
        "",
        ("Every setting can be changed, strongest first, with `enfold --set NAME=VALUE` "
         "(repeatable), an `ENFOLD_<NAME>` environment variable (e.g. `ENFOLD_RECALL_K=20`), "
         "a TOML config file (`enfold.toml` in the working directory, or `enfold --config "
         "PATH`; top-level `name = value` pairs), or in Python with `Settings().with_(...)`. "
         "A value outside a setting's type or bounds stops the CLI with one line (exit 2). "
         "`enfold settings` shows each value and where it came from."),
        "",
        "| name | type | default | bounds | meaning |",
        "|---|---|---|---|---|",
    ]
    for r in settings_table():
        lo, hi = r["min"], r["max"]
        bounds = (", ".join(r["choices"]) if r["choices"] else f"{lo} … {hi}"
                  if lo is not None and hi is not None else f"≥ {lo}" if lo is not None
                  else "")
        text = str(r["help"]).replace("|", "\\|")
        out.append(f"| `{r['name']}` | {r['type']} | `{r['default']!r}` | {bounds} | {text} |")
    return "\n".join(out) + "\n"
