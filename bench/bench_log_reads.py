"""The log's JSON reads as the log grows (``python -m bench log_reads``; docs/performance.md
"The transparency log"): ``GET /v1/log`` (the signed head) and ``GET /v1/log/proof?index=3``
(an inclusion proof of an early entry) against servers over logs of
``QAHWA_BENCH_LOG_READ_SIZES`` entries (default 300, 10,300 and 20,000), each written as the
service stores it (:class:`bench.log_fixture.TableWriter`), taking turns request by request
so that load on a shared machine falls on every size alike; ``QAHWA_BENCH_LOG_READ_ROUNDS``
(default 300) rounds. Prints the median wall time of each read per size and its ratio to the
smallest size's (the goal: head + proof at 20,000 at most 1.5× at 300); then the same two
reads called in this process without HTTP (``PublicLog.tree_head`` and ``.proof``), timed
by this thread's CPU clock: less moved by other load on a shared machine than wall time.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from fairness import Signer
from service import migrate
from service.db import Database

from . import log_fixture
from .bench_log import log_server

SIZES = [int(x) for x in os.environ.get("QAHWA_BENCH_LOG_READ_SIZES", "300,10300,20000").split(",")]
ROUNDS = int(os.environ.get("QAHWA_BENCH_LOG_READ_ROUNDS", "300"))
READS = ("head", "proof", "head + proof")
CPU_READS = ("head, CPU in process", "proof, CPU in process", "head + proof, CPU in process")


def run() -> None:
    signer = Signer.generate()
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-log-reads-") as tmp_s:
        tmp = Path(tmp_s)
        tables = {}
        for n in SIZES:
            (tmp / str(n)).mkdir()
            db = Database(f"sqlite:///{tmp}/{n}/q.db")
            migrate.upgrade(db)
            db.dispose()
            tables[n] = log_fixture.TableWriter(tmp / str(n) / "q.db")
        for chunk in log_fixture.leaves(signer.private_b64(), max(SIZES), os.cpu_count() or 1):
            for n, tw in tables.items():
                if tw.size < n:
                    tw.add(chunk[: n - tw.size])
        for tw in tables.values():
            tw.close()
        servers = {n: log_server(f"sqlite:///{tmp}/{n}/q.db", tmp / str(n), signer) for n in SIZES}
        clients = {n: httpx.Client(base_url=s.url) for n, s in servers.items()}
        try:
            for n, c in clients.items():  # first requests: the head signed and cached
                assert c.get("/v1/log").json()["tree_size"] == n
                assert c.get("/v1/log/proof", params={"index": 3}).status_code == 200
            times: dict[tuple[str, int], list[float]] = {
                (w, n): [] for w in READS + CPU_READS for n in SIZES
            }
            public = {n: s.app.state.public_log for n, s in servers.items()}
            for _ in range(ROUNDS):
                for n, c in clients.items():
                    t0 = time.perf_counter()
                    head = c.get("/v1/log")
                    t1 = time.perf_counter()
                    proof = c.get("/v1/log/proof", params={"index": 3})
                    t2 = time.perf_counter()
                    assert head.status_code == 200 and proof.status_code == 200, proof.text
                    times[("head", n)].append(t1 - t0)
                    times[("proof", n)].append(t2 - t1)
                    times[("head + proof", n)].append(t2 - t0)
                    t0 = time.thread_time()
                    public[n].tree_head()
                    t1 = time.thread_time()
                    public[n].proof(3, tree_size=None)
                    t2 = time.thread_time()
                    times[CPU_READS[0], n].append(t1 - t0)
                    times[CPU_READS[1], n].append(t2 - t1)
                    times[CPU_READS[2], n].append(t2 - t0)
        finally:
            for c in clients.values():
                c.close()
            for s in servers.values():
                s.stop()
    first, last = SIZES[0], SIZES[-1]
    print(
        f"The log's JSON reads by size: median wall ms of {ROUNDS} rounds, the sizes taking "
        "turns request by request (SQLite, one server thread each)"
    )
    print(
        "| read | "
        + " | ".join(f"{n:,} entries" for n in SIZES)
        + f" | {last:,} / {first:,} |\n|---|"
        + "---|" * (len(SIZES) + 1)
    )
    for w in READS + CPU_READS:
        med = {n: 1000 * statistics.median(times[(w, n)]) for n in SIZES}
        print(
            f"| {w} | "
            + " | ".join(f"{med[n]:.2f}" for n in SIZES)
            + f" | **{med[last] / med[first]:.2f}×** |",
            flush=True,
        )


if __name__ == "__main__":
    run()
