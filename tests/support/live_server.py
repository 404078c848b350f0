"""A real qahwa server in a thread for tests: ``with LiveServer() as srv: srv.url``.

Creating a match or an rng session needs an operator key (docs/api.md "Operators"). The
tests' own requests carry none: every in-process server (``ServerThread``, so every
``LiveServer``: conftest.py hooks its start) and ``Serve`` (``qahwa serve`` in a child process)
registers its key by its address — the one it wrote to ``operator.key``, or, when its
database came with operators already, a new one — and conftest.py has httpx add it to a
creation sent there without an ``Authorization`` header, so every creation still goes
through the real key check and rate limit. ``LiveServer(operator_key=False)`` registers
nothing (the operator tests).
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from bench.api import serve_command
from service import operators
from service.clock import Clock
from service.db import Database
from service.server import ServerThread
from service.settings import Settings

CREATING = {"/v1/matches", "/v1/rng"}
#: the master key of every test server on a PostgreSQL database (QAHWA_TEST_PG_URL): the
#: test database is one deployment, and every host of a deployment shares its master key
#: (docs/deploy.md §4) — the log's note key is sealed under it in the database
PG_MASTER_KEY = base64.b64encode(
    hashlib.sha256(b"qahwa tests: the shared PostgreSQL test database").digest()
).decode("ascii")


def deployment_env(database_url: str) -> dict[str, str]:
    """What a test server on ``database_url`` shares with the others on it."""
    return {"QAHWA_MASTER_KEY": PG_MASTER_KEY} if database_url.startswith("postgresql") else {}


QAHWA = Path(sys.executable).with_name("qahwa")
#: "host:port" of a running test server -> its operator key
OPERATOR_KEYS: dict[str, str] = {}


def _address(url: str) -> str:
    u = httpx.URL(url)
    return f"{u.host}:{u.port}"


def register_server(url: str, key_file: Path, database_url: str | None = None) -> None:
    """Creations sent to ``url`` without a key get the one in ``key_file``; when the server
    wrote none (its database already had operators, e.g. a shared PostgreSQL test
    database), a new key of its own, added to ``database_url``."""
    if key_file.exists() or database_url is None:
        OPERATOR_KEYS[_address(url)] = key_file.read_text(encoding="ascii").strip()
        return
    db = Database(database_url)
    try:
        OPERATOR_KEYS[_address(url)] = operators.add(db, f"tests-{secrets.token_hex(4)}")
    finally:
        db.dispose()


def register_thread(thread: ServerThread) -> None:
    """(conftest.py, after every ``ServerThread.start``) register its operator key."""
    if not getattr(thread, "with_operator_key", True):
        return
    path = thread.settings.operator_key_path
    if path.exists():
        register_server(thread.url, path)
    else:  # e.g. a copy of another server's database: make this server a key of its own
        OPERATOR_KEYS[_address(thread.url)] = operators.add(
            thread.app.state.db, f"tests-{secrets.token_hex(4)}"
        )


def unregister_server(url: str) -> None:
    OPERATOR_KEYS.pop(_address(url), None)


def add_operator_key(request: httpx.Request) -> None:
    """(conftest.py, for every httpx request) the server's key on a keyless creation."""
    if (
        request.method == "POST"
        and request.url.path in CREATING
        and "authorization" not in request.headers
    ):
        key = OPERATOR_KEYS.get(f"{request.url.host}:{request.url.port}")
        if key is not None:
            request.headers["Authorization"] = f"Bearer {key}"


class LiveServer:
    """uvicorn in a thread on a free port, with a temporary SQLite database and key files.

    ``settings`` replaces the defaults entirely; keyword ``overrides`` change single fields
    (e.g. ``LiveServer(idle_timeout_seconds=1)``); ``clock`` is the app's clock (a
    ``FakeClock`` to move deadlines by hand; the machine's by default). ``port``: 0 (the
    kernel picks one), or one the test holds with :func:`reserve_port` (to serve again on
    the same address). Exposes ``.url``, ``.settings``, ``.app``, ``.clock``.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        operator_key: bool = True,
        clock: Clock | None = None,
        port: int = 0,
        **overrides: Any,
    ) -> None:
        self._tmp: str | None = None
        self.inject_key = operator_key
        self.clock = clock
        self.port = port
        if settings is None:
            self._tmp = tempfile.mkdtemp(prefix="qahwa-live-")
            base: dict[str, Any] = {
                "database_url": f"sqlite:///{Path(self._tmp) / 'qahwa.db'}",
                "data_dir": Path(self._tmp),
                "master_key": None,
                "signing_key": None,
                "signing_key_file": None,
            }
            if str(overrides.get("database_url", "")).startswith("postgresql"):
                base["master_key"] = PG_MASTER_KEY
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

    @property
    def operator_key(self) -> str:
        """The key the server wrote to ``operator.key`` on its first start."""
        return self.settings.operator_key_path.read_text(encoding="ascii").strip()

    def __enter__(self) -> LiveServer:
        thread = ServerThread(self.settings, port=self.port, clock=self.clock)
        thread.with_operator_key = self.inject_key  # type: ignore[attr-defined]
        self._thread = thread.start()  # registered by conftest.py
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread is not None:
            self._thread.stop()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def reserve_port() -> socket.socket:
    """A socket bound to a free port and not listening, with ``SO_REUSEADDR``: while it is
    open the kernel gives that port to no other ``bind`` to port 0 (another test's server,
    a parallel worker's), yet a child process that binds it with ``SO_REUSEADDR`` (uvicorn
    does) may listen on it. Close it once the child listens."""
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
    except BaseException:
        s.close()
        raise
    return s


class Serve:
    """``qahwa serve`` as a subprocess on a reserved port (:func:`reserve_port`), its log in
    ``data_dir``; its operator key registered like a :class:`LiveServer`'s. ``kill()`` it
    (SIGKILL to its process group: no clean shutdown)."""

    def __init__(
        self,
        data_dir: Path,
        database_url: str,
        extra_env: dict[str, str] | None = None,
        workers: int = 1,
        args: tuple[str, ...] = (),
        preexec_fn: Callable[[], Any] | None = None,
    ) -> None:
        env = {
            **os.environ,
            "QAHWA_DATA_DIR": str(data_dir),
            **deployment_env(database_url),
            **(extra_env or {}),
        }
        with reserve_port() as held:
            self.port = int(held.getsockname()[1])
            self.url = f"http://127.0.0.1:{self.port}"
            self.log_path = data_dir / f"serve-{self.port}.log"
            self.log = open(self.log_path, "wb")  # noqa: SIM115
            self.proc = subprocess.Popen(
                serve_command(QAHWA, self.port, database_url, workers, *args),
                env=env,
                stdout=self.log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec_fn,
            )
            deadline = time.monotonic() + 40
            while True:
                try:
                    if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                        register_server(self.url, data_dir / "operator.key", database_url)
                        return
                except httpx.HTTPError:
                    pass
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.log.flush()
                    text = self.log_path.read_text(errors="replace")
                    self.kill()
                    raise RuntimeError(f"qahwa serve did not come up:\n{text}")
                time.sleep(0.1)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)
        self.log.close()
        unregister_server(self.url)
