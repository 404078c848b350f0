"""A tlog witness (``tlog.Witness``) served over HTTP on loopback, for a live server to
submit its checkpoints to, and stopped for real (its port then refuses connections) to
take a witness down in the middle of play; and a live server configured with it.

``WitnessHTTP(log_vkey)``: ``.url``, ``.vkey`` (its cosignature key), ``.stop()``;
``.control_url``: a second port whose ``POST /stop`` stops the witness (for a Node or
browser test run by the Python one). :func:`new_log` makes a log key and origin (new each
time: ``verify`` remembers the checkpoints it saw per origin), and :func:`witnessed_settings`
gives them to a server, so the witness can be made first.
"""

from __future__ import annotations

import base64
import os
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import tlog


@dataclass(frozen=True)
class WitnessedLog:
    """A log's origin and note key seed, for a server to sign its checkpoints with."""

    origin: str = field(default_factory=lambda: f"w{secrets.token_hex(6)}.test/log")
    seed: bytes = field(default_factory=lambda: os.urandom(32))

    @property
    def vkey(self) -> str:
        return tlog.NoteSigner.from_seed(self.origin, self.seed).vkey


def new_log() -> WitnessedLog:
    return WitnessedLog()


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class WitnessHTTP:
    def __init__(self, log_vkey: str, name: str = "w1.witness.test", seed: int = 21) -> None:
        self.signer = tlog.CosignatureSigner.from_seed(name, bytes([seed]) * 32)
        self.witness = tlog.Witness(self.signer, [tlog.parse_vkey(log_vkey)])
        self.cosigned: list[int] = []  # the sizes it cosigned
        self.stopped = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path == "/stop":
                    threading.Thread(target=outer.stop, daemon=True).start()
                    status, ctype, text = 200, "text/plain", "stopped\n"
                elif self.path.endswith("/add-checkpoint"):
                    status, ctype, text = outer.witness.add_checkpoint(body)
                    if status == 200:
                        note = body.decode().split("\n\n", 1)[1]
                        outer.cosigned.append(int(note.split("\n")[1]))
                else:
                    status, ctype, text = 404, "text/plain", "no\n"
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = _Server(("127.0.0.1", 0), Handler)
        self._control = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self.control_url = f"http://127.0.0.1:{self._control.server_address[1]}"
        self._threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in (self._http, self._control)
        ]
        for t in self._threads:
            t.start()

    @property
    def vkey(self) -> str:
        return self.signer.vkey

    def config(self, name: str = "w1") -> str:
        """Its ``QAHWA_WITNESSES`` entry."""
        return f"{name} {self.vkey} {self.url}"

    def stop(self) -> None:
        """Down for real: the port closes (a submission gets a connection error)."""
        if not self.stopped.is_set():
            self.stopped.set()
            self._http.shutdown()
            self._http.server_close()

    def close(self) -> None:
        self.stop()
        self._control.shutdown()
        self._control.server_close()

    def __enter__(self) -> WitnessHTTP:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def witnessed_settings(witness: WitnessHTTP, log: WitnessedLog, **more: Any) -> dict[str, Any]:
    """LiveServer overrides: ``log``'s key and origin (the ones the witness knows), the
    witness as ``w1``, checkpoints every 50 ms and a short witness timeout."""
    return {
        "log_origin": log.origin,
        "log_key": base64.b64encode(log.seed).decode(),
        "witnesses": witness.config(),
        "checkpoint_seconds": 0.05,
        "witness_timeout_seconds": 2.0,
        **more,
    }
