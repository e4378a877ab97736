"""JSON Lines ingest: a file of events validated whole, then its new events appended.

One event per line, ``{"text", "ts"?, "source"?, "kind"?, "id"?, "meta"?}``; blank lines are
skipped. ``enfold ingest FILE`` and ``POST /v1/namespaces/{ns}/events/import`` share this:

* every line is validated first; a bad one (malformed JSON, invalid UTF-8, a bad field)
  raises :class:`~enfold.errors.InputError` naming its line, and nothing is stored;
* re-running is safe: an event already stored is recognised by its ``id``, else by its
  text, source and ``ts``; a line with neither ``id`` nor ``ts`` by its content, the
  *origin* (the file it is in) and its place among that origin's identical lines
  (:func:`line_key`);
* the report says how many lines were new and how many were stored already.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from enfold.errors import InputError, NamespaceError
from enfold.events import EventIn, event_from_mapping, event_record
from enfold.model import valid_namespace
from enfold.settings import Settings

if TYPE_CHECKING:
    from enfold.memory import Memory

__all__ = ["IngestReport", "append_new", "line_key", "parse_lines", "read_jsonl",
           "validate"]

#: The default of ``Settings.ingest_chunk``: events appended per store transaction.
CHUNK: int = Settings.ingest_chunk


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did: the ids of its lines' events and how many were new."""

    ids: list[str]
    new: int

    @property
    def ingested(self) -> int:
        return len(self.ids)

    @property
    def already_stored(self) -> int:
        return len(self.ids) - self.new

    def to_dict(self) -> dict[str, int]:
        return {"ingested": self.ingested, "new": self.new,
                "already_stored": self.already_stored, "unique": len(set(self.ids))}

    def line(self) -> str:
        """``ingested 33 events: 0 new, 33 already stored``."""
        return (f"ingested {self.ingested} events: {self.new} new, {self.already_stored} "
                "already stored")


def parse_lines(lines: Iterable[bytes], name: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line; InputError names the line."""
    for lineno, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: line {lineno}: invalid UTF-8 ({exc.reason})") from exc
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{name}: line {lineno}: malformed JSON ({exc})") from exc
        except RecursionError as exc:  # nesting past the parser's stack (issue 25, item 12)
            raise InputError(f"{name}: line {lineno}: JSON nested too deeply") from exc
        yield lineno, data


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """:func:`parse_lines` of a file."""
    with open(path, "rb") as fh:
        yield from parse_lines(fh, str(path))


def line_key(origin: str, data: Mapping[str, Any]) -> str:
    """What identifies a line that has neither ``id`` nor ``ts``: its content (the parsed
    object, so spacing and key order do not matter) and the file it is in. Its external id
    adds which of the file's equal lines it is (``KEY:0``, ``KEY:1``…): running the file
    again finds the same ids, two equal lines are two events, and lines added to the file
    do not renumber the others."""
    h = hashlib.sha256()
    for part in (origin, json.dumps(data, sort_keys=True, ensure_ascii=False)):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return f"line:{h.hexdigest()[:32]}"


def validate(records: Iterable[tuple[int, Any]], settings: Settings, *, origin: str,
             name: str) -> list[EventIn]:
    """Every record checked as an event (InputError names the first bad line); lines
    without ``id`` and ``ts`` get their :func:`line_key` under ``origin`` as external id."""
    events = []
    repeats: Counter[str] = Counter()
    for lineno, data in records:
        try:
            ev = event_from_mapping(data, settings)
        except InputError as exc:
            raise InputError(f"{name}: line {lineno}: {exc}") from exc
        if ev.external_id is None and data.get("ts") is None:
            key = line_key(origin, data)
            ev = replace(ev, external_id=f"{key}:{repeats[key]}")
            repeats[key] += 1
        events.append(ev)
    return events


def append_new(memory: Memory, events: list[EventIn], *, namespace: str | None = None,
               fold: bool | None = None, progress: Callable[[int], object] | None = None
               ) -> IngestReport:
    """Append ``events`` in chunks of the memory's ``ingest_chunk``, each one durable
    transaction; folds after each chunk when ``fold`` (default: the memory's
    ``auto_fold``). ``progress(n)`` hears each chunk's size."""
    if namespace is not None and not valid_namespace(namespace):
        raise NamespaceError(f"invalid namespace {namespace!r}")
    ns = memory.namespace if namespace is None else namespace
    do_fold = memory.auto_fold if fold is None else fold
    ids: list[str] = []
    new = 0
    size = memory.settings.ingest_chunk
    for i in range(0, len(events), size):
        chunk = events[i:i + size]
        appended = memory.store.append_events(ns, [event_record(e, ns) for e in chunk])
        if do_fold:
            memory.fold(ns)
        ids += [a.id for a in appended]
        new += sum(a.created for a in appended)
        if progress is not None:
            progress(len(chunk))
    return IngestReport(ids, new)
