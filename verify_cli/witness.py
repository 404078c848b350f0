"""``verify witness``: a tlog-witness (c2sp.org/tlog-witness) anyone can host.

It serves ``POST /add-checkpoint`` for the logs given with ``--log VKEY``, cosigns
(c2sp.org/tlog-cosignature v1) each checkpoint that is consistent with the newest one it
cosigned before, and never one that is not (a fork: refused with 422 and written to the
evidence directory). Its state — per log, the size and root it last cosigned — is written
atomically before each cosignature is returned, so a restart never rolls it back.
``GET /`` answers the witness's vkey.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click

import tlog

from .log_state import default_state_path


def load_witness_key(path: Path, name: str) -> tlog.CosignatureSigner:
    """The witness's Ed25519 key (base64 seed in ``path``, created 0600 on first use)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(base64.b64encode(os.urandom(32)).decode() + "\n")
    try:
        seed = base64.b64decode(path.read_text(encoding="ascii").strip(), validate=True)
    except (ValueError, UnicodeDecodeError):
        seed = b""
    if len(seed) != 32:
        raise click.UsageError(f"{path} is not base64 of a 32-byte Ed25519 seed")
    return tlog.CosignatureSigner.from_seed(name, seed)


class WitnessServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr: tuple[str, int], witness: tlog.Witness, evidence: Path | None) -> None:
        super().__init__(addr, _Handler)
        self.witness = witness
        self.evidence = evidence
        self._kept = 0
        self._lock = threading.Lock()

    def keep_evidence(self) -> None:
        """Write the refused, validly signed checkpoints not yet written."""
        if self.evidence is None:
            return
        with self._lock:
            new = self.witness.refused[self._kept :]
            self._kept += len(new)
        for doc in new:
            self.evidence.mkdir(parents=True, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            (self.evidence / f"refused-{stamp}.json").write_text(
                json.dumps(doc, indent=1), encoding="utf-8"
            )


class _Handler(BaseHTTPRequestHandler):
    server: WitnessServer
    protocol_version = "HTTP/1.1"

    def _answer(self, status: int, ctype: str, body: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        if self.path == "/":
            self._answer(200, tlog.witness.TEXT_TYPE, self.server.witness.signer.vkey + "\n")
        else:
            self._answer(404, tlog.witness.TEXT_TYPE, "not found\n")

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/add-checkpoint":
            self._answer(404, tlog.witness.TEXT_TYPE, "not found\n")
            return
        try:
            n = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._answer(411, tlog.witness.TEXT_TYPE, "a Content-Length is needed\n")
            return
        if not 0 <= n <= tlog.witness.MAX_BODY:
            self._answer(400, tlog.witness.TEXT_TYPE, "the request body is too large\n")
            return
        status, ctype, body = self.server.witness.add_checkpoint(self.rfile.read(n))
        if status == 422:
            self.server.keep_evidence()  # written before the answer goes out
        self._answer(status, ctype, body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        click.echo(f"witness: {self.address_string()} {format % args}", err=True)


def make_server(
    logs: list[tlog.Verifier], listen: str, key: Path, name: str, state: Path
) -> WitnessServer:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit():
        raise click.UsageError(f"--listen is HOST:PORT, not {listen!r}")
    witness = tlog.Witness(load_witness_key(key, name), logs, state)
    return WitnessServer(
        (host or "127.0.0.1", int(port)), witness, state.parent / "witness-evidence"
    )


@click.command(
    "witness",
    help="Run a tlog-witness (c2sp.org/tlog-witness) for the given "
    "logs: it cosigns each checkpoint consistent with the last one it cosigned, "
    "and never a fork.",
)
@click.option(
    "--log",
    "log_vkeys",
    multiple=True,
    required=True,
    metavar="VKEY",
    help='A log\'s note key (vkey text, as in /v1/keys "log"); repeatable.',
)
@click.option(
    "--listen",
    default="127.0.0.1:7380",
    show_default=True,
    metavar="HOST:PORT",
    help="The address to serve on.",
)
@click.option(
    "--name",
    metavar="NAME",
    help="The witness's key name (default: <host name>/witness).",
)
@click.option(
    "--key",
    "key_file",
    metavar="FILE",
    help="The witness's key "
    "file (default: $XDG_STATE_HOME/qahwa/witness.key, created on first use).",
)
@click.option(
    "--state",
    "state_file",
    metavar="FILE",
    help="Its state (default: $XDG_STATE_HOME/qahwa/witness.json).",
)
def witness_cmd(
    log_vkeys: tuple[str, ...],
    listen: str,
    name: str | None,
    key_file: str | None,
    state_file: str | None,
) -> int:
    logs = []
    for v in log_vkeys:
        try:
            verifier = tlog.parse_vkey(v)
        except tlog.NoteError as exc:
            raise click.UsageError(f"--log: {exc}") from None
        if verifier.alg != tlog.ALG_ED25519:
            raise click.UsageError(f"--log {verifier.name}: not an Ed25519 note key")
        logs.append(verifier)
    d = default_state_path().parent  # $XDG_STATE_HOME/qahwa
    server = make_server(
        logs,
        listen,
        Path(key_file) if key_file else d / "witness.key",
        name or f"{socket.gethostname()}/witness",
        Path(state_file) if state_file else d / "witness.json",
    )
    host, port = server.server_address[:2]
    click.echo(f"witness {server.witness.signer.vkey}")
    click.echo(
        f"serving http://{host!s}:{port}/add-checkpoint for " + ", ".join(v.name for v in logs),
        err=True,
    )
    with server, contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0
