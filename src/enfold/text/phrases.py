"""Distinctive key phrases of a group of texts, against the namespace's own background.

A concept formed from a cluster of events is labelled by what its events say more than the
rest of the stream does: unigrams and bigrams scored by cluster coverage × inverse document
frequency over every folded event (:class:`TermStats`, kept incrementally). Phrases seen in
at least two of the cluster's events are preferred; a unigram inside a chosen bigram is not
repeated; each phrase keeps its most frequent surface form ("NSF proposal", not "nsf
proposal").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z][A-Za-z0-9'’-]*[A-Za-z0-9]|[A-Za-z])")


def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


#: Words too common in a stream of notes and chats to name a theme.
STOPWORDS: frozenset[str] = frozenset().union(
    # English function words, auxiliaries and their contractions
    _words("""
    a about above after again against all almost also although always am among an and another
    any anyone anything are aren't around as at away back be because been before being below
    between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    done down during each either else enough even ever every everything few for from further get
    gets getting got gotten had hadn't has hasn't have haven't having he he'd he'll he's her
    here here's hers herself him himself his how how's however i i'd i'll i'm i've if in into is
    isn't it it's its itself just let's like likely made make makes making many may maybe me
    might more most much must my myself near need needs neither never new next no nor not
    nothing now of off often oh ok okay on once one only or other others otherwise our ours
    ourselves out over own per perhaps please pretty quite rather really said same say says see
    seem seems several shall she she'd she'll she's should shouldn't since so some someone
    something sometimes soon still such sure take than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've thing things think
    this those though through thus to today together too took toward tomorrow under until up
    upon us use used very via want wants was wasn't way we we'd we'll we're we've well went were
    weren't what what's whatever when when's where where's whether which while who who's whom
    whose why why's will with within without won't would wouldn't yeah yes yet you you'd you'll
    you're you've your yours yourself yourselves
    """),
    # chat: greetings, fillers and everyday verbs
    _words("""
    hey hi hello thanks thank wow great good nice cool awesome lol haha totally
    definitely actually lot lots kind sort stuff bit guess know knew feel felt going gonna wanna
    let lets getting keep kept put come came coming go goes told tell telling talk talked ask
    asked
    """),
    # calendar and counting words (times are read as time anchors, not themes)
    _words("""
    yesterday week weeks day days time times morning evening night tonight last first second
    two three four five six seven eight nine ten hundred thousand monday tuesday wednesday thursday friday
    saturday sunday weekend january february march april june july august september october
    november december
    """),
)


def tokens(text: str) -> list[str]:
    """Word tokens in order (apostrophes normalized), original case kept."""
    return [t.replace("’", "'") for t in _TOKEN.findall(text)]


def terms(text: str) -> set[str]:
    """Lowercased unigram and bigram terms of a text, without stopwords."""
    toks = [t.lower() for t in tokens(text)]
    out: set[str] = set()
    prev: str | None = None
    for t in toks:
        if t in STOPWORDS or len(t) < 2 or t.isdigit():
            prev = None
            continue
        out.add(t)
        if prev is not None:
            out.add(f"{prev} {t}")
        prev = t
    return out


class TermStats:
    """Document frequencies of terms over the events seen so far (incremental)."""

    def __init__(self) -> None:
        self.df: Counter[str] = Counter()
        self.docs = 0

    def add(self, text: str) -> None:
        self.df.update(terms(text))
        self.docs += 1

    def remove(self, text: str) -> None:
        self.df.subtract(terms(text))
        self.docs = max(0, self.docs - 1)

    def idf(self, term: str) -> float:
        return math.log((self.docs + 1) / (self.df.get(term, 0) + 1)) + 1.0


def _surface_forms(texts: Iterable[str]) -> dict[str, Counter[str]]:
    forms: dict[str, Counter[str]] = {}
    for text in texts:
        toks = tokens(text)
        for i, t in enumerate(toks):
            forms.setdefault(t.lower(), Counter())[t] += 1
            if i + 1 < len(toks):
                pair = f"{t} {toks[i + 1]}"
                forms.setdefault(pair.lower(), Counter())[pair] += 1
    return forms


def key_phrases(texts: Sequence[str], stats: TermStats, k: int = 3, *,
                skip: Collection[str] = (), names: Collection[str] = ()) -> list[str]:
    """The k most distinctive phrases of ``texts`` (surface forms, best first).

    ``skip``: lowercase words no phrase may hold (times, numbers); ``names``: lowercase words
    of names. A phrase made only of names never comes first while a phrase with another word
    is there to lead: a theme is not a name alone.
    """
    if not texts:
        return []
    coverage: Counter[str] = Counter()
    for text in texts:
        coverage.update(t for t in terms(text) if not skip or not set(t.split(" ")) & set(skip))
    n = len(texts)
    min_cover = 2 if n >= 2 and any(c >= 2 for c in coverage.values()) else 1
    scored: list[tuple[float, str]] = []
    for term, c in coverage.items():
        if c < min_cover:
            continue
        bonus = 1.25 if " " in term else 1.0
        scored.append(((c / n) * stats.idf(term) * bonus, term))
    scored.sort(key=lambda x: (-x[0], x[1]))
    chosen: list[str] = []
    for _, term in scored:
        words = set(term.split(" "))
        overlap = [c for c in chosen if words & set(c.split(" "))]
        if overlap:
            # A bigram supersedes a unigram it contains ("proposal" -> "NSF proposal").
            if len(words) == 2 and len(overlap) == 1 and " " not in overlap[0]:
                chosen[chosen.index(overlap[0])] = term
            continue
        chosen.append(term)
        if len(chosen) == k:
            break
    if names and chosen:
        def named(term: str) -> bool:
            return all(w in names for w in term.split(" "))

        if named(chosen[0]):
            lead = next((t for t in chosen if not named(t)), None)
            if lead is None:  # the best phrase with another word, even from one event
                lead = max((t for t in coverage if not named(t)),
                           key=lambda t: ((coverage[t] / n) * stats.idf(t), t), default=None)
                if lead is not None:
                    chosen = chosen[:k - 1]
            if lead is not None:
                chosen = [lead, *(t for t in chosen if t != lead)]
    forms = _surface_forms(texts)
    return [forms[t].most_common(1)[0][0] if t in forms else t for t in chosen]


def make_label(phrases: Sequence[str]) -> str:
    """A readable label from key phrases: first phrase capitalized, joined by ' / '."""
    if not phrases:
        return "untitled"
    parts = list(phrases)
    first = parts[0]
    parts[0] = first[:1].upper() + first[1:]
    return " / ".join(parts)
