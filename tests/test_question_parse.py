"""A question with no capitalised word after its first is parsed without the entity
recogniser (issue 23: half of the parse's cost), and reads exactly as with it."""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime

import pytest

from enfold.recall import analyze as analyze_module
from enfold.recall.analyze import analyze
from enfold.text import nlp

pytestmark = pytest.mark.skipif(not nlp.available(), reason="needs the spaCy model")

AT = datetime(2026, 3, 14, 12, tzinfo=UTC)
#: Questions of every kind the analysis reads, none with a capital after the first word.
PLAIN = [
    "how is the dog training going?",
    "What happened with the plumber visit?",
    "When is the camera settings due?",
    "who has my ladder?",
    "What did mum want?",
    "did my sister say she'd come to the barbecue last week?",
    "what does my landlord think about the boiler?",
    "How much did the repair cost in march?",
    "Is it true that the ferry was cancelled yesterday?",
    "who thinks the new flat is too small?",
]


#: Questions whose capitalised words are all known people standing alone (session 30).
KNOWN = frozenset({"mum", "zoe", "priya", "oduya", "will", "mr", "grant", "reading"})
NAMED = [
    "What does Zoe think about the climbing gym?",
    "Did Priya say the ferry was cancelled yesterday?",
    "Who told Oduya about the lease?",
    "Does Zoe agree with Priya that the flat is too small?",
]
#: ... and questions where the recogniser still runs: a known name that is also a word, a
#: name of two capitalised words, an unknown name.
NAMED_FULL = ["What does Will think about the gym?", "Is Mr Grant coming?",
              "What is Reading like in May?", "What does Tomasz think about the gym?",
              "Did Priya say the ferry was cancelled on Tuesday?"]


def _fields(q: str) -> tuple[object, ...]:
    a = analyze(q, at=AT, known_keys=KNOWN)
    return (a.people, a.holder, a.asks_opinion, a.comparison, a.verification, a.asks_latest,
            a.window, a.time_expressions, a.answer_type, a.asks_holder)


@pytest.mark.parametrize("question", PLAIN + NAMED + NAMED_FULL)
def test_a_plain_question_reads_as_with_entities(question: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    nlp.clear_cache()
    fast = _fields(question)
    nlp.clear_cache()
    # the full pipeline for every question: what analyze did before
    monkeypatch.setattr(analyze_module, "without_entities",
                        lambda text: contextlib.nullcontext())
    assert _fields(question) == fast


def test_the_recogniser_is_skipped_only_for_plain_questions() -> None:
    nlp.clear_cache()
    analyze("how is the dog training going?", at=AT)
    assert "how is the dog training going?" in nlp._plain_cache
    assert "how is the dog training going?" not in nlp._cache
    nlp.clear_cache()
    for named in ("What does Zoe think about the climbing gym?", "Zoe's view on the gym?",
                  "tell me about the gym"):
        analyze(named, at=AT)
        assert named in nlp._cache and named not in nlp._plain_cache
    # with the namespace's people known, a question naming them alone skips it too
    nlp.clear_cache()
    for named in NAMED:
        analyze(named, at=AT, known_keys=KNOWN)
        assert named in nlp._plain_cache and named not in nlp._cache
    for named in NAMED_FULL:
        analyze(named, at=AT, known_keys=KNOWN)
        assert named in nlp._cache and named not in nlp._plain_cache


def test_a_parse_without_entities_is_never_given_outside_its_block() -> None:
    text = "what did the vet say about the lump on friday?"
    nlp.clear_cache()
    with nlp.without_entities(text):
        plain = nlp.parse(text)
    assert plain is not None and not plain.has_annotation("ENT_IOB")
    full = nlp.parse(text)
    assert full is not None and full.has_annotation("ENT_IOB")
    assert [(t.tag_, t.dep_, t.head.i, t.lemma_) for t in plain] \
        == [(t.tag_, t.dep_, t.head.i, t.lemma_) for t in full]
    # another thread inside no block gets the full parse, even while this one is in one
    nlp.clear_cache()
    got: list[bool] = []
    with nlp.without_entities(text):
        worker = threading.Thread(
            target=lambda: got.append(nlp.parse(text).has_annotation("ENT_IOB")))  # type: ignore[union-attr]
        worker.start()
        worker.join()
        # a full parse cached is used inside the block too: it has more
        assert nlp.parse(text).has_annotation("ENT_IOB")  # type: ignore[union-attr]
    assert got == [True]
