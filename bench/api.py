"""``make bench-api``: the HTTP API under load, against two anchors
(docs/performance.md tells what each table measures, how, and what it found).

The headline is **server CPU per action** (each server's process tree from /proc, the load
client's apart: an operator pays for server cores) against **the raw floor**: a bare
FastAPI endpoint doing one read and one durable write per action with raw DB-API (sqlite3;
psycopg on PostgreSQL) on the service's pragmas (:func:`bench.bare_app.create_raw_app`),
measured in the same run, taking turns. Beside it: the same endpoint written with plain
SQLModel sessions (:func:`bench.bare_app.create_sqlmodel_app`, the stack a FastAPI
developer writes by hand) and the protocol's own crypto per action (:func:`crypto_ms`).
Neither anchor goes through the service's code (tests/repo/test_bench_api.py). Each setup
is a fresh set of server processes on a fresh database, on loopback; ``CLIENTS`` threads
play whole keyed qahwa-fair/2 matches from creation (an action = GET the mover's state +
POST the action). qahwa-fair/1 matches are read-only in the service since migration 0008:
no v1 flow to measure. The bench's seats use roll chains of ``BENCH_CHAIN`` values instead
of 65,536 (the server checks each value against the previous one only), so client CPU does
not crowd the server's on a small machine.

Benchmarks print figures and ratios and never pass or fail. ``BENCH_SECONDS`` (default 6)
sets each setup's measured time, spread over ``ROUNDS`` windows that take turns with the
other setups of its table; ``BENCH_CLIENTS`` the number of clients (default 8);
``BENCH_PARTS`` (comma-separated: sqlite, pg, long, whole, keys, watchers; all by default)
picks tables (pg when ``QAHWA_TEST_PG_URL`` is set); ``BENCH_BASE=<a tree of the
repository>`` adds the SQLite table's qahwa servers run from that tree's code, taking turns
with this one's (an A/B of two commits in one run: ``git archive <commit> | tar -x -C
<dir>``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.lite_http import LiteClient
from bench.pg import fresh_database
from fairness import (
    V2,
    Signer,
    chain_next,
    new_nonce,
    public_key_b64,
    roll_chain,
    seat_sig_message,
    seed_commitment,
)

CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "6"))
ROUNDS = 3
WARMUP = 0.5
WATCHERS, WATCHED_MATCHES = 200, 50
LONG_AT, LONG_SPAN, LONG_BLOCK = 1200, 50, 5
RULESETS: dict[str, dict[str, Any]] = {
    "hokm": {},
    "tawla": {"match_length": 1},
    "mexican_train": {},
    "shelem": {"target": 1000},
}
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
#: the anchors (bench/bare_app.py; their clients play the game "bare"): the floor, raw
#: DB-API, and plain SQLModel sessions; "bare" is the floor's older name (profile-api)
ANCHORS = {"raw": "create_raw_app", "sqlmodel": "create_sqlmodel_app", "bare": "create_raw_app"}
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


def serve_command(qahwa: Path, port: int, database_url: str, workers: int, *args: str) -> list[str]:
    """``qahwa serve`` on 127.0.0.1:``port`` over ``database_url`` with ``workers`` worker
    processes and ``args`` (tests/support/live_server.py starts it the same way)."""
    return [
        str(qahwa),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--database-url",
        database_url,
        "--workers",
        str(workers),
        *args,
    ]


def proc_ticks(pid: int) -> int:
    """Clock ticks of CPU (user + system) process ``pid`` has used (/proc; 0 once gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _process_tree(root: int) -> Iterator[int]:
    """``root`` and every process below it, each once (Linux /proc, read as it goes: a
    process that has gone meanwhile has no children)."""
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        yield pid
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass


def add_operator(env: dict[str, str], name: str, cwd: str | Path = ROOT) -> str:
    """A new operator key (``qahwa operators add``, run in ``cwd``: its code first on
    sys.path) for the deployment ``env`` names."""
    added = subprocess.run(
        [str(BIN / "qahwa"), "operators", "add", name],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    return added.stdout.strip().splitlines()[-1]


class Server:
    """One server process (``qahwa serve`` or the bare app) on a free loopback port;
    ``env`` adds to its environment."""

    def __init__(
        self,
        kind: str,
        url: str,
        data_dir: Path,
        workers: int = 1,
        tree: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key: str | None = None  # qahwa's: an operator key made for the run
        env = {
            **os.environ,
            "QAHWA_DATA_DIR": str(data_dir),
            "BARE_DATABASE_URL": url,
            "QAHWA_DATABASE_URL": url,
            **QAHWA_ENV,
            **(env or {}),
        }
        if tree is not None:  # the server's code from another tree (BENCH_BASE)
            env["PYTHONPATH"] = os.pathsep.join([tree, str(Path(tree) / "verifier")])
        if kind in ANCHORS:
            cmd = [
                str(BIN / "uvicorn"),
                "--factory",
                f"bench.bare_app:{ANCHORS[kind]}",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
                "--no-access-log",
                "--http",  # the parser qahwa serves with (and uvicorn picks when installed)
                "httptools",
            ]
            probe = "/docs"
        else:
            cmd = serve_command(
                BIN / "qahwa", self.port, url, workers, "--no-access-log", "--log-format", "json"
            )
            probe = "/healthz"
            self.key = add_operator(env, f"bench-{self.port}-{os.getpid()}", tree or ROOT)
            OPERATOR_KEYS[f"127.0.0.1:{self.port}"] = self.key
        self.proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=tree or ROOT,  # BENCH_BASE: its tree first on sys.path (the cwd is)
        )
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
        if not Path(f"/proc/{self.proc.pid}").exists():
            return float("nan")
        return sum(map(proc_ticks, _process_tree(self.proc.pid))) / os.sysconf("SC_CLK_TCK")

    def cpu_ns(self) -> int:
        """CPU nanoseconds the live threads of this server's process tree have run
        (/proc/<pid>/task/<tid>/schedstat): finer than :meth:`cpu`'s clock ticks, for short
        spans; a thread that has exited is not counted."""
        total = 0
        for pid in _process_tree(self.proc.pid):
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    total += int((task / "schedstat").read_text().split()[0])
            except OSError:
                pass
        return total

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class Rotation:
    """Clients for several servers; each request goes to the next one. ``requests`` counts
    the requests sent from ``t_start`` on (the measured window)."""

    def __init__(self, urls: Sequence[str], t_start: float = 0.0) -> None:
        self.clients = [LiteClient(u, timeout=60) for u in urls]
        self.i = 0
        self.t_start = t_start
        self.requests = 0

    def next(self) -> LiteClient:
        c = self.clients[self.i % len(self.clients)]
        self.i += 1
        if self.t_start and time.monotonic() >= self.t_start:
            self.requests += 1
        return c

    def close(self) -> None:
        for c in self.clients:
            c.close()


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# A setup's game is "<game>" (qahwa-fair/2, every seat keyed, as a conforming client
# plays) or "<game>/unkeyed" (v2, no seat keys).
BENCH_CHAIN = 1024  # roll-chain length the bench's seats use (the spec's clients: 65,536)


@dataclass
class Play:
    """One match a bench client plays: its seats' tokens and secrets (none for the bare
    endpoint's one seat)."""

    match_id: str
    tokens: list[str]
    mover: int
    signers: list[Signer | None] = field(default_factory=list)
    chains: list[list[bytes] | None] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)

    def complete(
        self, view: dict[str, Any], action: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None]:
        """The mover's ``action`` at ``view`` as its seat sends it (v2): with the seat's next
        roll-chain value where one is owed, and its signature over the chain head when keyed."""
        mover, chain, signer = self.mover, self.chains[self.mover], self.signers[self.mover]
        if chain is not None and action["type"] in ("roll", "roll_value"):
            action = {**action, "value": chain[self.sent[mover] + 1].hex()}
        if signer is None:
            return action, None
        event = {"type": "action", "seat": mover, "action": action}
        return action, signer.sign_bytes(seat_sig_message(self.match_id, view["chain"], event))

    def acted(self, action: dict[str, Any], out: dict[str, Any]) -> None:
        """The mover's ``action`` was accepted with answer ``out``: its value is used up."""
        if "value" in action:
            self.sent[self.mover] += 1
        self.mover = out["state"]["turn"] if out["status"] == "playing" else self.mover


def _new_match(rot: Rotation, game: str) -> Play:
    """Create and start a match (every seat commits, the lock is read, every seat
    reveals); the seat on turn."""
    name, _, variant = game.partition("/")
    client = rot.next()
    key = OPERATOR_KEYS.get(f"{client.host}:{client.port}")  # none for the bare endpoint
    created = client.post(
        "/v1/matches",
        json={"game": name, "ruleset": RULESETS.get(name, {})},
        headers=_auth(key) if key is not None else None,
    ).json()
    mid = created["match_id"]
    tokens = [s["token"] for s in created["seats"]]
    if name == "bare":  # its one seat keeps no secrets
        return Play(mid, tokens, 0, [None], [None], [0])
    fresh = '"fresh_rolls":true' in created["ruleset"]
    play = Play(mid, tokens, 0)
    nonces = []
    for i, tok in enumerate(tokens):
        signer = Signer.generate() if variant != "unkeyed" else None
        chain = roll_chain(mid, i, secrets.token_bytes(32), BENCH_CHAIN) if fresh else None
        nonces.append(new_nonce().hex())
        play.signers.append(signer)
        play.chains.append(chain)
        play.sent.append(0)
        r = rot.next().post(
            f"/v1/matches/{mid}/seats/{i}/commit",
            headers=_auth(tok),
            json={
                "seed_commitment": seed_commitment(mid, i, nonces[i], f"bench-{i}"),
                "key": public_key_b64(signer.public_key) if signer else None,
                "roll_chain": chain[0].hex() if chain else None,
            },
        )
        assert r.status_code == 200, r.text
    r = rot.next().get(f"/v1/matches/{mid}/lock")
    assert r.status_code == 200, r.text
    for i, tok in enumerate(tokens):
        r = rot.next().post(
            f"/v1/matches/{mid}/seats/{i}/reveal",
            headers=_auth(tok),
            json={"client_seed": f"bench-{i}", "nonce": nonces[i]},
        )
        assert r.status_code == 200, r.text
    play.mover = int(r.json()["turn"])
    return play


def _action(rot: Rotation, m: Play, rnd: random.Random) -> dict[str, Any]:
    """One action: GET the mover's state, POST one of its suggested actions (v2: with the
    seat's next roll-chain value where one is owed, signed over the chain head if keyed)."""
    mover = m.mover
    view = rot.next().get(f"/v1/matches/{m.match_id}/state", headers=_auth(m.tokens[mover])).json()
    action, sig = m.complete(view, rnd.choice(view["suggested_actions"]))
    body: dict[str, Any] = {"action": action, "version": view["version"]}
    if sig is not None:
        body["sig"] = sig
    r = rot.next().post(
        f"/v1/matches/{m.match_id}/actions", json=body, headers=_auth(m.tokens[mover])
    )
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    m.acted(action, out)
    out["rolled"] = action["type"] == "roll"
    return out


#: the match each client was playing when its last window ended, with its random source:
#: its next window of the same setup goes on with it, so whole matches are played (and
#: their setup requests weigh as in play) rather than only their first actions
OPEN: dict[tuple[tuple[str, ...], str, int], tuple[Play, random.Random]] = {}


def _player(
    urls: Sequence[str],
    game: str,
    seed: int,
    t_start: float,
    t_end: float,
    tally: Tally,
) -> None:
    """Plays whole matches, going on with the one it left at the end of its last window;
    adds its actions, requests, rolls and matches ended in the measured window to ``tally``."""
    rot = Rotation(urls, t_start)
    rot.i = seed  # spread the clients' first requests over the servers
    key = (tuple(urls), game, seed)
    m, rnd = OPEN.pop(key, (None, random.Random(seed)))
    try:
        while time.monotonic() < t_end:
            m = m or _new_match(rot, game)
            t0 = time.monotonic()
            out = _action(rot, m, rnd)
            t1 = time.monotonic()
            if t0 >= t_start:
                tally.lat.append(t1 - t0)
                tally.actions += 1
                tally.rolls += out["rolled"]
            if out["status"] != "playing":
                tally.matches += t0 >= t_start
                m = None
        if m is not None:
            OPEN[key] = (m, rnd)
    except Exception as exc:  # a failed client would skew the figures: say so, loudly
        FAILURES.append(f"client {seed}: {type(exc).__name__}: {exc}"[:300])
    finally:
        tally.requests += rot.requests
        rot.close()


class Tally:
    """Actions, latencies and server CPU of one setup, summed over its windows."""

    def __init__(self) -> None:
        self.actions = 0
        self.requests = 0
        self.rolls = 0
        self.matches = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.lat: list[float] = []

    def summary(self) -> dict[str, float]:
        lat = sorted(self.lat)
        nan = float("nan")
        per_s = (lambda n: n / self.seconds) if self.seconds else (lambda n: nan)
        return {
            "rate": per_s(self.actions),
            "requests": per_s(self.requests),
            "rolls": per_s(self.rolls),
            "matches": per_s(self.matches),
            "cpu": 1000 * self.cpu / max(1, self.actions),
            "p50": 1000 * statistics.median(lat) if lat else nan,
            "p99": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else nan,
        }


def load(
    servers: Sequence[Server],
    game: str,
    tally: Tally,
    seconds: float,
    *,
    sticky: bool = False,
    parts: Any = None,
) -> None:
    """``CLIENTS`` players for ``seconds`` (after a warm-up), added to ``tally``: actions,
    latencies, and the servers' CPU (less sensitive to other load on a shared machine).
    Each player uses every server in turn, or with ``sticky`` player i keeps to server
    i mod len(servers); ``parts`` (bench.two_hosts.Parts) times the CPU by part over the
    window."""
    urls = [s.url for s in servers]
    t_start = time.monotonic() + WARMUP
    t_end = t_start + seconds
    seed0 = 3000 if sticky else 1000

    def player(i: int) -> threading.Thread:
        mine = [urls[i % len(urls)]] if sticky else urls
        return threading.Thread(target=_player, args=(mine, game, seed0 + i, t_start, t_end, tally))

    threads = [player(i) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, t_start - time.monotonic()))
    cpu0 = sum(s.cpu() for s in servers)
    if parts is not None:
        parts.start(servers)
    for t in threads:
        t.join()
    if parts is not None:
        parts.stop(servers)
    tally.cpu += sum(s.cpu() for s in servers) - cpu0
    tally.seconds += seconds


def crypto_ms(n: int = 300) -> float:
    """CPU ms (this thread's) of what qahwa-fair/2 itself asks of a server per keyed action:
    one Ed25519 verification of a seat's signature, one SHA-256 chain step over the
    canonical JSON of the event, one Ed25519 signing of the receipt (a five-key record over
    its canonical JSON) — with ``cryptography``'s OpenSSL, as the server does."""
    server, seat = Signer.generate(), Signer.generate()
    pub = seat.public_key
    mid = "m_" + secrets.token_hex(10)
    head = hashlib.sha256(b"qahwa bench").digest()
    event = {"type": "action", "seat": 1, "action": {"type": "play", "card": "QH"}}
    msg = seat_sig_message(mid, head, event)
    sig_b64 = seat.sign_bytes(msg)
    sig = base64.b64decode(sig_b64)
    full = {"seq": 40, **event, "sig": sig_b64}
    t0 = time.thread_time()
    for _ in range(n):
        pub.verify(sig, msg)
        nxt = chain_next(head, full)
        server.signed(
            {
                "type": "receipt",
                "protocol": V2.name,
                "match_id": mid,
                "seq": 40,
                "chain": nxt.hex(),
            }
        )
    return 1000 * (time.thread_time() - t0) / n


#: the protocol's crypto (:func:`crypto_ms`) of each round of the last :func:`interleaved`
CRYPTO: list[float] = []


#: setups taking turns: a name -> (its servers, the game its clients play)
Setups = dict[str, tuple[list[Server], str]]


def interleaved(setups: Setups) -> dict[str, dict[str, float]]:
    """Each setup in ``ROUNDS`` windows, taking turns, so load from elsewhere on a shared
    machine falls on all of them alike; after each round (the clients idle) the protocol's
    crypto is timed (:data:`CRYPTO`)."""
    FAILURES.clear()
    OPEN.clear()  # matches of servers that are gone (their ports may be reused)
    CRYPTO.clear()
    tallies = {key: Tally() for key in setups}
    for _ in range(ROUNDS):
        for key, (servers, game) in setups.items():
            load(servers, game, tallies[key], SECONDS / ROUNDS)
        CRYPTO.append(crypto_ms())
    return {key: t.summary() for key, t in tallies.items()}


def long_match(servers: Sequence[Server], game: str) -> tuple[Tally, Tally, int]:
    """The cost of an action late in a long match against one in the first ``LONG_SPAN``
    of a fresh match, measured at the same time: match L is played to ``LONG_AT`` actions
    (or near its end if shorter), then a new match E is started and the two take turns in
    blocks of ``LONG_BLOCK`` actions, ``LONG_SPAN`` each (one client: the servers' CPU over
    a block is that block's). Returns (early, late, where the late actions start)."""
    rot = Rotation([s.url for s in servers])
    rnd = random.Random(7)
    try:
        # match L up to LONG_AT actions; a match that ends sooner is replaced by a new one
        # played to 70% of the length the last one reached (at most 5 tries)
        target = LONG_AT
        for _ in range(5):
            lm = _new_match(rot, game)
            played = 0
            while played < target:
                out = _action(rot, lm, rnd)
                played += 1
                if out["status"] != "playing":
                    break
            if played == target:
                break
            target = max(20, int(played * 0.7))
        else:
            raise RuntimeError(f"no {game} match lasted {target} actions")
        at = played
        em = _new_match(rot, game)
        early, late = Tally(), Tally()
        for _ in range(LONG_SPAN // LONG_BLOCK):
            for m, tally in ((lm, late), (em, early)):
                cpu0 = sum(s.cpu_ns() for s in servers)
                for _ in range(LONG_BLOCK):
                    t0 = time.monotonic()
                    out = _action(rot, m, rnd)
                    tally.lat.append(time.monotonic() - t0)
                    tally.actions += 1
                    if out["status"] != "playing":
                        break
                tally.cpu += (sum(s.cpu_ns() for s in servers) - cpu0) / 1e9
                if out["status"] != "playing":
                    return early, late, at
        return early, late, at
    finally:
        rot.close()


class Watchers:
    """``WATCHERS`` idle SSE streams over ``WATCHED_MATCHES`` started matches."""

    def __init__(self, url: str) -> None:
        self.socks: list[socket.socket] = []
        rot = Rotation([url])
        try:
            mids = [_new_match(rot, "hokm").match_id for _ in range(WATCHED_MATCHES)]
        finally:
            rot.close()
        host, port = url.removeprefix("http://").split(":")
        for i in range(WATCHERS):
            s = socket.create_connection((host, int(port)))
            s.sendall(
                f"GET /v1/matches/{mids[i % len(mids)]}/events/stream?timeout=600 "
                f"HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
            )
            self.socks.append(s)
        for s in self.socks:  # every stream is open and has sent its backlog
            s.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(65536)

    def close(self) -> None:
        for s in self.socks:
            s.close()


HEADER = (
    "| setup | server CPU ms/action | base / this (CPU) | floor / this (CPU) | act/s "
    "| p50 ms | p99 ms | act/s this / base | p99 this / base |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def _row(
    label: str,
    r: dict[str, float],
    base: dict[str, float] | None = None,
    base_name: str = "",
    floor: float | None = None,
) -> None:
    """One setup: its server CPU per action first, then the ratios of the base's CPU and of
    the floor (the base's CPU + the protocol's crypto) to it (1.0 = as cheap; higher is
    better), then throughput and latency beside."""
    on = f" {base_name}" if base_name else ""
    cpu_ratio = f"{base['cpu'] / r['cpu']:.2f}×{on}" if base else ""
    floor_ratio = f"{floor / r['cpu']:.2f}×" if floor else ""
    rate_ratio = f"{r['rate'] / base['rate']:.2f}×" if base else ""
    p99_ratio = f"{r['p99'] / base['p99']:.2f}×" if base else ""
    print(
        f"| {label} | **{r['cpu']:.2f}** | {cpu_ratio} | {floor_ratio} | {r['rate']:.1f} "
        f"| {r['p50']:.1f} | {r['p99']:.1f} | {rate_ratio} | {p99_ratio} |",
        flush=True,
    )
    _failures()


def _failures() -> None:
    if FAILURES:
        print(
            f"  !! {len(FAILURES)} client(s) failed during this table; its figures are "
            f"not comparable. First: {FAILURES[0]}",
            flush=True,
        )


ANCHOR_HEADER = (
    "| setup | server CPU ms/action | **raw floor / this** | SQLModel / this "
    "| (raw + crypto) / this | act/s | p50 ms | p99 ms | p99 this / raw |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def _anchor_rows(res: dict[str, dict[str, float]], backend: str, games: Sequence[str]) -> None:
    """The headline table's rows: the two anchors, the protocol's crypto, then each qahwa
    setup of ``games`` (keys of ``res``) with its ratios: the raw floor's CPU per action
    over its own (1.0: as cheap as raw DB-API; higher is better), plain SQLModel's over its
    own, and (raw + crypto) over its own."""
    raw, orm = res["raw"], res["sqlmodel"]
    crypto = statistics.median(CRYPTO)

    def row(label: str, r: dict[str, float], ratios: bool = True) -> None:
        cells = (
            f"**{raw['cpu'] / r['cpu']:.2f}×** | {orm['cpu'] / r['cpu']:.2f}× "
            f"| {(raw['cpu'] + crypto) / r['cpu']:.2f}×"
            if ratios
            else " | | "
        )
        print(
            f"| {label} | **{r['cpu']:.2f}** | {cells} | {r['rate']:.1f} | {r['p50']:.1f} "
            f"| {r['p99']:.1f} | {r['p99'] / raw['p99']:.2f}× |",
            flush=True,
        )
        _failures()

    row(f"raw DB-API ({'sqlite3' if backend == 'SQLite' else 'psycopg'}), {backend}", raw, False)
    row(f"plain SQLModel sessions, {backend}", orm)
    print(
        f"| the protocol's crypto per action (verify + chain step + receipt signing; "
        f"median of {len(CRYPTO)}, between windows) | {crypto:.2f} | | | | | | | |",
        flush=True,
    )
    for g in games:
        row(f"qahwa {backend}, {g}", res[g])


def _whole_row(label: str, r: dict[str, float]) -> None:
    print(
        f"| {label} | {r['requests']:.1f} | {r['rate']:.1f} | {r['matches']:.2f} "
        f"| {r['rolls']:.1f} | {r['p50']:.1f} | {r['cpu']:.2f} |",
        flush=True,
    )
    _failures()


PARTS = ("sqlite", "pg", "long", "whole", "keys", "watchers")


def run(parts: Sequence[str] = PARTS) -> None:
    """The tables of ``parts`` (``BENCH_PARTS``, comma-separated; all by default)."""
    pg = bool(os.environ.get("QAHWA_TEST_PG_URL"))
    tmp = Path(tempfile.mkdtemp(prefix="qahwa-bench-api-"))
    (tmp / "data").mkdir()  # one key set, as replicas share them
    print(
        f"{CLIENTS} clients; each setup {SECONDS:.0f} s in {ROUNDS} windows taking turns with "
        f"the others (each after {WARMUP:.1f} s warm-up); an action = GET state + POST action "
        "(qahwa: keyed qahwa-fair/2, whole matches). Server CPU ms/action = the server "
        "process tree's CPU (user + system, /proc; the load client apart) over the actions "
        "of its windows; base / this = the base's CPU per action over this one's (1.0: as "
        "cheap as the base; higher is better)",
        flush=True,
    )
    started: list[Server] = []
    # a database of the run's own (keys and log made by this run's data dir, not a previous
    # run's, whose master key this one lacks)
    pg_db = fresh_database(os.environ["QAHWA_TEST_PG_URL"], "bench_api") if pg else ""

    def servers(
        kind: str, backend: str, key: str, n: int = 1, workers: int = 1, tree: str | None = None
    ) -> list[Server]:
        if backend == "sqlite":
            (tmp / key).mkdir()
            url = f"sqlite:///{tmp / key / 'q.db'}"
        else:  # one fresh database for the run; every setup makes new matches
            url = pg_db
        for _ in range(n):
            started.append(Server(kind, url, tmp / "data", workers, tree))
        return started[-n:]

    def stop_all() -> None:
        for s in started:
            s.stop()
        started.clear()

    def table(title: str, header: str, setups: Setups) -> dict[str, dict[str, float]]:
        print(title)
        print(header)
        try:
            return interleaved(setups)
        finally:
            stop_all()

    try:
        if "sqlite" in parts:
            base = os.environ.get("BENCH_BASE")
            first: Setups = {
                "raw": (servers("raw", "sqlite", "raw"), "bare"),
                "sqlmodel": (servers("sqlmodel", "sqlite", "sqlmodel"), "bare"),
                "hokm": (servers("qahwa", "sqlite", "hokm"), "hokm"),
                "tawla": (servers("qahwa", "sqlite", "tawla"), "tawla"),
            }
            games = ["hokm", "tawla"]
            if base:  # the same servers from another tree, taking turns with these
                for g in ("hokm", "tawla"):
                    first[f"{g}@base"] = (servers("qahwa", "sqlite", f"{g}_base", tree=base), g)
                games += ["hokm@base", "tawla@base"]
            res = table(
                "\n**Server CPU per action, SQLite, 1 process each**, against the raw floor",
                ANCHOR_HEADER,
                first,
            )
            _anchor_rows(res, "SQLite", games)

        if pg and "pg" in parts:
            # one table per game, so that at most six server processes (and their
            # connection pools) are up on the database at a time
            for game in ("hokm", "tawla"):
                res = table(
                    f"\n**Server CPU per action, PostgreSQL, {game}** (the database's own "
                    "processes are charged to no setup)",
                    ANCHOR_HEADER,
                    {
                        "raw": (servers("raw", "postgres", "raw"), "bare"),
                        "sqlmodel": (servers("sqlmodel", "postgres", "sqlmodel"), "bare"),
                        "1": (servers("qahwa", "postgres", game), game),
                        "2": (servers("qahwa", "postgres", game, 2), game),
                    },
                )
                res[game] = res["1"]
                _anchor_rows(res, "PostgreSQL", [game])
                print(HEADER)
                _row(f"qahwa PostgreSQL 2 procs, {game}", res["2"], res["1"], "1 proc")

        if "long" in parts:
            backend = "postgres" if pg else "sqlite"
            print(
                f"\n**Long matches on {backend}**: an action late in a match ({LONG_AT} actions "
                f"in, or near the end of a shorter one) against one in the first {LONG_SPAN} of "
                f"a fresh match, {LONG_SPAN} each, taking turns in blocks of {LONG_BLOCK}; one "
                "client; server CPU from /proc/<pid>/task/*/schedstat; 2 procs: every request "
                "goes to the other one"
            )
            print(
                "| game, processes | CPU ms early | CPU ms late (from) | late / early (CPU) "
                "| p50 ms early | p50 ms late | late / early (p50) |"
            )
            print("|---|---|---|---|---|---|---|")
            for game in ("mexican_train", "shelem"):
                for n in (1, 2):
                    try:
                        early_t, late_t, at = long_match(
                            servers("qahwa", backend, f"long_{game}_{n}", n), game
                        )
                    finally:
                        stop_all()
                    early, late = early_t.summary(), late_t.summary()
                    print(
                        f"| {game}, {n} proc{'s' if n > 1 else ''} | {early['cpu']:.2f} "
                        f"| {late['cpu']:.2f} ({at}) | **{late['cpu'] / early['cpu']:.2f}×** "
                        f"| {early['p50']:.1f} | {late['p50']:.1f} "
                        f"| {late['p50'] / early['p50']:.2f}× |",
                        flush=True,
                    )

        if "whole" in parts:
            res = table(
                "\nwhole matches, qahwa SQLite 1 proc: commit, lock, reveal, play, every seat "
                "keyed; req/s counts every request of the flow; tawla turns/s = rolls/s (a "
                "roll + the opponent's value)",
                "| setup | req/s | act/s | matches/s | turns/s | p50 ms | CPU ms |\n"
                "|---|---|---|---|---|---|---|",
                {g: (servers("qahwa", "sqlite", f"whole_{g}"), g) for g in ("hokm", "tawla")},
            )
            for game in ("hokm", "tawla"):
                _whole_row(f"{game}, qahwa-fair/2", res[game])

        if "keys" in parts:
            res = table(
                "\nseat keys, qahwa SQLite 1 proc, v2: every seat keyed (signatures, receipts "
                "and their checks) against no seat keyed",
                HEADER,
                {
                    f"{g}{v}": (servers("qahwa", "sqlite", f"keys_{g}{v.strip('/')}"), g + v)
                    for g in ("hokm", "tawla")
                    for v in ("/unkeyed", "")
                },
            )
            for g in ("hokm", "tawla"):
                _row(f"{g}, no seat keyed", res[f"{g}/unkeyed"])
                _row(f"{g}, every seat keyed", res[g], res[f"{g}/unkeyed"], "unkeyed")

        if "watchers" in parts:
            quiet = servers("qahwa", "sqlite", "quiet")
            watched = servers("qahwa", "sqlite", "watched")
            w = Watchers(watched[0].url)
            try:
                res = table(
                    f"\nidle watchers: qahwa SQLite 1 proc, hokm; one server with {WATCHERS} "
                    f"idle SSE streams open on {WATCHED_MATCHES} other matches, one without, "
                    "taking turns",
                    HEADER,
                    {"none": (quiet, "hokm"), "watched": (watched, "hokm")},
                )
            finally:
                w.close()
            _row("no watchers", res["none"])
            _row(f"{WATCHERS} idle SSE watchers", res["watched"], res["none"], "none")
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    wanted = [p.strip() for p in os.environ.get("BENCH_PARTS", ",".join(PARTS)).split(",")]
    unknown = [p for p in wanted if p not in PARTS]
    if unknown:
        sys.exit(f"BENCH_PARTS: unknown part(s) {', '.join(unknown)}; known: {', '.join(PARTS)}")
    run(wanted)


if __name__ == "__main__":
    main()
