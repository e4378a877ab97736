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
at the end of the operation it fell in (see :class:`~enfold.session.NamespaceSession`). :func:`release` gives the frozen objects back to
the collector (:func:`gc.unfreeze`) when a settled graph is let go (dropped, evicted, its
memory closed), so the graph's own reference cycles are collected as usual.

The permanent generation is the process's: objects of the application alive at a settle are
frozen too, and cyclic garbage among them waits for the next release. What is kept that way
is bounded by the heap at the settles, which come at geometric steps of a graph's growth.
"""

from __future__ import annotations

import gc
import threading
import time

__all__ = ["SLOW_PASS_S", "due", "epoch", "frozen", "release", "settle"]

#: A full collection that takes this long passed over a heap worth settling again: the
#: objects made since the last settle (the indexes a recall builds on a graph, the access
#: statistics it writes) add up, and the collector's next full passes would go over them
#: every few dozen calls.
SLOW_PASS_S = 0.02

_lock = threading.Lock()
_settled = 0  # settles since the last release
_epoch = 0  # releases so far: a settle of an earlier epoch was undone
_due = False  # a full collection was slow since the last settle
_pass_started = 0.0


def _watch(phase: str, info: dict[str, int]) -> None:
    """The collector's callback: notes a slow full collection."""
    global _due, _pass_started
    if info.get("generation") != 2:
        return
    if phase == "start":
        _pass_started = time.perf_counter()
    elif time.perf_counter() - _pass_started >= SLOW_PASS_S:
        _due = True


gc.callbacks.append(_watch)


def settle(*, full: bool = True) -> int:
    """Freeze every object alive (see the module), after a full collection (``full``) or,
    right after the collector's own slow full pass, one of the young generations; the epoch
    it holds in."""
    global _settled, _due
    with _lock:
        gc.collect() if full else gc.collect(1)
        gc.freeze()
        _settled += 1
        _due = False
        return _epoch


def due() -> bool:
    """Whether a full collection was slow since the last settle: the survivors are worth
    taking out of the next ones (the pass just collected the garbage among them)."""
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
