"""Run the app with uvicorn in a background thread (tests, ``qahwa demo``)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn

from .app import create_app
from .clock import Clock
from .serving import GuardedH11Protocol, GuardedHttpToolsProtocol
from .settings import Settings


class ServerThread:
    """``with ServerThread(settings) as srv: httpx.get(srv.url + "/v1/keys")``."""

    def __init__(
        self,
        settings: Settings,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        clock: Clock | None = None,
        http: type[GuardedHttpToolsProtocol | GuardedH11Protocol] = GuardedHttpToolsProtocol,
    ) -> None:
        self.settings = settings
        self.http = http
        self.host = host
        self.port = port
        self.app = create_app(settings, clock=clock)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ServerThread:
        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan="on",
            access_log=False,
            http=self.http.configured(self.settings),
        )
        sock = config.bind_socket()  # port 0: the kernel picks a free port
        self.port = sock.getsockname()[1]
        self._sock = sock
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="qahwa-uvicorn", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=20)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
