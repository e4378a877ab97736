"""A scripted OpenAI-compatible HTTP server for tests — real sockets, no network.

enfold talks to LLMs over HTTP through the ``openai`` SDK, so the honest way to test that
path (retries, timeouts, rate limits, a server without ``json_schema`` support) is a real
server. :class:`ScriptedLLMServer` is one: it binds ``127.0.0.1`` on a free port, runs in a
background thread and answers from a script you write::

    from enfold.testing.fake_llm import Delay, Hang, Reply, ScriptedLLMServer, Status, Trickle

    script = [Status(429, headers={"Retry-After": "0"}), Reply('{"ok": true}')]
    with ScriptedLLMServer(script) as srv:
        client = LLMClient(LLMConfig(base_url=srv.base_url, api_key="x", model="m"))
        ...
        assert srv.requests[-1]["response_format"]["type"] == "json_schema"

Endpoints: ``POST /v1/chat/completions`` (scripted), ``POST /v1/embeddings`` (deterministic,
computed with :class:`~enfold.embed.HashingEmbedder`, never scripted) and ``GET /v1/models``.

Each chat request is answered by, in order of precedence: the JSON-schema gate (with
``supports_json_schema=False`` a ``json_schema`` response format gets a 400 and consumes
nothing, as servers lacking it do), the next item of the queue, the ``responder`` callable,
then ``default`` (a 500 unless you pass another). Every parsed request body is recorded in
:attr:`ScriptedLLMServer.requests` before it is answered.

Slow and stuck servers, to test deadlines: :class:`Delay` answers late, :class:`Trickle`
sends its answer one byte at a time (each read a client makes succeeds, so a per-read
timeout never fires), and :class:`Hang` never answers. All three end at once when the
server stops.

Without sockets: :meth:`ScriptedLLMServer.transport` answers the same script in-process as
an ``httpx.MockTransport``, for tests that only need scripted replies (no server to start;
give the client any base URL)::

    srv = ScriptedLLMServer([Reply('{"ok": true}')])
    client = LLMClient(LLMConfig(base_url="http://scripted.test/v1", api_key="x", model="m"),
                       transport=srv.transport())

A transport has no sockets to be slow on, so :class:`Delay`, :class:`Trickle` and
:class:`Hang` need the real server; the transport refuses them.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

from enfold.embed import HashingEmbedder

if TYPE_CHECKING:
    import httpx

__all__ = ["Delay", "Hang", "Reply", "ScriptedLLMServer", "Status", "Trickle", "count_tokens"]


@dataclass(frozen=True)
class Reply:
    """A normal chat completion whose message content is ``content``.

    Token usage defaults to :func:`count_tokens` of the prompt and of ``content``; pass
    ``prompt_tokens``/``completion_tokens`` to script exact numbers, or ``usage=False`` to
    omit the ``usage`` object as some servers do.
    """

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    usage: bool = True


@dataclass(frozen=True)
class Status:
    """An HTTP error answer: ``Status(429, headers={"Retry-After": "1"})``, ``Status(500)``.

    ``body`` may be a dict (sent as JSON), a string (sent as text) or None, which sends an
    OpenAI-style ``{"error": {...}}`` object.
    """

    code: int
    body: Mapping[str, Any] | str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` before answering with ``then``, to provoke client timeouts."""

    seconds: float
    then: Reply | Status = Reply("{}")


@dataclass(frozen=True)
class Trickle:
    """Send ``then`` one byte every ``interval`` seconds, as a stuck proxy or an overloaded
    server can: every read the client makes gets a byte before a per-read timeout fires.

    With ``headers=True`` the status line and headers trickle too (the client never even
    sees a response); otherwise they go at once and only the body trickles.
    """

    interval: float = 0.5
    then: Reply | Status = Reply("{}")
    headers: bool = False


@dataclass(frozen=True)
class Hang:
    """Read the request and never answer (until the server stops)."""


Scripted = Reply | Status | Delay | Trickle | Hang
Responder = Callable[[dict[str, Any]], Scripted]


def count_tokens(text: str) -> int:
    """The fake's token estimate: whitespace-separated words. Deterministic, not a tokenizer."""
    return len(text.split())


def _prompt_text(body: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "\n".join(parts)


def _error_body(code: int, message: str, param: str | None = None) -> dict[str, Any]:
    kind = "invalid_request_error" if 400 <= code < 500 else "server_error"
    if code == 429:
        kind = "rate_limit_exceeded"
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


class ScriptedLLMServer:
    """A local OpenAI-compatible server answering chat requests from a script.

    Use it as a context manager or call :meth:`start`/:meth:`stop`. It is thread-safe: the
    client under test may send concurrent requests, and :attr:`max_in_flight` records the
    most chat requests that were ever being handled at once (to check concurrency limits).
    """

    def __init__(
        self,
        script: Iterable[Scripted] = (),
        *,
        responder: Responder | None = None,
        default: Scripted | None = None,
        supports_json_schema: bool = True,
        model: str = "scripted-model",
        embedding_dim: int = 256,
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.responder = responder
        self.default: Scripted = default or Status(
            500, _error_body(500, "ScriptedLLMServer: the script is exhausted")
        )
        self.supports_json_schema = supports_json_schema
        self.embedding_dim = embedding_dim
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Scripted] = deque(script)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._embedders: dict[int, HashingEmbedder] = {}
        self._port: int | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread; returns ``self``."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        # A handler sleeping in a Delay, a Trickle or a Hang must not keep stop() waiting.
        httpd.block_on_close = False
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name="ScriptedLLMServer",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port; pending delays end at once."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port; it stays readable after :meth:`stop` (nothing listens there then)."""
        if self._port is None:
            raise RuntimeError("ScriptedLLMServer has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def transport(self) -> httpx.MockTransport:
        """An ``httpx.MockTransport`` answering chat and embedding requests from this
        server's script, without sockets (the server need not be started). Requests are
        recorded as the server records them; :attr:`max_in_flight` is not tracked."""
        import httpx

        def handle(request: httpx.Request) -> httpx.Response:
            path = request.url.path.rstrip("/")
            try:
                body = json.loads(request.content or b"{}")
            except (json.JSONDecodeError, UnicodeDecodeError):
                return httpx.Response(400, json=_error_body(400, "the request body is not JSON"))
            if path.endswith("/embeddings"):
                self._record(path, body)
                code, payload = self._embeddings(body)
                return httpx.Response(code, json=payload)
            if not path.endswith("/chat/completions"):
                return httpx.Response(404, json=_error_body(404, f"no route {path}"))
            self._record(path, body)
            answer = self._next_chat_answer(body)
            if isinstance(answer, Status):
                status_body: Any = answer.body
                if status_body is None:
                    status_body = _error_body(answer.code, f"scripted status {answer.code}")
                if isinstance(status_body, str):
                    return httpx.Response(answer.code, text=status_body,
                                          headers=dict(answer.headers))
                return httpx.Response(answer.code, json=status_body,
                                      headers=dict(answer.headers))
            if isinstance(answer, Reply):
                return httpx.Response(200, json=self._chat_completion(body, answer))
            raise TypeError(f"{type(answer).__name__} needs real sockets: use the server")

        return httpx.MockTransport(handle)

    # -- scripting -----------------------------------------------------------------------

    def enqueue(self, *items: Scripted) -> None:
        """Append replies to the script (also while serving)."""
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The recorded bodies of chat completion requests only."""
        with self._lock:
            pairs = zip(self.paths, self.requests, strict=True)
            return [body for path, body in pairs if path.endswith("/chat/completions")]

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.paths.append(path)
            self.requests.append(body)

    def _next_chat_answer(self, body: dict[str, Any]) -> Scripted:
        response_format = body.get("response_format")
        if (
            not self.supports_json_schema
            and isinstance(response_format, Mapping)
            and response_format.get("type") == "json_schema"
        ):
            message = (
                "response_format type 'json_schema' is not supported by this server; "
                "use 'json_object' or 'text'"
            )
            return Status(400, _error_body(400, message, param="response_format"))
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return self.default

    def _chat_completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        prompt_tokens = (
            reply.prompt_tokens
            if reply.prompt_tokens is not None
            else count_tokens(_prompt_text(body))
        )
        completion_tokens = (
            reply.completion_tokens
            if reply.completion_tokens is not None
            else count_tokens(reply.content)
        )
        payload: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
        }
        if reply.usage:
            payload["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return payload

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return 400, _error_body(400, "input must be a string or a list of strings", "input")
        dim = body.get("dimensions") or self.embedding_dim
        if not isinstance(dim, int) or dim < 2:
            return 400, _error_body(400, "dimensions must be an integer >= 2", "dimensions")
        with self._lock:
            embedder = self._embedders.setdefault(dim, HashingEmbedder(dim=dim))
        vectors = embedder.embed(inputs)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(vec.astype("<f4").tobytes()).decode("ascii")
                    if as_base64
                    else [float(x) for x in vec]
                ),
            }
            for i, vec in enumerate(vectors)
        ]
        tokens = sum(count_tokens(t) for t in inputs)
        return 200, {
            "object": "list",
            "data": data,
            "model": str(body.get("model") or self.model),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    """Build the request handler class bound to one :class:`ScriptedLLMServer`."""

    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so no handler thread idles on keep-alive.
        protocol_version = "HTTP/1.0"
        server_version = "ScriptedLLMServer/1"

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet; tests assert on :attr:`ScriptedLLMServer.requests` instead."""

        def _send(self, code: int, body: Any, headers: Mapping[str, str] | None = None,
                  trickle: Trickle | None = None) -> None:
            if isinstance(body, str):
                data, ctype = body.encode("utf-8"), "text/plain; charset=utf-8"
            else:
                data, ctype = json.dumps(body).encode("utf-8"), "application/json"
            try:
                if trickle is None:
                    self.send_response(code)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    return
                lines = [f"{self.protocol_version} {code} {HTTPStatus(code).phrase}",
                         f"Server: {self.version_string()}", f"Content-Type: {ctype}",
                         f"Content-Length: {len(data)}",
                         *(f"{name}: {value}" for name, value in (headers or {}).items())]
                head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
                if not trickle.headers:
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                for byte in head + data:
                    if server._stopping.wait(trickle.interval):
                        return
                    self.wfile.write(bytes((byte,)))
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (e.g. timed out); nothing to tell it

        def _authorized(self) -> bool:
            if server.api_key is None:
                return True
            if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            self._send(401, _error_body(401, "Incorrect API key provided"))
            return False

        def do_GET(self) -> None:
            if not self._authorized():
                return
            if self.path.rstrip("/") == "/v1/models":
                model = {"id": server.model, "object": "model", "created": 0, "owned_by": "enfold"}
                self._send(200, {"object": "list", "data": [model]})
            else:
                self._send(404, _error_body(404, f"no route {self.path}"))

        def do_POST(self) -> None:
            if not self._authorized():
                return
            path = self.path.split("?", 1)[0].rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except (json.JSONDecodeError, UnicodeDecodeError):
                self._send(400, _error_body(400, "the request body is not valid JSON"))
                return
            if not isinstance(body, dict):
                self._send(400, _error_body(400, "the request body must be a JSON object"))
                return
            if path == "/v1/embeddings":
                server._record(path, body)
                self._send(*server._embeddings(body))
            elif path == "/v1/chat/completions":
                server._record(path, body)
                self._chat(body)
            else:
                self._send(404, _error_body(404, f"no route {self.path}"))

        def _chat(self, body: dict[str, Any]) -> None:
            # A request is in flight until its answer is ready, not until the last byte is
            # written: a client may read the answer and send its next request while this
            # thread is still finishing the write, which would count one too many.
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            done = False

            def finish() -> None:
                nonlocal done
                if not done:
                    done = True
                    with server._lock:
                        server.in_flight -= 1

            try:
                answer = server._next_chat_answer(body)
                trickle: Trickle | None = None
                while isinstance(answer, Delay | Trickle | Hang):
                    if isinstance(answer, Hang):
                        server._stopping.wait()
                        return
                    if isinstance(answer, Trickle):
                        trickle, answer = answer, answer.then
                        continue
                    if server._stopping.wait(answer.seconds):
                        return
                    answer = answer.then
                if isinstance(answer, Status):
                    status_body: Any = answer.body
                    if status_body is None:
                        status_body = _error_body(answer.code, f"scripted status {answer.code}")
                    finish()
                    self._send(answer.code, status_body, answer.headers, trickle)
                else:
                    reply = server._chat_completion(body, answer)
                    finish()
                    self._send(200, reply, trickle=trickle)
            finally:
                finish()

    return Handler
