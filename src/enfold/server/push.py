"""Push: a Server-Sent Events stream per namespace, and signed webhooks.

Both listen to the memory's :class:`~enfold.notify.Notifier`, which publishes only after the
change a notification reports has committed. SSE events are named ``intent`` (emerged,
deadline near, resolved, expired: the notification's ``type`` says which) or
``reactivation``; the data is the notification as JSON. A stream lives only as long as the
credentials it was opened with: the key is checked again before every delivery and at
least every ``poll_s`` seconds, and the stream ends once it is revoked (a reconnecting
client then gets 401).

Every SSE event carries an ``id:`` (``<server run>-<n>``, n counting up per namespace), and
the server keeps the last notifications of each namespace (:class:`Replay`, ``sse_replay``
of them, 1000 by default). A client that reconnects with the ``Last-Event-ID`` header (as
browsers' EventSource do by themselves) first gets those it missed, then the live ones. An
id older than what is kept, or from an earlier run of the server, gets everything kept,
after an SSE comment saying that older notifications may be lost. What ``forget`` or a wipe
removes leaves the buffer too.

A webhook receives ``POST`` with the JSON body ``{"id", "event", "notification"}`` and the
headers ``X-Enfold-Event``, ``X-Enfold-Delivery`` (the id: deliveries are at least once, so
receivers can drop repeats) and ``X-Enfold-Signature: sha256=<hex HMAC-SHA256 of the raw
body with the shared secret>``. A delivery that fails (network error, 5xx, 408, 429) is
retried with exponential backoff; any other answer ends it.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import hmac
import itertools
import json
import logging
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Self

from enfold.errors import StoreError
from enfold.notify import REACTIVATED, Notification, Notifier

log = logging.getLogger("enfold.server.push")

SIGNATURE_HEADER = "X-Enfold-Signature"
_RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
GAP_COMMENT = "older notifications than these may be lost: the server keeps only the latest"


def event_name(note: Notification) -> str:
    return "reactivation" if note.type == REACTIVATED else "intent"


@dataclass(frozen=True)
class Numbered:
    """A notification with its SSE id (``seq`` counts up per namespace)."""

    seq: int
    id: str
    note: Notification


class Listener:
    """One SSE stream's async iterator of numbered notifications (replayed ones first),
    bound to the event loop it was created in; a slow reader loses the oldest beyond
    ``maxsize``, never blocks the folding thread."""

    def __init__(self, replay: Replay, namespace: str, maxsize: int = 1000) -> None:
        self._replay = replay
        self.namespace = namespace
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Numbered | None] = asyncio.Queue()
        self._maxsize = max(1, maxsize)
        self._closed = False
        self.gap = False  # the client asked for more than the buffer still holds
        self.dropped = 0

    def offer(self, item: Numbered) -> None:
        """Called from any thread by the replay log."""
        if self._closed:
            return
        try:
            self._loop.call_soon_threadsafe(self._put, item)
        except RuntimeError:  # the loop is closed: nobody will read this any more
            self._replay.remove(self)

    def _put(self, item: Numbered | None) -> None:
        if item is not None and self._queue.qsize() >= self._maxsize:
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(item)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Numbered:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is None:
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._replay.remove(self)
            try:
                self._loop.call_soon_threadsafe(self._put, None)
            except RuntimeError:
                pass


class Replay:
    """The last ``size`` notifications of each namespace, numbered, and the live SSE
    listeners they are handed to. Numbering, keeping and handing over happen under one
    lock, so a reconnecting listener gets what it missed and then the live notifications
    with no gap and no repeat."""

    def __init__(self, size: int = 1000) -> None:
        self.size = size
        self.run = uuid.uuid4().hex[:8]  # ids of another server run are not ours
        self._lock = threading.Lock()
        self._kept: dict[str, deque[Numbered]] = {}
        self._seq: dict[str, int] = {}
        self._listeners: dict[str, list[Listener]] = {}
        self._unsubscribe: Callable[[], None] | None = None

    def start(self, notifier: Notifier) -> None:
        self._unsubscribe = notifier.subscribe(self.record)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def record(self, note: Notification) -> None:
        """The notifier callback (runs in the folding thread): number, keep, hand over."""
        ns = note.namespace
        with self._lock:
            seq = self._seq[ns] = self._seq.get(ns, 0) + 1
            item = Numbered(seq, f"{self.run}-{seq}", note)
            if self.size:
                self._kept.setdefault(ns, deque(maxlen=self.size)).append(item)
            listeners = list(self._listeners.get(ns, ()))
            for listener in listeners:
                listener.offer(item)

    def listen(self, namespace: str, last_event_id: str | None = None, *,
               maxsize: int = 1000) -> Listener:
        """A listener for ``namespace`` (create it inside the running event loop); with
        ``last_event_id``, the kept notifications after it come first."""
        listener = Listener(self, namespace, maxsize=max(maxsize, self.size))
        with self._lock:
            self._listeners.setdefault(namespace, []).append(listener)
            if last_event_id is not None:
                kept = list(self._kept.get(namespace, ()))
                after = self._after(last_event_id)
                if after is None:  # another run's id, or none of ours: all we have
                    listener.gap = bool(kept) or self._seq.get(namespace, 0) > 0
                    missed = kept
                else:
                    missed = [i for i in kept if i.seq > after]
                    oldest = kept[0].seq if kept else self._seq.get(namespace, 0) + 1
                    listener.gap = after < oldest - 1
                for item in missed:
                    listener._put(item)
        return listener

    def _after(self, last_event_id: str) -> int | None:
        run, _, seq = last_event_id.strip().rpartition("-")
        if run != self.run or not seq.isdigit():
            return None
        return int(seq)

    def remove(self, listener: Listener) -> None:
        with self._lock:
            found = self._listeners.get(listener.namespace, [])
            if listener in found:
                found.remove(listener)

    def drop(self, namespace: str, *, node_ids: Collection[str] = (),
             event_id: str | None = None) -> None:
        """Forget kept notifications: those about ``node_ids`` or caused by ``event_id``,
        or every one of the namespace when neither is given (a wipe)."""
        with self._lock:
            kept = self._kept.get(namespace)
            if not kept:
                return
            if not node_ids and event_id is None:
                kept.clear()
                return
            left = [i for i in kept if i.note.node_id not in node_ids
                    and (event_id is None or i.note.event_id != event_id)]
            kept.clear()
            kept.extend(left)

    def kept(self, namespace: str) -> list[Numbered]:
        with self._lock:
            return list(self._kept.get(namespace, ()))


async def sse_events(listener: Listener, *, stopping: Callable[[], bool],
                     allowed: Callable[[], bool] | None = None, poll_s: float = 1.0
                     ) -> AsyncIterator[dict[str, str]]:
    """The SSE messages of a listener until ``stopping()`` (the server drains),
    ``allowed()`` turns false (the stream's key was revoked) or the client goes away (the
    task is cancelled); the listener is closed either way. ``allowed`` may do I/O (it
    runs in a worker thread) and is asked before each delivery and every ``poll_s``; a
    store error while asking ends the stream too (fail closed). The caller creates the
    listener before the response starts, so a client that sees 200 hears every
    notification published after it (and, reconnecting, those it missed that are kept)."""

    async def still_allowed() -> bool:
        if allowed is None:
            return True
        try:
            return await asyncio.to_thread(allowed)
        except StoreError as exc:
            log.warning("ending an SSE stream: its key cannot be checked: %s", exc)
            return False

    try:
        if listener.gap:
            yield {"comment": GAP_COMMENT}
        while not stopping():
            try:
                item = await asyncio.wait_for(anext(listener), poll_s)
            except TimeoutError:
                if not await still_allowed():
                    return
                continue
            except StopAsyncIteration:
                return
            if not await still_allowed():
                return
            yield {"event": event_name(item.note), "id": item.id,
                   "data": json.dumps(item.note.to_dict(), ensure_ascii=False)}
    finally:
        listener.close()


def sign(secret: bytes, body: bytes) -> str:
    """The signature header value of ``body``: ``sha256=<hex>``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(secret: bytes, body: bytes, header: str) -> bool:
    """What a receiver does: recompute and compare in constant time."""
    return hmac.compare_digest(sign(secret, body), header)


@dataclass(order=True)
class _Delivery:
    due: float
    order: int
    url: str = field(compare=False)
    body: bytes = field(compare=False)
    event: str = field(compare=False)
    id: str = field(compare=False)
    attempt: int = field(default=0, compare=False)


@dataclass
class WebhookStats:
    delivered: int = 0
    attempts: int = 0
    failed: int = 0  # gave up


class Webhooks:
    """Delivers notifications to URLs configured per namespace (``"*"``: every namespace),
    from one background thread, retrying with exponential backoff."""

    def __init__(
        self,
        targets: Sequence[tuple[str, str]],
        secret: str,
        *,
        attempts: int = 6,
        backoff_s: float = 0.5,
        timeout_s: float = 5.0,
        post: Callable[[str, bytes, Mapping[str, str], float], int] | None = None,
    ) -> None:
        if not secret:
            raise ValueError("webhooks need a signing secret")
        self.targets: dict[str, list[str]] = {}
        for ns, url in targets:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"webhook URL must be http(s): {url!r}")
            self.targets.setdefault(ns, []).append(url)
        self.secret = secret.encode("utf-8")
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.stats = WebhookStats()
        self._post = post or _http_post
        self._heap: list[_Delivery] = []
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self, notifier: Notifier) -> None:
        self._unsubscribe = notifier.subscribe(self.enqueue)
        self._thread = threading.Thread(target=self._run, name="enfold-webhooks", daemon=True)
        self._thread.start()

    def stop(self, flush_s: float = 5.0) -> None:
        """Stop listening; deliver what is due within ``flush_s``, drop the rest (logged)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        deadline = time.monotonic() + flush_s
        with self._cond:
            while self._heap and self._heap[0].due <= deadline and time.monotonic() < deadline:
                self._cond.wait(0.1)
            self._stop = True
            left = len(self._heap)
            self._cond.notify_all()
        if left:
            log.warning("dropping %d undelivered webhook deliveries at shutdown", left)
        if self._thread is not None:
            self._thread.join(flush_s + self.timeout_s)

    def enqueue(self, note: Notification) -> None:
        """The notifier callback (runs in the folding thread: only queues)."""
        urls = self.targets.get(note.namespace, []) + self.targets.get("*", [])
        for url in urls:
            delivery_id = uuid.uuid4().hex
            body = json.dumps({"id": delivery_id, "event": event_name(note),
                               "notification": note.to_dict()},
                              ensure_ascii=False, sort_keys=True).encode("utf-8")
            with self._cond:
                heapq.heappush(self._heap, _Delivery(time.monotonic(), next(self._order), url,
                                                     body, event_name(note), delivery_id))
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stop and (not self._heap or self._heap[0].due > time.monotonic()):
                    wait = self._heap[0].due - time.monotonic() if self._heap else 1.0
                    self._cond.wait(max(0.01, min(wait, 1.0)))
                if self._stop:
                    return
                d = heapq.heappop(self._heap)
            self._attempt(d)
            with self._cond:
                self._cond.notify_all()

    def _attempt(self, d: _Delivery) -> None:
        headers = {"Content-Type": "application/json", "X-Enfold-Event": d.event,
                   "X-Enfold-Delivery": d.id, SIGNATURE_HEADER: sign(self.secret, d.body)}
        self.stats.attempts += 1
        try:
            status = self._post(d.url, d.body, headers, self.timeout_s)
        except OSError as exc:
            status, reason = 0, str(exc)
        else:
            reason = f"HTTP {status}"
        if 200 <= status < 300:
            self.stats.delivered += 1
            return
        d.attempt += 1
        if (status and status not in _RETRY_STATUSES) or d.attempt >= self.attempts:
            self.stats.failed += 1
            log.warning("webhook %s to %s failed after %d attempts: %s", d.id, d.url,
                        d.attempt, reason)
            return
        d.due = time.monotonic() + self.backoff_s * 2 ** (d.attempt - 1)
        with self._cond:
            heapq.heappush(self._heap, d)


def _http_post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
    req = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)

