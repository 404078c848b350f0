"""The transparency log at 1k and at 1M entries (`make bench`, `python -m bench log`).

Two SQLite databases at revision 0001 get 1,000 and 1,000,000 signed log entries inserted
directly (``QAHWA_BENCH_LOG_BIG`` changes the larger size); the 0002 migration builds their
stored trees (its time is printed). Then a server (uvicorn in a thread) per size answers,
over HTTP, the JSON reads (``GET /v1/log``, ``/v1/log/proof``, ``/v1/log/consistency``;
target ≤ 1.5×) and the C2SP reads (``GET /log/checkpoint``, a random full hash tile, a
random full entry bundle; target ≤ 1.2×): the medians of many requests, alternating
between the sizes request by request so that load on a shared machine falls on both alike,
and their ratio (big / 1k). For comparison, the old way (read every leaf hash, recompute
the root) is timed once at each size.

Then ``verify log`` (the monitor, all cores) audits the big log from its tiles, every
signature checked, and a bare loop of Ed25519 verifications (``verify_record``, one
process) runs over 100,000 of the same leaves beside it: the monitor's rate over the bare
loop's is the ratio (target ≥ 0.6), and the time for 1M entries is printed.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from alembic import command
from sqlalchemy import insert
from sqlmodel import select

import tlog
from fairness import Signer, canonical_json
from service import migrate, translog
from service.db import Database
from service.models import LogEntry
from service.server import ServerThread
from service.settings import Settings
from verify_cli.keys import fetch_keys
from verify_cli.log import HeadState, HttpFetch, audit
from verify_cli.monitor import _log_key

SIZES = (1_000, int(os.environ.get("QAHWA_BENCH_LOG_BIG", "1000000")))
REQUESTS = 400
BARE = 100_000


def _populate(url: str, n: int, signer: Signer) -> float:
    """Entries 0 … n-1 written as revision 0001 did; returns the 0002 migration's seconds."""
    db = Database(url)
    cfg = migrate.alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.commit()
    rows: list[dict[str, Any]] = []
    with db.write_engine.begin() as conn:
        for i in range(n):
            leaf = canonical_json(signer.signed({
                "type": "commitment", "protocol": "qahwa-fair/1", "match_id": f"m_{i:08d}",
                "game": "rng", "ruleset": "{}", "commitment": f"{i:064x}", "log_index": i,
                "created_at": "2026-12-02T00:00:00.000Z"}))
            rows.append({"idx": i, "match_id": f"m_{i:08d}", "leaf": leaf.decode(),
                         "leaf_hash": tlog.leaf_hash(leaf).hex(),
                         "created_at": "2026-12-02T00:00:00.000Z"})
            if len(rows) == 10_000:
                conn.execute(insert(LogEntry), rows)
                rows = []
        if rows:
            conn.execute(insert(LogEntry), rows)
    t0 = time.perf_counter()
    migrate.upgrade(db)
    took = time.perf_counter() - t0
    db.dispose()
    return took


def _time_ms(client: httpx.Client, n: int, rng: random.Random, what: str) -> float:
    """One request's wall time."""
    params: dict[str, Any] = {}
    if what == "head":
        path = "/v1/log"
    elif what == "proof":
        path, params = "/v1/log/proof", {"index": rng.randrange(n)}
    elif what == "consistency":
        path, params = "/v1/log/consistency", {"first": rng.randrange(1, n), "second": n}
    elif what == "checkpoint":
        path = "/log/checkpoint"
    elif what == "tile":
        path = "/log/" + tlog.Tile(0, rng.randrange(n // 256)).path
    else:
        path = "/log/" + tlog.Tile(0, rng.randrange(n // 256), entries=True).path
    t0 = time.perf_counter()
    r = client.get(path, params=params)
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    return took * 1000


def _old_way_ms(url: str, n: int) -> float:
    db = Database(url)
    t0 = time.perf_counter()
    with db.read() as s:
        hashes = translog.leaf_hashes(s, n)
    tlog.tree_hash(len(hashes), tlog.ListHashReader.from_leaf_hashes(hashes))
    took = (time.perf_counter() - t0) * 1000
    db.dispose()
    return took


def _bare_loop_rate(url: str, keys: Any) -> float:
    """Signatures per second of ``verify_record`` over BARE of the log's leaves."""
    from fairness import verify_record

    db = Database(url)
    with db.read() as s:
        rows = s.exec(select(LogEntry.leaf).limit(BARE)).all()
    db.dispose()
    docs = [json.loads(r) for r in rows]
    pub, _ = keys.pick(docs[0]["signature"]["key_id"])
    t0 = time.perf_counter()
    for d in docs:
        verify_record(d, pub)
    return len(docs) / (time.perf_counter() - t0)


def run() -> None:
    rng = random.Random(13)
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-log-") as tmp:
        clients: dict[int, httpx.Client] = {}
        servers: list[ServerThread] = []
        urls: dict[int, str] = {}
        for n in SIZES:
            d = Path(tmp) / str(n)
            urls[n] = f"sqlite:///{d / 'q.db'}"
            signer = Signer.generate()
            took = _populate(urls[n], n, signer)
            print(f"  {n:>7} entries: migration 0002 built the stored tree in {took:.2f} s")
            srv = ServerThread(Settings(database_url=urls[n], data_dir=d, master_key=None,
                                        signing_key=signer.private_b64(),
                                        signing_key_file=None,
                                        checkpoint_seconds=3600)).start()
            servers.append(srv)
            clients[n] = httpx.Client(base_url=srv.url)
            head = clients[n].get("/v1/log").json()  # first request: signs and caches
            assert head["tree_size"] == n
            clients[n].get("/v1/log/proof", params={"index": 0})
            assert clients[n].get("/log/checkpoint").text.split("\n")[1] == str(n)
        results: dict[str, dict[int, list[float]]] = {
            w: {n: [] for n in SIZES} for w in ("head", "proof", "consistency", "checkpoint",
                                                 "tile", "bundle")}
        # Request by request, alternating the sizes (and which goes first), so that the
        # load of a shared machine falls on both alike.
        for what, per in results.items():
            for i in range(REQUESTS):
                for n in (SIZES if i % 2 else SIZES[::-1]):
                    per[n].append(_time_ms(clients[n], n, rng, what))
        for c in clients.values():
            c.close()
        big_url = servers[-1].url
        keys = fetch_keys(big_url)
        fetch = HttpFetch(big_url)
        t0 = time.perf_counter()
        jobs = os.cpu_count() or 1
        res = audit(big_url, keys, _log_key(big_url, None, None), HeadState.load(None), fetch,
                    jobs=jobs)
        took = time.perf_counter() - t0
        fetch.close()
        bare = _bare_loop_rate(urls[SIZES[1]], keys)
        for srv in servers:
            srv.stop()
        small, big = SIZES
        out: dict[str, Any] = {}
        for what, per in results.items():
            a, b = statistics.median(per[small]), statistics.median(per[big])
            label = {"head": "GET /v1/log", "proof": "GET /v1/log/proof",
                     "consistency": "GET /v1/log/consistency",
                     "checkpoint": "GET /log/checkpoint", "tile": "GET /log/tile/0/N",
                     "bundle": "GET /log/tile/entries/N"}[what]
            target = {"head": "1.5", "proof": "1.5", "checkpoint": "1.2", "tile": "1.2",
                      "bundle": "1.2"}.get(what)
            print(f"  {label:<24} {a:6.2f} ms at {small // 1000}k, {b:6.2f} ms at "
                  f"{big // 1000}k: ratio {b / a:.2f}x"
                  + (f"  (target <= {target}x)" if target else ""))
            out[what] = {"ms_small": a, "ms_big": b, "ratio": b / a}
        old = {n: _old_way_ms(urls[n], n) for n in SIZES}
        print(f"  the old way (every leaf read, root recomputed): {old[small]:.1f} ms at "
              f"{small // 1000}k, {old[big]:.1f} ms at {big // 1000}k "
              f"({old[big] / old[small]:.0f}x)")
        rate = res.audited / took
        print(f"  verify log (the monitor, {jobs} jobs, from tiles, every signature checked) "
              f"audited {res.audited:,} entries in {took:.1f} s: {rate:,.0f} entries/s, 1M in "
              f"{1e6 / rate:.0f} s" + ("" if res.ok else f"  FAILED: {res.failures[:1]}"))
        print(f"  a bare loop of Ed25519 verifications of the same leaves (one process): "
              f"{bare:,.0f} /s; monitor / bare loop: {rate / bare:.2f}  (target >= 0.6)")
        out["monitor"] = {"entries_per_s": rate, "bare_per_s": bare, "ratio": rate / bare,
                          "seconds_per_1m": 1e6 / rate}
        print("  " + json.dumps({k: round(v["ratio"], 2) for k, v in out.items()}))
