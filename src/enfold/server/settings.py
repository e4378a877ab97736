"""The server's settings: one frozen dataclass whose defaults ``enfold serve``'s options
read (the library's own settings live in :class:`enfold.settings.Settings`).

Kept apart from :mod:`enfold.server.app` so the CLI can read the defaults without importing
FastAPI.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ServerSettings", "server_default", "settings_help"]


def _s(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class ServerSettings:
    """The server's knobs (the library's own live in :class:`enfold.settings.Settings`)."""

    auth: bool = _s(True, "require API keys (False: every request is admin; loopback only)")
    admin_key: str | None = _s(None, "the admin key (every namespace); None: none")
    max_body_bytes: int = _s(4 * 1024 * 1024, "largest request body (413 beyond)")
    max_batch: int = _s(1000, "events in one POST /events (413 beyond)")
    max_backlog: int = _s(10_000, "unfolded events of a namespace before 429")
    max_total_backlog: int = _s(50_000, "unfolded events of the server before 503")
    fold_threads: int = _s(1, "background folding threads (one namespace each at a time)")
    fold_chunk: int = _s(32, "events folded between lease renewals and reader turns")
    lease_ttl_s: float = _s(30.0, "seconds a namespace lease outlives its holder's last "
                            "heartbeat (a crashed server's namespaces wait this long)")
    scan_interval_s: float = _s(5.0, "seconds between scans for unfolded events")
    consolidate_interval_s: float = _s(300.0, "seconds between scheduled consolidation "
                                       "passes of changed namespaces (0: off)")
    drain_timeout_s: float = _s(30.0, "seconds to finish folding on shutdown")
    sse_ping_s: float = _s(15.0, "seconds between SSE keep-alive comments")
    sse_replay: int = _s(1000, "notifications kept per namespace for SSE clients that "
                         "reconnect with Last-Event-ID (0: none)")
    max_import_bytes: int = _s(32 * 1024 * 1024, "largest JSON Lines body of POST "
                               "/events/import (413 beyond)")
    webhooks: tuple[tuple[str, str], ...] = _s((), "(namespace or '*', URL) webhook targets")
    webhook_secret: str | None = _s(None, "HMAC-SHA256 key that signs webhook bodies")
    webhook_attempts: int = _s(6, "delivery attempts of one webhook call")
    webhook_backoff_s: float = _s(0.5, "first retry delay (doubles each attempt)")


def settings_help() -> list[tuple[str, Any, str]]:
    """(name, default, help) of every server setting, for docs and ``--help``."""
    return [(f.name, f.default, f.metadata["help"]) for f in fields(ServerSettings)]


def server_default(name: str) -> Any:
    """The default of server setting ``name`` (what ``enfold serve`` shows and uses)."""
    return {f.name: f.default for f in fields(ServerSettings)}[name]
