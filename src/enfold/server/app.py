"""The HTTP API: ``create_app(memory_or_url, settings) -> FastAPI``.

Thin routes over :class:`~enfold.memory.Memory` under ``/v1/namespaces/{ns}``. Appending is
the only write on the request path (202 once the events are in the log); folding and
consolidation run in :mod:`enfold.server.workers`, push in :mod:`enfold.server.push`, keys in
:mod:`enfold.server.auth`. Every error is ``application/problem+json``
(``{"type", "title", "status", "detail"}``). The interactive docs (``/docs``, ``/redoc``)
come from :mod:`enfold.server.docs`. The page at ``/ui`` comes from
:mod:`enfold.server.ui` when it is installed.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from http import HTTPStatus
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette.sse import EventSourceResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from enfold.aio import AsyncMemory
from enfold.errors import (
    ConfigError,
    EnfoldError,
    InputError,
    LLMBudgetExceeded,
    LLMError,
    LLMUnavailable,
    NamespaceError,
    NotFound,
    PlanError,
    StoreError,
)
from enfold.events import event_from_mapping, event_record, to_epoch
from enfold.graph import WorkingGraph
from enfold.memory import Memory
from enfold.model import Node, NodeKind, now, valid_namespace
from enfold.server.auth import Authenticator, Hidden, Unauthorized
from enfold.server.docs import install_docs
from enfold.server.push import Replay, Webhooks, sse_events
from enfold.server.responses import EventNode, IntentNode, NodeDetail, documented
from enfold.server.settings import ServerSettings
from enfold.server.workers import FoldWorkers, Overloaded
from enfold.store.base import Appended
from enfold.timeline import MAX_PAGE

log = logging.getLogger("enfold.server")

PROBLEM = "application/problem+json"
PREFIX = "/v1/namespaces/{ns}"
IMPORT_SUFFIX = "/events/import"


class State:
    """Everything a request or a worker needs, on ``app.state.enfold``."""

    def __init__(self, memory: Memory, settings: ServerSettings, *, owns_memory: bool) -> None:
        self.memory = memory
        #: The routes' memory: each call in the thread pool sync routes run in.
        self.amemory = AsyncMemory(memory, to_thread=run_in_threadpool)
        self.settings = settings
        self.owns_memory = owns_memory
        self.auth = Authenticator(memory.store, admin_key=settings.admin_key,
                                  enabled=settings.auth)
        self.workers = FoldWorkers(
            memory, threads=settings.fold_threads, chunk=settings.fold_chunk,
            lease_ttl_s=settings.lease_ttl_s, scan_interval_s=settings.scan_interval_s,
            consolidate_interval_s=settings.consolidate_interval_s,
            max_backlog=settings.max_backlog, max_total_backlog=settings.max_total_backlog)
        self.replay = Replay(settings.sse_replay)
        self.webhooks: Webhooks | None = None
        if settings.webhooks:
            if not settings.webhook_secret:
                raise ConfigError("webhooks need a signing secret (--webhook-secret-file or "
                                  "ENFOLD_WEBHOOK_SECRET)")
            self.webhooks = Webhooks(settings.webhooks, settings.webhook_secret,
                                     attempts=settings.webhook_attempts,
                                     backoff_s=settings.webhook_backoff_s)
        self.draining = False

    def start(self) -> None:
        """Warm up (the model loads now, not on the first request), then start listening
        for notifications and folding."""
        self.memory.warm_up()
        self.replay.start(self.memory.notifier)
        self.workers.start()
        if self.webhooks is not None:
            self.webhooks.start(self.memory.notifier)

    def shutdown(self) -> None:
        """Stop accepting, fold the backlog (or leave it checkpointed), flush webhooks."""
        self.draining = True
        clean = self.workers.drain(self.settings.drain_timeout_s)
        if not clean:
            log.warning("drain timed out with %d events unfolded; the next start resumes them",
                        self.workers.backlog())
        if self.webhooks is not None:
            self.webhooks.stop()
        self.replay.stop()
        if self.owns_memory:
            self.memory.close()


# ------------------------------------------------------------------ problem+json
def problem(status: int, detail: str, *, title: str | None = None, slug: str | None = None,
            headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    phrase = HTTPStatus(status).phrase
    body = {"type": f"urn:enfold:problem:{slug or phrase.lower().replace(' ', '-')}",
            "title": title or phrase, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM)


_ERRORS: list[tuple[type[Exception], int, str]] = [
    (NamespaceError, 400, "invalid-namespace"),
    (InputError, 400, "invalid-input"),
    (NotFound, 404, "not-found"),
    (PlanError, 422, "invalid-plan"),
    (StoreError, 503, "store-unavailable"),
    (LLMBudgetExceeded, 429, "llm-budget"),
    (LLMUnavailable, 503, "llm-unavailable"),  # the circuit breaker is open: retry later
    (LLMError, 502, "llm-failed"),
]


def _install_errors(app: FastAPI) -> None:
    async def unauthorized(request: Request, exc: Exception) -> Response:
        return problem(401, str(exc), slug="unauthorized",
                       headers={"WWW-Authenticate": 'Bearer realm="enfold"'})

    async def hidden(request: Request, exc: Exception) -> Response:
        return problem(404, f"no namespace {exc.args[0]!r}", slug="not-found")

    async def overloaded(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Overloaded)
        return problem(exc.status, exc.detail, slug="backlog",
                       headers={"Retry-After": str(exc.retry_after)})

    async def enfold_error(request: Request, exc: Exception) -> Response:
        for cls, status, slug in _ERRORS:
            if isinstance(exc, cls):
                headers = {"Retry-After": "1"} if status == 503 else None
                return problem(status, str(exc), slug=slug, headers=headers)
        log.error("unhandled enfold error on %s: %s", request.url.path, exc)
        return problem(500, str(exc), slug=type(exc).__name__.lower())

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")}
                  for e in exc.errors()]
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(x) for x in first["loc"])
        return problem(422, f"{first['msg']} at {where}", slug="invalid-request",
                       errors=errors)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return problem(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))

    app.add_exception_handler(Unauthorized, unauthorized)
    app.add_exception_handler(Hidden, hidden)
    app.add_exception_handler(Overloaded, overloaded)
    app.add_exception_handler(EnfoldError, enfold_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)


# ------------------------------------------------------------------ the guard
ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                    Callable[[Any], Awaitable[None]]], Awaitable[None]]


class Guard:
    """Refuses before routing: 503 while draining (except liveness) and 413 for a body over
    the limit (declared or streamed); the body is read here and replayed to the app."""

    def __init__(self, app: ASGIApp, state: State) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.state.draining and scope["path"] != "/healthz":
            await _send(problem(503, "the server is shutting down", slug="draining",
                                headers={"Retry-After": "5"}), scope, receive, send)
            return
        if scope["method"] not in ("POST", "PUT", "PATCH", "DELETE"):
            await self.app(scope, receive, send)
            return
        limit = self.state.settings.max_body_bytes
        if scope["path"].endswith(IMPORT_SUFFIX) and scope["method"] == "POST":
            limit = max(limit, self.state.settings.max_import_bytes)
        declared = dict(scope["headers"]).get(b"content-length")
        too_big = problem(413, f"the request body is larger than {limit} bytes",
                          slug="body-too-large")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _send(too_big, scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await _send(too_big, scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _send(response: Response, scope: MutableMapping[str, Any],
                receive: Callable[[], Awaitable[Any]],
                send: Callable[[Any], Awaitable[None]]) -> None:
    await response(scope, receive, send)


class Contain:
    """Answers an exception no handler took as a problem+json 500, and keeps it inside the
    app: Starlette's last-resort handler answers text/plain and re-raises, and uvicorn then
    drops the keep-alive connection. The traceback goes to the log, not to the client. A
    response already under way (a stream) can only be cut short, so that still raises."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:
                raise
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            await _send(problem(500, f"an unexpected {type(exc).__name__}; the server log has "
                                     "the details", slug="internal-error"),
                        scope, receive, send)


# ------------------------------------------------------------------ request models
class EventBody(BaseModel):
    """One event; every field but ``text`` is optional (the event shape of ``enfold.events``)."""

    model_config = ConfigDict(extra="forbid")
    text: str
    # Checked by the library's rules (enfold.events.to_epoch), not coerced here: pydantic
    # would turn ``true`` into 1.0 (1970) where the library refuses a boolean.
    ts: Any = Field(None, description="epoch seconds or ISO 8601",
                    json_schema_extra={"anyOf": [{"type": "number"}, {"type": "string"},
                                                     {"type": "null"}]})
    source: str | None = None
    kind: str | None = None
    id: str | None = Field(None, description="external id: appending it twice is a no-op")
    meta: dict[str, Any] | None = None


class EventBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    events: list[EventBody] = Field(min_length=1)


class Accepted(BaseModel):
    ids: list[str]
    created: list[bool]


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1)
    k: int | None = Field(None, ge=1, le=200)
    at: Any = Field(None, description="when the question is asked: epoch seconds or ISO 8601",
                    json_schema_extra={"anyOf": [{"type": "number"}, {"type": "string"},
                                                     {"type": "null"}]})


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = Field(description="accept | modify | defer | reject")
    label: str | None = Field(None, description="the new label (modify only)")


class MetaPatch(BaseModel):
    """What may change of an event: its metadata. The text, time, speaker, kind and id
    are what the memory was built from; to change them, forget the event and add another."""

    model_config = ConfigDict(extra="allow")
    meta: dict[str, Any] = Field(description="a JSON Merge Patch of the event's meta (a key "
                                             "set to null is removed), or the whole new meta "
                                             "with replace")
    replace: bool = Field(False, description="replace the meta instead of merging into it")


class Imported(BaseModel):
    ingested: int = Field(description="events in the body")
    new: int = Field(description="events stored now")
    already_stored: int = Field(description="events the namespace held already")


class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    event_id: str


# ------------------------------------------------------------------ dependencies
_bearer = HTTPBearer(auto_error=False, description="a namespace key or the admin key")


def _state(request: Request) -> State:
    state: State = request.app.state.enfold
    return state


StateDep = Annotated[State, Depends(_state)]


def _access(ns: str, st: StateDep,
            credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
            ) -> str:
    header = f"{credentials.scheme} {credentials.credentials}" if credentials else None
    st.auth.authorize(header, ns)
    if not valid_namespace(ns):
        raise NamespaceError(f"invalid namespace {ns!r}: use 1-128 letters, digits or _ . : @ -")
    return ns


Namespace = Annotated[str, Depends(_access)]


def append_events(memory: Memory, namespace: str, events: Sequence[dict[str, Any]],
                  idempotency_key: str | None) -> list[Appended]:
    """Validate all, then durably append in one transaction. Events without an ``id`` take
    the Idempotency-Key as their external id (``KEY`` alone, ``KEY:i`` in a batch), so a
    retried request finds the events it already stored."""
    if idempotency_key is not None and not 0 < len(idempotency_key) <= 200:
        raise InputError("Idempotency-Key must have 1 to 200 characters")
    records = []
    at = now()
    for i, data in enumerate(events):
        if idempotency_key is not None and data.get("id") is None:
            data = {**data, "id": idempotency_key if len(events) == 1 else
                    f"{idempotency_key}:{i}"}
        try:
            ev = event_from_mapping(data, memory.settings)
        except InputError as exc:
            raise InputError(f"event {i}: {exc}" if len(events) > 1 else str(exc)) from exc
        records.append(event_record(ev, namespace, at=at))
    return memory.store.append_events(namespace, records)


def _epoch(at: Any) -> float | None:
    """A time parameter (``at``) as epoch seconds, by the library's rules for event times
    (:func:`~enfold.events.to_epoch`) and within the range a date can have, so a bad or
    absurd time (``true``, ``nan``, ``1e300``) is a 400 here, not a crash inside recall."""
    if at is None:
        return None
    value: Any = at
    if isinstance(at, str):
        try:
            value = float(at)  # a query string carries epoch seconds as text
        except ValueError:
            value = at
    try:
        epoch = to_epoch(value)
        datetime.fromtimestamp(epoch, tz=UTC)
    except InputError as exc:
        raise InputError(f"invalid 'at' {at!r}: {exc}") from exc
    except (OverflowError, OSError, ValueError) as exc:
        raise InputError(f"'at' {at!r} is out of the range of dates") from exc
    return epoch


def _kinds(kinds: str | None) -> list[NodeKind] | None:
    if kinds is None or not kinds.strip():
        return None
    out = []
    for name in (k.strip() for k in kinds.split(",") if k.strip()):
        try:
            out.append(NodeKind(name))
        except ValueError:
            raise InputError(f"unknown node kind {name!r} (use "
                             f"{', '.join(k.value for k in NodeKind)})") from None
    return out


def _summary(node: Node, degree: int) -> dict[str, Any]:
    """A node as the graph page draws it."""
    a = node.attrs
    out = {"id": node.id, "kind": node.kind.value,
           "label": str(a.get("label") or node.text[:80]), "text": node.text,
           "strength": a.get("strength"), "degree": degree}
    for key in ("status", "category", "due", "ts", "source", "holder"):
        if a.get(key) is not None:
            out[key] = a[key]
    return out


# ------------------------------------------------------------------ routes
api = APIRouter(prefix=PREFIX)


@api.post("/events", status_code=202, response_model=Accepted, tags=["events"],
          summary="Append events (202 once durably logged; folded in the background)")
def post_events(namespace: Namespace, st: StateDep, body: EventBody | EventBatch,
                idempotency_key: Annotated[str | None, Header()] = None) -> Accepted:
    st.workers.admit(namespace)
    batch = [body] if isinstance(body, EventBody) else body.events
    if len(batch) > st.settings.max_batch:
        raise StarletteHTTPException(413, f"{len(batch)} events in one request; the limit is "
                                          f"{st.settings.max_batch}")
    appended = append_events(st.memory, namespace,
                             [e.model_dump(exclude_none=True) for e in batch], idempotency_key)
    st.workers.appended(namespace, sum(a.created for a in appended))
    return Accepted(ids=[a.id for a in appended], created=[a.created for a in appended])


@api.post(IMPORT_SUFFIX, status_code=202, response_model=Imported, tags=["events"],
          summary="Import a JSON Lines file of events (as enfold ingest); folded in the "
                  "background",
          openapi_extra={"requestBody": {"required": True, "content": {
              "application/x-ndjson": {"schema": {"type": "string"}}}}})
async def import_events(namespace: Namespace, st: StateDep, request: Request,
                        origin: Annotated[str | None, Query(max_length=1000, description=(
                            "names the file, for lines with neither id nor ts (default: the "
                            "body's hash, so a retried import stores nothing twice)"))] = None
                        ) -> Imported:
    """One event per line, validated whole first: a bad line is a 400 naming it, and
    nothing is stored. Events already stored count as ``already_stored``."""
    body = await request.body()
    return await run_in_threadpool(_import, st, namespace, body, origin)


def _import(st: State, namespace: str, body: bytes, origin: str | None) -> Imported:
    from enfold.ingest import append_new, parse_lines, validate

    st.workers.admit(namespace)
    events = validate(parse_lines(body.splitlines(), "body"), st.memory.settings,
                      origin=origin or hashlib.sha256(body).hexdigest(), name="body")
    if not events:
        raise InputError("the body holds no events (one JSON object per line)")
    report = append_new(st.memory, events, namespace=namespace, fold=False)
    st.workers.appended(namespace, report.new)
    return Imported(ingested=report.ingested, new=report.new,
                    already_stored=report.already_stored)


_FIXED = ("text", "ts", "source", "kind", "id")


@api.patch("/events/{event_id}", tags=["events"],
           summary="Change an event's metadata (its text and the rest never change)",
           **documented(EventNode, "The updated event"))
async def patch_event(namespace: Namespace, st: StateDep, event_id: str,
                body: MetaPatch) -> dict[str, Any]:
    extra = sorted(body.model_extra or {})
    fixed = [k for k in extra if k in _FIXED]
    if fixed:
        raise InputError(f"an event's {', '.join(fixed)} cannot change, only its meta "
                         "(forget the event and add another)")
    if extra:
        raise InputError(f"unknown fields: {', '.join(extra)} (send meta, and replace)")
    node = await st.amemory.update_event(event_id, body.meta, merge=not body.replace,
                                         namespace=namespace)
    return node.to_dict()


@api.get("/recall", tags=["read"], summary="Evidence for a question (the ContextPack)")
async def recall(namespace: Namespace, st: StateDep,
                 q: Annotated[str, Query(min_length=1, max_length=4000)],
                 k: Annotated[int, Query(ge=1, le=200)] = 10, at: str | None = None,
                 kinds: str | None = None) -> dict[str, Any]:
    pack = await st.amemory.recall(q, k=k, at=_epoch(at), kinds=_kinds(kinds), namespace=namespace)
    return pack.to_dict()


@api.post("/answer", tags=["read"], summary="Recall, then answer with the configured LLM")
async def answer(namespace: Namespace, st: StateDep, body: AnswerBody) -> dict[str, Any]:
    pack = await st.amemory.answer(body.query, k=body.k, at=_epoch(body.at), namespace=namespace)
    return pack.to_dict()


@api.get("/intents", tags=["intents"], summary="Intents, soonest due first",
         **documented(list[IntentNode], "The intents"))  # type: ignore[valid-type]
async def intents(namespace: Namespace, st: StateDep, status: str = "pending",
                  category: str | None = None) -> list[dict[str, Any]]:
    wanted = [s.strip() for s in status.split(",") if s.strip()]
    nodes = await st.amemory.intents(status=wanted[0] if len(wanted) == 1 else wanted,
                                     category=category, namespace=namespace)
    return [n.to_dict() for n in nodes]


@api.post("/intents/{intent_id}/feedback", tags=["intents"],
          summary="accept / modify / defer / reject an intent",
          **documented(IntentNode, "The updated intent"))
async def feedback(namespace: Namespace, st: StateDep, intent_id: str,
                   body: FeedbackBody) -> dict[str, Any]:
    node = await st.amemory.feedback(intent_id, body.kind, label=body.label,
                                     namespace=namespace)
    return node.to_dict()


@api.get("/nodes/{node_id}", tags=["read"], summary="A node, its edges and its provenance",
         **documented(NodeDetail, "The node (its attrs typed by its kind), its edges and "
                                  "the events it rests on"))
async def node(namespace: Namespace, st: StateDep, node_id: str) -> dict[str, Any]:
    m = st.amemory
    n = await m.get(node_id, namespace=namespace)
    provenance = []
    for event_id in n.grounded_in:
        try:
            provenance.append((await m.get(event_id, namespace=namespace)).to_dict())
        except NotFound:  # forgotten since
            continue
    edges = await m.edges(n.id, namespace=namespace)
    return {"node": n.to_dict(), "edges": [e.to_dict() for e in edges],
            "provenance": provenance}


@api.get("/nodes/{node_id}/history", tags=["read"], summary="The op-log records of a node")
async def history(namespace: Namespace, st: StateDep, node_id: str) -> list[dict[str, Any]]:
    return [op.to_dict() for op in await st.amemory.history(node_id, namespace=namespace)]


@api.get("/events", tags=["events"], summary="Events in time order, a page at a time")
async def list_events(namespace: Namespace, st: StateDep, since: str | None = None,
                      until: str | None = None,
                      limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
                      cursor: Annotated[str | None, Query(max_length=200)] = None
                      ) -> dict[str, Any]:
    """The events with ``since <= ts < until`` (epoch seconds or ISO 8601; either may be
    left out), folded or not, ordered by time and then log order. ``next_cursor`` (null on
    the last page) passed back as ``cursor`` gives the next page."""
    page = await st.amemory.events(since=since, until=until, limit=limit, cursor=cursor,
                                   namespace=namespace)
    return page.to_dict()


@api.get("/graph", tags=["read"], summary="Nodes and edges for drawing (highest degree first)")
async def graph(namespace: Namespace, st: StateDep,
                limit: Annotated[int, Query(ge=1, le=5000)] = 500,
                kinds: str | None = None) -> dict[str, Any]:
    wanted = _kinds(kinds) or list(NodeKind)

    def draw(g: WorkingGraph) -> dict[str, Any]:
        derived = [i for k in wanted if k is not NodeKind.EVENT for i in g.of_kind(k)]
        events = list(g.of_kind(NodeKind.EVENT)) if NodeKind.EVENT in wanted else []
        total = len(derived) + len(events)
        chosen = _drawable(g, derived, events, limit)
        keep = set(chosen)
        nodes = [_summary(g.nodes[i], g.degree(i)) for i in chosen]
        edges = [{"src": e.src, "dst": e.dst, "type": e.type.value, "weight": e.weight}
                 for i in chosen for e in g.out_edges(i) if e.dst in keep]
        return {"nodes": nodes, "edges": edges, "total": total, "truncated": total > limit}
    return await st.amemory.read(draw, namespace=namespace)


def _drawable(g: WorkingGraph, derived: list[str], events: list[str], limit: int) -> list[str]:
    """Which ``limit`` nodes to draw: the best-connected derived nodes (about three fifths
    of the room when events are wanted), then the events that tie the most of them together,
    then the rest by degree — so a truncated drawing still shows what grounds what."""
    by_degree = sorted(derived, key=lambda i: -g.degree(i))
    if len(derived) + len(events) <= limit:
        return by_degree + sorted(events, key=lambda i: -g.degree(i))
    head = by_degree[: limit if not events else max(1, limit * 3 // 5)]
    wanted_events = set(events)
    ties: Counter[str] = Counter(other for i in head for other, _ in g.neighbors(i)
                                 if other in wanted_events)
    linking = sorted(ties, key=lambda e: (-ties[e], -g.degree(e)))
    chosen = head + linking[: limit - len(head)]
    if len(chosen) < limit:
        taken = set(chosen)
        rest = [i for i in by_degree if i not in taken] + \
            sorted((e for e in events if e not in taken), key=lambda i: -g.degree(i))
        chosen += rest[: limit - len(chosen)]
    return chosen


@api.get("/search", tags=["read"], summary="Nodes matching a text (lexical + dense anchor)")
async def search(namespace: Namespace, st: StateDep,
                 q: Annotated[str, Query(min_length=1, max_length=1000)],
                 k: Annotated[int, Query(ge=1, le=200)] = 20,
                 kinds: str | None = None) -> list[dict[str, Any]]:
    import numpy as np

    from enfold.recall.operators import anchor

    m = st.memory
    embedder = m.embedder
    qvec = None if embedder is None else await run_in_threadpool(
        lambda: np.asarray(embedder.embed([q])[0], dtype=np.float32))
    wanted = _kinds(kinds) or list(NodeKind)

    def find(g: WorkingGraph) -> list[dict[str, Any]]:
        scores = anchor(g, lambda text, knd, n: m.store.search_text(
                            namespace, text, knd, n, max_rows=m.settings.lexical_rows or None),
                        q, qvec, wanted, depth=k, rrf_k=m.settings.rrf_k)
        best = sorted(scores.items(), key=lambda x: -x[1])[:k]
        return [{**_summary(g.nodes[i], g.degree(i)), "score": round(s, 6)}
                for i, s in best if i in g.nodes]
    return await st.amemory.read(find, namespace=namespace)


@api.get("/stream", tags=["push"], response_class=EventSourceResponse,
         summary="Server-Sent Events: 'intent' and 'reactivation' notifications")
async def stream(namespace: Namespace, st: StateDep,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
                 last_event_id: Annotated[str | None, Header(max_length=200, description=(
                     "the id of the last event received: the kept ones after it come "
                     "first"))] = None) -> EventSourceResponse:
    header = f"{credentials.scheme} {credentials.credentials}" if credentials else None
    # _access has authorized the request; the stream keeps who it was, to check again.
    who = await run_in_threadpool(st.auth.principal, header)
    listener = st.replay.listen(namespace, last_event_id)  # listening before the 200
    # The stream ends once its key is revoked (checked per delivery and every second).
    events = sse_events(listener, stopping=lambda: st.draining,
                        allowed=lambda: st.auth.active(who))
    # On shutdown the generator sees `draining` within a second and ends the stream cleanly;
    # the grace period keeps sse-starlette from cutting it off before that.
    return EventSourceResponse(events, ping=int(st.settings.sse_ping_s),
                               headers={"Cache-Control": "no-store"}, shutdown_grace_period=3)


@api.get("/export", tags=["admin"], response_class=Response,
         summary="The namespace as JSON Lines (enfold import reads it)")
async def export(namespace: Namespace, st: StateDep) -> Response:
    buf = io.StringIO()
    await st.amemory.export(buf, namespace=namespace)
    return Response(buf.getvalue(), media_type="application/x-ndjson")


@api.post("/forget", tags=["admin"], summary="Delete an event and retract what derives from it")
async def forget(namespace: Namespace, st: StateDep, body: ForgetBody) -> dict[str, Any]:
    report = await st.amemory.forget(body.event_id, namespace=namespace)
    st.replay.drop(namespace, node_ids={*report["removed"], *report["updated"]},
                   event_id=body.event_id)
    return report


@api.delete("", status_code=204, tags=["admin"], summary="Wipe the namespace")
async def wipe(namespace: Namespace, st: StateDep) -> Response:
    await st.amemory.wipe(namespace)
    st.workers.forgot(namespace)
    st.replay.drop(namespace)
    return Response(status_code=204)


@api.get("/stats", tags=["read"], summary="Counts, backlog and planner usage")
async def stats(namespace: Namespace, st: StateDep) -> dict[str, Any]:
    out = await st.amemory.stats(namespace)
    out.pop("store", None)  # where the server keeps its data is not a namespace's business
    out["backlog"] = st.workers.backlog(namespace)
    return out


ops = APIRouter(tags=["ops"])


@ops.get("/healthz", summary="Liveness")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@ops.get("/readyz", summary="Readiness: workers running and not draining")
def readyz(st: StateDep,
           credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
           ) -> Response:
    """Ready or not for anyone (a load balancer's probe has no key); the counts only for a
    key: the server's for the admin, its namespace's backlog for a namespace key."""
    if st.draining or not st.workers.started:
        return problem(503, "not ready", slug="not-ready", headers={"Retry-After": "1"})
    body: dict[str, Any] = {"status": "ready"}
    if credentials is None and st.auth.enabled:
        return JSONResponse(body)
    who = st.auth.principal(f"{credentials.scheme} {credentials.credentials}"
                            if credentials else None)
    if who.admin:
        body.update(backlog=st.workers.backlog(), folded=st.workers.stats.folded,
                    unplanned_events=st.memory.unplanned_events())
    else:
        body.update(namespace=who.namespace, backlog=st.workers.backlog(who.namespace),
                    unplanned_events=st.memory.unplanned_events(who.namespace))
    return JSONResponse(body)


# ------------------------------------------------------------------ the app
def create_app(
    memory: Memory | str,
    settings: ServerSettings | None = None,
    *,
    embedder: str | None = "minilm",
    planner: str | None = "local",
) -> FastAPI:
    """The ASGI app over a Memory (or a store path/URL it opens with ``embedder`` and
    ``planner``, and closes at shutdown). Folding moves to background workers: requests
    never fold (``fold_on_read`` is turned off)."""
    settings = settings or ServerSettings()
    owns = isinstance(memory, str)
    mem = Memory.open(memory, embedder=embedder, planner=planner) if isinstance(memory, str) \
        else memory
    try:
        state = State(mem, settings, owns_memory=owns)
    except BaseException:
        if owns:
            mem.close()
        raise
    mem.fold_on_read = False

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(state.start)
        try:
            yield
        finally:
            await run_in_threadpool(state.shutdown)

    try:
        app_version = version("enfold")
    except PackageNotFoundError:
        app_version = "0"
    app = FastAPI(title="enfold", version=app_version, lifespan=lifespan, docs_url=None,
                  redoc_url=None,
                  description="The always-on memory of agents: append events, recall "
                              "evidence, hear intents. Authenticate with "
                              "`Authorization: Bearer <key>`.")
    app.state.enfold = state
    _install_errors(app)
    app.include_router(ops)
    app.include_router(api)
    install_docs(app)
    try:
        from enfold.server.ui import router as ui_router
    except ModuleNotFoundError as exc:
        if exc.name != "enfold.server.ui":
            raise
    else:
        app.include_router(ui_router)
    app.add_middleware(Guard, state=state)
    app.add_middleware(Contain)  # outermost: it also contains what the guard raises
    return app
