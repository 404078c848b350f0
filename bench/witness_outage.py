"""``python -m bench.witness_outage``: matches per second with the server's only witness down
for the whole run against the same with it up (issue 49's target: down ≥ 0.95 × up), in one
run, taking turns.

Two ``qahwa serve`` processes on loopback (SQLite, each its own log key, checkpoints every
second as deployed), each configured with one witness: the first's is a tlog witness served
by this process (``tlog.Witness`` over HTTP) that cosigns every checkpoint, the second's
address refuses every connection (a witness that is down). ``BENCH_CLIENTS`` threads (default
4) play whole matches against one server at a time, for ``BENCH_WINDOW`` seconds (default 5)
per window, ``BENCH_ROUNDS`` rounds (default 4), the order of the two setups alternating by
round. A match: created with the operator key, every seat committed and revealed by
``qahwa_client``, the lock's ``GET /v1/matches/{id}/log-proof`` fetched and checked as the
TS client and ``/play`` check it (the log key, no pinned witness: a tlog policy of quorum
none; any answer but 200 is counted as a failure), then played to the end (2-player Iraqi
dominoes to 1 point). Prints matches per second per setup, their ratio, the cosignatures
the live witness made and the failures. Benchmarks print figures and never pass or fail.
"""

from __future__ import annotations

import base64
import os
import socket
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import tlog
from qahwa_client import Client

from .api import Server

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
WINDOW = float(os.environ.get("BENCH_WINDOW", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))
RULES = {"players": 2, "target": 1}


class Witness:
    """A tlog witness of one log, over HTTP on a loopback port, cosigning what it is sent."""

    def __init__(self, log_vkey: str) -> None:
        self.signer = tlog.CosignatureSigner.from_seed("bench.witness", os.urandom(32))
        self.witness = tlog.Witness(self.signer, [tlog.parse_vkey(log_vkey)])
        self.cosigned = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                status, ctype, text = outer.witness.add_checkpoint(body)
                outer.cosigned += status == 200
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def refused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_env(origin: str, seed: bytes, witness_vkey: str, witness_url: str) -> dict[str, str]:
    return {
        "QAHWA_LOG_ORIGIN": origin,
        "QAHWA_LOG_KEY": base64.b64encode(seed).decode(),
        "QAHWA_WITNESSES": f"w1 {witness_vkey} {witness_url}",
        "QAHWA_CREATE_RATE_PER_MINUTE": "100000",
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "verifier")]),
    }


def one_match(qc: Client, url: str, policy: tlog.Policy, failures: list[str]) -> bool:
    match = qc.create_match("iraqi_domino", RULES)
    match.start()
    r = qc.http.get(f"{url}/v1/matches/{match.match_id}/log-proof")
    if r.status_code != 200:
        failures.append(f"log-proof {r.status_code}: {r.text[:80]}")
        return False
    seat = match.seats[0]
    assert seat.lock is not None and seat.log_index is not None
    proof = tlog.parse_proof(r.text)
    proof.verify(tlog.leaf_hash(proof.extra or b""), policy)
    view = seat.state()
    while view.status == "playing":
        mover = match.seats[view.turn or 0]
        if view.seat != mover.seat:
            view = mover.state()
            continue
        view = mover.act(view.legal_actions[0], retry_stale=True).state
    return view.status == "finished"


def window(
    url: str, key: str, policy: tlog.Policy, seconds: float, failures: list[str]
) -> tuple[int, float]:
    """Matches finished by CLIENTS threads in ``seconds``, and the seconds taken."""
    done = [0] * CLIENTS
    stop = time.monotonic() + seconds

    def run(i: int) -> None:
        with Client(url, operator_key=key, timeout=60) as qc:
            while time.monotonic() < stop:
                try:
                    done[i] += one_match(qc, url, policy, failures)
                except Exception as exc:  # counted, and the client goes on
                    failures.append(f"{type(exc).__name__}: {str(exc)[:100]}")

    t0 = time.monotonic()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done), time.monotonic() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        setups: dict[str, tuple[Server, tlog.Policy]] = {}
        up_witness: Witness | None = None
        try:
            for name in ("up", "down"):
                origin, seed = f"bench-{name}-{os.getpid()}.test/log", os.urandom(32)
                vkey = tlog.NoteSigner.from_seed(origin, seed).vkey
                if name == "up":
                    up_witness = Witness(vkey)
                    w_vkey, w_url = up_witness.signer.vkey, up_witness.url
                else:
                    w_vkey = tlog.CosignatureSigner.from_seed("gone", os.urandom(32)).vkey
                    w_url = f"http://127.0.0.1:{refused_port()}"
                folder = Path(tmp) / name
                folder.mkdir()
                server = Server(
                    "qahwa",
                    f"sqlite:///{folder}/q.db",
                    folder,
                    env=log_env(origin, seed, w_vkey, w_url),
                )
                policy = tlog.parse_policy(f"log {vkey}\nquorum none\n")
                setups[name] = (server, policy)
            got: dict[str, list[tuple[int, float]]] = {n: [] for n in setups}
            failures: dict[str, list[str]] = {n: [] for n in setups}
            order = list(setups)
            for rnd in range(ROUNDS):
                for name in order if rnd % 2 == 0 else order[::-1]:
                    server, policy = setups[name]
                    assert server.key is not None
                    got[name].append(window(server.url, server.key, policy, WINDOW, failures[name]))
            rate: dict[str, float] = {}
            print(f"{CLIENTS} clients, {ROUNDS} rounds of {WINDOW:g} s per setup, alternating")
            for name, windows in got.items():
                n, secs = sum(w[0] for w in windows), sum(w[1] for w in windows)
                rate[name] = n / secs
                per = ", ".join(f"{w[0] / w[1]:.2f}" for w in windows)
                print(
                    f"witness {name:5}: {n:4d} matches in {secs:6.1f} s = {rate[name]:6.2f}/s "
                    f"(windows: {per}); failures {len(failures[name])}"
                    + (f" e.g. {failures[name][0]}" if failures[name] else "")
                )
            assert up_witness is not None
            print(f"ratio down/up: {rate['down'] / rate['up']:.3f} (target >= 0.95)")
            print(f"the live witness cosigned {up_witness.cosigned} checkpoints")
        finally:
            for server, _ in setups.values():
                server.stop()
            if up_witness is not None:
                up_witness.close()


if __name__ == "__main__":
    main()
