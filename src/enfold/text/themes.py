"""Key phrases for naming a theme: the parse keeps times and names out of the lead.

:func:`theme_phrases` is :func:`enfold.text.phrases.key_phrases` told what the parse
(:mod:`enfold.text.nlp`) knows about the texts: words inside time, date and number entities
("Fri", "Sept", "14th", "two weeks") never make a phrase, and a phrase made only of the words
of people's, places', organisations' or products' names does not lead the label while
another phrase can ("Plot / dispute / Hannah", not "Hannah"). Without a parse it is
``key_phrases`` as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from enfold.text import nlp
from enfold.text.phrases import TermStats, key_phrases, tokens

__all__ = ["entity_words", "theme_phrases"]

#: Entity types whose words never name a theme.
TIME_ENTS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "QUANTITY", "PERCENT"})
#: Entity types that are names: a theme is not one of them alone.
NAME_ENTS = frozenset({"PERSON", "GPE", "LOC", "ORG", "FAC", "NORP", "PRODUCT",
                       "WORK_OF_ART", "EVENT"})


def entity_words(texts: Sequence[str]) -> tuple[set[str], set[str]]:
    """(time words, name words) of the texts, lowercased, from the parse's entities."""
    times: set[str] = set()
    names: set[str] = set()
    for doc in nlp.parse_many(list(texts)):
        if doc is None:
            continue
        for ent in doc.ents:
            words = {t.lower() for t in tokens(ent.text)}
            if ent.label_ in TIME_ENTS:
                times |= words
            elif ent.label_ in NAME_ENTS:
                names |= words
    return times, names - times


def theme_phrases(texts: Sequence[str], stats: TermStats, k: int = 3) -> list[str]:
    """The k phrases a theme's label is made of; see the module docstring."""
    times, names = entity_words(texts)
    return key_phrases(texts, stats, k, skip=times, names=names)
