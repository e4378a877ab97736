"""Incoming events: validation of untrusted input into event records for the log.

An event is ``{"text", "ts"?, "source"?, "kind"?, "id"?, "meta"?}``. Everything
is checked here, before anything is stored: text present, a string, valid UTF-8, not empty,
not larger than the limit; a parseable timestamp; JSON-serializable meta within its limit.
A bad event raises :class:`~enfold.errors.InputError` naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from enfold.errors import InputError
from enfold.model import Node, NodeKind, content_hash, new_id, now, time_in_range
from enfold.settings import Settings
from enfold.store.base import EventRecord

_FIELDS = {"text", "ts", "source", "kind", "id", "meta"}
MAX_META_DEPTH: int = Settings.max_meta_depth  # its default


@dataclass(frozen=True)
class EventIn:
    """A validated event, not yet stored."""

    text: str
    ts: float
    source: str | None = None
    kind: str = "note"
    external_id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def to_epoch(value: Any) -> float:
    """An event timestamp (or a query's ``at``) as epoch seconds (UTC).

    Accepts epoch numbers, datetimes (naive means UTC), ISO 8601 strings and the
    conversational forms the time annotator understands (e.g. LoCoMo's
    "1:56 pm on 8 May, 2023"). A time outside the years 1000 to 8999
    (:data:`enfold.model.TIME_MIN` / ``TIME_MAX``) raises :class:`InputError`.
    """
    if isinstance(value, bool):
        raise InputError("a time must be a number, a datetime or a string, not a boolean")
    try:
        epoch = _epoch(value)
    except (OverflowError, OSError) as exc:  # a datetime or string beyond the calendar
        raise InputError(f"time {_show(value)} is out of range: {exc}") from exc
    if not time_in_range(epoch):
        raise InputError(f"time {_show(value)} is outside the supported range "
                         "(1000-01-01 to 8999-12-31, UTC)")
    return epoch


def _epoch(value: Any) -> float:
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InputError(f"a time must be finite, not {value}")
        return float(value)
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return dt.timestamp()
    if isinstance(value, str):
        text = value.strip()
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            from enfold.text.times import parse_timestamp

            return parse_timestamp(text).timestamp()
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()
    raise InputError(f"a time must be a number, a datetime or a string, not "
                     f"{type(value).__name__}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_text(text: Any, settings: Settings) -> str:
    if not isinstance(text, str):
        raise InputError("field 'text' must be a string")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError("field 'text' is not valid UTF-8 (it contains lone surrogates)") from exc
    if not text.strip():
        raise InputError("field 'text' is empty")
    if len(text) > settings.max_event_text:
        raise InputError(
            f"field 'text' has {len(text)} characters; the limit is {settings.max_event_text} "
            "(setting max_event_text)"
        )
    return text


def event_from_mapping(data: Any, settings: Settings, *, default_ts: float | None = None
                       ) -> EventIn:
    """Validate one untrusted event object (e.g. a JSON Lines record)."""
    if not isinstance(data, Mapping):
        raise InputError(f"an event must be a JSON object, not {type(data).__name__}")
    unknown = set(data) - _FIELDS
    if unknown:
        raise InputError(f"unknown event fields: {', '.join(sorted(map(str, unknown)))}")
    if "text" not in data:
        raise InputError("field 'text' is missing")
    return make_event(
        data["text"], ts=data.get("ts"), source=data.get("source"), kind=data.get("kind"),
        external_id=data.get("id"), meta=data.get("meta"), settings=settings,
        default_ts=default_ts,
    )


def make_event(
    text: Any,
    *,
    ts: Any = None,
    source: Any = None,
    kind: Any = None,
    external_id: Any = None,
    meta: Any = None,
    settings: Settings,
    default_ts: float | None = None,
) -> EventIn:
    """Validate the parts of one event."""
    text = check_text(text, settings)
    if ts is None:
        when = default_ts if default_ts is not None else now()
    else:
        try:
            when = to_epoch(ts)
        except InputError as exc:
            raise InputError(f"field 'ts': {exc}") from exc
    for name, value in (("source", source), ("kind", kind), ("id", external_id)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"field {name!r} must be a string")
        if isinstance(value, str) and len(value) > 512:
            raise InputError(f"field {name!r} is longer than 512 characters")
    return EventIn(text, when, source or None, kind or "note", external_id or None,
                   check_meta(meta, settings))


def check_meta(meta: Any, settings: Settings) -> dict[str, Any]:
    """An event's ``meta`` validated (a JSON object within the depth and size limits);
    None is the empty object."""
    if meta is None:
        meta = {}
    if not isinstance(meta, Mapping):
        raise InputError("field 'meta' must be a JSON object")
    limit = settings.max_meta_depth
    if _depth(meta, limit) > limit:
        raise InputError(f"field 'meta' is nested more than {limit} levels deep")
    try:
        encoded = json.dumps(meta, ensure_ascii=False, allow_nan=False)
        encoded.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InputError(f"field 'meta' is not JSON-serializable: {exc}") from exc
    if len(encoded.encode("utf-8")) > settings.max_meta_bytes:
        raise InputError(f"field 'meta' exceeds {settings.max_meta_bytes} bytes")
    return dict(meta)


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``target`` with the JSON Merge Patch ``patch`` applied (RFC 7396): a key set to null
    is removed, an object merges into an object, anything else replaces."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_patch(out[key], value)
        elif isinstance(value, Mapping):
            out[key] = merge_patch({}, value)
        else:
            out[key] = value
    return out


def _depth(value: Any, limit: int = MAX_META_DEPTH) -> int:
    """How deeply containers nest in ``value`` (iterative: no recursion limit to hit), up
    to the first level past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def event_record(ev: EventIn, namespace: str, *, at: float | None = None) -> EventRecord:
    """The log record of a validated event: a fresh event node and its idempotency keys."""
    at = now() if at is None else at
    node = Node(
        id=new_id(NodeKind.EVENT),
        namespace=namespace,
        kind=NodeKind.EVENT,
        text=ev.text,
        attrs={
            "ts": ev.ts,
            "ingested_at": at,
            "source": ev.source,
            "event_kind": ev.kind,
            "meta": dict(ev.meta),
            "external_id": ev.external_id,
        },
        created_at=at,
        updated_at=at,
        last_access=at,
    )
    return EventRecord(node, content_hash(ev.text, ev.source, ev.ts), ev.external_id)
