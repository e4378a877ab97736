"""The interactive API docs, offline: ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc).

FastAPI's own pages load their scripts from a CDN, so on a machine without a network they
stay blank. These pages are FastAPI's, pointed at the Swagger UI and ReDoc builds that the
``fastapi-offline`` package carries (a dependency of the ``server`` extra), served under
``/docs-assets``; the app is created with ``docs_url=None`` and ``redoc_url=None``.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI, Request, Response

__all__ = ["DOCS_ASSETS", "install_docs"]

#: Where the Swagger UI and ReDoc files are served.
DOCS_ASSETS = "/docs-assets"


def install_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from assets in a Python package
    (``fastapi-offline``), not a CDN: they work on a machine without a network."""
    from fastapi.openapi.docs import (
        get_redoc_html,
        get_swagger_ui_html,
        get_swagger_ui_oauth2_redirect_html,
    )
    from fastapi.staticfiles import StaticFiles

    assets = resources.files("fastapi_offline") / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"
    redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    def swagger(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi, title=f"{app.title} API", oauth2_redirect_url=redirect,
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png")

    @app.get(redirect, include_in_schema=False)
    def swagger_redirect() -> Response:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        return get_redoc_html(openapi_url=root + openapi, title=f"{app.title} API",
                              redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
                              with_google_fonts=False)
