"""The landing page and the API docs: linked from ``/``, and offline (no request leaves).

Swagger UI and ReDoc are driven in Debian's chromium; every request the browser makes is
recorded, and any request to another origin is aborted and fails the test.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import expect

from tests.support.browser import launch, needs_chromium
from tests.support.live_server import LiveServer


def test_landing_page_links_the_docs_the_page_and_the_schema(server: LiveServer) -> None:
    r = httpx.get(server.url + "/", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    for href in ("/docs", "/verify", "/openapi.json"):
        assert f'href="{href}"' in r.text
        assert httpx.get(server.url + href, timeout=30).status_code == 200, href


def test_docs_pages_name_only_local_assets(server: LiveServer) -> None:
    text = httpx.get(server.url + "/docs", timeout=30).text
    assert "cdn" not in text.lower() and "googleapis" not in text
    assert "/static-docs/swagger-ui-bundle.js" in text
    assert httpx.get(server.url + "/redoc", timeout=30).status_code == 404
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        r = httpx.get(f"{server.url}/static-docs/{asset}", timeout=30)
        assert r.status_code == 200 and len(r.content) > 10_000, asset


@needs_chromium
def test_docs_render_in_chromium_with_no_request_leaving(server: LiveServer) -> None:
    origin = urlsplit(server.url).netloc
    outside: list[str] = []
    errors: list[str] = []

    def guard(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("data", "blob") or urlsplit(url).netloc == origin:
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    with launch() as browser:
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", guard)
        page.goto(server.url + "/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("qahwa", timeout=30_000)
        # The operations are listed, from /openapi.json.
        expect(page.locator(".opblock").first).to_be_visible(timeout=30_000)
        page.wait_for_load_state("networkidle")
    assert outside == [], f"requests left the server: {outside}"
    assert errors == []
