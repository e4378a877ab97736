"""Matching a reported completion to the obligation it completes: the obligation's verb,
its past forms, the cue fragments of a completing event and their content words."""

from __future__ import annotations

import functools
import re

from enfold.model import Node
from enfold.text.annotate import has_resolution_cue
from enfold.text.phrases import terms

_LIMIT = r"(?:until|till|before|by|due|deadline|left\s+(?:until|till|before))\s+(?:on\s+)?"


def _names_as_limit(text: str, time: Node) -> bool:
    """Whether ``text`` names the time anchor as a limit ("sixteen days until the 13th")."""
    for expr in time.attrs.get("expressions") or []:
        expr = re.sub(r"^(?:by|due|before|until)\s+", "", str(expr), flags=re.IGNORECASE)
        if expr and re.search(_LIMIT + re.escape(expr), text, re.IGNORECASE):
            return True
    return False


# ------------------------------------------------------------------ resolution matching
_FRAGMENT = re.compile(r"[^.!?;:\n,]+")
_TO_VERB = re.compile(r"\b(?:to|[Rr]emind\s+(?:me|us)\s+to)\s+([a-z]+)\b")


@functools.lru_cache(maxsize=4096)
def past_forms(verb: str) -> frozenset[str]:
    """The past tense and past participle of an English verb, by ``lemminflect`` (its
    lexicon, then its rules for a verb it does not know): "drive" → drove, driven.
    Cached: the resolution check asks for the verbs of the open intents on every event.

    A participle spelled as the verb itself counts only when the past tense is too ("put",
    "read"): "run"'s is, but "Will run the export" does not report it done, "Ran" does."""
    from lemminflect import getInflection

    verb = verb.lower()
    past = getInflection(verb, "VBD")
    return frozenset((*past, *(p for p in getInflection(verb, "VBN")
                               if p != verb or verb in past)))


def _stated(node: Node) -> str:
    """The words an obligation was stated in (its label is written as a goal)."""
    clause = node.attrs.get("clause")
    return clause if isinstance(clause, str) and clause else node.text


@functools.lru_cache(maxsize=4096)
def obligation_verb(text: str) -> str | None:
    """The action of an obligation ("I need to *send* the budget")."""
    m = _TO_VERB.search(text)
    return m.group(1) if m else None


def completes(verb: str, text: str) -> str | None:
    """The fragment of ``text`` reporting ``verb`` done ("Sent Omar the budget"), if any."""
    forms = past_forms(verb)
    for m in _FRAGMENT.finditer(text):
        frag = m.group(0)
        words = [w.lower() for w in re.findall(r"[A-Za-z']+", frag)]
        for i, w in enumerate(words):
            if w in forms and not any(x in ("not", "never", "haven't", "hasn't", "didn't",
                                            "if", "when", "once", "yet")
                                      for x in words[max(0, i - 3):i]):
                return frag
    return None


def content_words(text: str) -> frozenset[str]:
    """The unigrams of a text that are not stopwords or completion cues (cached for texts
    of up to 2,000 characters: an intent's label and evidence are compared with event after
    event)."""
    return _content_words(text) if len(text) <= 2000 else _words_of(text)


def _words_of(text: str) -> frozenset[str]:
    return frozenset(t for t in terms(text) if " " not in t and not has_resolution_cue(t))


_content_words = functools.lru_cache(maxsize=4096)(_words_of)


def cue_fragments(text: str) -> list[str]:
    """The clauses of ``text`` that report something completed."""
    frags = [m.group(0).strip() for m in _FRAGMENT.finditer(text)]
    found = [f for f in frags if f and has_resolution_cue(f)]
    if not found and has_resolution_cue(text):
        found = [text]
    return found
