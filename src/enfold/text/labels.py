"""A theme's name as a person would write it: one short noun phrase, chosen KeyBERT-style.

:func:`theme_name` names a cluster of texts (a concept's events):

1. **Candidates** are the noun phrases of the parse (:mod:`enfold.text.nlp`): each noun
   chunk stripped of determiners, pronouns, possessives, numbers and the words of time,
   date and number entities, cut to its last :data:`MAX_WORDS` words, together with the
   shorter phrases inside it (the compound + head, the head alone), gerunds ("running") and verbs with their objects ("hiring engineers").
   A phrase is keyed by its words with the head lemmatized ("investor meetings" and
   "investor meeting" are one candidate) and keeps its most frequent surface form.
2. **Score**: closeness of the phrase's embedding to the cluster's centroid (KeyBERT),
   times its distinctiveness against the namespace's background (the words' idf in
   :class:`~enfold.text.phrases.TermStats`, as c-TF-IDF weighs a class against the
   corpus), times its coverage (the share of the texts it occurs in). Without an embedder
   the closeness is left out.
3. **Label**: the best candidate that is not a name alone (a person, place, organisation or
   product — spaCy's entity types, or proper nouns only): a name is the label only when
   nothing else is there; and, of the best few, one that no other theme is called already
   (two themes of one name would be merged as duplicates).
   **Keywords**: the label, then further candidates by maximal marginal relevance (score
   against similarity to the ones chosen), so they are not paraphrases of each other.

Phrase vectors are cached by :class:`PhraseVectors` and embedded in one batch per call.
Without a parse (a trimmed install) or without any candidate, :func:`theme_name` returns
None and the caller keeps the key-phrase label of :mod:`enfold.text.themes`.
"""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from enfold.settings import Settings
from enfold.text import nlp
from enfold.text.phrases import STOPWORDS, TermStats
from enfold.text.themes import NAME_ENTS, TIME_ENTS

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

__all__ = ["MAX_WORDS", "Candidate", "PhraseVectors", "ThemeName", "candidates", "theme_name"]

#: Longest label, in words.
MAX_WORDS = 3
#: Whether verbs with their objects are candidates ("hiring engineers").
VERB_PHRASES = True
#: The defaults of the settings :func:`theme_name` reads: how far below a lone head's score
#: a longer phrase of that head may lead instead (``label_specialize``); MMR's balance of
#: relevance against redundancy for the keywords (``label_mmr_lambda``); the weights of the
#: score beside the two closeness terms (``label_cover_weight``, ``label_short_bonus``,
#: chosen on the tuning scenarios: a theme is named by a phrase many of its events share,
#: and a person names it briefly); the normalized idf below which a phrase's words are the
#: namespace's background (``label_min_distinct``); how many of the best candidates may
#: lead before a taken label is allowed (``label_lead_checks``).
SPECIALIZE: float = Settings.label_specialize
MMR_LAMBDA: float = Settings.label_mmr_lambda
COVER_WEIGHT: float = Settings.label_cover_weight
SHORT_BONUS: float = Settings.label_short_bonus
MIN_DISTINCT: float = Settings.label_min_distinct
LEAD_CHECKS: int = Settings.label_lead_checks
#: The phrases read from each text, by text (a concept's events are read again when it
#: is renamed); parses are cached by :mod:`enfold.text.nlp` the same way.
_DEFAULTS = Settings()
_READ_SIZE = 4096
_read: OrderedDict[str, list[tuple[str, str, tuple[str, ...], bool]]] = OrderedDict()
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z.]?")
_NOMINAL = frozenset({"NOUN", "PROPN"})
_MODIFIER = frozenset({"NOUN", "PROPN", "ADJ"})
_DROP_POS = frozenset({"DET", "PRON", "NUM", "PUNCT", "SYM", "PART", "ADP", "CCONJ",
                       "SCONJ", "AUX", "INTJ", "SPACE", "X"})


@dataclass(frozen=True)
class ThemeName:
    """A theme's label and its keywords (the label first)."""

    label: str
    keywords: list[str]


@dataclass
class Candidate:
    """One candidate phrase of a cluster."""

    key: str
    words: tuple[str, ...]
    forms: Counter[str]
    docs: set[int]
    named: bool

    @property
    def surface(self) -> str:
        return self.forms.most_common(1)[0][0]


class PhraseVectors:
    """Embeddings of phrases by one embedder, cached (LRU) and computed in batches."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], name: str = "",
                 size: int = 8192) -> None:
        self.embed, self.name, self.size = embed, name, size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def __call__(self, phrases: Sequence[str]) -> np.ndarray:
        missing = [p for p in dict.fromkeys(phrases) if p not in self._cache]
        if missing:
            for p, v in zip(missing, np.asarray(self.embed(missing), dtype=np.float32),
                            strict=True):
                self._cache[p] = v
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        out = []
        for p in phrases:
            v = self._cache.get(p)
            if v is None:  # evicted by this very batch
                v = np.asarray(self.embed([p]), dtype=np.float32)[0]
            else:
                self._cache.move_to_end(p)
            out.append(v)
        return np.stack(out) if out else np.zeros((0, 0), dtype=np.float32)


def _keep(tok: Token) -> bool:
    if tok.pos_ in _DROP_POS or tok.ent_type_ in TIME_ENTS or tok.like_num:
        return False
    low = tok.text.lower()
    return low not in STOPWORDS and len(low) > 1 and _WORD.fullmatch(tok.text) is not None


def _is_name(run: list[Token]) -> bool:
    """A run of proper nouns or name entities only: a person, place, product... alone."""
    return all(t.ent_type_ in NAME_ENTS or t.pos_ == "PROPN" for t in run)


def _surface(tok: Token) -> str:
    # A common noun capitalized only because it starts the sentence is written lowercase.
    if tok.is_sent_start and tok.pos_ != "PROPN" and not tok.text.isupper():
        return tok.text.lower()
    return tok.text


def gerund(lemma: str) -> str:
    """The -ing form of a verb's lemma ("run" -> "running", "write" -> "writing")."""
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")) and len(lemma) > 2:
        return lemma[:-1] + "ing"
    vowels = "aeiou"
    if (len(lemma) >= 3 and lemma[-1] not in vowels + "wxy" and lemma[-2] in vowels
            and lemma[-3] not in vowels and sum(ch in vowels for ch in lemma) == 1):
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


def _phrases(doc: Doc) -> list[tuple[str, str, tuple[str, ...], bool]]:
    """(surface, key, words, is a name) of the candidate phrases of one parse."""
    out: list[tuple[str, str, tuple[str, ...], bool]] = []

    def add(run: list[Token]) -> None:
        words = tuple(t.text.lower() for t in run)
        out.append((" ".join(_surface(t) for t in run),
                    " ".join((*words[:-1], run[-1].lemma_.lower())), words, _is_name(run)))

    for chunk in doc.noun_chunks:
        root = chunk.root
        if root.pos_ not in _NOMINAL or not _keep(root):
            continue
        run: list[Token] = []
        for tok in reversed(list(chunk)):
            if tok.i > root.i:
                continue
            if tok.i < root.i and (not _keep(tok) or tok.pos_ not in _MODIFIER
                                   or tok.dep_ == "poss" or tok.ent_type_ == "PERSON"):
                break
            run.insert(0, tok)
        run = run[-MAX_WORDS:]
        for start in range(len(run)):
            add(run[start:])
    for tok in doc:
        if tok.pos_ != "VERB" or not _keep(tok):
            continue
        lemma = tok.lemma_.lower()
        if tok.tag_ == "VBG":
            out.append((tok.text.lower(), tok.text.lower(), (lemma,), False))
        if not VERB_PHRASES or not lemma.isalpha() or len(lemma) < 3 or lemma in STOPWORDS \
                or (tok.tag_ in ("VBD", "VBN") and lemma == tok.text.lower()):
            continue  # a past form the lemmatizer did not undo ("fed") makes no gerund
        # What is done to what names a theme too ("hiring engineers", "renewing permit").
        g = tok.text.lower() if tok.tag_ == "VBG" else gerund(lemma)
        for obj in tok.children:
            if obj.dep_ == "dobj" and obj.pos_ == "NOUN" and _keep(obj):
                out.append((f"{g} {_surface(obj)}", f"{g} {obj.lemma_.lower()}",
                            (lemma, obj.text.lower()), False))
    return out


def candidates(texts: Sequence[str]) -> list[Candidate] | None:
    """The candidate phrases of ``texts`` (None without a parse)."""
    docs = nlp.parse_many(list(texts))
    if not docs or any(d is None for d in docs):
        return None
    found: dict[str, Candidate] = {}
    for i, doc in enumerate(docs):
        assert doc is not None
        phrases = _read.get(doc.text)
        if phrases is None:
            phrases = _read[doc.text] = _phrases(doc)
            if len(_read) > _READ_SIZE:
                _read.popitem(last=False)
        else:
            _read.move_to_end(doc.text)
        for surface, key, words, named in phrases:
            cand = found.get(key)
            if cand is None:
                cand = found[key] = Candidate(key, words, Counter(), set(), named)
            cand.forms[surface] += 1
            cand.docs.add(i)
    return list(found.values())


def _distinctiveness(cand: Candidate, stats: TermStats) -> float:
    """Mean idf of the phrase's words, scaled to (0, 1] by the largest idf possible."""
    top = math.log(stats.docs + 1) + 1.0
    idf = [min(stats.idf(w), top) for w in cand.words]
    return (sum(idf) / len(idf)) / top


def theme_name(texts: Sequence[str], stats: TermStats, *, k: int = 3,
               centroid: np.ndarray | None = None,
               vectors: Callable[[Sequence[str]], np.ndarray] | None = None,
               taken: Callable[[str], bool] | None = None,
               settings: Settings | None = None) -> ThemeName | None:
    """Name the theme of ``texts``; see the module docstring. None: no parse or no
    candidate (the caller falls back to key phrases). ``taken``: whether a label is
    already another theme's name; of the best ``label_lead_checks`` candidates, a free one
    leads. The weights are ``settings``' ``label_*`` ones (None: the defaults)."""
    if not texts:
        return None
    s = settings or _DEFAULTS
    short_bonus, specialize, mmr = s.label_short_bonus, s.label_specialize, s.label_mmr_lambda
    cands = candidates(texts)
    if not cands:
        return None
    n = len(texts)
    cover = np.array([len(c.docs) / n for c in cands])
    # The namespace's background: a phrase whose words are common across the whole stream
    # is no theme of this cluster (c-TF-IDF's class-against-corpus weighting, as a gate).
    distinct = np.array([_distinctiveness(c, stats) for c in cands])
    single = np.array([len(c.words) == 1 for c in cands], dtype=np.float64)
    score = s.label_cover_weight * cover + short_bonus * single
    vecs: np.ndarray | None = None
    if vectors is not None and centroid is not None:
        vecs = vectors([c.surface for c in cands])
        c = np.asarray(centroid, dtype=np.float64)
        close = vecs @ (c / max(float(np.linalg.norm(c)), 1e-12))
        # The cluster's centre in phrase space: the coverage-weighted mean of its phrases.
        pc = (vecs * cover[:, None]).sum(axis=0)
        central = vecs @ (pc / max(float(np.linalg.norm(pc)), 1e-12))
        score = score + close + central
    else:  # c-TF-IDF alone: coverage in the cluster times rarity in the namespace
        score = cover * distinct + short_bonus * single / 2
    score = np.where(distinct >= s.label_min_distinct, score, score - 10.0)
    order = sorted(range(len(cands)), key=lambda i: (-score[i], cands[i].key))
    free = [i for i in order if not cands[i].named]
    lead = next((i for i in free[:s.label_lead_checks] if taken is None
                 or not taken(_capital(cands[i].surface))), free[0] if free else order[0])
    if len(cands[lead].words) == 1 and specialize > 0:
        # A head alone says less than the phrase it heads ("engineers" < "backend
        # engineers", "hiring engineers"): a longer phrase of the same head that scores
        # nearly as well names the theme more precisely.
        head = cands[lead].words[0]
        longer = [i for i in order if len(cands[i].words) > 1 and not cands[i].named
                  and cands[i].words[-1] == head and score[i] >= score[lead] - specialize
                  and (taken is None or not taken(_capital(cands[i].surface)))]
        if longer:
            lead = longer[0]
    chosen = [lead]
    rest = [i for i in order if i != lead]
    top = float(score[lead]) or 1.0
    while rest and len(chosen) < k:
        def redundancy(i: int) -> float:
            if vecs is not None:
                return max(float(vecs[i] @ vecs[j]) for j in chosen)
            words = set(cands[i].words)
            return max(len(words & set(cands[j].words)) / len(words | set(cands[j].words))
                       for j in chosen)

        best = max(rest, key=lambda i: (mmr * score[i] / top
                                        - (1 - mmr) * redundancy(i), -i))
        if score[best] <= 0:
            break
        chosen.append(best)
        rest.remove(best)
    keywords = [cands[i].surface for i in chosen]
    return ThemeName(_capital(keywords[0]), keywords)


def _capital(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]
