"""The MCP server: enfold's memory as five tools an agent can call (``enfold mcp``).

Tools: ``remember`` (log an event and fold it), ``recall`` (a context pack for a query),
``list_intents`` (what the memory thinks the user should be reminded of, by status and due
time), ``feedback`` (accept / modify / defer / reject an intent) and ``forget`` (delete an
event and what derives from it, as :meth:`~enfold.memory.Memory.forget`). Each result
carries text written for the model to read (the pack's
:meth:`~enfold.recall.pack.ContextPack.render`, one line per intent) and the same data as
structured content for programs.

The server runs embedded on a :class:`~enfold.memory.Memory` (no HTTP server needed) over
stdio, or over streamable HTTP on loopback. It needs the official ``mcp`` SDK (extra ``mcp``);
the CLI imports this module only when ``enfold mcp`` runs. :func:`run_server` warms the
memory up first (the model loads before the first call, not during it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from enfold.errors import ConfigError, EnfoldError, InputError
from enfold.model import format_time

if TYPE_CHECKING:
    from enfold.memory import Memory
    from enfold.model import Node
    from enfold.notify import Notification

__all__ = ["INSTRUCTIONS", "MemoryTools", "build_server", "run_server"]

SERVER_NAME = "enfold"
FeedbackKind = Literal["accept", "modify", "defer", "reject"]
IntentStatus = Literal["pending", "open", "all", "suppressed", "deferred", "resolved",
                       "rejected", "expired"]
FEEDBACK_KINDS: tuple[str, ...] = get_args(FeedbackKind)
INTENT_STATUSES: tuple[str, ...] = get_args(IntentStatus)

INSTRUCTIONS = (
    "enfold is the user's long-term memory. Call `remember` with anything worth keeping that "
    "the user says or that happens (one message, note or calendar item per call, verbatim). "
    "Before answering a question that may depend on the past, call `recall` and ground the "
    "answer in the evidence it returns; opinions come back attributed to their holder, not as "
    "facts. Call `list_intents` to see deadlines, habits, follow-ups and goals worth raising, "
    "and `feedback` once the user reacts to one. Call `forget` only when the user asks that "
    "something be forgotten."
)

REMEMBER_DOC = (
    "Store one event in the user's long-term memory: a message, note, decision, plan or "
    "calendar item, in the user's own words. Call it whenever something is said or happens "
    "that could matter later (dates, commitments, preferences, people, opinions); one event "
    "per call. `ts` is when it happened (ISO 8601 such as 2026-10-01T13:05:00Z, or a date; "
    "default: now); `source` is who said it (a person's name) or the channel. Returns the "
    "event id and any intents (deadlines, follow-ups, habits, goals) the event gave rise to."
)
RECALL_DOC = (
    "Search the user's long-term memory before answering anything that may depend on past "
    "conversations, plans, people or preferences. `query` is a natural-language question or "
    "topic (it may name a time such as 'last week'); `k` caps the evidence items (default 10). "
    "Returns a prompt-ready context: facts, opinions attributed to who holds them (not facts), "
    "verbatim evidence events with their time and speaker (oldest first), themes and open "
    "intents. Answer from this context; say so if it holds nothing relevant."
)
LIST_INTENTS_DOC = (
    "List the intents the memory inferred: deadlines, habits, follow-ups and goals, soonest "
    "due first. `status` is 'pending' (default: worth raising with the user now), 'open', "
    "'all', or one of suppressed, deferred, resolved, rejected, expired. `due_before` (ISO "
    "8601 or a date, e.g. 2026-11-01) keeps only intents due before that time. Each line "
    "gives the intent id (for `feedback`), category, label, due time, status and score."
)
FORGET_DOC = (
    "Forget one event for good when the user asks for it: the event (by the id `remember` or "
    "`recall` gave) and everything derived only from it are deleted, and what else it "
    "shaped is rebuilt without its words. Cannot be undone. Returns what was removed and "
    "what was updated."
)
FEEDBACK_DOC = (
    "Record the user's reaction to an intent from `list_intents` or `remember`: 'accept' "
    "(right and useful), 'reject' (wrong or unwanted), 'defer' (later), or 'modify' with a "
    "corrected `label`. This calibrates how readily that category of intent is raised. "
    "Returns the intent with its new status."
)


def _iso(ts: Any) -> str | None:
    if ts is None:
        return None
    return format_time(ts, "%Y-%m-%d %H:%M UTC")


def intent_summary(node: Node) -> dict[str, Any]:
    """The fields of an intent an agent needs, as JSON values."""
    a = node.attrs
    return {"id": node.id, "label": node.text, "category": a.get("category"),
            "status": a.get("status", "pending"), "score": float(a.get("score") or 0.0),
            "due": a.get("due"), "due_iso": _iso(a.get("due")),
            "confirmed": bool(a.get("confirmed"))}


def intent_line(summary: dict[str, Any]) -> str:
    """One readable line per intent (the id last, to copy into ``feedback``)."""
    due = f", due {summary['due_iso']}" if summary["due_iso"] else ""
    return (f"- [{summary['category'] or '?'}] {summary['label']}{due} "
            f"({summary['status']}, score {summary['score']:.2f}) id={summary['id']}")


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data)


@contextmanager
def _tool_errors() -> Iterator[None]:
    """enfold's own errors reach the model as a readable tool error, not a generic crash."""
    try:
        yield
    except EnfoldError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


class MemoryTools:
    """The five tools as plain methods over one memory and namespace (testable without MCP)."""

    def __init__(self, memory: Memory, namespace: str | None = None) -> None:
        self.memory = memory
        self.namespace = memory.namespace if namespace is None else namespace
        self._notes_lock = threading.Lock()

    def remember(self, text: str, ts: str | None = None,
                 source: str | None = None) -> tuple[str, dict[str, Any]]:
        heard: list[Notification] = []

        def collect(note: Notification) -> None:
            with self._notes_lock:
                heard.append(note)

        unsubscribe = self.memory.subscribe(collect)
        try:
            event_id = self.memory.add(text, ts=ts, source=source, namespace=self.namespace)
        finally:
            unsubscribe()
        notes = [n.to_dict() for n in heard
                 if n.event_id == event_id and n.namespace == self.namespace]
        lines = [f"Remembered event {event_id}."]
        if notes:
            lines.append("It raised:")
            lines += [f"- {n['type']}: {n['label']}"
                      + (f" [{n['category']}]" if n["category"] else "")
                      + (f", due {_iso(n['due'])}" if n["due"] is not None else "")
                      + f" id={n['node_id']}" for n in notes]
        return "\n".join(lines), {"id": event_id, "namespace": self.namespace,
                                  "notifications": notes}

    def recall(self, query: str, k: int = 10) -> tuple[str, dict[str, Any]]:
        pack = self.memory.recall(query, k=k, namespace=self.namespace)
        text = pack.render() or f"Memory holds nothing relevant to {query!r}."
        return text, pack.to_dict()

    def list_intents(self, status: str = "pending",
                     due_before: str | None = None) -> tuple[str, dict[str, Any]]:
        from enfold.events import to_epoch

        nodes = self.memory.intents(status=status, namespace=self.namespace)
        if due_before is not None:
            try:
                limit = to_epoch(due_before)
            except InputError as exc:
                raise InputError(f"due_before: {exc}") from exc
            nodes = [n for n in nodes
                     if n.attrs.get("due") is not None and float(n.attrs["due"]) < limit]
        found = [intent_summary(n) for n in nodes]
        which = status + (f" due before {_iso(limit)}" if due_before is not None else "")
        text = "\n".join(intent_line(s) for s in found) or f"No {which} intents."
        return text, {"status": status, "due_before": due_before, "intents": found}

    def forget(self, event_id: str) -> tuple[str, dict[str, Any]]:
        report = self.memory.forget(event_id, namespace=self.namespace)
        text = (f"Forgot event {event_id}: removed {len(report['removed'])} nodes, updated "
                f"{len(report['updated'])}.")
        return text, report

    def feedback(self, intent_id: str, kind: str,
                 label: str | None = None) -> tuple[str, dict[str, Any]]:
        node = self.memory.feedback(intent_id, kind, label=label, namespace=self.namespace)
        summary = intent_summary(node)
        return f"Recorded {kind}.\n{intent_line(summary)}", {"intent": summary}


def build_server(memory: Memory, *, namespace: str | None = None) -> MCPServer:
    """An MCP server whose tools read and write ``memory`` in ``namespace``."""
    tools = MemoryTools(memory, namespace)
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS,
                                  log_level="WARNING")

    def call(fn: Callable[..., tuple[str, dict[str, Any]]], **kwargs: Any) -> CallToolResult:
        with _tool_errors():
            text, data = fn(**kwargs)
        return _result(text, data)

    def remember(text: Annotated[str, Field(description="The event, verbatim.")],
                 ts: Annotated[str | None, Field(description=(
                     "When it happened: ISO 8601 or a date; default now."))] = None,
                 source: Annotated[str | None, Field(description=(
                     "Who said it, or the channel."))] = None) -> CallToolResult:
        return call(tools.remember, text=text, ts=ts, source=source)

    def recall(query: Annotated[str, Field(description="A question or topic.")],
               k: Annotated[int, Field(description="Most evidence items to return.")] = 10,
               ) -> CallToolResult:
        return call(tools.recall, query=query, k=k)

    def list_intents(status: Annotated[IntentStatus, Field(description=(
            "Which intents: pending (worth raising now), open, all, or one status."))]
            = "pending",
            due_before: Annotated[str | None, Field(description=(
                "Only intents due before this time: ISO 8601 or a date."))] = None,
            ) -> CallToolResult:
        return call(tools.list_intents, status=status, due_before=due_before)

    def forget(event_id: Annotated[str, Field(description="The event's id (ev_…).")]
               ) -> CallToolResult:
        return call(tools.forget, event_id=event_id)

    def feedback(intent_id: Annotated[str, Field(description="The intent's id.")],
                 kind: Annotated[FeedbackKind, Field(description="The user's reaction.")],
                 label: Annotated[str | None, Field(description=(
                     "The corrected label, with kind 'modify'."))] = None) -> CallToolResult:
        return call(tools.feedback, intent_id=intent_id, kind=kind, label=label)

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False)
    server.add_tool(remember, name="remember", title="Remember an event",
                    description=REMEMBER_DOC,
                    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                idempotent_hint=True))
    server.add_tool(recall, name="recall", title="Recall from memory", description=RECALL_DOC,
                    annotations=read_only)
    server.add_tool(list_intents, name="list_intents", title="List intents",
                    description=LIST_INTENTS_DOC, annotations=read_only)
    server.add_tool(feedback, name="feedback", title="Feedback on an intent",
                    description=FEEDBACK_DOC,
                    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    server.add_tool(forget, name="forget", title="Forget an event", description=FORGET_DOC,
                    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                idempotent_hint=False))
    return server


def run_server(memory: Memory, *, transport: str = "stdio", host: str = "127.0.0.1",
               port: int = 8765, path: str = "/mcp", namespace: str | None = None) -> None:
    """Serve ``memory`` over ``transport`` (``stdio`` or ``http``) until stopped."""
    if transport not in ("stdio", "http"):
        raise ConfigError(f"unknown MCP transport {transport!r} (use stdio or http)")
    memory.warm_up()
    server = build_server(memory, namespace=namespace)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port, streamable_http_path=path)
