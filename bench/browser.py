"""Debian's chromium under the plain playwright package, as the page bench and every browser
test drive it (tests/support/browser.py adds the tests' marks), and the verify page's paste-and-verify."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def paste_and_verify(page: Any, text: str, key: str, replay_ms: int) -> tuple[float, str]:
    """On the verify page: paste the transcript ``text`` with the server's ``key``, verify,
    wait (the replay up to ``replay_ms``) for the full verdict: (seconds from the click, the
    verdict)."""
    from playwright.sync_api import expect

    run = int(page.get_attribute("#verdict", "data-run") or 0) + 1
    page.evaluate(
        """([text, key]) => {
          document.querySelector('input[name=src][value=paste]').checked = true;
          document.getElementById('in-paste').value = text;
          document.getElementById('in-key').value = key;
        }""",
        [text, key],
    )
    t0 = time.perf_counter()
    page.click("#go")
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-run", str(run), timeout=60_000)
    expect(verdict).not_to_have_attribute("data-replay", "pending", timeout=replay_ms)
    return time.perf_counter() - t0, str(verdict.get_attribute("data-verdict"))
