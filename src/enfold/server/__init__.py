"""``enfold serve``: the always-on HTTP service (needs the ``server`` extra).

    from enfold.server import ServerSettings, create_app
    app = create_app("memory.db", ServerSettings(admin_key="…"), embedder="hash")

Modules: :mod:`~enfold.server.app` (routes, errors, limits), :mod:`~enfold.server.workers`
(background folding, leases, backpressure, drain), :mod:`~enfold.server.push` (SSE and
webhooks), :mod:`~enfold.server.auth` (API keys), :mod:`~enfold.server.cli` (``enfold serve``
and ``enfold keys``). FastAPI is imported only when the app is asked for, so the CLI works
without the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from enfold.server.app import create_app
    from enfold.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from enfold.server import app

        return getattr(app, name)
    raise AttributeError(f"module 'enfold.server' has no attribute {name!r}")
