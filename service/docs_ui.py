"""The house for newcomers: a landing page at ``/`` and the API docs, served offline.

``/docs`` (Swagger UI) loads its script and styles from this server (``/static-docs/``, the
assets the locked ``fastapi-offline`` package ships): no CDN, no online validator, so the
docs work on a machine without internet and no request leaves the server. ReDoc is not
offered: its page fetches its logo from Redocly's CDN whatever it is configured with.
"""

from __future__ import annotations

import html
from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from .version import PROTOCOLS

ASSETS_URL = "/static-docs"


LANDING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}}
code{{background:#f3f3f3;padding:0 .2em}}</style></head>
<body><h1>{title} <span lang="ar">قهوة</span></h1>
<p>Provably fair dice and shuffles for café games ({protocols}).</p>
<ul>
<li><a href="/play">/play</a> — play a match in your browser, against house bots or a friend</li>
<li><a href="/verify">/verify</a> — check a finished match in your browser</li>
<li><a href="/docs">/docs</a> — the HTTP API, interactive (Swagger UI)</li>
<li><a href="/openapi.json">/openapi.json</a> — the OpenAPI schema</li>
<li><a href="/v1/keys">/v1/keys</a> — the server's signing keys</li>
<li><a href="/v1/log">/v1/log</a> — the signed head of the transparency log</li>
</ul>
<p>Version {version}.</p></body></html>
"""


def install(app: FastAPI) -> None:
    """Add ``/`` and ``/docs`` to an app built with ``docs_url=None, redoc_url=None``."""
    app.mount(
        ASSETS_URL,
        StaticFiles(directory=str(files("fastapi_offline") / "static")),
        name="static-docs",
    )
    title = app.title
    protocols = ", ".join(f"<code>{html.escape(p)}</code>" for p in PROTOCOLS)
    landing = LANDING.format(
        title=html.escape(title), version=html.escape(app.version), protocols=protocols
    )

    @app.get("/", include_in_schema=False)
    def home() -> HTMLResponse:
        return HTMLResponse(landing)

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title=f"{title} — API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            # Swagger UI would ask swagger.io's online validator for a badge.
            swagger_ui_parameters={"validatorUrl": None},
        )
