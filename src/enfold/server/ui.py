"""The graph explorer page at ``/ui``: one HTML page and its built assets.

The page (source in ``web/``, built into ``static/`` and shipped in the package, so installing
needs no build step) draws a namespace's graph and talks to the ``/v1`` API from the browser
with the user's key; this router only serves files and holds no data or credentials.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, RedirectResponse

__all__ = ["STATIC_DIR", "router"]

STATIC_DIR = Path(__file__).parent / "static"

#: The files the page may load, with their media types (nothing else is served from here).
ASSETS: dict[str, str] = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "THIRD_PARTY_LICENSES.txt": "text/plain; charset=utf-8",
}

# Scripts and styles only from this server; the page calls only this origin's API.
_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")

router = APIRouter(include_in_schema=False)


def _static(name: str) -> Path:
    path = STATIC_DIR / name
    if not path.is_file():
        raise HTTPException(500, f"the page's asset {name} is missing from the package; "
                                 "rebuild it with `cd web && npm ci && npm run build`")
    return path


@router.api_route("/ui", methods=["GET", "HEAD"])
def page() -> FileResponse:
    """The page itself: it asks for the namespace and key, or opens ``/ui?ns=NAME`` (and
    ``&node=ID``, ``&view=timeline``) directly with the key the tab already holds."""
    return FileResponse(_static("index.html"), media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": _CSP, "Cache-Control": "no-cache",
                                 "X-Content-Type-Options": "nosniff"})


@router.get("/ui/")
def page_slash() -> RedirectResponse:
    return RedirectResponse("/ui", status_code=308)


@router.get("/ui/assets/{name}")
def asset(name: str) -> FileResponse:
    """A built asset by name; unknown names are 404 (no path is ever joined from input)."""
    media_type = ASSETS.get(name)
    if media_type is None:
        raise HTTPException(404, f"no asset {name!r}")
    return FileResponse(_static(name), media_type=media_type,
                        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})
