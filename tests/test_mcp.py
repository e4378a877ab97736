"""The MCP server, driven by the MCP SDK's own client over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the 'mcp' extra is not installed")

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from enfold.errors import InputError, NotFound
from enfold.mcp_server import MemoryTools
from enfold.memory import Memory

GRANT = "Hi Maya, your NSF SBIR proposal is due November 13 at 5pm Eastern. Best, Dana"
RUN = "Easy 5 miles along the river after work; race day is seven weeks out."


def _enfold() -> list[str]:
    exe = shutil.which("enfold", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "enfold"]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _round_trip(session: ClientSession) -> dict[str, Any]:
    """tools/list, then remember two events and recall one of them; returns what was seen."""
    await session.initialize()
    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    remembered = await session.call_tool(
        "remember", {"text": GRANT, "source": "Dana", "ts": "2026-10-01T13:05:00Z"})
    await session.call_tool("remember", {"text": RUN, "source": "Maya",
                                         "ts": "2026-10-01T22:40:00Z"})
    recalled = await session.call_tool("recall", {"query": "When is the NSF proposal due?",
                                                  "k": 3})
    return {"tools": tools, "remembered": remembered, "recalled": recalled}


def test_stdio_tools_list_and_remember_recall_round_trip(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=_enfold()[0],
        args=[*_enfold()[1:], "--db", str(tmp_path / "m.db"), "--create", "--namespace", "maya",
              "--embedder", "hash", "mcp"],
        cwd=str(tmp_path),
        env=dict(os.environ),  # the SDK passes only a few variables on; keep PYTHONPATH
    )

    async def run() -> dict[str, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            seen = await _round_trip(s)
            intents = await s.call_tool("list_intents", {})
            intent_id = intents.structured_content["intents"][0]["id"]
            accepted = await s.call_tool("feedback", {"intent_id": intent_id, "kind": "reject"})
            missing = await s.call_tool("feedback", {"intent_id": "in_nope", "kind": "accept"})
            bad_kind = await s.call_tool("feedback", {"intent_id": intent_id, "kind": "maybe"})
            event_id = seen["remembered"].structured_content["id"]
            forgot = await s.call_tool("forget", {"event_id": event_id})
            after = await s.call_tool("recall", {"query": "When is the NSF proposal due?"})
            return {**seen, "intents": intents, "rejected": accepted, "missing": missing,
                    "bad_kind": bad_kind, "forgot": forgot, "after": after}

    seen = asyncio.run(run())

    tools = seen["tools"]
    assert set(tools) == {"remember", "recall", "list_intents", "feedback", "forget"}
    for tool in tools.values():  # descriptions say when to call and what comes back
        assert tool.description and len(tool.description) > 120
        assert "Returns" in tool.description or "Each line" in tool.description
    assert tools["remember"].input_schema["required"] == ["text"]
    assert set(tools["feedback"].input_schema["properties"]["kind"]["enum"]) == {
        "accept", "modify", "defer", "reject"}

    remembered = seen["remembered"]
    assert not remembered.is_error
    event_id = remembered.structured_content["id"]
    assert event_id in _text(remembered)
    raised = remembered.structured_content["notifications"]
    assert any(n["type"] == "intent_emerged" and n["category"] == "deadline" for n in raised)

    recalled = seen["recalled"]
    assert not recalled.is_error
    assert "Dana: " + GRANT in _text(recalled)  # render(): verbatim, with its speaker
    evidence = recalled.structured_content["evidence"]
    assert evidence[0]["id"] == event_id and evidence[0]["source"] == "Dana"

    intents = seen["intents"].structured_content["intents"]
    assert intents and intents[0]["category"] == "deadline" and intents[0]["due"] is not None
    assert intents[0]["id"] in _text(seen["intents"])
    assert seen["rejected"].structured_content["intent"]["status"] == "rejected"
    assert seen["missing"].is_error and "NotFound" in _text(seen["missing"])
    assert seen["bad_kind"].is_error
    assert not seen["forgot"].is_error and "Forgot event" in _text(seen["forgot"])
    assert seen["forgot"].structured_content["event"] == event_id
    assert GRANT not in _text(seen["after"])
    assert tools["forget"].annotations.destructive_hint

    # It was really stored (and the grant really forgotten, its intent with it).
    with Memory.open(tmp_path / "m.db", namespace="maya", embedder=None, planner=None) as mem:
        assert mem.stats()["events"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"enfold mcp exited: {proc.stderr.read().decode()[-2000:]}"
                                 if proc.stderr else "enfold mcp exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("enfold mcp did not listen in time")


def test_streamable_http_transport(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "ENFOLD_EMBEDDER": "hash"}
    proc = subprocess.Popen(
        [*_enfold(), "--db", str(tmp_path / "h.db"), "--create", "mcp", "--transport", "http",
         "--port", str(port)], env=env, cwd=tmp_path, stderr=subprocess.PIPE)
    try:
        _wait_port(port, proc)

        async def run() -> dict[str, Any]:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                    ClientSession(read, write) as s:
                return await _round_trip(s)

        seen = asyncio.run(run())
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert set(seen["tools"]) == {"remember", "recall", "list_intents", "feedback",
                                  "forget"}
    assert GRANT in _text(seen["recalled"])


def test_tools_keep_to_their_namespace(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "n.db", embedder="hash", planner="local") as mem:
        a, b = MemoryTools(mem, "a"), MemoryTools(mem, "b")
        a.remember(GRANT, source="Dana")
        text_a, data_a = a.recall("NSF proposal due")
        text_b, data_b = b.recall("NSF proposal due")
        assert GRANT in text_a and data_a["evidence"]
        assert not data_b["evidence"] and "nothing relevant" in text_b
        assert b.list_intents()[1]["intents"] == []


def test_list_intents_filters_by_status_and_due_time(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "i.db", embedder="hash", planner="local") as mem:
        tools = MemoryTools(mem, "maya")
        tools.remember(GRANT, source="Dana", ts="2026-10-01T13:05:00Z")
        tools.remember("I need to renew the passport by December 20", source="Maya",
                       ts="2026-10-02T09:00:00Z")
        _, everything = tools.list_intents("all")
        assert len([i for i in everything["intents"] if i["due"]]) == 2
        text, soon = tools.list_intents("pending", due_before="2026-12-01")
        assert [i["label"] for i in soon["intents"]] == [
            i["label"] for i in everything["intents"] if "NSF" in i["label"]]
        assert soon["due_before"] == "2026-12-01" and "passport" not in text
        text, none = tools.list_intents("pending", due_before="2026-10-01")
        assert none["intents"] == [] and "due before 2026-10-01" in text
        rejected = tools.list_intents("rejected")[1]["intents"]
        assert rejected == []
        with pytest.raises(InputError, match="due_before"):
            tools.list_intents(due_before="not a time at all")


def test_forget_tool_deletes_the_event_and_what_it_alone_grounded(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "f.db", embedder="hash", planner="local") as mem:
        tools = MemoryTools(mem, "maya")
        event_id = tools.remember(GRANT, source="Dana", ts="2026-10-01T13:05:00Z")[1]["id"]
        intent = tools.list_intents()[1]["intents"][0]["id"]
        text, report = tools.forget(event_id)
        assert report["event"] == event_id and intent in report["removed"]
        assert "Forgot event" in text
        assert mem.stats("maya")["events"] == 0
        assert not tools.recall("NSF proposal")[1]["evidence"]
        with pytest.raises(NotFound):
            tools.forget(event_id)


def test_run_server_warms_up_before_serving(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.server.mcpserver import MCPServer

    from enfold.embed import HashingEmbedder
    from enfold.mcp_server import run_server

    seen: list[str] = []

    class Counting(HashingEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            seen.extend(texts)
            return super().embed(texts)

    monkeypatch.setattr(MCPServer, "run", lambda self, *a, **k: seen.append("serving"))
    with Memory.open(tmp_path / "w.db", embedder=Counting(), planner="local") as mem:
        run_server(mem)
    assert seen == ["warm up", "serving"]
