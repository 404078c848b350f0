"""Debian's chromium as every browser test drives it (bench.browser) and the marks of a browser
test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bench.browser import CHROMIUM, launch

__all__ = [
    "CHROMIUM",
    "NEEDS_CHROMIUM",
    "launch",
    "needs_chromium",
    "open_page",
]

# The marks of a browser test: it skips only where chromium is missing (a failure under
# CI=true, tests/conftest.py).
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium"),
]


def needs_chromium(test: Any) -> Any:
    """The NEEDS_CHROMIUM marks on one test (a module sets ``pytestmark = NEEDS_CHROMIUM``)."""
    for mark in NEEDS_CHROMIUM:
        test = mark(test)
    return test


@contextmanager
def open_page(
    browser: Any,
    url: str,
    locale: str | None = "en-US",
    width: int | None = None,
    init_script: str | None = None,
) -> Iterator[Any]:
    """A page of a fresh context at ``url`` (in ``locale``, the browser's own if ``None``; in a
    window ``width`` px wide and 860 high, if given; with ``init_script`` run before the
    page's own scripts, if given); its ``js_errors`` collects the page's errors."""
    options: dict[str, Any] = {} if locale is None else {"locale": locale}
    if width is not None:
        options["viewport"] = {"width": width, "height": 860}
    ctx = browser.new_context(**options)
    try:
        if init_script is not None:
            ctx.add_init_script(init_script)
        pg = ctx.new_page()
        pg.js_errors = []
        pg.on("pageerror", lambda e: pg.js_errors.append(str(e)))
        pg.goto(url)
        yield pg
    finally:
        ctx.close()
