"""Concept labels a person would write: a short noun phrase naming what a cluster is about.

A cluster of events is named by one of its own noun phrases, chosen the way KeyBERT and
BERTopic's c-TF-IDF do it:

1. **Candidates** come from the parse (:mod:`enfold.text.nlp`): each noun chunk of each
   event, stripped of determiners, pronouns, numbers and time expressions, and its head with
   at most two modifiers before it ("the new async standups" → "async standups",
   "standups"); gerunds ("recruiting", "running") count as nouns. A phrase made only of a
   person's, place's or organisation's name is a candidate only when nothing else is: a
   theme is never a name alone.
2. **Score** (class-based TF-IDF, coverage first): the share of the cluster's events that
   hold the candidate (its head lemma and modifiers) times the square root of the inverse
   document frequency of its words over the whole namespace
   (:class:`enfold.text.phrases.TermStats`), less a little for each word beyond the head.
3. The label is the best candidate; the keywords are the best ones with no word in common.

On the CogEval scenarios (issue 20) a candidate's closeness to the cluster's embedding
centroid (KeyBERT) did not pick names nearer the gold ones than coverage did (a tenth of
the clusters against a sixth, oracle clusters), nor did a classifier over both, so the
label costs no embedding.

Without a parse (a trimmed install) the older key-phrase labels are used.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from enfold.text import nlp
from enfold.text.phrases import STOPWORDS, TermStats, key_phrases, make_label

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

__all__ = ["concept_label"]

#: How much each word beyond the head costs a phrase: the shorter, more general name wins
#: when it covers the events as well ("standups" over "async standups").
LENGTH_PENALTY = -0.3
#: Tokens a label phrase keeps: nouns, names, adjectives and gerunds.
_KEEP_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB"})
_HEAD_POS = frozenset({"NOUN", "PROPN"})
_NAME_ENTS = frozenset({"PERSON", "GPE", "LOC", "ORG", "FAC", "NORP", "PRODUCT",
                        "WORK_OF_ART"})
_TIME_ENTS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "QUANTITY",
                        "PERCENT"})


@dataclass
class _Candidate:
    key: tuple[str, ...]
    surfaces: Counter[str] = field(default_factory=Counter)
    docs: set[int] = field(default_factory=set)
    name_only: bool = True


def _word_ok(t: Token) -> bool:
    if t.pos_ not in _KEEP_POS or t.like_num or t.ent_type_ in _TIME_ENTS:
        return False
    if t.pos_ == "VERB" and t.tag_ != "VBG":
        return False
    low = t.lower_
    return len(low) > 1 and low not in STOPWORDS and any(c.isalpha() for c in low)


def _surface(toks: Sequence[Token]) -> str:
    words = []
    for t in toks:
        text = t.text
        if t.pos_ != "PROPN" and not (text.isupper() and len(text) > 1):
            text = text.lower()
        words.append(text)
    return " ".join(words)


def _phrases(doc: Any) -> list[tuple[tuple[str, ...], str, bool]]:
    """(key, surface, name_only) for each candidate phrase of one parsed text."""
    out: list[tuple[tuple[str, ...], str, bool]] = []
    spans: list[Span | list[Token]] = list(doc.noun_chunks)
    spans += [[t] for t in doc if t.tag_ == "VBG" and _word_ok(t)]
    for span in spans:
        toks = [t for t in span if _word_ok(t)]
        # A chunk's words must be contiguous before its head ("async standups").
        while toks and toks[-1].pos_ not in _HEAD_POS and toks[-1].tag_ != "VBG":
            toks.pop()
        if not toks:
            continue
        head = toks[-1]
        run = [head]
        for t in reversed(toks[:-1]):
            if t.i != run[0].i - 1 or len(run) == 3:
                break
            run.insert(0, t)
        for start in range(len(run)):
            part = run[start:]
            if part[0].pos_ == "VERB" and len(part) > 1:
                continue
            key = (*(t.lower_ for t in part[:-1]), part[-1].lemma_.lower())
            name_only = all(t.ent_type_ in _NAME_ENTS or t.pos_ == "PROPN" for t in part)
            out.append((key, _surface(part), name_only))
    return out


def _idf(surface: str, stats: TermStats) -> float:
    words = [w.lower() for w in surface.split() if w.lower() not in STOPWORDS]
    if not words:
        return 0.0
    return float(np.mean([stats.idf(w) for w in words]))


def concept_label(texts: Sequence[str], stats: TermStats, k: int = 3) -> tuple[str, list[str]]:
    """(label, keywords) for a cluster of event texts; see the module docstring.

    ``stats`` are the namespace's term statistics (the background the phrases must stand
    out from); the keywords are the ``k`` best phrases with different words, the label is
    the first.
    """
    docs = nlp.parse_many(list(texts))
    if not texts or any(d is None for d in docs):
        phrases = key_phrases(list(texts), stats, k=k)
        return make_label(phrases), phrases
    found: dict[tuple[str, ...], _Candidate] = {}
    for i, doc in enumerate(docs):
        for key, surface, name_only in _phrases(doc):
            c = found.setdefault(key, _Candidate(key))
            c.surfaces[surface] += 1
            c.docs.add(i)
            c.name_only = c.name_only and name_only
    if not found:
        phrases = key_phrases(list(texts), stats, k=k)
        return make_label(phrases), phrases
    n = len(texts)
    scored: list[tuple[float, int, str]] = []
    for c in found.values():
        if c.name_only and any(not o.name_only for o in found.values()):
            continue  # a theme is never a name alone
        surface = c.surfaces.most_common(1)[0][0]
        cover = len(c.docs) / n
        scored.append((cover * math.sqrt(_idf(surface, stats))
                       * math.exp(-LENGTH_PENALTY * (len(c.key) - 1)), -len(c.key), surface))
    scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
    keywords: list[str] = []
    for _, _, surface in scored:
        words = set(surface.lower().split())
        if any(words & set(k.lower().split()) for k in keywords):
            continue  # one phrase per head word: "standups", not also "async standups"
        keywords.append(surface)
        if len(keywords) == k:
            break
    label = keywords[0]
    return label[:1].upper() + label[1:], keywords
