"""Recall's BM25 searches use a question's content words: the words that only say how it is
asked ("what", "is", "the", "for", "my") match no event by themselves."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from enfold import Memory, Settings
from enfold.embed import HashingEmbedder
from enfold.model import NodeKind
from enfold.recall.controller import lexical_query


@pytest.mark.parametrize("question, words", [
    ("What's the deadline for my NMC paperwork?", "deadline NMC paperwork"),
    ("Who has my ladder?", "ladder"),
    ("When did I finish my last night shift?", "finish last night shift"),
    # a capitalized word after the first is a name, even when it is also a function word
    ("What did Will say about the budget?", "Will say budget"),
    ("Is May free for the trip?", "May free trip"),
    # nothing else left: the question as it is
    ("Who is it?", "Who is it?"),
])
def test_a_question_keeps_its_content_words(question: str, words: str) -> None:
    assert lexical_query(question) == words


def _memory(**settings: object) -> Memory:
    m = Memory.open("memory:", embedder=HashingEmbedder(), planner="local",
                    settings=Settings().with_(**settings))
    m.add_many([
        {"text": "night 2 done, lost track of what day it is", "source": "me",
         "ts": 1_767_000_000},
        {"text": "The revalidation form is due by 31 July.", "source": "NMC",
         "ts": 1_767_003_600},
        {"text": "Bought milk and eggs on the way home.", "source": "me",
         "ts": 1_767_007_200},
    ])
    return m


def test_an_event_sharing_only_function_words_gets_no_lexical_score() -> None:
    m = _memory()
    try:
        pack = m.recall("What is the deadline for my revalidation form?", k=3, touch=False)
    finally:
        m.close()
    lexical = next(s for s in pack.steps if s.get("op") == "anchor"
                   and s.get("kinds") == ["event"])
    assert lexical["lexical"] == 1  # the form's event only, not "what day it is"
    assert pack.evidence[0].text.startswith("The revalidation form")


class _Recorder:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def __call__(self, q: str, kinds: Iterable[NodeKind], n: int) -> list[tuple[str, float]]:
        self.queries.append(q)
        return []


@pytest.mark.parametrize("ahead", [False, True])
def test_the_searches_started_ahead_use_the_same_words(ahead: bool) -> None:
    m = _memory(search_ahead=ahead)
    rec = _Recorder()
    m.store.search_text = lambda ns, q, kinds, n, **kw: rec(q, kinds, n)  # type: ignore[method-assign]
    try:
        m.recall("What is the deadline for my revalidation form?", touch=False)
    finally:
        m.close()
    assert rec.queries and set(rec.queries) == {"deadline revalidation form"}
