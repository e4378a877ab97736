"""``enfold serve`` and ``enfold keys …`` (attached to the main CLI).

The environment is read here (``ENFOLD_ADMIN_KEY``, ``ENFOLD_WEBHOOK_SECRET``), never in the
server modules. SIGTERM or Ctrl-C drains: new requests get 503, the backlog is folded for up
to ``--drain-timeout`` seconds (what is left stays logged and resumes on the next start), and
the process exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from enfold.model import format_time
from enfold.server.settings import server_default as _d

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def _secret(path: Path | None, env: str) -> str | None:
    """A secret from a file (first line) or the environment; None when neither is set."""
    if path is not None:
        value = path.read_text(encoding="utf-8").strip()
        if not value:
            raise click.UsageError(f"{path} is empty")
        return value
    return os.environ.get(env) or None


def _webhook(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
             ) -> tuple[tuple[str, str], ...]:
    out = []
    for value in values:
        ns, sep, url = value.partition("=")
        if not sep or not ns or not url.startswith(("http://", "https://")):
            raise click.BadParameter(f"{value!r}: use NAMESPACE=URL (or *=URL), an http(s) URL")
        out.append((ns, url))
    return tuple(out)


def _refuse(message: str) -> NoReturn:
    """Stop ``enfold serve`` before it listens: one line on stderr, exit 1."""
    click.echo(f"enfold serve: {message.splitlines()[0] if message else 'cannot start'}",
               err=True)
    sys.exit(1)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535))
@click.option("--db", "db", default=None, help="Store path or URL [default: the global --db].")
@click.option("--admin-key-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="File holding the admin key [default: env ENFOLD_ADMIN_KEY].")
@click.option("--no-auth", is_flag=True, help="No API keys (only on a loopback --host).")
@click.option("--fold-threads", type=click.IntRange(min=1), default=_d("fold_threads"),
              show_default=True,
              help="Background folding threads.")
@click.option("--max-backlog", type=click.IntRange(min=1), default=_d("max_backlog"),
              show_default=True,
              help="Unfolded events of a namespace before POST /events answers 429.")
@click.option("--max-total-backlog", type=click.IntRange(min=1),
              default=_d("max_total_backlog"),
              show_default=True, help="Unfolded events of the server before 503.")
@click.option("--consolidate-every", "consolidate_s", type=click.FloatRange(min=0),
              default=_d("consolidate_interval_s"), show_default=True,
              help="Seconds between scheduled consolidation passes (0: off).")
@click.option("--lease-ttl", type=click.FloatRange(min=1), default=_d("lease_ttl_s"),
              show_default=True,
              help="Seconds a namespace lease outlives a crashed server.")
@click.option("--drain-timeout", type=click.FloatRange(min=0), default=_d("drain_timeout_s"),
              show_default=True,
              help="Seconds to finish folding on shutdown.")
@click.option("--webhook", "webhooks", multiple=True, callback=_webhook, metavar="NS=URL",
              help="POST notifications of namespace NS (* for all) to URL; repeatable.")
@click.option("--webhook-secret-file", type=click.Path(exists=True, dir_okay=False,
              path_type=Path), default=None,
              help="File with the webhook signing key [default: env ENFOLD_WEBHOOK_SECRET].")
@click.option("--sse-replay", type=click.IntRange(min=0), default=_d("sse_replay"),
              show_default=True,
              help="Notifications per namespace kept for SSE clients reconnecting with "
                   "Last-Event-ID (0: none).")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True)
@click.pass_obj
def serve(obj: Any, host: str, port: int, db: str | None, admin_key_file: Path | None,
          no_auth: bool, fold_threads: int, max_backlog: int, max_total_backlog: int,
          consolidate_s: float, lease_ttl: float, drain_timeout: float, webhooks: tuple[tuple[str, str], ...],
          webhook_secret_file: Path | None, sse_replay: int, log_level: str) -> None:
    """Run the HTTP API (REST + SSE + webhooks) with background folding.

    Everything configured is checked before the server listens: the extras, the store, and
    the embedding model and the English parse, which load now (a warm-up) instead of on
    the first request. What is missing stops it with one line naming what to install."""
    from enfold import extras
    from enfold.errors import EnfoldError

    if no_auth and host not in _LOOPBACK:
        raise click.UsageError("--no-auth is only allowed on a loopback --host (127.0.0.1)")
    try:
        extras.require("server")
        import uvicorn

        from enfold.server.app import create_app
        from enfold.server.settings import ServerSettings
    except (EnfoldError, ImportError) as exc:
        _refuse(str(exc))
    settings = ServerSettings(
        auth=not no_auth, admin_key=_secret(admin_key_file, "ENFOLD_ADMIN_KEY"),
        max_backlog=max_backlog, max_total_backlog=max_total_backlog, fold_threads=fold_threads,
        consolidate_interval_s=consolidate_s, lease_ttl_s=lease_ttl, drain_timeout_s=drain_timeout,
        webhooks=webhooks, webhook_secret=_secret(webhook_secret_file, "ENFOLD_WEBHOOK_SECRET"),
        sse_replay=sse_replay)
    try:
        memory = obj.open_memory(db)
        memory.warm_up()
    except EnfoldError as exc:
        _refuse(str(exc))
    app = create_app(memory, settings)
    state = app.state.enfold
    state.owns_memory = True

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            state.draining = True  # refuse new work at once, before uvicorn stops listening
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                            timeout_graceful_shutdown=int(drain_timeout) + 5)
    server = Server(config)
    click.echo(f"enfold: serving {memory.store.url} on http://{host}:{port} "
               f"(auth {'off' if no_auth else 'on'})", err=True)
    # uvicorn re-raises the signal it caught once it has shut down; with these handlers in
    # place that ends here, so a drained shutdown exits 0 instead of dying by the signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    server.run()
    if not server.started:
        sys.exit(3)


@click.group()
def keys() -> None:
    """Create, list and revoke API keys (one namespace each, stored hashed)."""


def _store(obj: Any) -> Any:
    from enfold.store import open_store

    return open_store(obj.store_target())


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return format_time(ts)


@keys.command("create")
@click.option("--namespace", "namespace", default=None,
              help="The key's namespace [default: the global --namespace].")
@click.option("--label", default=None, help="A note on who holds the key.")
@click.pass_obj
def keys_create(obj: Any, namespace: str | None, label: str | None) -> None:
    """Create a key: the key alone on stdout (its id and namespace on stderr, or all of it
    with --json); it is printed once and only its hash is stored."""
    from enfold.server.auth import create_key

    store = _store(obj)
    try:
        row, key = create_key(store, namespace or obj.namespace, label=label)
    finally:
        store.close()
    if obj.as_json:
        obj.out({"id": row.id, "namespace": row.namespace, "label": row.label, "key": key})
        return
    click.echo(key)  # alone on stdout, so that KEY=$(enfold keys create ...) works
    click.echo(f"enfold: key id {row.id} for namespace {row.namespace}; the key is shown only "
               "now (only its hash is stored)", err=True)


@keys.command("list")
@click.option("--namespace", default=None, help="Only this namespace's keys.")
@click.pass_obj
def keys_list(obj: Any, namespace: str | None) -> None:
    """List keys (ids, namespaces, labels, dates; never the secrets)."""
    from enfold.server.auth import list_keys

    store = _store(obj)
    try:
        rows = list_keys(store, namespace)
    finally:
        store.close()
    data = [{"id": r.id, "namespace": r.namespace, "label": r.label,
             "created_at": r.created_at, "revoked_at": r.revoked_at} for r in rows]
    lines = []
    for r in rows:
        status = f"revoked {_when(r.revoked_at)}" if r.revoked_at else "active"
        lines.append(f"{r.id}  {r.namespace:<20} {status:<24} created {_when(r.created_at)}  "
                     f"{r.label or ''}".rstrip())
    obj.out(data, "\n".join(lines) if lines else "no keys")


@keys.command("revoke")
@click.argument("key_id")
@click.pass_obj
def keys_revoke(obj: Any, key_id: str) -> None:
    """Revoke a key by its id: requests with it get 401 from then on."""
    from enfold.server.auth import revoke_key

    store = _store(obj)
    try:
        revoke_key(store, key_id)
    finally:
        store.close()
    obj.out({"id": key_id, "revoked": True}, f"revoked {key_id}")
