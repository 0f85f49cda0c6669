"""GET /docs: Swagger UI from the package itself (api/static/swagger-ui, swagger-ui-dist 5.35.0),
so the page loads no script from a CDN and works on machines without internet access.

The page, its assets and /openapi.json hold no data and open without the API key (the
middleware lets them through); the Authorize button sends the key with the real calls.
"""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, swagger_ui_default_parameters
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS_DIR", "ASSETS_PATH", "install_docs"]

ASSETS_DIR = Path(__file__).parent / "static" / "swagger-ui"
ASSETS_PATH = "/static/swagger-ui"


def install_docs(app: FastAPI) -> None:
    """Serve the vendored assets and the page (the app is built with docs_url=None)."""
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS_DIR), name="swagger-ui")
    # validatorUrl null: Swagger UI would otherwise send the schema to validator.swagger.io
    parameters = {**swagger_ui_default_parameters, "validatorUrl": None, "persistAuthorization": False}

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - API",
                                   swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
                                   swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
                                   swagger_ui_parameters=parameters)
