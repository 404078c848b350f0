"""A real qahwa server in a thread for tests: ``with LiveServer() as srv: srv.url``."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from service.server import ServerThread
from service.settings import Settings


class LiveServer:
    """uvicorn in a thread on a free port, with a temporary SQLite database and key files.

    ``settings`` replaces the defaults entirely; keyword ``overrides`` change single fields
    (e.g. ``LiveServer(idle_timeout_seconds=1)``). Exposes ``.url``, ``.settings``, ``.app``.
    """

    def __init__(self, settings: Settings | None = None, **overrides: Any) -> None:
        self._tmp: str | None = None
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
        return self._thread.app

    def __enter__(self) -> LiveServer:
        self._thread = ServerThread(self.settings).start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._thread is not None:
            self._thread.stop()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
