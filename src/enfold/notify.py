"""Proactive delivery: a small in-process publish/subscribe hub for intent notifications.

The intent layer (:mod:`enfold.intents`) decides *what* to tell (an intent emerged, a deadline
nears, a dormant concept woke up); this module only *delivers*. The write path hands the
notifications of an event to :meth:`Notifier.publish` after the event's transaction has
committed — never before, so a subscriber never hears of something a rollback undid.

Two ways to listen:

* a callback, ``unsubscribe = notifier.subscribe(fn)``; ``fn`` runs in the folding thread, and
  an exception it raises is logged and swallowed: a failing subscriber never breaks folding;
* an async iterator, ``async for note in notifier.stream(): ...``, safe to feed from any
  thread (the notification is handed to the iterator's event loop). A slow consumer loses the
  oldest notifications beyond ``maxsize`` (counted in :attr:`Subscription.dropped`), never
  blocks the writer.

Notification types (:data:`TYPES`): ``intent_emerged``, ``deadline_near`` (urgency rose above 1:
the due time is within the urgency window on the stream's clock), ``reactivated`` (an event
reinforced a concept dormant for a while), ``intent_resolved`` and ``intent_expired``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

log = logging.getLogger("enfold.notify")

INTENT_EMERGED = "intent_emerged"
DEADLINE_NEAR = "deadline_near"
REACTIVATED = "reactivated"
INTENT_RESOLVED = "intent_resolved"
INTENT_EXPIRED = "intent_expired"

#: Every notification type, in the order a reader meets them in an intent's life.
TYPES: tuple[str, ...] = (INTENT_EMERGED, DEADLINE_NEAR, REACTIVATED, INTENT_RESOLVED,
                          INTENT_EXPIRED)

__all__ = ["TYPES", "Notification", "Notifier", "Subscription"]


@dataclass(frozen=True)
class Notification:
    """One thing worth telling the user before they ask.

    ``node_id`` is the intent (or, for ``reactivated``, the concept); ``at`` is the stream
    time (the event's ``ts``) when it arose; ``event_id`` the event that caused it, if any.
    """

    type: str
    namespace: str
    node_id: str
    label: str
    at: float
    category: str | None = None
    due: float | None = None
    event_id: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "namespace": self.namespace,
            "node_id": self.node_id,
            "label": self.label,
            "at": self.at,
            "category": self.category,
            "due": self.due,
            "event_id": self.event_id,
            "detail": dict(self.detail),
        }


Callback = Callable[[Notification], object]


@dataclass(frozen=True)
class _Filter:
    types: frozenset[str] | None
    namespace: str | None

    def accepts(self, note: Notification) -> bool:
        return ((self.types is None or note.type in self.types)
                and (self.namespace is None or note.namespace == self.namespace))


def _filter(types: Iterable[str] | None, namespace: str | None) -> _Filter:
    if types is not None:
        wanted = frozenset(types)
        unknown = wanted - set(TYPES)
        if unknown:
            raise ValueError(f"unknown notification types: {', '.join(sorted(unknown))}")
        return _Filter(wanted, namespace)
    return _Filter(None, namespace)


class Subscription:
    """An async iterator of notifications, bound to the event loop it was created in."""

    def __init__(self, notifier: Notifier, flt: _Filter, maxsize: int) -> None:
        self._notifier = notifier
        self._filter = flt
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Notification | None] = asyncio.Queue()
        self._maxsize = max(1, maxsize)
        self._closed = False
        self.dropped = 0

    def _offer(self, note: Notification) -> None:
        """Called from any thread by the notifier."""
        if self._closed or not self._filter.accepts(note):
            return
        try:
            self._loop.call_soon_threadsafe(self._put, note)
        except RuntimeError:  # the loop is closed: nobody will read this any more
            self._notifier._remove(self)

    def _put(self, note: Notification | None) -> None:
        if note is not None and self._queue.qsize() >= self._maxsize:
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(note)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Notification:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        note = await self._queue.get()
        if note is None:
            raise StopAsyncIteration
        return note

    async def aclose(self) -> None:
        """Stop listening; a pending ``async for`` ends after what is already queued."""
        self.close()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._notifier._remove(self)
            try:
                self._loop.call_soon_threadsafe(self._put, None)
            except RuntimeError:
                pass

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class Notifier:
    """Subscribers and delivery; thread-safe. One per :class:`~enfold.memory.Memory`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[tuple[Callback, _Filter]] = []
        self._streams: list[Subscription] = []
        self.delivered = 0
        self.failures = 0

    def subscribe(self, callback: Callback, *, types: Iterable[str] | None = None,
                  namespace: str | None = None) -> Callable[[], None]:
        """Call ``callback(notification)`` for each notification (optionally only some
        ``types``, or one ``namespace``). Returns a function that unsubscribes."""
        entry = (callback, _filter(types, namespace))
        with self._lock:
            self._callbacks.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._callbacks:
                    self._callbacks.remove(entry)

        return unsubscribe

    def stream(self, *, types: Iterable[str] | None = None, namespace: str | None = None,
               maxsize: int = 1000) -> Subscription:
        """An async iterator of notifications; call it inside a running event loop."""
        sub = Subscription(self, _filter(types, namespace), maxsize)
        with self._lock:
            self._streams.append(sub)
        return sub

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._streams:
                self._streams.remove(sub)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._callbacks) + len(self._streams)

    def publish(self, notes: Iterable[Notification]) -> None:
        """Deliver notifications in order. Call only after the change they report has
        committed. A callback that raises is logged and skipped."""
        for note in notes:
            with self._lock:
                callbacks = list(self._callbacks)
                streams = list(self._streams)
            for callback, flt in callbacks:
                if not flt.accepts(note):
                    continue
                try:
                    callback(note)
                except Exception:
                    self.failures += 1
                    log.exception("notification subscriber %r failed on %s %s",
                                  callback, note.type, note.node_id)
            for sub in streams:
                sub._offer(note)
            self.delivered += 1
