"""Naming concepts: the label and keywords of a concept from its events, and when to rename.

A concept is named by :func:`enfold.text.labels.theme_name` over (at most
``Settings.name_events`` of) its events — the ones nearest its centroid — with the namespace's
embedder for the phrase vectors; without a parse or a candidate phrase it keeps the
key-phrase label of :func:`enfold.text.themes.theme_phrases`. :class:`ThemeNamer` is the
namespace's naming state (the phrase-vector cache and the embedder the planner registers),
kept in the working graph's state so consolidation and forgetting name concepts the same
way the planner does.

A concept is renamed as it grows (:func:`due_rename`): when its events have grown by
``settings.relabel_growth`` since it was last named (``attrs["named_at"]``, the number of its
events then), so renames are geometric in a concept's size and their cost per event is
bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from enfold.graph import WorkingGraph
from enfold.model import Node, NodeKind
from enfold.settings import Settings
from enfold.text.labels import PhraseVectors, ThemeName, theme_name
from enfold.text.phrases import TermStats, make_label
from enfold.text.themes import theme_phrases
from enfold.write.apply import label_similarity

if TYPE_CHECKING:
    from enfold.embed import Embedder

__all__ = ["ThemeNamer", "due_rename"]



class ThemeNamer:
    """The namespace's concept naming: the embedder for phrase vectors and their cache."""

    def __init__(self) -> None:
        self.vectors: PhraseVectors | None = None

    @classmethod
    def of(cls, graph: WorkingGraph) -> ThemeNamer:
        return graph.indexes.of(ThemeNamer, ThemeNamer)

    def use(self, embedder: Embedder | None) -> None:
        """Embed phrases with ``embedder`` (the namespace's; its vectors meet the events')."""
        if embedder is not None and (self.vectors is None
                                     or self.vectors.name != embedder.name):
            self.vectors = PhraseVectors(lambda texts: embedder.embed(texts), embedder.name)

    def name(self, graph: WorkingGraph, members: Sequence[str], stats: TermStats,
             settings: Settings, *, concept: str | None = None,
             avoid: Sequence[str] = ()) -> ThemeName:
        """The label and keywords (``label_max_terms``) of a concept grounded in ``members``
        (event ids, the ``name_events`` nearest its centroid): ``concept`` itself when it is
        being renamed; another concept's name counts as the same name at the label
        similarity ``merge_threshold``; ``avoid``: further names taken (a concept the same
        plan adds)."""
        k, threshold = settings.label_max_terms, settings.merge_threshold
        ids = [m for m in dict.fromkeys(members) if m in graph.nodes]
        centroid = graph.event_centroid(ids)
        if len(ids) > settings.name_events and centroid is not None:
            sims = graph.event_vectors.similarities(centroid, ids)
            ids = sorted(ids, key=lambda m: -sims.get(m, -1.0))[:settings.name_events]
        texts = [graph.nodes[m].text for m in ids]
        others = [graph.nodes[c] for c in graph.of_kind(NodeKind.CONCEPT) if c != concept]

        def taken(label: str) -> bool:
            return any(label_similarity(label, name, threshold) >= threshold
                       for name in [*avoid, *(n for node in others for n in node.names())])

        found = theme_name(texts, stats, k=k, centroid=centroid, vectors=self.vectors,
                           taken=taken, settings=settings)
        if found is not None:
            return found
        phrases = theme_phrases(texts, stats, k=k)
        return ThemeName(make_label(phrases), phrases)


def due_rename(concept: Node, size: int, growth: float) -> bool:
    """Whether a concept now grounded in ``size`` events is due a new name."""
    named_at = concept.attrs.get("named_at")
    if not isinstance(named_at, (int, float)) or isinstance(named_at, bool):
        named_at = len(concept.grounded_in)
    return size >= max(named_at * growth, named_at + 2)
