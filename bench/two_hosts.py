"""Two hosts on one PostgreSQL against one host: whole-match requests/s (docs/performance.md
"Two hosts").

    QAHWA_TEST_PG_URL=postgresql+psycopg://… python -m bench.two_hosts

A "host" is one ``qahwa serve`` process with a data dir of its own, as docs/deploy.md §4 has
it (the same master and signing keys in the environment; the log's key and origin from the
database), pinned to a core of its own with ``taskset`` when the machine has it: one host on
core 0, two hosts on cores 0 and 1. The load is bench.api's: ``CLIENTS`` players each
playing whole qahwa-fair/2 matches (creation, every seat commits, the lock, every seat
reveals, play, every seat keyed); each player keeps to one host (as a balancer with
affinity does; half of them on each of the two), and the setups take turns in ``ROUNDS``
windows, so load from elsewhere on a shared machine falls on both alike. Printed per game:
requests/s over every request of the flow, actions/s, server CPU ms per action, and the
ratio of two hosts to one. The clients run on the same machine, unpinned: with two hosts
they compete with the servers for both cores, which one host leaves them (said below the
table). Nothing passes or fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench.api import (
    CLIENTS,
    FAILURES,
    OPEN,
    ROUNDS,
    SECONDS,
    WARMUP,
    Server,
    Tally,
    _player,
)
from fairness import Signer


def pin(server: Server, cpu: int) -> bool:
    """Every thread of ``server``'s process on core ``cpu`` (False without taskset)."""
    if shutil.which("taskset") is None or cpu >= (os.cpu_count() or 1):
        return False
    done = subprocess.run(
        ["taskset", "-a", "-p", "-c", str(cpu), str(server.proc.pid)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def load_sticky(hosts: list[Server], game: str, tally: Tally, seconds: float) -> None:
    """``CLIENTS`` players, player i on host i mod len(hosts), for ``seconds``."""
    lat: list[float] = []
    done = [0, 0, 0, 0]
    t_start = time.monotonic() + WARMUP
    t_end = t_start + seconds
    threads = [
        threading.Thread(
            target=_player,
            args=([hosts[i % len(hosts)].url], game, 3000 + i, t_start, t_end, lat, done),
        )
        for i in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    time.sleep(max(0.0, t_start - time.monotonic()))
    cpu0 = sum(s.cpu() for s in hosts)
    for t in threads:
        t.join()
    tally.cpu += sum(s.cpu() for s in hosts) - cpu0
    tally.actions += done[0]
    tally.requests += done[1]
    tally.rolls += done[2]
    tally.matches += done[3]
    tally.seconds += seconds
    tally.lat.extend(lat)


def hosts(url: str, tmp: Path, n: int, tag: str) -> tuple[list[Server], bool]:
    out: list[Server] = []
    pinned = True
    for i in range(n):
        data = tmp / f"{tag}-host{i}"  # a data dir per host
        data.mkdir()
        out.append(Server("qahwa", url, data))
        pinned = pin(out[-1], i) and pinned
    return out, pinned


def fresh_database(base_url: str) -> str:
    """A new empty database beside ``base_url``'s: a deployment of its own (its log is
    recorded by the first host, under this run's master key)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(base_url)
    name = f"{base.database}_bench_hosts"
    engine = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def run() -> None:
    base_url = os.environ.get("QAHWA_TEST_PG_URL")
    if not base_url:
        print("two hosts: QAHWA_TEST_PG_URL is not set (one PostgreSQL for both hosts)")
        return
    url = fresh_database(base_url)
    # the deployment's secrets, the same on every host (docs/deploy.md §4)
    os.environ.setdefault("QAHWA_SIGNING_KEY", Signer.generate().private_b64())
    if "QAHWA_MASTER_KEY" not in os.environ:
        import base64

        os.environ["QAHWA_MASTER_KEY"] = base64.b64encode(os.urandom(32)).decode()
    tmp = Path(tempfile.mkdtemp(prefix="qahwa-bench-hosts-"))
    print(
        f"two hosts on one PostgreSQL against one: {CLIENTS} clients playing whole matches, "
        f"each keeping to one host; {SECONDS:.0f} s per setup in {ROUNDS} windows taking turns"
    )
    print("| game, hosts | req/s | act/s | matches/s | p50 ms | CPU ms/act | 2 hosts / 1 |")
    print("|---|---|---|---|---|---|---|")
    try:
        for game in ("hokm", "tawla"):
            one, p1 = hosts(url, tmp, 1, f"{game}-1")
            two, p2 = hosts(url, tmp, 2, f"{game}-2")
            try:
                FAILURES.clear()
                OPEN.clear()
                tallies = {1: Tally(), 2: Tally()}
                for _ in range(ROUNDS):
                    load_sticky(one, game, tallies[1], SECONDS / ROUNDS)
                    load_sticky(two, game, tallies[2], SECONDS / ROUNDS)
            finally:
                for s in one + two:
                    s.stop()
            r1, r2 = tallies[1].summary(), tallies[2].summary()
            for n, r in ((1, r1), (2, r2)):
                ratio = f"{r['requests'] / r1['requests']:.2f}×" if n == 2 else ""
                print(
                    f"| {game}, {n} | {r['requests']:.1f} | {r['rate']:.1f} "
                    f"| {r['matches']:.2f} | {r['p50']:.1f} | {r['cpu']:.2f} | {ratio} |",
                    flush=True,
                )
            if FAILURES:
                print(f"  !! {len(FAILURES)} client(s) failed: {FAILURES[0]}")
            if not (p1 and p2):
                print("  (not pinned: no taskset, or fewer than two cores)")
        cores = os.cpu_count()
        print(
            f"\n{cores} core(s) on this machine; the clients share them with the hosts "
            "(unpinned), so two hosts leave the clients less CPU than one host does."
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run()
