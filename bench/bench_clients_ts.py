"""The TypeScript client (clients/ts) against the Python one (qahwa_client): whole tawla
matches (match_length 1) played by conforming seats of each against the same ``qahwa serve``
process, in turn, with the same loop (read the view of the seat on turn, send a random
suggested action, check the transcript at the end). Prints each client's requests per
second of wall time and their ratio (target: TS ≥ 0.8 × Python); whole matches compared by
actions per second (setup, log proof and transcript check included: the server's dice differ,
so the games' lengths do, and matches per second alone mostly measures that), with the raw
matches/s ratio beside it; and the size of the client's script (its compiled modules,
gzipped). The TS client fetches a lock's log proof once per match (a second seat of the match
takes the proof its first seat checked).

The server runs with ``QAHWA_CHECKPOINT_SECONDS=0.1``: the TS client proves the lock's
inclusion under a C2SP checkpoint, which the server signs at most that often, while the
Python client reads a JSON tree head signed on request. Skipped without node and npm.

Then the TS seat's requests per match, by route, at tawla, four-player hokm and sealed
four-player hokm (``python -m bench.bench_clients_ts requests`` runs only this part).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.api import Server
from qahwa_client import Client

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "clients" / "ts"
MATCHES = 6
#: the tables whose requests per match the TS seat is measured at, and how many matches each
PER_MATCH = {"tawla": 6, "hokm": 3, "sealed-hokm": 1}


def _built(node: str, npm: str) -> Path:
    stamp = TS / "node_modules" / ".qahwa-lock-sha256"
    digest = hashlib.sha256(
        (TS / "package-lock.json").read_bytes() + (TS / "package.json").read_bytes()
    ).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TS, check=True)
        stamp.write_text(digest)
    tsc = TS / "node_modules" / "typescript" / "bin" / "tsc"
    subprocess.run([node, str(tsc), "-p", "tsconfig.test.json"], cwd=TS, check=True)
    return TS / "build"


def _python_matches(url: str, key: str, n: int) -> tuple[int, float, int]:
    count = [0]

    def hook(_req: httpx.Request) -> None:
        count[0] += 1

    rng = random.Random(11)
    actions = 0
    http = httpx.Client(timeout=30, event_hooks={"request": [hook]})
    t0 = time.perf_counter()
    with Client(url, operator_key=key, http=http) as qc:
        for _ in range(n):
            m = qc.create_match("tawla", {"match_length": 1}, ["a", "b"])
            m.start()
            view = m.seats[0].state()
            while view.status == "playing":
                assert view.turn is not None
                me = m.seats[view.turn]
                mine = (
                    me.view
                    if me.view is not None and me.view.version == view.version
                    else me.state()
                )
                if mine.status != "playing":
                    break
                d = mine.model_dump(mode="json")
                choices = d.get("suggested_actions") or d["legal_actions"]
                view = me.act(rng.choice(choices)).state
                actions += 1
            m.check_transcript()
    http.close()
    return count[0], time.perf_counter() - t0, actions


def script_size() -> tuple[int, int]:
    """The client's compiled modules (dist-like: build/src), raw and gzipped together."""
    raw = b"".join(p.read_bytes() for p in sorted((TS / "build" / "src").glob("*.js")))
    return len(raw), len(gzip.compress(raw, 9))


def requests_per_match(node: str, build: Path, url: str, key: str) -> None:
    """The TS seat's requests per match (and per action) at each of :data:`PER_MATCH`'s
    tables, with the routes they went to."""
    for table, n in PER_MATCH.items():
        out = subprocess.run(
            [node, str(build / "harness" / "bench.js"), url, key, str(n), table],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(out.stdout)
        req, act = got["requests"], got["actions"]
        print(
            f"  ts seat, {table:11s} {n} match(es): {req / n:7.1f} requests a match, "
            f"{req / max(act, 1):5.2f} an action ({act / n:.0f} actions a match)"
        )
        for route, count in sorted(got["routes"].items(), key=lambda kv: -kv[1]):
            print(f"      {count / n:7.1f}  {route}")


@contextlib.contextmanager
def _serving() -> Iterator[tuple[str, Path, Server] | None]:
    """node, the built client and a fresh ``qahwa serve`` on SQLite (checkpoints every
    0.1 s), stopped afterwards; ``None`` without node or npm."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        print("clients_ts: skipped (no node/npm)")
        yield None
        return
    build = _built(node, npm)
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-ts-") as tmp:
        srv = Server(
            "qahwa", f"sqlite:///{tmp}/bench.db", Path(tmp), env={"QAHWA_CHECKPOINT_SECONDS": "0.1"}
        )
        try:
            yield node, build, srv
        finally:
            srv.stop()


def run_requests() -> None:
    """Only :func:`requests_per_match`, against a fresh ``qahwa serve``."""
    with _serving() as serving:
        if serving is None:
            return
        node, build, srv = serving
        print("requests per match of the TS seat, one qahwa serve process")
        requests_per_match(node, build, srv.url, str(srv.key))


def run() -> None:
    with _serving() as serving:
        if serving is None:
            return
        node, build, srv = serving
        url, key = srv.url, str(srv.key)
        _python_matches(url, key, 1)  # warm the server
        py_req, py_s, py_act = _python_matches(url, key, MATCHES)
        out = subprocess.run(
            [node, str(build / "harness" / "bench.js"), url, key, str(MATCHES)],
            capture_output=True,
            text=True,
            check=True,
        )
        ts = json.loads(out.stdout)
        print("requests per match of the TS seat")
        requests_per_match(node, build, url, key)
    py_rate = py_req / py_s
    ts_rate = ts["requests"] / ts["seconds"]
    ts_act = int(ts["actions"])
    print(f"tawla matches, {MATCHES} each, one qahwa serve process (checkpoints every 0.1 s)")
    for who, req, sec, act in (
        ("python client", py_req, py_s, py_act),
        ("ts client    ", ts["requests"], ts["seconds"], ts_act),
    ):
        print(
            f"  {who}  {req:6d} requests, {act:5d} actions in {sec:6.2f} s  "
            f"{req / sec:8.1f} req/s  {act / sec:7.1f} actions/s"
        )
    print(f"  ratio ts/python requests/s: {ts_rate / py_rate:.2f}  (target ≥ 0.8)")
    print(
        f"  ratio ts/python whole matches, actions/s: {(ts_act / ts['seconds']) / (py_act / py_s):.2f}"
        "  (target ≥ 0.8; the match's setup, log proof and transcript check included)"
    )
    print(
        f"  ratio ts/python matches/s:  {py_s / ts['seconds']:.2f}  (raw: the dice differ, so the "
        f"games do: {py_act / MATCHES:.0f} and {ts_act / MATCHES:.0f} actions a match)"
    )
    print(
        f"  ts requests an action: {ts['requests'] / ts_act:.2f}, python {py_req / py_act:.2f} "
        "(each seat reads the log's new events with its view, and takes those an action logged "
        "from its answer)"
    )
    raw, gz = script_size()
    print(f"  client script (build/src/*.js): {raw / 1024:.1f} kB, {gz / 1024:.1f} kB gzipped")


if __name__ == "__main__":
    if sys.argv[1:] == ["requests"]:
        run_requests()
    else:
        run()
