"""The page tests' browser fixture."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, launch


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium (tests/support/browser.py), one for a module's tests; skips where it is
    missing (a failure under CI=true, tests/conftest.py)."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's /usr/bin/chromium")
    with launch() as b:
        yield b
