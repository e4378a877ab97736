"""Is a mention the rules took for a person one? A logistic regression over its parse.

The rules of :mod:`enfold.text.people` find names by their shape and the parse's entity
types, and they still take a book ("reading Anna Karenina"), a shop ("went to Costco with
Haruto"), a drink or a device for a person. What gives those away is the context: the
words around the mention as spaCy's own token vectors carry them (``doc.tensor``: a
determiner before a product, a reading or drinking verb above a title, a place preposition),
its entity type and syntactic role. This model reads those and drops the mentions it holds
unlikely to be people. It is fitted by ``enfold bench train-people`` on the bundled people
tune sets (``people-tune*.jsonl``: 317 messages written for the purpose) and four whole
personal streams with gold people lists (``tests/data/recall/people``), every mention the
rules find labelled by whether it is one of the people; the threshold was chosen leaving
each set out in turn. Beside the context it reads the mention's own form (:func:`_form`):
labels, verbs at a line's head and things' names are English words; names seldom are. Names the namespace already knows as people are not screened.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from enfold.text.nlp import pipeline_id
from enfold.text.subjectivity import packaged_model

__all__ = ["features", "person_probability"]

MODEL_FILE = "person_screen.json"

_ENTS = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
         "LAW", "LANGUAGE", "DATE", "TIME", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL",
         "PERCENT", "")
_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "poss", "compound", "conj", "appos",
         "npadvmod", "ROOT", "attr", "dative", "intj", "nmod", "oprd", "advmod", "amod")
_PREPS = ("with", "to", "at", "in", "from", "for", "of", "by", "on", "about", "into", "near")
_BEFORE = ("a", "an", "the", "this", "that", "my", "our", "your", "his", "her", "their")


def features(doc: Any, start: int, end: int, relation: str | None) -> np.ndarray | None:
    """The features of the mention at characters ``start:end`` of the parsed ``doc``: its
    root's entity type and dependency, the preposition it is the object of, the word before
    it, a possessive after it, its shape, and the mean token vector of the mention beside
    that of its root's head. None when the parse has no token vectors."""
    tensor = getattr(doc, "tensor", None)
    if tensor is None or len(tensor) != len(doc) or not len(doc):
        return None
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None or not len(span):
        return None
    root = span.root
    head = root.head
    prev = doc[span.start - 1] if span.start > 0 else None
    nxt = doc[span.end] if span.end < len(doc) else None
    flags = [root.ent_type_ == e for e in _ENTS]
    flags += [root.dep_ == d for d in _DEPS]
    flags += [root.dep_ == "pobj" and head.lower_ == p for p in _PREPS]
    flags += [prev is not None and prev.lower_ == w for w in _BEFORE]
    flags += [nxt is not None and nxt.tag_ == "POS", relation is not None,
              doc.text[start:start + 1].islower()]
    flags += _form(doc, span, start, nxt)
    shape = [min(len(span), 4) / 4, float(span.start == 0), float(root.pos_ == "PROPN")]
    vectors = np.concatenate([tensor[span.start:span.end].mean(axis=0), tensor[head.i]])
    return np.concatenate([np.asarray(flags, dtype=np.float32),
                           np.asarray(shape, dtype=np.float32),
                           np.asarray(vectors, dtype=np.float32) / 10.0])


def _form(doc: Any, span: Any, start: int, nxt: Any) -> list[bool]:
    """What the mention's words are, read without its context: a word of English (a label,
    a verb at the head of a line, a thing's name: "Subtotal", "Tell Karim", "Pali Highway")
    or not (a name), where it stands (a line's or a sentence's start, before a colon)."""
    from enfold.text.people import dictionary_word, names_a_person

    words = [t for t in span if t.is_alpha]
    if not words:
        return [False] * 9
    first, last = words[0].lower_, words[-1].lower_
    text, at = doc.text, start
    while at > 0 and text[at - 1] in " \t":  # the line's start, read back to the last break
        at -= 1
    return [
        at == 0 or text[at - 1] == "\n",
        bool(span[0].is_sent_start),
        nxt is not None and nxt.text == ":",
        dictionary_word(first),
        dictionary_word(first, "VERB"),
        dictionary_word(last, "NOUN") and not names_a_person(last),
        names_a_person(last),
        all(dictionary_word(t.lower_) for t in words),
        len(words) == 1 and dictionary_word(first),
    ]


@functools.cache
def _model() -> dict[str, Any] | None:
    """The packaged weights, when they were fitted on the pipeline in use (other token
    vectors would be read as if they were these: the screen is then off)."""
    model = packaged_model(MODEL_FILE)
    if model is None or model.get("pipeline") != pipeline_id():
        return None
    model["w"] = np.asarray(model["weights"], dtype=np.float32)
    return model


def person_probability(doc: Any, start: int, end: int, relation: str | None) -> float | None:
    """P(the mention is a person); None without the model or the parse's vectors."""
    model = _model()
    if model is None:
        return None
    x = features(doc, start, end, relation)
    if x is None or x.shape != model["w"].shape:
        return None
    return float(1.0 / (1.0 + np.exp(-(float(x @ model["w"]) + float(model["bias"])))))


def threshold() -> float:
    """The probability under which a mention is dropped (the model's own; 0 without it)."""
    model = _model()
    return 0.0 if model is None else float(model["threshold"])
