"""``make bench-api``: the HTTP API under load, against a bare FastAPI endpoint.

In one run, on loopback, each setup is a fresh set of server processes on a fresh database:

- ``bare``: :mod:`bench.bare_app`, one read + one durable write per action, same database
  settings as the service; both run without uvicorn's access log (``--no-access-log``);
- ``qahwa`` on SQLite with one process, and on PostgreSQL with one process and with two
  when ``QAHWA_TEST_PG_URL`` is set: two ``qahwa serve`` processes with every request going
  to the next one (a per-request round-robin balancer, the worst case: every read catches
  up on the other process's write), and one ``qahwa serve --workers 2`` (two processes on
  one port; the kernel hands each connection to one of them, so a client's keep-alive
  connection, and with it its match, stays on one process).

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

from bench.lite_http import LiteClient

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
FAILURES: list[str] = []  # clients that stopped on an error (printed under the table row)
#: "host:port" of a qahwa server -> an operator key made for the run (``qahwa operators add``)
OPERATOR_KEYS: dict[str, str] = {}
# qahwa runs as operated (docs/deploy.md): operator keys, the per-address limit at its
# default, metrics, JSON logs. Only the per-key creation rate is raised: eight clients
# playing short matches create more than 600 a minute with the one key.
QAHWA_ENV = {"QAHWA_CREATE_RATE_PER_MINUTE": "100000"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One server process (``qahwa serve`` or the bare app) on a free loopback port."""

    def __init__(self, kind: str, url: str, data_dir: Path, workers: int = 1) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "QAHWA_DATA_DIR": str(data_dir), "BARE_DATABASE_URL": url,
               "QAHWA_DATABASE_URL": url, **QAHWA_ENV}
        if kind == "bare":
            cmd = [str(BIN / "uvicorn"), "--factory", "bench.bare_app:create_app",
                   "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning",
                   "--no-access-log"]
            probe = "/docs"
        else:
            cmd = [str(BIN / "qahwa"), "serve", "--host", "127.0.0.1", "--port", str(self.port),
                   "--database-url", url, "--workers", str(workers), "--no-access-log",
                   "--log-format", "json"]
            probe = "/healthz"
            added = subprocess.run(
                [str(BIN / "qahwa"), "operators", "add", f"bench-{self.port}-{os.getpid()}"],
                env=env, capture_output=True, text=True, check=True,
                cwd=Path(__file__).resolve().parent.parent)
            OPERATOR_KEYS[f"127.0.0.1:{self.port}"] = added.stdout.strip().splitlines()[-1]
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
        """CPU seconds this server process and its worker processes have used (user +
        system; Linux /proc)."""
        total, todo, seen = 0, [self.proc.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                if pid == self.proc.pid:
                    return float("nan")
        return total / os.sysconf("SC_CLK_TCK")

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
        self.clients = [LiteClient(u, timeout=60) for u in urls]
        self.i = 0

    def next(self) -> LiteClient:
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
    client = rot.next()
    key = OPERATOR_KEYS.get(f"{client.host}:{client.port}")
    created = client.post("/v1/matches", json=body,
                          headers=_auth(key) if key is not None else None).json()
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
    except Exception as exc:  # a failed client would skew the figures: say so, loudly
        FAILURES.append(f"client {seed}: {type(exc).__name__}: {exc}"[:300])
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
    FAILURES.clear()
    tallies = {key: Tally() for key in setups}
    for _ in range(ROUNDS):
        for key, (servers, game) in setups.items():
            load(servers, game, tallies[key], SECONDS / ROUNDS)
    return {key: t.summary() for key, t in tallies.items()}


def long_match(urls: Sequence[str], game: str) -> tuple[float, float, int]:
    """Median cost (ms) of an action early in a match and late in a long one, measured at
    the same time: match L is played to ``LONG_AT`` actions (or near its end if shorter),
    then a new match E is played 10 actions, then L and E take turns for ``LONG_SPAN``
    actions each. Returns (early, late, where the late actions start)."""
    rot = Rotation(urls)
    rnd = random.Random(7)
    try:
        # match L up to LONG_AT actions; a match that ends sooner is replaced by a new one
        # played to 70% of the length the last one reached (at most 5 tries)
        target = LONG_AT
        for _ in range(5):
            lid, ltokens, lmover = _new_match(rot, game)
            played = 0
            while played < target:
                out = _action(rot, lid, ltokens, lmover, rnd)
                played += 1
                if out["status"] != "playing":
                    break
                lmover = out["state"]["turn"]
            if played == target:
                break
            target = max(20, int(played * 0.7))
        else:
            raise RuntimeError(f"no {game} match lasted {target} actions")
        at = played
        eid, etokens, emover = _new_match(rot, game)
        for _ in range(10):
            out = _action(rot, eid, etokens, emover, rnd)
            emover = out["state"]["turn"]
        early: list[float] = []
        late: list[float] = []
        for _ in range(LONG_SPAN):
            for which in ("late", "early"):
                mid, tokens, mover = (lid, ltokens, lmover) if which == "late" else \
                    (eid, etokens, emover)
                t0 = time.monotonic()
                out = _action(rot, mid, tokens, mover, rnd)
                (late if which == "late" else early).append(time.monotonic() - t0)
                if out["status"] != "playing":
                    return 1000 * statistics.median(early), 1000 * statistics.median(late), at
                if which == "late":
                    lmover = out["state"]["turn"]
                else:
                    emover = out["state"]["turn"]
        return 1000 * statistics.median(early), 1000 * statistics.median(late), at
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


def _servers(kind: str, url: str, tmp: Path, n: int, workers: int = 1) -> list[Server]:
    data = tmp / "data"  # one key set, as replicas share them
    data.mkdir(exist_ok=True)
    out: list[Server] = []
    try:
        for _ in range(n):
            out.append(Server(kind, url, data, workers))
    except BaseException:
        for s in out:
            s.stop()
        raise
    return out


def _row(label: str, r: dict[str, float], base: float | None, base_name: str) -> None:
    ratio = f"{r['rate'] / base:.2f}× {base_name}" if base else ""
    print(f"| {label:<34} | {r['rate']:7.1f} | {r['p50']:7.1f} | {r['p99']:7.1f} "
          f"| {r['cpu']:6.2f} | {ratio} |", flush=True)
    if FAILURES:
        print(f"  !! {len(FAILURES)} client(s) failed during this table; its figures are "
              f"not comparable. First: {FAILURES[0]}", flush=True)


def run() -> None:
    pg = bool(os.environ.get("QAHWA_TEST_PG_URL"))
    tmp = Path(tempfile.mkdtemp(prefix="qahwa-bench-api-"))
    print(f"{CLIENTS} clients; each setup {SECONDS:.0f} s in {ROUNDS} windows taking turns with "
          f"the others (each after {WARMUP:.1f} s warm-up); an action = GET state + POST action; "
          "CPU ms = server CPU per action", flush=True)
    print("| setup                              | act/s   | p50 ms  | p99 ms  | CPU ms | ratio |")
    print("|---|---|---|---|---|---|")
    started: list[Server] = []

    def servers(kind: str, backend: str, key: str, n: int = 1, workers: int = 1) -> list[Server]:
        out = _servers(kind, _setup(tmp, backend, key), tmp, n, workers)
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
            # one table per game, so that at most six server processes (and their
            # connection pools) are up on the database at a time
            for game in ("hokm", "tawla"):
                res = interleaved({
                    "bare": (servers("bare", "postgres", "bare"), "bare"),
                    "1": (servers("qahwa", "postgres", game), game),
                    "2": (servers("qahwa", "postgres", game, 2), game),
                    "w": (servers("qahwa", "postgres", game, 1, 2), game),
                })
                stop_all()
                _row(f"bare FastAPI, PostgreSQL ({game} run)", res["bare"], None, "")
                _row(f"qahwa PostgreSQL 1 proc, {game}", res["1"], res["bare"]["rate"], "bare")
                _row(f"qahwa PostgreSQL 2 procs, {game}", res["2"], res["1"]["rate"], "1 proc")
                _row(f"  … as --workers 2, {game}", res["w"], res["1"]["rate"], "1 proc")

        backend = "postgres" if pg else "sqlite"
        print(f"\nlong matches on {backend}: median ms of an action early in a match (from "
              f"action 10) vs late in another ({LONG_AT} actions in, or near the end of a "
              f"shorter one), {LONG_SPAN} each, taking turns; 2 procs: every request goes "
              "to the other one")
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
