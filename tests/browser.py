"""Debian's chromium under the plain playwright package, as every browser test drives it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# The marks of a browser test: it skips only where chromium is missing (a failure under
# CI=true, tests/conftest.py).
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium"),
]


@contextmanager
def launch() -> Iterator[Any]:
    """A running chromium browser, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def needs_chromium(test: Any) -> Any:
    """The NEEDS_CHROMIUM marks on one test (a module sets ``pytestmark = NEEDS_CHROMIUM``)."""
    for mark in NEEDS_CHROMIUM:
        test = mark(test)
    return test


@contextmanager
def open_page(browser: Any, url: str, locale: str = "en-US") -> Iterator[Any]:
    """A page of a fresh context at ``url``; its ``js_errors`` collects the page's errors."""
    ctx = browser.new_context(locale=locale)
    try:
        pg = ctx.new_page()
        pg.js_errors = []
        pg.on("pageerror", lambda e: pg.js_errors.append(str(e)))
        pg.goto(url)
        yield pg
    finally:
        ctx.close()
