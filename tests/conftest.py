"""Shared test configuration: slow tests opt-in, hypothesis profiles."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("QAHWA_HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("QAHWA_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow: set QAHWA_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under CI=true a skip is a failure: CI installs chromium, PostgreSQL and OpenSpiel.

    Only the opt-in ``slow`` tests may skip there (they run with QAHWA_SLOW=1).
    """
    outcome = yield
    rep = outcome.get_result()
    if (os.environ.get("CI") == "true" and rep.skipped and not hasattr(rep, "wasxfail")
            and "slow" not in item.keywords):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = (f"skipped under CI=true, where every external service the tests need "
                        f"is installed: {reason}")
