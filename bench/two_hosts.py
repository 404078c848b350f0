"""Two hosts on one PostgreSQL against one host: whole-match requests/s (docs/performance.md
"Two hosts" tells the setup and what it found).

    QAHWA_TEST_PG_URL=postgresql+psycopg://… python -m bench.two_hosts
    BENCH_BASE=<dir> …  # the hosts run that tree's code (git archive <commit> | tar -x -C <dir>)

A "host" is one ``qahwa serve`` process with a data dir of its own, as docs/deploy.md §4 has
it, pinned to a core of its own with ``taskset`` when the machine has it. The load is
bench.api's, each player keeping to one host (as a balancer with affinity does), the setups
taking turns in ``ROUNDS`` windows. Printed per game: requests/s over every request of the
flow, actions/s, server CPU ms per action, and the ratio of two hosts to one; then where
the CPU goes per action (:class:`Parts`), with the cores' busy share, so that the ceiling
on a machine of few cores is visible. The clients run on the same machine, unpinned.
Nothing passes or fails.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench.api import (
    CLIENTS,
    FAILURES,
    OPEN,
    ROUNDS,
    SECONDS,
    Server,
    Tally,
    load,
    proc_ticks,
)
from bench.pg import conninfo, fresh_database, loadavg, pg_url
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


def _machine_busy() -> int:
    """Clock ticks the machine's cores were busy (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as fh:
        cpu = [int(x) for x in fh.readline().split()[1:]]
    return sum(cpu) - cpu[3] - cpu[4]


class Parts:
    """CPU seconds per part over one window: hosts, PostgreSQL (the backends of
    ``database``), clients (this process), the rest of the machine."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, database_url: str) -> None:
        from sqlalchemy.engine import make_url

        self.database = make_url(database_url).database
        self.conninfo = conninfo(database_url)
        self.hosts = self.pg = self.clients = self.other = self.wall = 0.0

    def _backends(self) -> dict[int, int]:
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            me = conn.info.backend_pid
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.database,)
            ).fetchall()
        return {pid: proc_ticks(pid) for (pid,) in rows if pid != me}

    def start(self, servers: list[Server]) -> None:
        self._t0 = time.monotonic()
        self._pg0 = self._backends()
        self._h0 = sum(s.cpu() for s in servers)
        t = os.times()
        self._c0 = t.user + t.system
        self._m0 = _machine_busy()

    def stop(self, servers: list[Server]) -> None:
        busy = (_machine_busy() - self._m0) / self.TICK
        t = os.times()
        clients = t.user + t.system - self._c0
        hosts = sum(s.cpu() for s in servers) - self._h0
        pg1 = self._backends()
        pg = sum(v - self._pg0.get(pid, 0) for pid, v in pg1.items()) / self.TICK
        self.hosts += hosts
        self.pg += pg
        self.clients += clients
        self.other += max(0.0, busy - hosts - pg - clients)
        self.wall += time.monotonic() - self._t0


def _cpu_row(label: str, p: Parts, actions: int) -> str:
    per = 1000 / max(1, actions)
    total = p.hosts + p.pg + p.clients + p.other
    cores = os.cpu_count() or 1
    busy = total / (p.wall * cores) if p.wall else float("nan")
    return (
        f"| {label} | {p.hosts * per:.2f} | {p.pg * per:.2f} | {p.clients * per:.2f} "
        f"| {p.other * per:.2f} | {total * per:.2f} | {busy:.0%} |"
    )


def hosts(url: str, tmp: Path, n: int, tag: str) -> tuple[list[Server], bool]:
    out: list[Server] = []
    pinned = True
    for i in range(n):
        data = tmp / f"{tag}-host{i}"  # a data dir per host
        data.mkdir()
        out.append(Server("qahwa", url, data, tree=os.environ.get("BENCH_BASE") or None))
        pinned = pin(out[-1], i) and pinned
    return out, pinned


def run() -> None:
    base_url = pg_url("two hosts", " (one PostgreSQL for both hosts)")
    if base_url is None:
        return
    url = fresh_database(base_url, "bench_hosts")
    # the deployment's secrets, the same on every host (docs/deploy.md §4)
    os.environ.setdefault("QAHWA_SIGNING_KEY", Signer.generate().private_b64())
    os.environ.setdefault("QAHWA_MASTER_KEY", base64.b64encode(os.urandom(32)).decode())
    tmp = Path(tempfile.mkdtemp(prefix="qahwa-bench-hosts-"))
    print(
        f"two hosts on one PostgreSQL against one: {CLIENTS} clients playing whole matches, "
        f"each keeping to one host; {SECONDS:.0f} s per setup in {ROUNDS} windows taking turns"
    )
    print(f"load average before: {loadavg()}")
    print("| game, hosts | req/s | act/s | matches/s | p50 ms | CPU ms/act | 2 hosts / 1 |")
    print("|---|---|---|---|---|---|---|")
    cpu_rows: list[str] = []
    try:
        for game in ("hokm", "tawla"):
            FAILURES.clear()
            OPEN.clear()
            setups = {n: hosts(url, tmp, n, f"{game}-{n}") for n in (1, 2)}
            tallies = {n: Tally() for n in setups}
            parts = {n: Parts(url) for n in setups}
            try:
                for _ in range(ROUNDS):
                    for n, (servers, _) in setups.items():
                        load(
                            servers, game, tallies[n], SECONDS / ROUNDS, sticky=True, parts=parts[n]
                        )
            finally:
                for servers, _ in setups.values():
                    for s in servers:
                        s.stop()
            r1 = tallies[1].summary()
            for n, tally in tallies.items():
                r = tally.summary()
                ratio = f"{r['requests'] / r1['requests']:.2f}×" if n == 2 else ""
                print(
                    f"| {game}, {n} | {r['requests']:.1f} | {r['rate']:.1f} "
                    f"| {r['matches']:.2f} | {r['p50']:.1f} | {r['cpu']:.2f} | {ratio} |",
                    flush=True,
                )
                cpu_rows.append(_cpu_row(f"{game}, {n}", parts[n], tally.actions))
            if FAILURES:
                print(f"  !! {len(FAILURES)} client(s) failed: {FAILURES[0]}")
            if not all(pinned for _, pinned in setups.values()):
                print("  (not pinned: no taskset, or fewer than two cores)")
        cores = os.cpu_count() or 1
        print(
            "\nCPU per action by part (ms; busy: the share of all cores busy with anything "
            "during the windows)"
        )
        print("| game, hosts | hosts | PostgreSQL | clients | other | total | busy |")
        print("|---|---|---|---|---|---|---|")
        for row in cpu_rows:
            print(row)
        print(f"load average after: {loadavg()}")
        print(
            f"\n{cores} core(s) on this machine; the clients share them with the hosts "
            "(unpinned), so two hosts leave the clients less CPU than one host does."
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run()
