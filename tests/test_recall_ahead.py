"""Recall's lexical searches started ahead on a worker thread give what the same searches
give in place, and leave nothing running once recall returns."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

import pytest

from enfold import Memory, Settings
from enfold.embed import HashingEmbedder
from enfold.model import NodeKind
from enfold.recall.ahead import SearchAhead
from enfold.recall.controller import lexical_calls


class _Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, frozenset[NodeKind], int, str]] = []
        self.fail = fail

    def __call__(self, q: str, kinds: Iterable[NodeKind], n: int) -> list[tuple[str, float]]:
        self.calls.append((q, frozenset(kinds), n, threading.current_thread().name))
        if self.fail:
            raise RuntimeError("store down")
        return [(f"{q}:{n}", float(n))]


def test_started_calls_are_read_once_and_others_run_in_place() -> None:
    rec = _Recorder()
    with ThreadPoolExecutor(1, thread_name_prefix="ahead") as pool:
        search = SearchAhead(rec, "q", [([NodeKind.EVENT], 100), ([NodeKind.EVENT], 100)],
                             pool)
        assert search("q", [NodeKind.EVENT], 100) == [("q:100", 100.0)]
        # read once: the same call again, another depth or another query run in place
        assert search("q", [NodeKind.EVENT], 100) == [("q:100", 100.0)]
        assert search("q", [NodeKind.EVENT], 5) == [("q:5", 5.0)]
        assert search("other", [NodeKind.EVENT], 100) == [("other:100", 100.0)]
        search.settle()
    threads = [c[3] for c in rec.calls]
    assert threads[0].startswith("ahead") and len(rec.calls) == 4  # duplicates start once
    assert all(not t.startswith("ahead") for t in threads[1:])


def test_an_error_of_a_started_search_is_raised_where_it_is_read() -> None:
    rec = _Recorder(fail=True)
    with ThreadPoolExecutor(1) as pool:
        search = SearchAhead(rec, "q", [([NodeKind.EVENT], 10), ([NodeKind.CLAIM], 10)], pool)
        with pytest.raises(RuntimeError, match="store down"):
            search("q", [NodeKind.EVENT], 10)
        search.settle()  # the unread one failed too: settling does not raise


@pytest.mark.parametrize("question", ["When is the dentist?", "What does Tom think of Leeds?",
                                      "How is the marathon training going?"])
def test_recall_is_the_same_with_and_without_searching_ahead(tmp_path: object,
                                                             question: str) -> None:
    events = [
        {"text": "Dentist moved to Thursday 3pm, the one on Carver Street.", "source": "Ana"},
        {"text": "Tom thinks Leeds is the best city he has lived in.", "source": "Ana"},
        {"text": "Marathon training: 18 km long run, legs heavy but fine.", "source": "Ana"},
        {"text": "Booked the car service for Friday.", "source": "Ana"},
    ] * 3
    packs = []
    for ahead in (False, True):
        # workers of memories other tests left open may still be alive: only this one's count
        before = {t for t in threading.enumerate() if t.name.startswith("enfold-search")}
        m = Memory.open("memory:", embedder=HashingEmbedder(), planner="local",
                        settings=Settings().with_(search_ahead=ahead))
        m.add_many([{**e, "ts": 1_767_000_000 + 3600 * i} for i, e in enumerate(events)])
        pack = m.recall(question, k=5, touch=False)
        packs.append([(i.external_id, i.text, round(i.score, 9), i.path)
                      for i in (*pack.evidence, *pack.concepts, *pack.claims)])
        m.close()
        assert not any(t.name.startswith("enfold-search") and t.is_alive() and t not in before
                       for t in threading.enumerate())  # close() stops the worker
    assert packs[0] == packs[1] and packs[0]


def test_the_calls_started_ahead_are_the_ones_recall_makes() -> None:
    settings = Settings()
    rec = _Recorder()
    m = Memory.open("memory:", embedder=HashingEmbedder(), planner="local",
                    settings=settings.with_(search_ahead=False))
    m.add("Dentist moved to Thursday 3pm.", source="Ana", ts=1_767_000_000)
    m.store.search_text = lambda ns, q, kinds, n, **kw: rec(q, kinds, n)  # type: ignore[method-assign]
    m.recall("When is the dentist?", touch=False)
    m.close()
    made = [(kinds, n) for _, kinds, n, _ in rec.calls]
    assert made == [(frozenset(k), n) for k, n in lexical_calls(settings)]
