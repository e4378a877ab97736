"""Traces of a forgotten event's words: which texts carry them, and op records without them.

A :class:`Trace` is made per surviving node from the forgotten event's text and the node's
remaining evidence: a text is *tainted* when it holds a content word of the forgotten event
(:func:`words`: no stop words, no single letters; numbers count) that the evidence does not,
or quotes the forgotten text where no evidence text does. :func:`redact_record` replaces the
texts of an op record that hold the words found (:data:`REDACTED`); only texts are looked
at — the strings under :data:`TEXT_KEYS` and the reasoning — never ids, statuses or kinds.
Pure functions: :mod:`enfold.forget` uses them on the graph, the caller on the op
records a store hands it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from enfold.model import NodeKind, OpRecord
from enfold.settings import Settings
from enfold.text.phrases import STOPWORDS

__all__ = ["REDACTED", "TEXT_ATTRS", "TEXT_KEYS", "Trace", "redact_payload", "redact_record",
           "strings", "words"]

#: What a redacted text of the op log or of a node's attributes becomes.
REDACTED = "[forgotten]"
_WORD = re.compile(r"\w+")
# the defaults of Settings.forget_quote_chars and Settings.forget_min_quote_chars
_QUOTE: int = Settings.forget_quote_chars
_MIN_QUOTE: int = Settings.forget_min_quote_chars
#: The attributes that hold text (a node's ``text`` aside; a time's is a normalized value):
#: only these are rebuilt, cleaned or redacted — a status, a category, an id is not text.
TEXT_ATTRS: dict[NodeKind, tuple[str, ...]] = {
    NodeKind.CONCEPT: ("summary", "keywords", "aliases"),
    NodeKind.INTENT: ("summary", "aliases", "history", "clause"),
    NodeKind.FACT: ("subject", "theme", "phrases"),
    NodeKind.CLAIM: ("holder", "target", "target_key", "aliases"),
    NodeKind.PERSON: ("aliases",),
    NodeKind.TIME: ("expressions",),
}
#: The keys under which an op record's payload holds text: node fields, the text attributes
#: above, an intent history entry's reason, a feedback label.
TEXT_KEYS = frozenset({"text", "reason", "label", *(k for ks in TEXT_ATTRS.values()
                                                     for k in ks)})


def words(text: str) -> set[str]:
    """The lowercased words of a text that carry content (no stop words, no single
    letters; numbers count: a PIN is content)."""
    return {w for w in (t.lower() for t in _WORD.findall(text))
            if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS}


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def _probe(word: str) -> str:
    """A substring of ``word`` that a store can find ASCII-case-insensitively (SQLite's
    ``lower()`` folds ASCII only): its longest ASCII run, else the word itself."""
    runs = re.findall(r"[a-z0-9_]+", word)
    return max(runs, key=len) if runs else word


class Trace:
    """Whether a text carries words of a forgotten event that a node's evidence lacks.

    ``evidence`` yields the texts the node still rests on (its events' texts, speakers and
    participants); it is read lazily and at most once. A text is *tainted* when it holds a
    word of the forgotten text that the evidence does not, or quotes the forgotten text
    (its first ``quote`` characters, or is a fragment of it of ``min_quote`` or more:
    ``Settings.forget_quote_chars`` and ``forget_min_quote_chars``) where no evidence text
    does. The words found tainting a node's texts are what its
    op-log records must not keep (:meth:`redacts`); for a derived node also those of
    ``unique`` — the forgotten event's words that no other event's text holds — that its
    evidence lacks: an earlier wording of its text may have had them.
    """

    def __init__(self, forgotten: str, evidence: Iterable[str],
                 unique: Collection[str] = (), *, quote: int = _QUOTE,
                 min_quote: int = _MIN_QUOTE) -> None:
        self.words = frozenset(words(forgotten))
        self.unique = self.words & frozenset(unique)
        self._flat = _flat(forgotten)
        self._min_quote = min_quote
        self._head = self._flat[:quote] if len(self._flat) >= min_quote else None
        self._evidence: Iterator[str] = iter(evidence)
        self._texts: list[str] = []  # flattened evidence read so far
        self._known: set[str] = set()  # their words, and the words of rebuilt texts
        self._flagged: set[str] = set()
        self.quoted = False  # whether some text of the node quoted the forgotten one
        self.derived = False

    def _read(self) -> bool:
        for text in self._evidence:
            self._texts.append(_flat(text))
            self._known |= words(text)
            return True
        return False

    def supported(self, word: str) -> bool:
        while word not in self._known:
            if not self._read():
                return False
        return True

    def _quoted_by_evidence(self, fragment: str) -> bool:
        if any(fragment in t for t in self._texts):
            return True
        while self._read():
            if fragment in self._texts[-1]:
                return True
        return False

    def _quote(self, text: str) -> bool:
        flat = _flat(text)
        if self._head is not None and self._head in flat:
            fragment = self._head
        elif len(flat) >= self._min_quote and flat in self._flat:
            fragment = flat
        else:
            return False
        return not self._quoted_by_evidence(fragment)

    def taints(self, text: str) -> bool:
        """Whether ``text`` carries the forgotten event's words (and remember which)."""
        bad = {w for w in words(text) & self.words if not self.supported(w)}
        if bad:
            self._flagged |= bad
            return True
        if self._quote(text):
            self.quoted = True
            return True
        return False

    def taints_any(self, texts: Iterable[str]) -> bool:
        """Whether any of ``texts`` is tainted; each is looked at, so every word is noted."""
        return sum(self.taints(t) for t in texts) > 0

    def support(self, text: str) -> None:
        """``text`` was rebuilt from the evidence (or from clean nodes): its words are the
        node's own now, whatever the old text had."""
        self._known |= words(text)

    def needles(self) -> set[str]:
        """The words the node's op log must not keep: those found tainting its texts, and
        (:attr:`derived`: its text may have come from the forgotten event, in an earlier
        wording too) the unique ones."""
        found = self._flagged | (self.unique if self.derived else set())
        return {w for w in found if not self.supported(w)}

    def probes(self) -> list[str]:
        """Substrings a store can prefilter the node's op-log records by (a superset)."""
        found = {_probe(w) for w in self.needles()}
        if self.quoted and self._head is not None:
            found.add(_probe(max(_WORD.findall(self._head) or [self._head], key=len)))
        return sorted(found)

    def redacts(self, text: str) -> bool:
        """Whether an op-log text of the node must go: it holds one of :meth:`needles`, or
        quotes the forgotten text."""
        return bool(words(text) & self.needles()) or (self.quoted and self._quote(text))


def redact_payload(value: Any, trace: Trace, *, text: bool = False) -> Any:
    """``value`` (an op record's JSON payload) with every text that ``trace`` redacts
    replaced by :data:`REDACTED`. Texts are the strings under :data:`TEXT_KEYS` (``text``:
    ``value`` is one); the rest (ids, statuses, categories) is structure and stays."""
    if isinstance(value, str):
        return REDACTED if text and trace.redacts(value) else value
    if isinstance(value, list):
        return [redact_payload(v, trace, text=text) for v in value]
    if isinstance(value, dict):
        return {k: redact_payload(v, trace, text=text or k in TEXT_KEYS)
                for k, v in value.items()}
    return value


def redact_record(record: OpRecord, trace: Trace) -> OpRecord | None:
    """``record`` with the texts ``trace`` redacts replaced, or None when it keeps none."""
    before = redact_payload(record.before, trace)
    after = redact_payload(record.after, trace)
    reasoning = REDACTED if trace.redacts(record.reasoning) else record.reasoning
    if (before, after, reasoning) == (record.before, record.after, record.reasoning):
        return None
    return OpRecord(record.namespace, record.seq, record.plan_id, record.op, record.target,
                    before, after, reasoning, record.at, record.peer)


def strings(value: Any) -> Iterator[str]:
    """The strings of a JSON value, at any depth (not its keys)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
