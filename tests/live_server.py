"""A real qahwa server in a thread for tests: ``with LiveServer() as srv: srv.url``.

Creating a match or an rng session needs an operator key (docs/api.md "Operators"). The
tests' own requests carry none: :class:`OperatorKeyed` adds the server's first key (the one
it wrote to ``operator.key``) to a creation that has no ``Authorization`` header, so every
creation still goes through the real key check and rate limit. ``LiveServer(
operator_key=False)`` leaves requests as they are (the operator tests).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from service.server import ServerThread
from service.settings import Settings

CREATING = {("POST", "/v1/matches"), ("POST", "/v1/rng")}


class OperatorKeyed:
    """ASGI wrapper: ``Authorization: Bearer <key>`` on creations sent without one.
    Attributes (``.state``, ``.openapi()``, …) are the wrapped app's."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.wrapped = app
        self.header = (b"authorization", b"Bearer " + key.encode("ascii"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and (scope["method"], scope["path"]) in CREATING
                and not any(k == b"authorization" for k, _ in scope["headers"])):
            scope = {**scope, "headers": [*scope["headers"], self.header]}
        await self.wrapped(scope, receive, send)


def operator_key(settings: Settings) -> str:
    """The key the server wrote on its first start."""
    return settings.operator_key_path.read_text(encoding="ascii").strip()


class LiveServer:
    """uvicorn in a thread on a free port, with a temporary SQLite database and key files.

    ``settings`` replaces the defaults entirely; keyword ``overrides`` change single fields
    (e.g. ``LiveServer(idle_timeout_seconds=1)``). Exposes ``.url``, ``.settings``, ``.app``.
    """

    def __init__(self, settings: Settings | None = None, *, operator_key: bool = True,
                 **overrides: Any) -> None:
        self._tmp: str | None = None
        self.inject_key = operator_key
        if settings is None:
            self._tmp = tempfile.mkdtemp(prefix="qahwa-live-")
            base: dict[str, Any] = {
                "database_url": f"sqlite:///{Path(self._tmp) / 'qahwa.db'}",
                "data_dir": Path(self._tmp),
                "master_key": None,
                "signing_key": None,
                "signing_key_file": None,
            }
            base.update(overrides)
            settings = Settings(**base)
        elif overrides:
            settings = settings.model_copy(update=overrides)
        self.settings = settings
        self._thread: ServerThread | None = None

    @property
    def url(self) -> str:
        assert self._thread is not None, "the server is not running"
        return self._thread.url

    @property
    def app(self) -> Any:
        assert self._thread is not None
        app = self._thread.app
        return app.wrapped if isinstance(app, OperatorKeyed) else app

    @property
    def operator_key(self) -> str:
        return operator_key(self.settings)

    def __enter__(self) -> LiveServer:
        thread = ServerThread(self.settings)
        if self.inject_key:
            thread.app = OperatorKeyed(thread.app, self.operator_key)  # type: ignore[assignment]
        self._thread = thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is not None:
            self._thread.stop()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
