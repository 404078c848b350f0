"""Shared test configuration: slow tests opt-in, hypothesis profiles, a PostgreSQL test
database of its own for each pytest-xdist worker (``make test`` runs ``-n 2``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, settings

from service.server import ServerThread
from tests.support.live_server import (
    LiveServer,
    add_operator_key,
    register_thread,
    unregister_server,
)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "thorough", deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("QAHWA_HYPOTHESIS_PROFILE", "default"))


def worker_database_url(url: str, worker: str) -> str:
    """``url`` (QAHWA_TEST_PG_URL) with the database ``<its name>_<worker>``, created when it
    does not exist yet: tests on two xdist workers then never share tables (test_log_tree
    drops them all, for one)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ProgrammingError

    base = make_url(url)
    name = f"{base.database}_{worker}"
    engine = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            exists = conn.execute(
                text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
            ).first()
            if exists is None:
                try:
                    conn.execute(text(f'CREATE DATABASE "{name}"'))
                except ProgrammingError:  # made by another run just now: it exists
                    if (
                        conn.execute(
                            text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
                        ).first()
                        is None
                    ):
                        raise
    finally:
        engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def pytest_configure(config: pytest.Config) -> None:
    # before any test module is imported: they read QAHWA_TEST_PG_URL at import
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    url = os.environ.get("QAHWA_TEST_PG_URL")
    if worker and url:
        os.environ["QAHWA_TEST_PG_URL"] = worker_database_url(url, worker)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The default run leaves out the ``slow`` tests (deselected, not skipped); they run with
    QAHWA_SLOW=1, and always under CI=true (``.ci/run``), so CI runs every test."""
    if os.environ.get("QAHWA_SLOW") == "1" or os.environ.get("CI") == "true":
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under CI=true a skip is a failure: CI installs chromium, PostgreSQL and OpenSpiel."""
    outcome = yield
    rep = outcome.get_result()
    if os.environ.get("CI") == "true" and rep.skipped and not hasattr(rep, "wasxfail"):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = (
            f"skipped under CI=true, where every external service the tests need "
            f"is installed: {reason}"
        )


@pytest.fixture(autouse=True, scope="session")
def operator_keys() -> Iterator[None]:
    """Creations the tests send to their own servers without a key get the server's
    operator key (live_server.py): every ServerThread registers its key when it starts;
    every other request is sent as it is."""
    sync, asyn = httpx.HTTPTransport.handle_request, httpx.AsyncHTTPTransport.handle_async_request

    def handle(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        add_operator_key(request)
        return sync(self, request)

    async def handle_async(
        self: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        add_operator_key(request)
        return await asyn(self, request)

    start, stop = ServerThread.start, ServerThread.stop

    def started(self: ServerThread) -> ServerThread:
        out = start(self)
        register_thread(self)
        return out

    def stopped(self: ServerThread) -> None:
        unregister_server(self.url)
        stop(self)

    httpx.HTTPTransport.handle_request = handle  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async  # type: ignore[method-assign]
    ServerThread.start, ServerThread.stop = started, stopped  # type: ignore[method-assign]
    try:
        yield
    finally:
        httpx.HTTPTransport.handle_request = sync  # type: ignore[method-assign]
        httpx.AsyncHTTPTransport.handle_async_request = asyn  # type: ignore[method-assign]
        ServerThread.start, ServerThread.stop = start, stop  # type: ignore[method-assign]


def _live_overrides(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings (and ``clock``) of the nearest ``pytest.mark.live_server(**kwargs)``."""
    marker = request.node.get_closest_marker("live_server")
    return dict(marker.kwargs) if marker is not None else {}


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """The one live server fixture (live_server.py: uvicorn in a thread on a port the
    kernel picks, a temporary SQLite database and key files of its own, so parallel
    workers never share one), shared by a module's tests. A module that needs other
    settings marks itself: ``pytestmark = pytest.mark.live_server(sweep_interval_seconds=1,
    clock=FakeClock())``."""
    with LiveServer(**_live_overrides(request)) as srv:
        yield srv


@pytest.fixture()
def fresh_server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """:func:`server` for one test only (a module whose tests need a new server each
    defines ``server`` as returning this one)."""
    with LiveServer(**_live_overrides(request)) as srv:
        yield srv


@pytest.fixture()
def client(server: LiveServer) -> Iterator[httpx.Client]:
    """An httpx client on :func:`server` (creations get its operator key)."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c
