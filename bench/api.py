"""``make bench-api``: the HTTP API under load, against a bare FastAPI endpoint.

In one run, on loopback, each setup is a fresh set of server processes on a fresh database:

- ``bare``: :mod:`bench.bare_app`, one read + one durable write per action, same database
  settings as the service;
- ``qahwa`` on SQLite with one process, and on PostgreSQL with one process and with two
  (requests rotating between them as behind a round-robin balancer) when
  ``QAHWA_TEST_PG_URL`` is set.

The load: ``CLIENTS`` threads, each playing whole matches from creation (hokm and tawla);
an action = GET the mover's state + POST the action. Printed: actions/s, p50/p99 of an
action, and ratios. Then the cost of one action late in a long match (mexican_train, shelem
to 1000) against one early, through one process and through two in rotation; and player
throughput with 200 idle SSE watchers open against none. Benchmarks print ratios and
never pass or fail. ``BENCH_SECONDS`` (default 6) sets each setup's measured time, spread
over ``ROUNDS`` windows that take turns with the other setups of its table.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

CLIENTS = 8
SECONDS = float(os.environ.get("BENCH_SECONDS", "6"))
ROUNDS = 3
WARMUP = 0.5
WATCHERS, WATCHED_MATCHES = 200, 50
LONG_AT, LONG_SPAN = 1200, 60
RULESETS: dict[str, dict[str, Any]] = {
    "hokm": {}, "tawla": {"match_length": 1}, "bare": {},
    "mexican_train": {}, "shelem": {"target": 1000},
}
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One server process (``qahwa serve`` or the bare app) on a free loopback port."""

    def __init__(self, kind: str, url: str, data_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "QAHWA_DATA_DIR": str(data_dir), "BARE_DATABASE_URL": url,
               "QAHWA_DATABASE_URL": url}
        if kind == "bare":
            cmd = [str(BIN / "uvicorn"), "--factory", "bench.bare_app:create_app",
                   "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning",
                   "--no-access-log"]
            probe = "/docs"
        else:
            cmd = [str(BIN / "qahwa"), "serve", "--host", "127.0.0.1", "--port", str(self.port),
                   "--database-url", url]
            probe = "/healthz"
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True,
                                     cwd=Path(__file__).resolve().parent.parent)
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + probe, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{kind} server did not start")
            time.sleep(0.1)

    def cpu(self) -> float:
        """CPU seconds this server process has used (user + system; Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class Rotation:
    """Clients for several servers; each request goes to the next one."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.clients = [httpx.Client(base_url=u, timeout=60) for u in urls]
        self.i = 0

    def next(self) -> httpx.Client:
        c = self.clients[self.i % len(self.clients)]
        self.i += 1
        return c

    def close(self) -> None:
        for c in self.clients:
            c.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _new_match(rot: Rotation, game: str) -> tuple[str, list[str], int]:
    """Create and start a match; returns its id, the seat tokens and the seat on turn."""
    body: dict[str, Any] = {"game": game, "ruleset": RULESETS[game]}
    created = rot.next().post("/v1/matches", json=body).json()
    tokens = [s["token"] for s in created["seats"]]
    mid = created["match_id"]
    if game != "bare":
        r = rot.next().post(f"/v1/matches/{mid}/start", headers=_auth(tokens[0]))
        assert r.status_code == 200, r.text
        view = rot.next().get(f"/v1/matches/{mid}/state", headers=_auth(tokens[0])).json()
        return mid, tokens, int(view["turn"])
    return mid, tokens, 0


def _action(rot: Rotation, mid: str, tokens: list[str], mover: int,
            rnd: random.Random) -> dict[str, Any]:
    """One action: GET the mover's state, POST one of its suggested actions."""
    view = rot.next().get(f"/v1/matches/{mid}/state", headers=_auth(tokens[mover])).json()
    r = rot.next().post(f"/v1/matches/{mid}/actions",
                        json={"action": rnd.choice(view["suggested_actions"]),
                              "version": view["version"]},
                        headers=_auth(tokens[mover]))
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def _player(urls: Sequence[str], game: str, seed: int, t_start: float, t_end: float,
            lat: list[float], done: list[int]) -> None:
    rot = Rotation(urls)
    rot.i = seed  # spread the clients' first requests over the servers
    rnd = random.Random(seed)
    try:
        while time.monotonic() < t_end:
            mid, tokens, mover = _new_match(rot, game)
            while time.monotonic() < t_end:
                t0 = time.monotonic()
                out = _action(rot, mid, tokens, mover, rnd)
                t1 = time.monotonic()
                if t0 >= t_start:
                    lat.append(t1 - t0)
                    done[0] += 1
                if out["status"] != "playing":
                    break
                mover = out["state"]["turn"]
    finally:
        rot.close()


class Tally:
    """Actions, latencies and server CPU of one setup, summed over its windows."""

    def __init__(self) -> None:
        self.actions = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.lat: list[float] = []

    def summary(self) -> dict[str, float]:
        lat = sorted(self.lat)
        nan = float("nan")
        return {"rate": self.actions / self.seconds if self.seconds else nan,
                "cpu": 1000 * self.cpu / max(1, self.actions),
                "p50": 1000 * statistics.median(lat) if lat else nan,
                "p99": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else nan}


def load(servers: Sequence[Server], game: str, tally: Tally, seconds: float) -> None:
    """``CLIENTS`` players for ``seconds`` (after a warm-up), added to ``tally``: actions,
    latencies, and the servers' CPU (less sensitive to other load on a shared machine)."""
    urls = [s.url for s in servers]
    lat: list[float] = []
    done = [0]
    t_start = time.monotonic() + WARMUP
    t_end = t_start + seconds
    threads = [threading.Thread(target=_player, args=(urls, game, 1000 + i, t_start, t_end,
                                                      lat, done)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, t_start - time.monotonic()))
    cpu0 = sum(s.cpu() for s in servers)
    for t in threads:
        t.join()
    tally.cpu += sum(s.cpu() for s in servers) - cpu0
    tally.actions += done[0]
    tally.seconds += seconds
    tally.lat.extend(lat)


def interleaved(setups: dict[str, tuple[list[Server], str]]) -> dict[str, dict[str, float]]:
    """Each setup in ``ROUNDS`` windows, taking turns, so load from elsewhere on a shared
    machine falls on all of them alike."""
    tallies = {key: Tally() for key in setups}
    for _ in range(ROUNDS):
        for key, (servers, game) in setups.items():
            load(servers, game, tallies[key], SECONDS / ROUNDS)
    return {key: t.summary() for key, t in tallies.items()}


def long_match(urls: Sequence[str], game: str) -> tuple[float, float, int]:
    """Median cost (ms) of an action early in one long match (actions 10 to 10 +
    ``LONG_SPAN``) and late (``LONG_SPAN`` actions from ``LONG_AT``, or the match's last
    ones if it is shorter); returns (early, late, where late starts)."""
    rot = Rotation(urls)
    rnd = random.Random(7)
    try:
        mid, tokens, mover = _new_match(rot, game)
        costs: list[float] = []
        while len(costs) < LONG_AT + LONG_SPAN:
            t0 = time.monotonic()
            out = _action(rot, mid, tokens, mover, rnd)
            costs.append(time.monotonic() - t0)
            if out["status"] != "playing":
                break
            mover = out["state"]["turn"]
        at = min(LONG_AT, max(10 + LONG_SPAN, len(costs) - LONG_SPAN))
        early = statistics.median(costs[10:10 + LONG_SPAN])
        late = statistics.median(costs[at:at + LONG_SPAN])
        return 1000 * early, 1000 * late, at
    finally:
        rot.close()


class Watchers:
    """``WATCHERS`` idle SSE streams over ``WATCHED_MATCHES`` started matches."""

    def __init__(self, url: str) -> None:
        self.socks: list[socket.socket] = []
        rot = Rotation([url])
        try:
            mids = [_new_match(rot, "hokm")[0] for _ in range(WATCHED_MATCHES)]
        finally:
            rot.close()
        host, port = url.removeprefix("http://").split(":")
        for i in range(WATCHERS):
            s = socket.create_connection((host, int(port)))
            s.sendall(f"GET /v1/matches/{mids[i % len(mids)]}/events/stream?timeout=600 "
                      f"HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            self.socks.append(s)
        for s in self.socks:  # every stream is open and has sent its backlog
            s.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)

    def close(self) -> None:
        for s in self.socks:
            s.close()


def _setup(tmp: Path, backend: str, name: str) -> str:
    if backend == "sqlite":
        d = tmp / name
        d.mkdir()
        return f"sqlite:///{d / 'q.db'}"
    return os.environ["QAHWA_TEST_PG_URL"]  # one database; every setup makes new matches


def _servers(kind: str, url: str, tmp: Path, n: int) -> list[Server]:
    data = tmp / "data"  # one key set, as replicas share them
    data.mkdir(exist_ok=True)
    out: list[Server] = []
    try:
        for _ in range(n):
            out.append(Server(kind, url, data))
    except BaseException:
        for s in out:
            s.stop()
        raise
    return out


def _row(label: str, r: dict[str, float], base: float | None, base_name: str) -> None:
    ratio = f"{r['rate'] / base:.2f}× {base_name}" if base else ""
    print(f"| {label:<34} | {r['rate']:7.1f} | {r['p50']:7.1f} | {r['p99']:7.1f} "
          f"| {r['cpu']:6.2f} | {ratio} |", flush=True)


def run() -> None:
    pg = bool(os.environ.get("QAHWA_TEST_PG_URL"))
    tmp = Path(tempfile.mkdtemp(prefix="qahwa-bench-api-"))
    print(f"{CLIENTS} clients; each setup {SECONDS:.0f} s in {ROUNDS} windows taking turns with "
          f"the others (each after {WARMUP:.1f} s warm-up); an action = GET state + POST action; "
          "CPU ms = server CPU per action", flush=True)
    print("| setup                              | act/s   | p50 ms  | p99 ms  | CPU ms | ratio |")
    print("|---|---|---|---|---|---|")
    started: list[Server] = []

    def servers(kind: str, backend: str, key: str, n: int = 1) -> list[Server]:
        out = _servers(kind, _setup(tmp, backend, key), tmp, n)
        started.extend(out)
        return out

    def stop_all() -> None:
        for s in started:
            s.stop()
        started.clear()

    try:
        res = interleaved({
            "bare": (servers("bare", "sqlite", "bare"), "bare"),
            "hokm": (servers("qahwa", "sqlite", "hokm"), "hokm"),
            "tawla": (servers("qahwa", "sqlite", "tawla"), "tawla"),
        })
        stop_all()
        _row("bare FastAPI, SQLite", res["bare"], None, "")
        _row("qahwa SQLite 1 proc, hokm", res["hokm"], res["bare"]["rate"], "bare")
        _row("qahwa SQLite 1 proc, tawla", res["tawla"], res["bare"]["rate"], "bare")
        if pg:
            pg_setups: dict[str, tuple[list[Server], str]] = {
                "bare": (servers("bare", "postgres", "bare"), "bare")}
            for game in ("hokm", "tawla"):
                pg_setups[f"1 {game}"] = (servers("qahwa", "postgres", game), game)
                pg_setups[f"2 {game}"] = (servers("qahwa", "postgres", game, 2), game)
            res = interleaved(pg_setups)
            stop_all()
            _row("bare FastAPI, PostgreSQL", res["bare"], None, "")
            for game in ("hokm", "tawla"):
                one, two = res[f"1 {game}"], res[f"2 {game}"]
                _row(f"qahwa PostgreSQL 1 proc, {game}", one, res["bare"]["rate"], "bare")
                _row(f"qahwa PostgreSQL 2 procs, {game}", two, one["rate"], "1 proc")

        backend = "postgres" if pg else "sqlite"
        print(f"\nlong matches on {backend}: median ms of an action early (actions 10-"
              f"{10 + LONG_SPAN}) vs late ({LONG_SPAN} from action {LONG_AT}, or the last "
              f"{LONG_SPAN} of a shorter match); 2 procs: every request to the other one")
        print("| game, processes | early ms | late ms (from) | late/early |")
        print("|---|---|---|---|")
        for game in ("mexican_train", "shelem"):
            for n in (1, 2):
                pair = servers("qahwa", backend, f"long_{game}_{n}", n)
                try:
                    early, late, at = long_match([s.url for s in pair], game)
                finally:
                    stop_all()
                print(f"| {game}, {n} proc{'s' if n > 1 else ''} | {early:.1f} | {late:.1f} "
                      f"({at}) | {late / early:.2f}× |", flush=True)

        print(f"\nidle watchers: qahwa SQLite 1 proc, hokm; one server with {WATCHERS} idle SSE "
              f"streams open on {WATCHED_MATCHES} other matches, one without, taking turns")
        print("| setup | act/s | p50 ms | p99 ms | CPU ms | ratio |")
        print("|---|---|---|---|---|---|")
        quiet = servers("qahwa", "sqlite", "quiet")
        watched = servers("qahwa", "sqlite", "watched")
        w = Watchers(watched[0].url)
        try:
            res = interleaved({"none": (quiet, "hokm"), "watched": (watched, "hokm")})
        finally:
            w.close()
            stop_all()
        _row("no watchers", res["none"], None, "")
        _row(f"{WATCHERS} idle SSE watchers", res["watched"], res["none"]["rate"], "none")
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run()
