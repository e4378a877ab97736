"""A structured chat client for any OpenAI-compatible endpoint, with token accounting.

In ``llm`` mode the model writes UpdatePlans, intent labels, fact statements and answers.
Every such call goes through :class:`LLMClient`, which owns the policy the rest of enfold
relies on:

- **Structured output.** :meth:`LLMClient.chat_json` asks for ``json_schema`` output (strict).
  Servers that reject it (older vLLM, llama.cpp, some proxies) are detected from their 400/422
  reply and the client steps down, once and for good, to ``json_object`` and then to plain
  text; callers therefore also describe the schema in the prompt. The reply is parsed with
  ``json.loads`` — never repaired with regexes — and a non-object raises :class:`BadJSONReply`.
  Validating it against the schema is the caller's job (a pydantic model).
  :func:`strict_schema` turns a pydantic model into a schema strict mode accepts.
- **A deadline per call.** ``timeout`` bounds the wall time of one call as its caller sees
  it — waiting for a connection slot, connecting, sending, the whole reply, every retry and
  every backoff between them — not each socket read. (httpx's timeouts are per operation: a
  server trickling one byte every 0.5 s never trips a 2 s read timeout, and held one call
  for as long as it liked.) The request runs as a task of ``openai.AsyncOpenAI`` on an event
  loop the client owns, inside ``asyncio.timeout(remaining)``; at the deadline the task is
  cancelled, which closes its connection at once, whatever phase it was in. The calling
  thread simply waits for the task. A retry (or its backoff) that cannot finish before the
  deadline is not attempted.
- **Retries.** 429 (honouring ``Retry-After`` up to a cap), 408, 5xx and connection errors are
  retried with exponential backoff and jitter, up to ``max_retries``, within the deadline.
  Timeouts are not: a model too slow once is usually slow again, and the write path would
  rather fall back to the local planner than stall. The attempts are driven by ``tenacity``;
  the SDK's own retries are switched off because they cannot keep this policy: they retry
  timeouts, stop only per request (not at the call's deadline), follow their own backoff and
  ``x-should-retry`` header, and neither report retries for accounting nor take an
  injectable sleep or random source for tests.
- **A circuit breaker.** After ``breaker_failures`` consecutive calls that failed for the
  endpoint's sake (timeout, unreachable, 5xx or 429 after the retries, a reply the SDK cannot
  read) the client stops calling for ``breaker_cooldown_s`` and raises
  :class:`~enfold.errors.LLMUnavailable` at once, so the planner chain falls back to the local
  planner without paying a timeout per event. After the cool-down one call goes through as a
  probe (others keep failing fast meanwhile): success closes the breaker, failure reopens it
  for another cool-down. Any reply from the server — even a wrong one (bad JSON, a 4xx about
  the request) — counts as healthy. One breaker per client: it guards an endpoint, which all
  namespaces share.
- **Concurrency.** At most ``concurrency`` requests are on the wire at once (per client).
- **Accounting.** Calls, tokens, failures, retries and breaker trips/rejections per namespace,
  and an optional token budget per namespace checked before each call.

The HTTP transport can be injected (``LLMClient(..., transport=httpx.MockTransport(...))``),
so tests can script replies without a server; the default is the SDK's own httpx client.

Errors are enfold's: :class:`~enfold.errors.LLMTimeout`, :class:`~enfold.errors.LLMRateLimited`,
:class:`~enfold.errors.LLMBadReply`, :class:`~enfold.errors.LLMBudgetExceeded`,
:class:`~enfold.errors.LLMUnavailable`, else :class:`~enfold.errors.LLMError`. The ``openai``
package is imported on first use only, and the event loop thread starts then too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import itertools
import json
import logging
import os
import random
import threading
import time
import tomllib
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import tenacity
from pydantic import BaseModel

from enfold.errors import (
    ConfigError,
    LLMBadReply,
    LLMBudgetExceeded,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from enfold.settings import Settings

if TYPE_CHECKING:
    import httpx

__all__ = ["BadJSONReply", "LLMClient", "LLMConfig", "LLMReply", "Usage", "strict_schema"]

log = logging.getLogger(__name__)

_DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
# Structured-output modes, strongest first; a client steps down when a server rejects one.
_FORMATS = ("json_schema", "json_object", "text")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_COUNTERS = ("calls", "prompt_tokens", "completion_tokens", "failures", "retries")
# Calls refused before any request, and times this client's breaker opened.
_REFUSALS = ("budget_rejections", "breaker_rejections", "breaker_trips")
# How long past its deadline the calling thread waits for a cancelled task to finish.
_CANCEL_GRACE_S = 2.0


@dataclass(frozen=True)
class LLMConfig:
    """How to reach the chat endpoint and how hard to lean on it.

    ``base_url=None`` means OpenAI itself. ``timeout`` is the deadline of one call in
    seconds, retries included (see the module). ``token_budget`` caps prompt + completion
    tokens per namespace for the life of one client (None: no cap); it is checked before each
    call, so the call that crosses it completes and concurrent calls may overshoot a little.
    Library code receives this object; only the CLI and the server build it from the
    environment or a file. The circuit breaker's knobs are settings
    (``llm_breaker_failures``, ``llm_breaker_cooldown_s``), passed to :class:`LLMClient`.
    """

    base_url: str | None
    api_key: str | None = field(repr=False)
    model: str
    timeout: float = 60
    max_retries: int = 3
    concurrency: int = 4
    token_budget: int | None = None
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError("LLM model must be a non-empty string")
        if not self.timeout > 0:
            raise ConfigError(f"LLM timeout must be > 0 seconds, got {self.timeout}")
        if self.max_retries < 0:
            raise ConfigError(f"LLM max_retries must be >= 0, got {self.max_retries}")
        if self.concurrency < 1:
            raise ConfigError(f"LLM concurrency must be >= 1, got {self.concurrency}")
        if self.token_budget is not None and self.token_budget < 0:
            raise ConfigError(f"LLM token_budget must be >= 0, got {self.token_budget}")
        if not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"LLM temperature must be within [0, 2], got {self.temperature}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMConfig | None:
        """Build a config from ``ENFOLD_LLM_BASE_URL``/``ENFOLD_LLM_MODEL``/``ENFOLD_LLM_API_KEY``.

        ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` fill in what the ENFOLD_ variables leave
        out. An LLM counts as configured only when ``ENFOLD_LLM_MODEL`` or
        ``ENFOLD_LLM_BASE_URL`` is set: an ``OPENAI_API_KEY`` exported for other tools must not
        silently switch enfold to paid LLM folding. Returns None when not configured; a base
        URL without a model is a :class:`ConfigError`.
        """

        def get(*names: str) -> str | None:
            for name in names:
                value = env.get(name, "").strip()
                if value:
                    return value
            return None

        model = get("ENFOLD_LLM_MODEL")
        if model is None and get("ENFOLD_LLM_BASE_URL") is None:
            return None
        if model is None:
            raise ConfigError("ENFOLD_LLM_BASE_URL is set but ENFOLD_LLM_MODEL is not")
        return cls(
            base_url=get("ENFOLD_LLM_BASE_URL", "OPENAI_BASE_URL"),
            api_key=get("ENFOLD_LLM_API_KEY", "OPENAI_API_KEY"),
            model=model,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> LLMConfig:
        """Read the ``[llm]`` table of a TOML file, or the ``llm:`` mapping of a YAML file.

        Keys are this class's field names; unknown keys are an error so typos do not pass
        silently. The format is chosen by the suffix (``.toml``, ``.yaml``, ``.yml``).
        """
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read LLM config {file}: {exc}") from exc
        suffix = file.suffix.lower()
        if suffix == ".toml":
            try:
                document: Any = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"cannot parse {file}: {exc}") from exc
        elif suffix in (".yaml", ".yml"):
            import yaml

            try:
                document = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ConfigError(f"cannot parse {file}: {exc}") from exc
        else:
            raise ConfigError(f"LLM config {file} must be .toml, .yaml or .yml")
        table = document.get("llm") if isinstance(document, dict) else None
        if not isinstance(table, dict):
            raise ConfigError(f"{file} has no [llm] table")
        return cls.from_mapping(table, source=str(file))

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], *, source: str = "config") -> LLMConfig:
        """Build a config from a mapping of field names, checking names and types."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(table) - known.keys())
        if unknown:
            raise ConfigError(f"{source}: unknown LLM setting(s) {', '.join(unknown)}")
        if "model" not in table:
            raise ConfigError(f"{source}: the LLM model is required")
        kinds: dict[str, tuple[type, ...]] = {
            "base_url": (str, type(None)),
            "api_key": (str, type(None)),
            "model": (str,),
            "timeout": (int, float),
            "max_retries": (int,),
            "concurrency": (int,),
            "token_budget": (int, type(None)),
            "temperature": (int, float),
        }
        for key, value in table.items():
            if isinstance(value, bool) or not isinstance(value, kinds[key]):
                raise ConfigError(f"{source}: LLM setting {key} has the wrong type: {value!r}")
        values = {"base_url": None, "api_key": None, **table}
        return cls(**values)


@dataclass(frozen=True)
class Usage:
    """Tokens one call cost, as the server reported them (or estimated when it did not)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class LLMReply:
    """One successful chat call: the raw text, the parsed JSON object (``chat_json`` only)."""

    content: str
    data: dict[str, Any] | None
    usage: Usage
    model: str


class BadJSONReply(LLMBadReply):
    """The model's reply was not a JSON object; ``content`` keeps the raw text for logs."""

    def __init__(self, message: str, *, content: str, usage: Usage, model: str) -> None:
        super().__init__(message)
        self.content = content
        self.usage = usage
        self.model = model


class _FormatRejected(Exception):
    """Internal: the server refused the requested ``response_format``."""


class _Retryable(Exception):
    """Internal: an attempt failed in a way worth another; ``error`` is what to raise if no
    other attempt fits before the deadline, ``retry_after`` what the server asked for."""

    def __init__(self, error: LLMError, cause: BaseException, retry_after: float | None
                 ) -> None:
        super().__init__(str(error))
        self.error = error
        self.cause = cause
        self.retry_after = retry_after


class _EndpointFailed(Exception):
    """Internal: ``error`` is to be raised, and it counts against the endpoint (breaker)."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


# Keys a strict schema keeps, in the order they are written (the schema is sent verbatim).
_SCHEMA_KEYS = ("type", "enum", "description", "properties", "items", "anyOf", "required",
                "additionalProperties")


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema in the form OpenAI's strict structured output accepts.

    Generated by pydantic, then: ``$defs`` are inlined (a recursive model is an error);
    every object forbids additional properties and lists all its properties as required
    (optional fields are nullable, so the model writes ``null`` for them); a nullable
    scalar is written ``{"type": ["string", "null"]}`` (with ``null`` in its ``enum``);
    ``const`` becomes a one-value ``enum``; titles, defaults and the models' docstrings are
    dropped (they are for readers of the code; the prompt describes the reply in words),
    while a field's own ``description`` is kept. A field may override its schema with
    ``pydantic.WithJsonSchema`` (e.g. to offer the model fewer values than it validates).
    Free-form objects (``dict[str, Any]``) have no strict form and raise :class:`TypeError`.
    """
    document = model.model_json_schema()
    return _strict_node(document, document.get("$defs", {}), (), is_model=True)


def _strict_node(node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...],
                 *, is_model: bool = False) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise TypeError(f"{name} is recursive; strict_schema inlines $defs")
        return _strict_node(defs[name], defs, (*seen, name), is_model="properties" in defs[name])
    out: dict[str, Any] = {}
    if "anyOf" in node:
        branches = [_strict_node(b, defs, seen) for b in node["anyOf"]]
        merged = _merge_scalars(branches)
        if merged is None:
            out["anyOf"] = branches
        else:
            out.update(merged)
    if "type" in node:
        out["type"] = node["type"]
    if "const" in node:
        out["enum"] = [node["const"]]
    if "enum" in node:
        out["enum"] = list(node["enum"])
    if "description" in node and not is_model:
        out["description"] = node["description"]
    if node.get("type") == "object":
        properties = node.get("properties")
        if not properties:
            raise TypeError("a free-form object has no strict JSON Schema")
        out["properties"] = {k: _strict_node(v, defs, seen) for k, v in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    if "items" in node:
        out["items"] = _strict_node(node["items"], defs, seen)
    return {k: out[k] for k in _SCHEMA_KEYS if k in out}


def _merge_scalars(branches: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``X | None`` of scalars as one ``type`` list (``anyOf`` stays for anything else)."""
    if not all(set(b) <= {"type", "enum"} and isinstance(b.get("type"), str) for b in branches):
        return None
    enums = [b for b in branches if "enum" in b]
    if enums and any("enum" not in b and b["type"] != "null" for b in branches):
        return None
    merged: dict[str, Any] = {"type": [b["type"] for b in branches]}
    if enums:
        merged["enum"] = [v for b in branches for v in b.get("enum", [None])]
    return merged


def _estimate_tokens(text: str) -> int:
    """A rough token count for servers that omit ``usage`` (about 4 characters a token)."""
    return max(1, len(text) // 4) if text else 0


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # the HTTP-date form, "Wed, 21 Oct 2015 07:28:00 GMT"
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class _Admission:
    """The breaker's answer to one call: go (perhaps as the half-open probe), or not yet."""

    allowed: bool
    probe: bool = False
    retry_in: float = 0.0


class CircuitBreaker:
    """closed → (``failures`` consecutive failures) → open → (``cooldown_s``) → half-open.

    Half-open admits exactly one probe; its success closes the breaker, its failure reopens
    it for another cool-down. Calls already in flight when the breaker opened still report:
    a late success closes it (the endpoint answers after all), a late failure changes
    nothing. ``failures=0`` disables the breaker. Thread-safe; ``clock`` is for tests.
    """

    def __init__(self, failures: int, cooldown_s: float, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 0:
            raise ConfigError(f"llm_breaker_failures must be >= 0, got {failures}")
        if not cooldown_s >= 0:
            raise ConfigError(f"llm_breaker_cooldown_s must be >= 0, got {cooldown_s}")
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        """``"closed"``, ``"open"`` (refusing calls) or ``"half_open"`` (a probe may go or
        is in flight)."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if self._probing or self._clock() >= self._opened_at + self.cooldown_s:
                return "half_open"
            return "open"

    @property
    def consecutive_failures(self) -> int:
        with self._lock:
            return self._consecutive

    def admit(self) -> _Admission:
        """Whether a call may go now; a call admitted as the probe must be reported."""
        with self._lock:
            if self._opened_at is None:
                return _Admission(True)
            wait = self._opened_at + self.cooldown_s - self._clock()
            if wait > 0 or self._probing:
                return _Admission(False, retry_in=max(wait, 0.0))
            self._probing = True
            return _Admission(True, probe=True)

    def record(self, admission: _Admission, healthy: bool | None) -> bool:
        """Report an admitted call: ``healthy`` True (the server answered), False (it failed
        the call), None (nothing learned, e.g. interrupted). Returns whether this report
        opened the breaker."""
        with self._lock:
            if admission.probe:
                self._probing = False
            if healthy is None:
                return False
            if healthy:
                self._consecutive = 0
                self._opened_at = None
                return False
            self._consecutive += 1
            if admission.probe or (self._opened_at is None and self.failures
                                   and self._consecutive >= self.failures):
                self._opened_at = self._clock()
                return True
            return False


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


def _shut_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread, sdk_client: Any
               ) -> None:
    """Close the SDK client on its loop, stop the loop and its thread (idempotent via
    :func:`weakref.finalize`, which also runs this when a client is dropped unclosed)."""
    if threading.current_thread() is not thread:
        try:
            asyncio.run_coroutine_threadsafe(sdk_client.close(), loop).result(timeout=5)
        except (RuntimeError, TimeoutError, OSError) as exc:  # best effort: the loop goes anyway
            log.debug("closing the LLM HTTP client failed: %s", exc)
    loop.call_soon_threadsafe(loop.stop)
    if threading.current_thread() is not thread:
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()


async def _within(seconds: float, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``call()`` with a hard deadline: at ``seconds`` its task is cancelled."""
    async with asyncio.timeout(seconds):
        return await call()


class LLMClient:
    """A thread-safe chat client with enfold's deadline, retry, format, breaker and budget
    policy (see the module).

    ``settings`` supplies the circuit breaker (``llm_breaker_failures``,
    ``llm_breaker_cooldown_s``; default :class:`~enfold.settings.Settings`). ``sleep``,
    ``backoff_base``, ``backoff_cap`` and ``retry_after_cap`` exist so tests (and impatient
    batch jobs) can shrink or record the waits; ``rng`` makes the jitter reproducible.
    Backoff before retry ``n`` (1-based) is ``min(cap, base·2^(n-1))`` scaled by a random
    factor in [0.5, 1]; a ``Retry-After`` header replaces it, capped. ``transport`` replaces
    the HTTP transport under the SDK's httpx client (e.g. an ``httpx.MockTransport``).
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        settings: Settings | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_base: float = 0.5,
        backoff_cap: float = 20.0,
        retry_after_cap: float = 30.0,
        rng: random.Random | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if config.base_url is None and not config.api_key:
            raise ConfigError("OpenAI's own endpoint needs an API key (ENFOLD_LLM_API_KEY)")
        s = settings or Settings()
        self.config = config
        self.breaker = CircuitBreaker(s.llm_breaker_failures, s.llm_breaker_cooldown_s)
        self._sleep = sleep
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._retry_after_cap = retry_after_cap
        self._rng = rng or random.Random()
        self._transport = transport
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._sdk_client: Any = None
        self._sdk: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_pid = 0
        self._shutdown: weakref.finalize[Any, Any] | None = None
        self._format_level = 0
        self._usage: dict[str, dict[str, int]] = {}

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r})"

    # -- public API ----------------------------------------------------------------------

    @property
    def response_format_mode(self) -> str:
        """The structured-output mode this client currently uses for this server."""
        return _FORMATS[self._format_level]

    def chat_json(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        schema: Mapping[str, Any],
        schema_name: str,
        namespace: str,
        max_tokens: int | None = None,
    ) -> LLMReply:
        """Ask for a JSON object matching ``schema`` and return it parsed in ``reply.data``.

        Raises :class:`BadJSONReply` (an :class:`~enfold.errors.LLMBadReply`) when the reply is
        not a JSON object; the caller decides whether to ask again or fall back. The deadline
        also spans stepping down to a weaker response format.
        """
        deadline = self._deadline()
        while True:
            level = self._format_level
            mode = _FORMATS[level]
            if mode == "json_schema":
                response_format: dict[str, Any] | None = {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": dict(schema), "strict": True},
                }
            elif mode == "json_object":
                response_format = {"type": "json_object"}
            else:
                response_format = None
            try:
                reply = self._call(messages, namespace, response_format, max_tokens, deadline)
                break
            except _FormatRejected as exc:
                # Only the text mode sends no response_format, and it is never rejected for
                # one, so this steps down at most twice.
                with self._lock:
                    if self._format_level == level:
                        self._format_level = level + 1
                        log.warning(
                            "%s rejected response_format %s (%s); using %s from now on",
                            self.config.base_url,
                            mode,
                            exc,
                            _FORMATS[level + 1],
                        )
        try:
            data = json.loads(reply.content)
        except (json.JSONDecodeError, TypeError, RecursionError) as exc:
            self._count(namespace, failures=1)
            raise BadJSONReply(
                f"the model's reply is not valid JSON ({exc})",
                content=reply.content,
                usage=reply.usage,
                model=reply.model,
            ) from exc
        if not isinstance(data, dict):
            self._count(namespace, failures=1)
            raise BadJSONReply(
                f"expected a JSON object, the model sent a {type(data).__name__}",
                content=reply.content,
                usage=reply.usage,
                model=reply.model,
            )
        return LLMReply(content=reply.content, data=data, usage=reply.usage, model=reply.model)

    def chat_text(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        namespace: str,
        max_tokens: int | None = None,
    ) -> LLMReply:
        """Ask for free text (answers, labels); ``reply.data`` is None."""
        return self._call(messages, namespace, None, max_tokens, self._deadline())

    def usage(self, namespace: str | None = None) -> dict[str, int]:
        """Counters for ``namespace`` (or summed over all namespaces when None).

        Keys: ``calls`` (requests attempted, retries not included), ``prompt_tokens``,
        ``completion_tokens``, ``total_tokens``, ``failures`` (calls that raised),
        ``retries`` (extra attempts), ``budget_rejections``, ``breaker_rejections`` (calls
        refused at once because the circuit breaker was open) and ``breaker_trips`` (times a
        failed call of the namespace opened the breaker). The breaker's live state is
        :attr:`breaker_state`.
        """
        with self._lock:
            rows = (
                list(self._usage.values())
                if namespace is None
                else [self._usage.get(namespace, {})]
            )
            out = {k: sum(r.get(k, 0) for r in rows) for k in (*_COUNTERS, *_REFUSALS)}
        out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
        return out

    def restore_usage(self, namespace: str, counts: Mapping[str, Any]) -> None:
        """Add counters recorded by an earlier process (the memory keeps them in the
        store), so that usage and the token budget span restarts."""
        known = (*_COUNTERS, *_REFUSALS)
        self._count(namespace, **{k: int(v) for k, v in counts.items()
                                  if k in known and isinstance(v, int) and v > 0})

    @property
    def breaker_state(self) -> str:
        """The circuit breaker now: ``"closed"``, ``"open"`` or ``"half_open"``."""
        return self.breaker.state

    def close(self) -> None:
        """Close the HTTP connection pool and stop the client's event loop thread (the
        client can be used again afterwards: both start again on the next call)."""
        with self._lock:
            shutdown, self._shutdown = self._shutdown, None
            self._sdk_client = self._loop = None
        if shutdown is not None:
            shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------

    def _count(self, namespace: str, **deltas: int) -> None:
        with self._lock:
            row = self._usage.setdefault(namespace, {})
            for key, delta in deltas.items():
                row[key] = row.get(key, 0) + delta

    def _deadline(self) -> float:
        """When a call starting now must end. The SDK is set up first: importing it (a
        second, once per process) is not the endpoint's time."""
        self._client()
        return time.monotonic() + self.config.timeout

    def _check_budget(self, namespace: str) -> None:
        budget = self.config.token_budget
        if budget is None:
            return
        spent = self.usage(namespace)["total_tokens"]
        if spent >= budget:
            self._count(namespace, budget_rejections=1)
            raise LLMBudgetExceeded(
                f"namespace {namespace!r} spent {spent} of its {budget} LLM tokens"
            )

    def _client(self) -> tuple[Any, Any, asyncio.AbstractEventLoop]:
        """The SDK module, its async client and the loop it runs on, created on first use
        (so importing enfold, or building a client, starts nothing)."""
        with self._lock:
            if self._loop is not None and self._loop_pid != os.getpid():
                # A forked child inherits the loop but not its thread: start its own (the
                # parent's loop and connections stay the parent's to close).
                if self._shutdown is not None:
                    self._shutdown.detach()
                self._sdk_client = self._loop = self._shutdown = None
            if self._sdk_client is None or self._loop is None:
                try:
                    import openai
                except ImportError as exc:
                    raise ConfigError(
                        "LLM mode needs the openai package; install the extra: "
                        "pip install 'enfold[llm]'"
                    ) from exc
                self._sdk = openai
                http_client: Any = None
                if self._transport is not None:
                    import httpx  # the SDK accepts an httpx client (httpx2 for openai >= 3)

                    http_client = httpx.AsyncClient(transport=self._transport,
                                                    timeout=self.config.timeout,
                                                    follow_redirects=True)
                sdk_client = openai.AsyncOpenAI(
                    base_url=self.config.base_url or _DEFAULT_OPENAI_URL,
                    api_key=self.config.api_key or "not-needed",
                    # Per-operation limits under the call's deadline, which is enforced
                    # by cancellation (_within).
                    timeout=self.config.timeout,
                    max_retries=0,  # retries are tenacity's, under the deadline (_attempts)
                    http_client=http_client,
                )
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=_run_loop, args=(loop,), daemon=True,
                                          name=f"enfold-llm-{id(self):x}")
                thread.start()
                self._sdk_client, self._loop, self._loop_pid = sdk_client, loop, os.getpid()
                self._shutdown = weakref.finalize(self, _shut_loop, loop, thread, sdk_client)
            return self._sdk, self._sdk_client, self._loop

    def _request(self, client: Any, loop: asyncio.AbstractEventLoop, params: Mapping[str, Any],
                 deadline: float) -> Any:
        """One HTTP attempt, cancelled at ``deadline`` (raises TimeoutError then)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        task = _within(remaining, lambda: client.chat.completions.create(**params))
        try:
            future = asyncio.run_coroutine_threadsafe(task, loop)
        except RuntimeError as exc:  # the loop was closed by close() in another thread
            task.close()
            raise concurrent.futures.CancelledError from exc
        try:
            # The task ends itself at the deadline; the grace only guards against a loop
            # that stopped under us (close() from another thread).
            return future.result(timeout=remaining + _CANCEL_GRACE_S)
        finally:
            future.cancel()  # a no-op once done; stops the request if we were interrupted

    def _backoff(self, state: tenacity.RetryCallState) -> float:
        """The wait before the next attempt: the server's ``Retry-After`` (capped), else
        exponential backoff scaled by a jitter factor in [0.5, 1]."""
        failure = state.outcome.exception() if state.outcome is not None else None
        retry_after = failure.retry_after if isinstance(failure, _Retryable) else None
        if retry_after is not None:
            return min(retry_after, self._retry_after_cap)
        # Not tenacity.wait_exponential: it draws its (zero) jitter from the global random
        # module, which would move every other user's seeded sequence.
        delay = min(self._backoff_cap, self._backoff_base * 2.0 ** (state.attempt_number - 1))
        with self._lock:
            factor = 0.5 + 0.5 * float(self._rng.random())
        return delay * factor

    def _call(
        self,
        messages: Sequence[Mapping[str, Any]],
        namespace: str,
        response_format: dict[str, Any] | None,
        max_tokens: int | None,
        deadline: float,
    ) -> LLMReply:
        """One logical call: budget, breaker, attempts with backoff until ``deadline``,
        accounting."""
        self._check_budget(namespace)
        sdk, client, loop = self._client()
        admission = self.breaker.admit()
        if not admission.allowed:
            self._count(namespace, breaker_rejections=1)
            wait = (f"for {admission.retry_in:.1f}s more" if admission.retry_in > 0
                    else "while a probe call is in flight")
            raise LLMUnavailable(
                f"{self.config.base_url or 'the LLM'} failed {self.breaker.consecutive_failures}"
                f" calls in a row; calls are refused {wait} (the circuit breaker is open)"
            )
        params: dict[str, Any] = {
            "model": self.config.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.config.temperature,
        }
        if response_format is not None:
            params["response_format"] = response_format
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        healthy: bool | None = None  # what this call says about the endpoint
        try:
            reply = self._attempts(sdk, client, loop, params, namespace, deadline,
                                   response_format)
            healthy = True
            return reply
        except _EndpointFailed as failed:
            healthy = False
            raise failed.error from failed.error.__cause__
        except (LLMError, _FormatRejected):
            healthy = True
            raise
        finally:
            if self.breaker.record(admission, healthy):
                self._count(namespace, breaker_trips=1)
                log.warning(
                    "%s failed %d calls in a row; LLM calls are refused for %.1fs "
                    "(events fold with the local planner meanwhile)",
                    self.config.base_url, self.breaker.consecutive_failures,
                    self.breaker.cooldown_s)
            elif admission.probe and healthy:
                log.info("%s answers again; LLM calls resume", self.config.base_url)

    def _attempts(
        self,
        sdk: Any,
        client: Any,
        loop: asyncio.AbstractEventLoop,
        params: dict[str, Any],
        namespace: str,
        deadline: float,
        response_format: dict[str, Any] | None,
    ) -> LLMReply:
        """The attempts of one call. Raises :class:`_EndpointFailed` (wrapping the error to
        raise) for failures that count against the endpoint, enfold errors otherwise."""
        timeout = self.config.timeout

        def failed(error: LLMError, cause: BaseException | None) -> _EndpointFailed:
            self._count(namespace, failures=1)
            error.__cause__ = cause
            return _EndpointFailed(error)

        def attempt(retry: int) -> LLMReply:
            """Attempt ``retry`` (0 first); raises :class:`_Retryable` when another may go."""
            slot = self._slots.acquire(timeout=max(0.0, deadline - time.monotonic()))
            if not slot:
                raise failed(LLMTimeout(
                    f"no LLM connection slot came free within {timeout}s "
                    f"({self.config.concurrency} calls in flight)"), None)
            last = retry >= self.config.max_retries
            try:
                response = self._request(client, loop, params, deadline)
            except (TimeoutError, sdk.APITimeoutError) as exc:
                raise failed(LLMTimeout(
                    f"{self.config.base_url} did not answer within {timeout}s"), exc) from exc
            except sdk.APIStatusError as exc:
                code = exc.status_code
                if code in (400, 422) and response_format is not None and _mentions_format(exc):
                    self._count(namespace, calls=-1, retries=1)
                    raise _FormatRejected(_status_message(exc)) from exc
                if code not in _RETRYABLE_STATUS and code < 500:
                    self._count(namespace, failures=1)
                    raise LLMError(f"LLM request failed: {_status_message(exc)}") from exc
                kind = LLMRateLimited if code == 429 else LLMError
                if last:
                    raise failed(kind(
                        f"LLM request failed after {retry + 1} attempts: {_status_message(exc)}"
                    ), exc) from exc
                raise _Retryable(kind(
                    f"LLM request failed after {retry + 1} attempts, and another would end "
                    f"past the {timeout}s deadline: {_status_message(exc)}"),
                    exc, _retry_after(exc.response.headers)) from exc
            except sdk.APIConnectionError as exc:
                if last:
                    raise failed(LLMError(
                        f"cannot reach {self.config.base_url} after {retry + 1} attempts: {exc}"
                    ), exc) from exc
                raise _Retryable(LLMError(
                    f"cannot reach {self.config.base_url} within the {timeout}s deadline "
                    f"({retry + 1} attempts): {exc}"), exc, None) from exc
            except sdk.OpenAIError as exc:  # e.g. a reply the SDK could not parse
                raise failed(LLMError(f"LLM request failed: {exc}"), exc) from exc
            except concurrent.futures.CancelledError as exc:
                self._count(namespace, failures=1)
                raise LLMError("the LLM client was closed during the call") from exc
            else:
                return self._reply(response, params, namespace)
            finally:
                self._slots.release()

        def past_deadline(state: tenacity.RetryCallState) -> bool:
            # tenacity computes the wait before asking whether to stop: a retry whose
            # backoff alone would reach the deadline is not attempted. The last allowed
            # attempt (max_retries) raises its own error instead of _Retryable.
            return time.monotonic() + (state.upcoming_sleep or 0.0) >= deadline

        def counted(state: tenacity.RetryCallState) -> None:
            self._count(namespace, retries=1)

        self._count(namespace, calls=1)
        tries = itertools.count()
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Retryable),
            wait=self._backoff,
            stop=past_deadline,
            sleep=self._sleep,
            before_sleep=counted,
            reraise=True,
        )
        try:
            return retrying(lambda: attempt(next(tries)))
        except _Retryable as exhausted:
            raise failed(exhausted.error, exhausted.cause) from None

    def _reply(self, response: Any, params: Mapping[str, Any], namespace: str) -> LLMReply:
        """Turn an SDK response into an :class:`LLMReply` and book its tokens."""
        choices = getattr(response, "choices", None) or []
        content = choices[0].message.content if choices else None
        content = content if isinstance(content, str) else ""
        reported = getattr(response, "usage", None)
        if reported is not None and reported.prompt_tokens is not None:
            usage = Usage(int(reported.prompt_tokens), int(reported.completion_tokens or 0))
        else:
            prompt = "".join(str(m.get("content", "")) for m in params["messages"])
            usage = Usage(_estimate_tokens(prompt), _estimate_tokens(content))
        self._count(
            namespace,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )
        if not choices:
            self._count(namespace, failures=1)
            raise LLMBadReply("the server returned no choices")
        model = str(getattr(response, "model", None) or self.config.model)
        return LLMReply(content=content, data=None, usage=usage, model=model)


def _status_message(exc: Any) -> str:
    """``"429: Rate limit reached"`` from an SDK status error."""
    return f"{exc.status_code}: {getattr(exc, 'message', None) or exc}"


def _mentions_format(exc: Any) -> bool:
    """Whether a 400/422 is about the response format, not about our schema or messages.

    Servers word this differently ("response_format ... not supported", "Unknown
    json_schema", "param": "response_format"); an invalid schema of ours mentions the
    format too but must surface as an error, not as a silent downgrade.
    """
    text = f"{getattr(exc, 'message', '')} {getattr(exc, 'body', '')}".lower()
    if "invalid schema" in text:
        return False
    return "response_format" in text or "json_schema" in text or "json_object" in text
