"""The passages of a long text, each embedded on its own beside the whole text.

One vector for a whole email dilutes the line that answers a question among paragraphs
about other things ("the heart doctor's new dose" in a message about a flood claim), and
MiniLM reads at most 256 word pieces, so the end of a long text is not in its vector at all.
A long text's passages are its sentences (a line break ends one too; a fragment of a few
words joins the next) and each two sentences side by side; recall scores an event by the
best of its whole text and its passages (:mod:`enfold.recall.rank`, feature ``passage``).

A text gets passages only when it has ``passage_min_sentences`` sentences and
``passage_min_words`` words; a shorter text has none (its whole text's vector serves). At
most ``passage_max`` passages cover the whole text: the sentences and as many pairs as fit,
or, for a text of more sentences than that, runs of neighbouring sentences.
"""

from __future__ import annotations

import re
from itertools import pairwise

from enfold.settings import Settings
from enfold.text import nlp

_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
#: A sentence shorter than this (in words) joins the next ("Hi Ines," "Thanks!").
_SHORT = 5


def _sentences(text: str) -> list[str]:
    """The text's sentences: the parser's where a parse is available (the write path has
    parsed the text already), by end punctuation otherwise; a line break always ends one."""
    doc = nlp.parse(text) if len(text) <= nlp.MAX_CHARS else None
    pieces = [s.text for s in doc.sents] if doc is not None else _END.split(text)
    return [line for piece in pieces for line in map(str.strip, piece.split("\n")) if line]


def _units(text: str) -> list[str]:
    units: list[str] = []
    carry = ""
    for sentence in _sentences(text):
        joined = f"{carry} {sentence}".strip()
        if len(joined.split()) < _SHORT:
            carry = joined
            continue
        units.append(joined)
        carry = ""
    if carry:
        if units:
            units[-1] = f"{units[-1]} {carry}"
        else:
            units.append(carry)
    return units


def passages(text: str, settings: Settings | None = None) -> list[str]:
    """The passages of ``text`` (none for a short text): its sentences, then each two
    neighbouring sentences while ``passage_max`` allows; past that many sentences, runs of
    neighbouring sentences, so that the passages still cover the whole text."""
    s = settings or Settings()
    if s.passage_max <= 0 or len(text.split()) < s.passage_min_words:
        return []
    units = _units(text)
    if len(units) < s.passage_min_sentences:
        return []
    if len(units) > s.passage_max:
        run = -(-len(units) // s.passage_max)  # sentences per passage, rounded up
        return [" ".join(units[i:i + run]) for i in range(0, len(units), run)]
    pairs = [f"{a} {b}" for a, b in pairwise(units)]
    return [*units, *pairs][:s.passage_max]
