"""How much of a question's weight of words a text holds: the ``cover`` ranking feature.

BM25 over the query's best score says which event matches the question's words best, not
how much of the question it matches: the best match scores 1 whether it holds the rare
word the question turns on or only a common one beside it ("What size are my new
trainers?" matched an order of scrubs "(navy, size s)" as well as a receipt for trainers
would). :class:`QueryTerms` weighs each word of the question by its inverse document
frequency in the store (as BM25 does, :meth:`enfold.store.base.Store.word_weights`) and
gives a text the share of that weight whose words it holds, between 0 and 1; a word no
event holds keeps its weight in the whole (the question turns on something the store has
no word for, so no lexical match covers it).

Words are compared by their Snowball English stems ("trainers" and "trainer", "delivery"
and "deliveries"). A text is read only where it holds a prefix of a question's word (a
test of a substring per word, then a stem only for the words found there), so scoring some
hundreds of candidates costs well under a millisecond.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

_STEMMER: Any = None


_STEM_LOCK = threading.Lock()  # a Snowball stemmer keeps the word it works on


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball English stem of a lowercase word (safe from any thread)."""
    global _STEMMER
    with _STEM_LOCK:
        if _STEMMER is None:
            import snowballstemmer

            _STEMMER = snowballstemmer.stemmer("english")
        return str(_STEMMER.stemWord(word))


def _probe(word: str, stemmed: str) -> str:
    """The longest common prefix of a word and its stem ("deliveri" of "delivery":
    "deliver"; "fli" of "fly": "fl"), which every word of the same stem starts with; empty
    when they share none (then every word of a text is stemmed)."""
    n = 0
    for a, b in zip(word, stemmed, strict=False):
        if a != b:
            break
        n += 1
    return word[:n]


class QueryTerms:
    """A question's words by stem, each with its weight (see the module docstring)."""

    __slots__ = ("_probes", "_total", "weights")

    def __init__(self, words: Sequence[str], weights: Mapping[str, float]) -> None:
        by_stem: dict[str, float] = {}
        probes: dict[str, str] = {}
        for word in dict.fromkeys(w.lower() for w in words):
            w = float(weights.get(word, 0.0))
            if w <= 0.0:
                continue
            s = stem(word)
            if w > by_stem.get(s, 0.0):
                by_stem[s] = w
            probe = _probe(word, s)
            # the shorter probe finds both spellings' words
            if s not in probes or len(probe) < len(probes[s]):
                probes[s] = probe
        self.weights = by_stem
        self._probes = [(probe, s, re.compile(r"\b" + re.escape(probe) + r"\w*"))
                        for s, probe in probes.items()]
        self._total = sum(by_stem.values())

    def __bool__(self) -> bool:
        return self._total > 0.0

    def cover(self, text: str) -> float:
        """The share of the question's weight whose words ``text`` holds (0 to 1)."""
        if self._total <= 0.0:
            return 0.0
        low = text.lower()
        held = 0.0
        for probe, s, pattern in self._probes:
            if probe not in low:
                continue
            if any(stem(m.group()) == s for m in pattern.finditer(low)):
                held += self.weights[s]
        return held / self._total


__all__ = ["QueryTerms", "stem"]
