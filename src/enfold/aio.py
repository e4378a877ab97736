"""``AsyncMemory``: the :class:`~enfold.memory.Memory` API for asyncio code.

    from enfold import AsyncMemory
    async with await AsyncMemory.open("memory.db") as m:
        await m.add("Ran 10k this morning", source="Maya")
        pack = await m.recall("What did Maya run?")

One implementation: every method runs the same-named ``Memory`` method in a worker thread
(``asyncio.to_thread`` by default; the server passes Starlette's ``run_in_threadpool``, the
pool its sync routes ran in), so the event loop never waits on SQLite, the embedder or the
parse. The methods are made from ``Memory``'s by :func:`_in_thread`, which keeps their
signatures and docstrings (a test checks that every public method of ``Memory`` is here).
A namespace's lock is a thread lock held inside that worker call, never across an
``await``. :meth:`read` stands for ``Memory.reading``: ``fn(graph)`` runs in the worker
with the graph held still.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, Self, TypeVar

from enfold.memory import Memory

if TYPE_CHECKING:
    from enfold.graph import WorkingGraph
    from enfold.notify import Notification, Subscription

__all__ = ["AsyncMemory", "ThreadRunner"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class ThreadRunner(Protocol):
    """Runs a blocking call in a worker thread: ``await run(func)``."""

    def __call__(self, func: Callable[[], _R], /) -> Awaitable[_R]: ...


def _in_thread(method: Callable[Concatenate[Memory, _P], _R]
               ) -> Callable[Concatenate[AsyncMemory, _P], Coroutine[Any, Any, _R]]:
    """The async twin of a ``Memory`` method: the same call, in a worker thread. The method
    is looked up on the wrapped memory at each call, so a subclass's override (or a test's
    stand-in) is the one that runs."""
    name = method.__name__

    @functools.wraps(method)
    async def call(self: AsyncMemory, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        bound: Callable[_P, _R] = getattr(self.memory, name)
        return await self._run(functools.partial(bound, *args, **kwargs))
    return call


class AsyncMemory:
    """A :class:`~enfold.memory.Memory` whose methods are awaited (see the module).

    ``to_thread``: how a call reaches a worker thread (default ``asyncio.to_thread``)."""

    def __init__(self, memory: Memory, *, to_thread: ThreadRunner | None = None) -> None:
        self.memory = memory
        self._run: ThreadRunner = to_thread or asyncio.to_thread

    @classmethod
    async def open(cls, target: str | Path = "enfold.db", *,
                   to_thread: ThreadRunner | None = None, **options: Any) -> AsyncMemory:
        """``Memory.open(target, **options)`` in a worker thread, wrapped."""
        run: ThreadRunner = to_thread or asyncio.to_thread
        memory = await run(functools.partial(Memory.open, target, **options))
        return cls(memory, to_thread=to_thread)

    @property
    def namespace(self) -> str:
        return self.memory.namespace

    @property
    def settings(self) -> Any:
        return self.memory.settings

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def read(self, fn: Callable[[WorkingGraph], _R], *,
                   namespace: str | None = None) -> _R:
        """``fn(graph)`` in a worker thread, the namespace's graph held still meanwhile
        (``Memory.reading``): no fold or write of it runs until ``fn`` returns."""
        def work() -> _R:
            with self.memory.reading(namespace) as g:
                return fn(g)
        return await self._run(work)

    # Not I/O: called directly.
    def subscribe(self, callback: Callable[[Notification], object], *,
                  types: Any = None) -> Callable[[], None]:
        """As ``Memory.subscribe``: ``callback`` runs in the thread that made the change."""
        return self.memory.subscribe(callback, types=types)

    def notifications(self, *, types: Any = None, maxsize: int = 1000) -> Subscription:
        """As ``Memory.notifications`` (create it inside the running event loop)."""
        return self.memory.notifications(types=types, maxsize=maxsize)

    warm_up = _in_thread(Memory.warm_up)
    close = _in_thread(Memory.close)
    graph = _in_thread(Memory.graph)
    save_vectors = _in_thread(Memory.save_vectors)
    namespaces = _in_thread(Memory.namespaces)
    add = _in_thread(Memory.add)
    add_many = _in_thread(Memory.add_many)
    fold = _in_thread(Memory.fold)
    consolidate = _in_thread(Memory.consolidate)
    apply = _in_thread(Memory.apply)
    update_event = _in_thread(Memory.update_event)
    intents = _in_thread(Memory.intents)
    feedback = _in_thread(Memory.feedback)
    tick = _in_thread(Memory.tick)
    get = _in_thread(Memory.get)
    edges = _in_thread(Memory.edges)
    history = _in_thread(Memory.history)
    events = _in_thread(Memory.events)
    unplanned_events = _in_thread(Memory.unplanned_events)
    fold_timings = _in_thread(Memory.fold_timings)
    stats = _in_thread(Memory.stats)
    recall = _in_thread(Memory.recall)
    answer = _in_thread(Memory.answer)
    forget = _in_thread(Memory.forget)
    wipe = _in_thread(Memory.wipe)
    export = _in_thread(Memory.export)
    import_ = _in_thread(Memory.import_)

#: ``Memory`` methods with no same-named coroutine here: ``open`` is the async classmethod
#: above, ``reading`` (a context manager held across the block) is :meth:`AsyncMemory.read`.
SPECIAL = frozenset({"open", "reading"})
