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
- **Retries.** 429 (honouring ``Retry-After`` up to a cap), 408, 5xx and connection errors are
  retried with exponential backoff and jitter, up to ``max_retries``. Timeouts are not: a
  model too slow once is usually slow again, and the write path would rather fall back to the
  local planner than stall for several timeouts. The SDK's own retries are switched off.
- **Concurrency.** At most ``concurrency`` requests are on the wire at once (per client).
- **Accounting.** Calls, tokens, failures and retries per namespace, and an optional token
  budget per namespace checked before each call.

Errors are enfold's: :class:`~enfold.errors.LLMTimeout`, :class:`~enfold.errors.LLMRateLimited`,
:class:`~enfold.errors.LLMBadReply`, :class:`~enfold.errors.LLMBudgetExceeded`, else
:class:`~enfold.errors.LLMError`. The ``openai`` package is imported on first use only.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Self

from enfold.errors import (
    ConfigError,
    LLMBadReply,
    LLMBudgetExceeded,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
)

__all__ = ["BadJSONReply", "LLMClient", "LLMConfig", "LLMReply", "Usage"]

log = logging.getLogger(__name__)

_DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
# Structured-output modes, strongest first; a client steps down when a server rejects one.
_FORMATS = ("json_schema", "json_object", "text")
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_COUNTERS = ("calls", "prompt_tokens", "completion_tokens", "failures", "retries")


@dataclass(frozen=True)
class LLMConfig:
    """How to reach the chat endpoint and how hard to lean on it.

    ``base_url=None`` means OpenAI itself. ``token_budget`` caps prompt + completion tokens per
    namespace for the life of one client (None: no cap); it is checked before each call, so
    the call that crosses it completes and concurrent calls may overshoot a little. Library
    code receives this object; only the CLI and the server build it from the environment or
    a file.
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


class LLMClient:
    """A thread-safe chat client with enfold's retry, format and budget policy.

    ``sleep``, ``backoff_base``, ``backoff_cap`` and ``retry_after_cap`` exist so tests (and
    impatient batch jobs) can shrink or record the waits; ``rng`` makes the jitter
    reproducible. Backoff before retry ``n`` (1-based) is ``min(cap, base·2^(n-1))`` scaled by
    a random factor in [0.5, 1]; a ``Retry-After`` header replaces it, capped.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        backoff_base: float = 0.5,
        backoff_cap: float = 20.0,
        retry_after_cap: float = 30.0,
        rng: random.Random | None = None,
    ) -> None:
        if config.base_url is None and not config.api_key:
            raise ConfigError("OpenAI's own endpoint needs an API key (ENFOLD_LLM_API_KEY)")
        self.config = config
        self._sleep = sleep
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._retry_after_cap = retry_after_cap
        self._rng = rng or random.Random()
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._sdk_client: Any = None
        self._sdk: Any = None
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
        not a JSON object; the caller decides whether to ask again or fall back.
        """
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
                reply = self._call(messages, namespace, response_format, max_tokens)
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
        except (json.JSONDecodeError, TypeError) as exc:
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
        return self._call(messages, namespace, None, max_tokens)

    def usage(self, namespace: str | None = None) -> dict[str, int]:
        """Counters for ``namespace`` (or summed over all namespaces when None).

        Keys: ``calls`` (requests attempted, retries not included), ``prompt_tokens``,
        ``completion_tokens``, ``total_tokens``, ``failures`` (calls that raised),
        ``retries`` (extra attempts), ``budget_rejections``.
        """
        with self._lock:
            rows = (
                list(self._usage.values())
                if namespace is None
                else [self._usage.get(namespace, {})]
            )
            out = {k: sum(r.get(k, 0) for r in rows) for k in (*_COUNTERS, "budget_rejections")}
        out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
        return out

    def restore_usage(self, namespace: str, counts: Mapping[str, Any]) -> None:
        """Add counters recorded by an earlier process (the memory keeps them in the
        store), so that usage and the token budget span restarts."""
        known = (*_COUNTERS, "budget_rejections")
        self._count(namespace, **{k: int(v) for k, v in counts.items()
                                  if k in known and isinstance(v, int) and v > 0})

    def close(self) -> None:
        """Close the HTTP connection pool (the client can be used again afterwards)."""
        with self._lock:
            client, self._sdk_client = self._sdk_client, None
        if client is not None:
            client.close()

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

    def _client(self) -> tuple[Any, Any]:
        """The SDK module and client, created on first use (so importing enfold stays cheap)."""
        with self._lock:
            if self._sdk_client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise ConfigError(
                        "LLM mode needs the openai package; install the extra: "
                        "pip install 'enfold[llm]'"
                    ) from exc
                self._sdk = openai
                self._sdk_client = openai.OpenAI(
                    base_url=self.config.base_url or _DEFAULT_OPENAI_URL,
                    api_key=self.config.api_key or "not-needed",
                    timeout=self.config.timeout,
                    max_retries=0,  # the retry policy is ours
                )
            return self._sdk, self._sdk_client

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self._retry_after_cap)
        delay = min(self._backoff_cap, self._backoff_base * 2.0 ** (retry - 1))
        with self._lock:
            factor = 0.5 + 0.5 * float(self._rng.random())
        return delay * factor

    def _call(
        self,
        messages: Sequence[Mapping[str, Any]],
        namespace: str,
        response_format: dict[str, Any] | None,
        max_tokens: int | None,
    ) -> LLMReply:
        """One logical call: budget check, attempts with backoff, accounting."""
        self._check_budget(namespace)
        sdk, client = self._client()
        params: dict[str, Any] = {
            "model": self.config.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.config.temperature,
        }
        if response_format is not None:
            params["response_format"] = response_format
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        self._count(namespace, calls=1)
        retry = 0
        while True:
            try:
                with self._slots:
                    response = client.chat.completions.create(**params)
                return self._reply(response, params, namespace)
            except sdk.APITimeoutError as exc:
                self._count(namespace, failures=1)
                raise LLMTimeout(
                    f"{self.config.base_url} did not answer within {self.config.timeout}s"
                ) from exc
            except sdk.APIStatusError as exc:
                code = exc.status_code
                if code in (400, 422) and response_format is not None and _mentions_format(exc):
                    self._count(namespace, calls=-1, retries=1)
                    raise _FormatRejected(_status_message(exc)) from exc
                if code not in _RETRYABLE_STATUS and code < 500:
                    self._count(namespace, failures=1)
                    raise LLMError(f"LLM request failed: {_status_message(exc)}") from exc
                if retry >= self.config.max_retries:
                    self._count(namespace, failures=1)
                    kind = LLMRateLimited if code == 429 else LLMError
                    raise kind(
                        f"LLM request failed after {retry + 1} attempts: {_status_message(exc)}"
                    ) from exc
                retry_after = _retry_after(exc.response.headers)
            except sdk.APIConnectionError as exc:
                if retry >= self.config.max_retries:
                    self._count(namespace, failures=1)
                    raise LLMError(
                        f"cannot reach {self.config.base_url} after {retry + 1} attempts: {exc}"
                    ) from exc
                retry_after = None
            except sdk.OpenAIError as exc:  # e.g. a reply the SDK could not parse
                self._count(namespace, failures=1)
                raise LLMError(f"LLM request failed: {exc}") from exc
            retry += 1
            self._count(namespace, retries=1)
            self._sleep(self._backoff(retry, retry_after))

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
