"""Keeping a large working graph out of the cyclic garbage collector's full passes.

A working graph of 100k events is about two million objects the collector tracks (nodes,
their attribute dicts, edges, index entries). CPython's collector passes over every one of
them in each full collection, and a full collection comes due whenever the objects that
survived since the last one reach a quarter of the rest: every few hundred recalls (each
recall updates the access statistics of what it returns), or every few thousand events
folded. On this machine one such pass over a 100k-event graph took 730-855 ms, inside
whichever call happened to allocate the object that set it off: one recall in about 265
stalled for most of a second, and a million events would make it several seconds.

:func:`settle` moves the objects alive at that moment into the collector's permanent
generation (:func:`gc.freeze`), after a full collection so that no garbage is kept there:
the next full collections pass over what was made since, not over the graph. Sessions
settle when their graph holds at least ``Settings.gc_freeze_nodes`` nodes (0: never), once
it is loaded, again each time it has grown by half, and after a full pass of the collector's
own that was slow (:data:`SLOW_PASS_S`: what was made since the last settle has added up),
at the end of the next operation (see :class:`~enfold.session.NamespaceSession`); the
collector's passes are watched (:func:`watch`) once a session that may settle is made, so a
process that leaves the setting off carries no callback of ours. Every
settle collects fully first, so no garbage of that moment is frozen. :func:`release` gives the frozen objects back to
the collector (:func:`gc.unfreeze`) when a settled graph is let go (dropped, evicted, its
memory closed), so the graph's own reference cycles are collected as usual.

The permanent generation is the process's: objects of the application alive at a settle are
frozen too, and cyclic garbage among them waits for the next release. So it is a setting to
turn on (``gc_freeze_nodes``, off by default) in a long-running process that holds a large
graph and closes its memory when done (the memory's :meth:`~enfold.memory.Memory.close`
lets its graphs go and gives everything back); a memory dropped without ``close()`` while
settled keeps its graph until the next release.
"""

from __future__ import annotations

import gc
import threading
import time

__all__ = ["SLOW_PASS_S", "due", "epoch", "frozen", "release", "settle", "watch"]

#: A full collection that takes this long passed over a heap worth settling again: the
#: objects made since the last settle (the indexes a recall builds on a graph, the access
#: statistics it writes) add up, and the collector's next full passes would go over them
#: every few dozen calls.
SLOW_PASS_S = 0.02

_lock = threading.Lock()
_settled = 0  # settles since the last release
_epoch = 0  # releases so far: a settle of an earlier epoch was undone
_due = False  # a full collection was slow since the last settle
_collecting = False  # a collection is running (its finalizers may call in here)
_pass_started = 0.0


def _watch(phase: str, info: dict[str, int]) -> None:
    """The collector's callback: notes when a collection runs and a slow full one."""
    global _due, _pass_started, _collecting
    _collecting = phase == "start"
    if info.get("generation") != 2:
        return
    if phase == "start":
        _pass_started = time.perf_counter()
    elif time.perf_counter() - _pass_started >= SLOW_PASS_S:
        _due = True


def watch() -> None:
    """Start noting the collector's passes (:func:`_watch`), once per process: called when
    a session that may settle is made, so a process that never turns the setting on has no
    callback of ours on its collections."""
    with _lock:
        if _watch not in gc.callbacks:
            gc.callbacks.append(_watch)


def settle() -> int | None:
    """Collect fully, then freeze every object alive (see the module); the epoch it holds
    in, or None when it was not done: called while a collection runs (from a finalizer,
    where a collection collects nothing and the freeze would keep its garbage) or while
    this thread is settling already."""
    global _settled, _due
    if _collecting or not _lock.acquire(blocking=False):
        return None
    try:
        gc.collect()
        gc.freeze()
        _settled += 1
        _due = False
        return _epoch
    finally:
        _lock.release()


def due() -> bool:
    """Whether a full collection was slow since the last settle: what survived it is worth
    taking out of the next ones."""
    return _due


def release() -> None:
    """Give the frozen objects back to the collector, when this module froze any: every
    settle so far is undone (the permanent generation is the process's)."""
    global _settled, _epoch
    with _lock:
        if _settled:
            gc.unfreeze()
            _settled = 0
            _epoch += 1


def epoch() -> int:
    """How many releases there have been: a settle of an earlier epoch no longer holds."""
    return _epoch


def frozen() -> int:
    """How many objects the permanent generation holds (the process's, whoever froze them)."""
    return gc.get_freeze_count()
