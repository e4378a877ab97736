"""Feedback calibration (Eq. 2): per-category weights kept in graph meta, the threshold
they set, and the score each kind of feedback gives."""

from __future__ import annotations

from enfold.errors import InputError
from enfold.graph import WorkingGraph
from enfold.intents.core import CALIBRATION_KEY, FEEDBACK_KINDS, THRESHOLD_CLAMP
from enfold.settings import Settings


# ------------------------------------------------------------------ calibration (Eq. 2)
def category_weights(graph: WorkingGraph) -> dict[str, float]:
    """The per-category feedback weights w_c of a namespace (absent: 1.0)."""
    raw = graph.meta.get(CALIBRATION_KEY)
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float))}


def apply_weight(weight: float, score: float, alpha: float) -> float:
    """One step of Eq. 2: w ← (1 − α)·w + α·s."""
    return (1.0 - alpha) * weight + alpha * score


def threshold(weight: float, base: float = 1.0, *, lo: float = THRESHOLD_CLAMP[0],
              hi: float = THRESHOLD_CLAMP[1]) -> float:
    """θ_c = base / w_c, clamped to [lo, hi]·base (``Settings.intent_threshold_min`` and
    ``intent_threshold_max``): rejected categories need more evidence."""
    if weight <= 0:
        return hi * base
    return min(hi * base, max(lo * base, base / weight))


def feedback_score(settings: Settings, kind: str) -> float:
    scores = {"accept": settings.feedback_accept, "modify": settings.feedback_modify,
              "defer": settings.feedback_defer, "reject": settings.feedback_reject}
    if kind not in scores:
        raise InputError(f"unknown feedback {kind!r} (use {', '.join(FEEDBACK_KINDS)})")
    return scores[kind]
