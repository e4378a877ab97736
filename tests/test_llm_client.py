"""Tests for enfold.llm: scripted replies through an in-process ``httpx.MockTransport``, and
deadlines, trickles, hangs and connection limits against a real local HTTP server (both from
enfold.testing.fake_llm, answering the same scripts)."""

from __future__ import annotations

import email.utils
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from enfold.errors import (
    ConfigError,
    LLMBadReply,
    LLMBudgetExceeded,
    LLMError,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
)
from enfold.llm import BadJSONReply, LLMClient, LLMConfig
from enfold.settings import Settings
from enfold.testing.fake_llm import Delay, Hang, Reply, ScriptedLLMServer, Status, Trickle

SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "Reply in JSON."},
    {"role": "user", "content": "Is this fine?"},
]

MakeClient = Callable[..., LLMClient]


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as srv:
        yield srv


@pytest.fixture
def sleeps() -> list[float]:
    return []


def _maker(base_url: str, sleeps: list[float], transport: Any = None
           ) -> tuple[MakeClient, list[LLMClient]]:
    clients: list[LLMClient] = []

    def make(settings: Settings | None = None, sleep: Callable[[float], None] | None = None,
             **overrides: Any) -> LLMClient:
        config = LLMConfig(
            **{"base_url": base_url, "api_key": "k", "model": "m", "timeout": 5, **overrides}
        )
        client = LLMClient(config, settings=settings, sleep=sleep or sleeps.append,
                           rng=random.Random(0), transport=transport)
        clients.append(client)
        return client

    return make, clients


@pytest.fixture
def make_client(server: ScriptedLLMServer, sleeps: list[float]) -> Iterator[MakeClient]:
    """Clients of the real server, over sockets."""
    make, clients = _maker(server.base_url, sleeps)
    yield make
    for client in clients:
        client.close()


@pytest.fixture
def scripted() -> ScriptedLLMServer:
    """A script answered through :meth:`ScriptedLLMServer.transport` (never started)."""
    return ScriptedLLMServer()


@pytest.fixture
def make_mock(scripted: ScriptedLLMServer, sleeps: list[float]) -> Iterator[MakeClient]:
    """Clients whose requests ``scripted`` answers in-process (httpx.MockTransport)."""
    make, clients = _maker("http://scripted.test/v1", sleeps, scripted.transport())
    yield make
    for client in clients:
        client.close()


def ask(client: LLMClient, namespace: str = "ns") -> Any:
    return client.chat_json(MESSAGES, schema=SCHEMA, schema_name="verdict", namespace=namespace)


# -- replies --------------------------------------------------------------------------------


def test_valid_json_is_parsed_and_usage_counted(
    scripted: ScriptedLLMServer, make_mock: MakeClient
) -> None:
    scripted.enqueue(Reply('{"ok": true}'))
    reply = ask(make_mock())
    assert reply.data == {"ok": True}
    assert reply.content == '{"ok": true}'
    assert reply.model == "m"
    # The fake counts whitespace words: 3 + 3 prompt, 2 completion.
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (6, 2)
    sent = scripted.requests[0]
    assert sent["model"] == "m" and sent["temperature"] == 0.0
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True},
    }


def test_usage_is_per_namespace(scripted: ScriptedLLMServer, make_mock: MakeClient) -> None:
    client = make_mock()
    scripted.enqueue(Reply('{"ok": true}'), Reply('{"ok": false}'), Reply("{}"))
    ask(client, "a")
    ask(client, "a")
    ask(client, "b")
    a = client.usage("a")
    assert a == {
        "calls": 2,
        "prompt_tokens": 12,
        "completion_tokens": 4,
        "total_tokens": 16,
        "failures": 0,
        "retries": 0,
        "budget_rejections": 0,
        "breaker_rejections": 0,
        "breaker_trips": 0,
    }
    assert client.usage("b")["calls"] == 1
    assert client.usage()["calls"] == 3
    assert client.usage("never")["calls"] == 0


@pytest.mark.parametrize("content", ['{"ok": tru', "Sure! Here is the JSON: {}", "[1, 2]", "",
                                     '{"a": ' * 100_000 + "1" + "}" * 100_000])
def test_malformed_json_raises_bad_reply_with_raw_content(
    scripted: ScriptedLLMServer, make_mock: MakeClient, content: str
) -> None:
    scripted.enqueue(Reply(content))
    client = make_mock()
    with pytest.raises(LLMBadReply) as info:
        ask(client)
    assert isinstance(info.value, BadJSONReply)
    assert info.value.content == content
    usage = client.usage("ns")
    assert usage["failures"] == 1 and usage["retries"] == 0
    assert usage["completion_tokens"] == len(content.split())  # tokens were spent anyway


def test_chat_text_sends_no_response_format(
    scripted: ScriptedLLMServer, make_mock: MakeClient
) -> None:
    scripted.enqueue(Reply("Paris, in 2019."))
    reply = make_mock().chat_text(MESSAGES, namespace="ns", max_tokens=50)
    assert reply.content == "Paris, in 2019." and reply.data is None
    assert "response_format" not in scripted.requests[0]
    assert scripted.requests[0]["max_tokens"] == 50


def test_missing_usage_is_estimated(scripted: ScriptedLLMServer, make_mock: MakeClient) -> None:
    scripted.enqueue(Reply('{"ok": true, "pad": "xxxxxxxxxxxxxxxx"}', usage=False))
    reply = ask(make_mock())
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


# -- retries and errors ---------------------------------------------------------------------


def test_429_then_success_honours_retry_after(
    server: ScriptedLLMServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.enqueue(Status(429, headers={"Retry-After": "2"}), Reply('{"ok": true}'))
    client = make_client()
    assert ask(client).data == {"ok": True}
    assert sleeps == [2.0]
    usage = client.usage("ns")
    assert (usage["calls"], usage["retries"], usage["failures"]) == (1, 1, 0)
    assert len(server.requests) == 2


def test_retry_after_is_capped(
    scripted: ScriptedLLMServer, make_mock: MakeClient, sleeps: list[float]
) -> None:
    scripted.enqueue(Status(429, headers={"Retry-After": "3600"}), Reply('{"ok": true}'))
    ask(make_mock(timeout=60))  # the capped wait fits in the deadline
    assert sleeps == [30.0]


def test_retry_after_ms_wins_and_an_http_date_is_understood(
    scripted: ScriptedLLMServer, make_mock: MakeClient, sleeps: list[float]
) -> None:
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    scripted.enqueue(Status(429, headers={"retry-after-ms": "250", "Retry-After": "9"}),
                     Status(503, headers={"Retry-After": when}), Reply('{"ok": true}'))
    assert ask(make_mock(timeout=60)).data == {"ok": True}
    assert sleeps[0] == 0.25 and 18 <= sleeps[1] <= 20


def test_the_transport_refuses_what_needs_sockets(
    scripted: ScriptedLLMServer, make_mock: MakeClient
) -> None:
    scripted.enqueue(Delay(0.1, Reply('{"ok": true}')))
    with pytest.raises(TypeError, match="real sockets"):
        ask(make_mock())


def test_429_forever_raises_rate_limited(
    scripted: ScriptedLLMServer, make_mock: MakeClient
) -> None:
    scripted.default = Status(429, headers={"Retry-After": "0"})
    client = make_mock(max_retries=2)
    with pytest.raises(LLMRateLimited):
        ask(client)
    assert len(scripted.requests) == 3
    assert client.usage("ns")["retries"] == 2


def test_500_forever_raises_llm_error_with_backoff(
    scripted: ScriptedLLMServer, make_mock: MakeClient, sleeps: list[float]
) -> None:
    client = make_mock(max_retries=3)
    with pytest.raises(LLMError) as info:
        ask(client)
    assert type(info.value) is LLMError and "500" in str(info.value)
    assert len(scripted.requests) == 4
    # Exponential with jitter in [0.5, 1] of 0.5 s, 1 s, 2 s.
    assert len(sleeps) == 3
    for delay, ceiling in zip(sleeps, [0.5, 1.0, 2.0], strict=True):
        assert ceiling / 2 <= delay <= ceiling
    usage = client.usage("ns")
    assert (usage["calls"], usage["retries"], usage["failures"]) == (1, 3, 1)


def test_5xx_then_success(scripted: ScriptedLLMServer, make_mock: MakeClient) -> None:
    scripted.enqueue(Status(502), Status(503), Reply('{"ok": true}'))
    client = make_mock()
    assert ask(client).data == {"ok": True}
    assert client.usage("ns")["retries"] == 2


def test_client_errors_are_not_retried(scripted: ScriptedLLMServer, make_mock: MakeClient) -> None:
    scripted.enqueue(Status(401), Reply('{"ok": true}'))
    client = make_mock()
    with pytest.raises(LLMError, match="401"):
        ask(client)
    assert len(scripted.requests) == 1


def test_timeout_raises_without_retrying(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    server.enqueue(Delay(5, Reply('{"ok": true}')))
    client = make_client(timeout=0.3)
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        ask(client)
    assert time.monotonic() - started < 2
    assert len(server.requests) == 1
    assert client.usage("ns")["failures"] == 1


def test_unreachable_server_is_retried_then_fails(sleeps: list[float]) -> None:
    with ScriptedLLMServer() as srv:
        url = srv.base_url
    client = LLMClient(
        LLMConfig(base_url=url, api_key="k", model="m", max_retries=2), sleep=sleeps.append
    )
    with pytest.raises(LLMError, match="cannot reach"):
        ask(client)
    assert len(sleeps) == 2


# -- the deadline of one call ---------------------------------------------------------------

# A reply long enough that trickling it at 0.5 s a byte would take minutes.
LONG = Reply('{"ok": true, "pad": "' + "x" * 200 + '"}')


def _timed(client: LLMClient, error: type[Exception]) -> float:
    started = time.monotonic()
    with pytest.raises(error):
        ask(client)
    return time.monotonic() - started


def test_a_trickled_reply_is_cut_at_the_deadline(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """Every read gets a byte within 0.5 s, so a per-read timeout of 1.5 s never fires; the
    call's deadline does."""
    server.enqueue(Trickle(0.5, LONG))
    client = make_client(timeout=1.5)
    assert _timed(client, LLMTimeout) < 1.5 + 1.0
    assert len(server.requests) == 1
    assert client.usage("ns")["failures"] == 1


def test_trickled_headers_are_cut_at_the_deadline(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """The status line and headers trickle too: the SDK never gets a response object."""
    server.enqueue(Trickle(0.5, LONG, headers=True))
    assert _timed(make_client(timeout=1.5), LLMTimeout) < 1.5 + 1.0


def test_a_hanging_server_is_cut_at_the_deadline(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    server.enqueue(Hang())
    assert _timed(make_client(timeout=0.5), LLMTimeout) < 0.5 + 1.0


def test_retries_share_the_call_deadline(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """Six slow 500s would take 2.4 s; the call ends at its 1 s deadline, with no retry
    started that could not finish in time (on a loaded machine the first attempt alone may
    use the deadline: one request is then right too). A retry counts when it is started; one
    cut at the deadline before the server read it counts without being seen there."""
    server.default = Delay(0.4, Status(500))
    client = make_client(timeout=1, max_retries=5, sleep=time.sleep)
    elapsed = _timed(client, LLMError)
    assert elapsed < 1.0 + 0.7
    seen = len(server.requests)
    assert 1 <= seen <= 3
    usage = client.usage("ns")
    assert usage["failures"] == 1 and usage["calls"] == 1
    assert seen - 1 <= usage["retries"] <= seen


def test_a_retry_after_beyond_the_deadline_fails_at_once(
    server: ScriptedLLMServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.enqueue(Status(429, headers={"Retry-After": "10"}), Reply('{"ok": true}'))
    client = make_client(timeout=2)
    with pytest.raises(LLMRateLimited, match="deadline"):
        ask(client)
    assert sleeps == [] and len(server.requests) == 1


def test_waiting_for_a_connection_slot_counts_against_the_deadline(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """With one slot held by a hanging call, a second call's timeout covers its wait."""
    server.default = Hang()
    client = make_client(timeout=1.0, concurrency=1)
    first = threading.Thread(target=lambda: _timed(client, LLMTimeout))
    first.start()
    time.sleep(0.2)
    assert _timed(client, LLMTimeout) < 1.0 + 0.5
    first.join(5)
    assert not first.is_alive()


# -- the circuit breaker --------------------------------------------------------------------


def _breaker(failures: int, cooldown_s: float) -> Settings:
    return Settings().with_(llm_breaker_failures=failures, llm_breaker_cooldown_s=cooldown_s)


def test_the_breaker_opens_after_consecutive_failures_and_fails_fast(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    server.default = Hang()
    client = make_client(timeout=0.3, settings=_breaker(3, 60))
    for _ in range(3):
        assert client.breaker_state == "closed"
        _timed(client, LLMTimeout)
    assert client.breaker_state == "open"
    for _ in range(5):
        assert _timed(client, LLMUnavailable) < 0.05
    assert len(server.requests) == 3  # no request while open
    usage = client.usage("ns")
    assert (usage["calls"], usage["failures"]) == (3, 3)
    assert (usage["breaker_trips"], usage["breaker_rejections"]) == (1, 5)
    assert client.usage("other")["breaker_rejections"] == 0
    with pytest.raises(LLMUnavailable):  # the breaker guards the endpoint, for everyone
        ask(client, "other")


def test_after_the_cooldown_one_probe_closes_the_breaker(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    client = make_client(max_retries=0, settings=_breaker(2, 0.3))
    _timed(client, LLMError)
    _timed(client, LLMError)  # two 500s: open
    _timed(client, LLMUnavailable)
    time.sleep(0.35)
    assert client.breaker_state == "half_open"
    server.enqueue(Reply('{"ok": true}'), Reply('{"ok": false}'))
    assert ask(client).data == {"ok": True}  # the probe
    assert client.breaker_state == "closed"
    assert ask(client).data == {"ok": False}
    assert len(server.requests) == 4


def test_a_failed_probe_reopens_the_breaker(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    client = make_client(max_retries=0, settings=_breaker(2, 0.3))
    _timed(client, LLMError)
    _timed(client, LLMError)
    time.sleep(0.35)
    _timed(client, LLMError)  # the probe fails: open again for a whole cool-down
    assert client.breaker_state == "open"
    _timed(client, LLMUnavailable)
    assert len(server.requests) == 3
    assert client.usage("ns")["breaker_trips"] == 2


def test_only_one_probe_at_a_time(server: ScriptedLLMServer, make_client: MakeClient) -> None:
    client = make_client(max_retries=0, settings=_breaker(1, 0.2))
    _timed(client, LLMError)
    time.sleep(0.25)
    server.enqueue(Delay(0.5, Reply('{"ok": true}')))
    probe = threading.Thread(target=lambda: ask(client))
    probe.start()
    time.sleep(0.2)
    with pytest.raises(LLMUnavailable, match="probe"):
        ask(client)
    probe.join(5)
    assert client.breaker_state == "closed"
    assert len(server.requests) == 2


def test_any_answer_counts_as_healthy(server: ScriptedLLMServer, make_client: MakeClient) -> None:
    """A wrong reply (bad JSON, a 4xx about the request) says the endpoint works: it resets
    the count of consecutive failures."""
    client = make_client(max_retries=0, settings=_breaker(2, 60))
    server.enqueue(Status(500), Reply("not json"), Status(500), Status(401), Status(500),
                   Status(500))
    for error in (LLMError, BadJSONReply, LLMError, LLMError, LLMError):
        _timed(client, error)
        assert client.breaker_state == "closed"
    _timed(client, LLMError)
    assert client.breaker_state == "open"
    assert len(server.requests) == 6


def test_a_zero_threshold_disables_the_breaker(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    client = make_client(max_retries=0, settings=_breaker(0, 60))
    for _ in range(8):
        _timed(client, LLMError)
    assert client.breaker_state == "closed" and len(server.requests) == 8


def test_breaker_settings_are_checked() -> None:
    config = LLMConfig("http://127.0.0.1:9/v1", None, "m")
    for failures, cooldown in ((-1, 1.0), (1, -1.0)):
        with pytest.raises(ConfigError, match="llm_breaker"):
            LLMClient(config, settings=_breaker(failures, cooldown))


# -- structured output fallback -------------------------------------------------------------


def test_json_schema_unsupported_falls_back_to_json_object(make_client: MakeClient) -> None:
    with ScriptedLLMServer(supports_json_schema=False) as server:
        server.enqueue(Reply('{"ok": true}'), Reply('{"ok": false}'))
        client = make_client(base_url=server.base_url)
        assert ask(client).data == {"ok": True}
        assert client.response_format_mode == "json_object"
        assert ask(client).data == {"ok": False}
        kinds = [r["response_format"]["type"] for r in server.requests]
        # Rejected once, then the client remembers: no second json_schema attempt.
        assert kinds == ["json_schema", "json_object", "json_object"]
        usage = client.usage("ns")
        assert (usage["calls"], usage["failures"]) == (2, 0)


def test_json_object_unsupported_falls_back_to_plain_text(make_client: MakeClient) -> None:
    def picky(body: dict[str, Any]) -> Reply | Status:
        if "response_format" in body:
            return Status(400, {"error": {"message": "unknown field response_format"}})
        return Reply('{"ok": true}')

    with ScriptedLLMServer(responder=picky) as server:
        client = make_client(base_url=server.base_url)
        assert ask(client).data == {"ok": True}
        assert client.response_format_mode == "text"
        assert [r.get("response_format", {}).get("type") for r in server.requests] == [
            "json_schema",
            "json_object",
            None,
        ]


def test_an_invalid_schema_is_an_error_not_a_downgrade(
    server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    message = "Invalid schema for response_format 'verdict': 'required' is missing"
    server.enqueue(Status(400, {"error": {"message": message, "param": "response_format"}}))
    client = make_client()
    with pytest.raises(LLMError, match="Invalid schema"):
        ask(client)
    assert client.response_format_mode == "json_schema"


# -- budget and concurrency -----------------------------------------------------------------


def test_token_budget_per_namespace(server: ScriptedLLMServer, make_client: MakeClient) -> None:
    client = make_client(token_budget=10)
    server.enqueue(*[Reply('{"ok": true}', prompt_tokens=8, completion_tokens=4)] * 2)
    ask(client, "a")  # spends 12: allowed, the budget is checked before a call
    with pytest.raises(LLMBudgetExceeded):
        ask(client, "a")
    assert len(server.requests) == 1
    assert client.usage("a")["budget_rejections"] == 1
    assert ask(client, "b").data == {"ok": True}  # other namespaces keep their own budget


def test_concurrency_limit_is_respected(server: ScriptedLLMServer, make_client: MakeClient) -> None:
    server.responder = lambda body: Delay(0.15, Reply('{"ok": true}'))
    client = make_client(concurrency=3)
    errors: list[LLMError] = []

    def worker() -> None:
        try:
            ask(client)
        except LLMError as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not errors
    assert server.max_in_flight == 3
    assert client.usage("ns")["calls"] == 12


# -- configuration --------------------------------------------------------------------------


def test_config_from_env() -> None:
    assert LLMConfig.from_env({}) is None
    assert LLMConfig.from_env({"OPENAI_API_KEY": "sk-x"}) is None  # no silent paid folding
    config = LLMConfig.from_env(
        {
            "ENFOLD_LLM_MODEL": "gpt-4o-mini",
            "OPENAI_API_KEY": "sk-x",
            "OPENAI_BASE_URL": "https://proxy/v1",
        }
    )
    assert config == LLMConfig("https://proxy/v1", "sk-x", "gpt-4o-mini")
    config = LLMConfig.from_env(
        {
            "ENFOLD_LLM_MODEL": "llama3",
            "ENFOLD_LLM_BASE_URL": "http://localhost:11434/v1",
            "ENFOLD_LLM_API_KEY": "ollama",
            "OPENAI_API_KEY": "sk-x",
        }
    )
    assert config is not None and config.api_key == "ollama"
    assert "ollama" not in repr(config)
    with pytest.raises(ConfigError, match="ENFOLD_LLM_MODEL"):
        LLMConfig.from_env({"ENFOLD_LLM_BASE_URL": "http://localhost:8000/v1"})


def test_config_from_toml_and_yaml(tmp_path: Path) -> None:
    toml = tmp_path / "enfold.toml"
    toml.write_text('[llm]\nbase_url = "http://h/v1"\nmodel = "m"\ntoken_budget = 5000\n')
    assert LLMConfig.from_file(toml) == LLMConfig("http://h/v1", None, "m", token_budget=5000)
    yaml = tmp_path / "enfold.yaml"
    yaml.write_text("llm:\n  model: m\n  api_key: k\n  concurrency: 2\n  timeout: 1.5\n")
    assert LLMConfig.from_file(yaml) == LLMConfig(None, "k", "m", concurrency=2, timeout=1.5)
    for text, match in [
        ('[llm]\nmodel = "m"\ncolour = 1\n', "unknown"),
        ('[llm]\nmodel = "m"\nconcurrency = "4"\n', "wrong type"),
        ('[llm]\nmodel = "m"\nconcurrency = 0\n', "concurrency"),
        ('[other]\nmodel = "m"\n', "no \\[llm\\]"),
        ("[llm\n", "cannot parse"),
    ]:
        toml.write_text(text)
        with pytest.raises(ConfigError, match=match):
            LLMConfig.from_file(toml)


def test_missing_sdk_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    client = LLMClient(LLMConfig("http://127.0.0.1:9/v1", None, "m"))
    with pytest.raises(ConfigError, match=r"enfold\[llm\]"):
        client.chat_text(MESSAGES, namespace="ns")


def test_openai_without_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        LLMClient(LLMConfig(None, None, "gpt-4o-mini"))
