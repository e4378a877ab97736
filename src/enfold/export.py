"""A namespace's export: the JSON Lines file ``enfold export`` writes and ``enfold import``
reads.

The first line is a header (``{"record": "enfold-export", "version", "namespace",
"cursor", "counts"}``); then one record per line, each an object whose ``record`` says what
it is: ``event`` (in log order), ``node``, ``edge``, ``vector`` (float32, base64; an event
with passages has ``rows``, its whole text's vector and then one row per passage), ``alias``,
``meta`` and ``op`` (the op log in sequence order). Keys are sorted, so one namespace
exports to the same bytes twice.

:func:`write_export` reads the store; :func:`read_export` parses and checks a whole file
(every line, and the header's counts against the lines) before :func:`load_export` writes
it into an empty namespace in one transaction, so a bad file stores nothing. The namespace
names inside the file are replaced by the one imported into. Holding the namespace (its
lock, and for a load its lease) is the caller's part: :meth:`enfold.memory.Memory.export`
and :meth:`~enfold.memory.Memory.import_`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from enfold.changeset import ChangeSet
from enfold.errors import InputError
from enfold.model import Edge, Node, NodeKind, OpRecord, content_hash
from enfold.store.base import EventRecord, Store

__all__ = ["EXPORT_FORMAT", "EXPORT_VERSION", "Export", "load_export", "read_export",
           "write_export"]

#: The header's ``record``: what names a file as an enfold export.
EXPORT_FORMAT = "enfold-export"
#: 2: op records carry ``peer`` (an edge is one record); 3: an event's vector may hold its
#: passages (``rows``). Version 1 and 2 files still read.
EXPORT_VERSION = 3


def write_export(store: Store, namespace: str, fp: IO[str]) -> int:
    """Write the namespace as it is in the store (folded or not) to ``fp``; returns the
    number of lines."""
    snap = store.load_graph(namespace, folded_only=False)
    records: list[Mapping[str, Any]] = []
    emit = records.append
    events = sorted((n for n in snap.nodes if n.kind is NodeKind.EVENT),
                    key=lambda n: int(n.attrs.get("seq", 0)))
    for n in events:
        emit({"record": "event", **n.to_dict()})
    for n in sorted((n for n in snap.nodes if n.kind is not NodeKind.EVENT),
                    key=lambda n: n.id):
        emit({"record": "node", **n.to_dict()})
    for e in sorted(snap.edges, key=lambda e: (e.src, e.type.value, e.dst)):
        emit({"record": "edge", **e.to_dict()})
    for node_id, vec in sorted(snap.vectors, key=lambda x: x[0]):
        rows = {"rows": int(vec.shape[0])} if vec.ndim == 2 else {}  # its passages too
        emit({"record": "vector", "id": node_id, **rows,
              "data": base64.b64encode(np.asarray(vec, np.float32).tobytes()).decode()})
    for old, new in sorted(snap.aliases):
        emit({"record": "alias", "old": old, "new": new})
    for key, value in sorted(snap.meta, key=lambda x: x[0]):
        emit({"record": "meta", "key": key, "value": value})
    for op in store.oplog(namespace):
        emit({"record": "op", **op.to_dict()})
    counts: dict[str, int] = {}
    for r in records:
        counts[r["record"]] = counts.get(r["record"], 0) + 1
    header = {"record": EXPORT_FORMAT, "version": EXPORT_VERSION, "namespace": namespace,
              "cursor": store.get_cursor(namespace), "counts": counts}
    for obj in (header, *records):
        fp.write(json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n")
    return len(records) + 1


@dataclass(frozen=True)
class Export:
    """A parsed, checked export, its records renamed into the namespace it goes to."""

    header: dict[str, Any]
    events: list[EventRecord]
    changes: ChangeSet
    #: Lines per record type, the header included (what ``Memory.import_`` returns).
    counts: dict[str, int]

    @property
    def cursor(self) -> int:
        """How far the exporting namespace had folded its log."""
        return int(self.header.get("cursor", 0))


def read_export(lines: Iterable[str], namespace: str) -> Export:
    """Parse the lines of an export for ``namespace``; an :class:`InputError` names the first
    bad line, an unknown version, a missing header, or counts that differ from the header's
    (a truncated or altered file)."""
    counts: dict[str, int] = {}
    header: dict[str, Any] | None = None
    events: list[EventRecord] = []
    changes = ChangeSet()
    for lineno, line in enumerate(_lines(lines), 1):
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("a record must be a JSON object")  # noqa: TRY004
            kind = obj.pop("record")
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise InputError(f"line {lineno}: not an enfold export record ({exc})") from exc
        except RecursionError as exc:  # nesting past the parser's stack
            raise InputError(f"line {lineno}: not an enfold export record (JSON nested "
                             "too deeply)") from exc
        counts[kind] = counts.get(kind, 0) + 1
        try:
            if kind == EXPORT_FORMAT:
                if obj.get("version") not in (1, 2, EXPORT_VERSION):  # 1: no op peers
                    raise InputError(f"unsupported export version {obj.get('version')}")
                header = obj
            else:
                _read_record(kind, obj, namespace, events, changes)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"line {lineno}: invalid {kind} record: {exc}") from exc
    if header is None:
        raise InputError("not an enfold export: the header line is missing")
    widths = {v.shape[-1] for v in changes.vectors.values() if v is not None}
    if len(widths) > 1:
        raise InputError(f"vectors of different widths in one export: {sorted(widths)}")
    expected = header.get("counts")
    if isinstance(expected, dict):
        got = {k: v for k, v in counts.items() if k != EXPORT_FORMAT}
        if {k: v for k, v in expected.items() if v} != got:
            raise InputError(f"export is incomplete or altered: header counts {expected}, "
                             f"found {got}")
    return Export(header, events, changes, counts)


def _read_record(kind: str, obj: dict[str, Any], ns: str, events: list[EventRecord],
                 changes: ChangeSet) -> None:
    """One record (its ``record`` key taken off) into ``events`` or ``changes``."""
    if kind == "event":
        n = Node.from_dict({**obj, "namespace": ns})
        a = n.attrs
        events.append(EventRecord(
            n, content_hash(n.text, a.get("source"), float(a.get("ts", 0.0))),
            a.get("external_id"), int(a.get("seq", 0)) or None))
    elif kind == "node":
        n = Node.from_dict({**obj, "namespace": ns})
        changes.nodes[n.id] = n
    elif kind == "edge":
        e = Edge.from_dict({**obj, "namespace": ns})
        changes.edges[e.key] = e
    elif kind == "vector":
        vec = np.frombuffer(base64.b64decode(obj["data"]), dtype=np.float32).copy()
        if "rows" in obj:  # an event's vector and its passages' (see WorkingGraph.set_vector)
            rows = obj["rows"]
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1 \
                    or not str(obj["id"]).startswith("ev_") or len(vec) % rows:
                raise ValueError(f"rows {rows!r} does not split the vector of {obj['id']!r}")
            vec = vec.reshape(rows, -1)
        changes.vectors[obj["id"]] = vec
    elif kind == "alias":
        changes.aliases[obj["old"]] = obj["new"]
    elif kind == "meta":
        changes.meta[obj["key"]] = obj["value"]
    elif kind == "op":
        obj["namespace"] = ns
        for side in ("before", "after"):
            if isinstance(obj.get(side), dict) and "namespace" in obj[side]:
                obj[side] = {**obj[side], "namespace": ns}
        if not all(isinstance(obj.get(f), str)
                   for f in ("plan_id", "op", "target", "reasoning")):
            raise ValueError("op records need string plan_id, op, target, reasoning")
        changes.ops.append(OpRecord(**obj))
    else:
        raise InputError(f"unknown record type {kind!r}")


def load_export(store: Store, namespace: str, export: Export) -> None:
    """Write a parsed export into ``namespace``, which must have no events yet, in one
    transaction (the events, then the graph, the op log and the cursor)."""
    if store.last_seq(namespace) > 0:
        raise InputError(f"namespace {namespace!r} already has events; import into an "
                         "empty one")
    with store.transaction():
        store.append_events(namespace, export.events)
        store.commit(namespace, export.changes, cursor=export.cursor)


def _lines(lines: Iterable[str]) -> Iterator[str]:
    """The lines that are not blank."""
    for line in lines:
        if line.strip():
            yield line
