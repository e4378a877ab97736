"""The question's lexical searches, started before the question is parsed.

A recall's BM25 searches need only the question's words, and the store runs them outside
Python (SQLite's FTS5 step releases the interpreter lock; PostgreSQL is another process),
while parsing the question and embedding it are Python and model work. So the searches
recall will make (:func:`enfold.recall.controller.lexical_calls`) are handed to a worker
thread first, and recall reads their results when it reaches them: the two overlap on a
second core instead of running one after the other. The results are those of the same
calls made in place; a call that was not started ahead runs in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from enfold.model import NodeKind
from enfold.recall.controller import Lexical

Call = tuple[frozenset[NodeKind], int]


class SearchAhead:
    """A :data:`~enfold.recall.controller.Lexical` whose calls for ``query`` with the
    kinds and depths of ``calls`` were started on ``pool``, in order, when it was made."""

    def __init__(self, search: Lexical, query: str,
                 calls: Sequence[tuple[Iterable[NodeKind], int]],
                 pool: ThreadPoolExecutor) -> None:
        self._search = search
        self._query = query
        self._started: dict[Call, Future[list[tuple[str, float]]]] = {}
        for kinds, depth in calls:
            key = (frozenset(kinds), depth)
            if key not in self._started:
                self._started[key] = pool.submit(search, query, key[0], depth)

    def __call__(self, query: str, kinds: Iterable[NodeKind], depth: int
                 ) -> list[tuple[str, float]]:
        kinds = frozenset(kinds)
        started = self._started.pop((kinds, depth), None) if query == self._query else None
        if started is not None:
            return started.result()
        return self._search(query, kinds, depth)

    def settle(self) -> None:
        """Wait for the searches recall did not read (none is left running on the store
        once recall returns; their errors, if any, are of no one's call)."""
        for started in self._started.values():
            started.exception()
        self._started.clear()
