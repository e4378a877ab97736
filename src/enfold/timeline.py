"""The event log read in time order, a page at a time, with a cursor that stays valid.

Events are ordered by their time (``ts``) and, at equal times, by their place in the log
(``seq``), so the order is total and a page's last event is a position no later append can
move: the cursor encodes that ``(ts, seq)`` position, and the next page starts strictly
after it. Events appended later with an earlier time land before a cursor already handed
out (a client paging forwards will not see them); nothing is ever listed twice.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

from enfold.errors import InputError
from enfold.model import Node
from enfold.store.base import Store

__all__ = ["MAX_PAGE", "EventPage", "decode_cursor", "encode_cursor", "page_events"]

#: The most events one page may hold.
MAX_PAGE = 1000


@dataclass(frozen=True)
class EventPage:
    """Events in time order and the cursor of the page after them (None: this was the last)."""

    events: list[Node]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"events": [e.to_dict() for e in self.events], "next_cursor": self.next_cursor}


def encode_cursor(ts: float, seq: int) -> str:
    """The opaque cursor of the position just after the event at ``(ts, seq)``."""
    return base64.urlsafe_b64encode(f"{ts!r}:{seq}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, int]:
    """The ``(ts, seq)`` position a cursor from :func:`encode_cursor` names; anything else
    raises :class:`InputError`."""
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_",
                               validate=True).decode("ascii")
        ts_text, seq_text = raw.split(":")
        ts, seq = float(ts_text), int(seq_text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InputError(f"invalid cursor {cursor[:60]!r}: pass the next_cursor of the "
                         "previous page unchanged") from None
    if not math.isfinite(ts) or seq < 0:
        raise InputError(f"invalid cursor {cursor[:60]!r}: pass the next_cursor of the "
                         "previous page unchanged")
    return ts, seq


def _ts(event: Node) -> float:
    ts = event.attrs.get("ts")
    return float(ts) if isinstance(ts, (int, float)) else event.created_at


def page_events(store: Store, namespace: str, *, since: float | None = None,
                until: float | None = None, limit: int = 100,
                cursor: str | None = None) -> EventPage:
    """One page of the events with ``since <= ts < until`` (None: unbounded), at most
    ``limit``, after ``cursor`` (the previous page's ``next_cursor``; None: from the start)."""
    if not 1 <= limit <= MAX_PAGE:
        raise InputError(f"limit must be 1 to {MAX_PAGE}, not {limit}")
    if since is not None and until is not None and since >= until:
        raise InputError(f"'since' ({since}) must be earlier than 'until' ({until})")
    after = None if cursor is None else decode_cursor(cursor)
    found = store.events_by_time(namespace, since=since, until=until, after=after,
                                 limit=limit + 1)
    events = found[:limit]
    more = len(found) > limit
    last = events[-1] if events else None
    next_cursor = encode_cursor(_ts(last), int(last.attrs["seq"])) \
        if more and last is not None else None
    return EventPage(events, next_cursor)
