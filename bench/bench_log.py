"""The transparency log at 1k and at 1M entries (`make bench`, `python -m bench log`;
docs/performance.md "The transparency log" tells what is measured and what it found).

One stream of signed leaves (:mod:`bench.log_fixture`) is written, without the service, as
the service's tables of three SQLite databases — the first 1,000 entries, the first
``QAHWA_BENCH_LOG_HTTP`` (default 51,200) and all ``QAHWA_BENCH_LOG_BIG`` (default
1,000,000) — and as C2SP tile directories of the middle and the big size, through
:mod:`tlog`. Then **reads, flat in size**: a server (uvicorn in a thread) per database of 1k
and of the big size answers each read of :data:`READS` ``QAHWA_BENCH_LOG_REQUESTS`` (600)
times, the sizes alternating request by request so that load on a shared machine falls on
both alike (the C2SP reads also in the server's process, no HTTP; the old way, every leaf
hash read and the root recomputed, once). Then **the monitor**: ``verify log``'s audit over
HTTP at the middle size, and from the tile directories, followed as a log that grows (one
audit per checkpoint), with one job and with ``QAHWA_BENCH_LOG_JOBS`` (default all cores);
beside each, a bare single-threaded loop of Ed25519 verifications over ``BARE`` of the same
leaves, timed in slices between its audits, and the monitor's rate over the bare loop's.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

import tlog
from fairness import Signer, canonical_json
from service import migrate, translog
from service.db import Database
from service.server import ServerThread
from service.settings import Settings
from verify_cli.keys import KeySet
from verify_cli.log_state import HeadState, HttpFetch
from verify_cli.monitor import DirSource, MonitorResult, Source, audit

from . import log_fixture

SMALL = 1_000
MID = int(os.environ.get("QAHWA_BENCH_LOG_HTTP", "51200"))
BIG = int(os.environ.get("QAHWA_BENCH_LOG_BIG", "1000000"))
REQUESTS = int(os.environ.get("QAHWA_BENCH_LOG_REQUESTS", "600"))
BARE = 50_000  # leaves the bare loop verifies beside each monitor run
ORIGIN = "bench.qahwa.test/log"
NOTE_SEED = b"\x07" * 32


def log_server(url: str, data_dir: Path, signer: Signer) -> ServerThread:
    """A server on ``url``'s log (the bench's origin and note key, signed by ``signer``),
    started; its checkpointer left idle for the bench's hour."""
    return ServerThread(
        Settings(
            database_url=url,
            data_dir=data_dir,
            master_key=None,
            signing_key=signer.private_b64(),
            signing_key_file=None,
            log_origin=ORIGIN,
            log_key=base64.b64encode(NOTE_SEED).decode(),
            checkpoint_seconds=3600,
        )
    ).start()


def _tile(n: int, rng: random.Random, entries: bool) -> str:
    return "/log/" + tlog.Tile(0, rng.randrange(n // 256), entries=entries).path


#: the reads timed: label, (the log's size, a random source) -> path and query, target ratio
READS: dict[str, tuple[str, Callable[[int, random.Random], tuple[str, dict[str, int]]], str]] = {
    "checkpoint": ("GET /log/checkpoint", lambda n, rng: ("/log/checkpoint", {}), "1.2"),
    "tile": ("GET /log/tile/0/N", lambda n, rng: (_tile(n, rng, False), {}), "1.2"),
    "bundle": ("GET /log/tile/entries/N", lambda n, rng: (_tile(n, rng, True), {}), "1.2"),
    "head": ("GET /v1/log", lambda n, rng: ("/v1/log", {}), "1.5"),
    "proof": (
        "GET /v1/log/proof",
        lambda n, rng: ("/v1/log/proof", {"index": rng.randrange(n)}),
        "1.5",
    ),
    "consistency": (
        "GET /v1/log/consistency",
        lambda n, rng: ("/v1/log/consistency", {"first": rng.randrange(1, n), "second": n}),
        "",
    ),
}


def _time_ms(client: httpx.Client, n: int, rng: random.Random, what: str) -> float:
    """One request's wall time."""
    path, params = READS[what][1](n, rng)
    t0 = time.perf_counter()
    r = client.get(path, params=params)
    took = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    return took * 1000


def _inproc_ms(srv: ServerThread, n: int, rng: random.Random, what: str) -> float:
    """One C2SP read inside the server's process (no HTTP)."""
    c2sp, (path, _) = srv.app.state.log_c2sp, READS[what][1](n, rng)
    t0 = time.perf_counter()
    if what == "checkpoint":
        c2sp.checkpoint()
    else:
        c2sp.tile(path.removeprefix("/log/"))
    return (time.perf_counter() - t0) * 1000


def _old_way_ms(url: str, n: int) -> float:
    db = Database(url)
    t0 = time.perf_counter()
    with db.read() as s:
        hashes = translog.leaf_hashes(s, n, log=1)
    tlog.tree_hash(len(hashes), tlog.ListHashReader.from_leaf_hashes(hashes))
    took = (time.perf_counter() - t0) * 1000
    db.dispose()
    return took


def _bare_pairs(tiles: Path, n: int, count: int) -> list[tuple[bytes, bytes]]:
    """(signature, signed bytes) of ``count`` leaves spread over the n entries."""
    bundles = n // tlog.TILE_WIDTH
    step = max(1, bundles * tlog.TILE_WIDTH // count)
    out: list[tuple[bytes, bytes]] = []
    for b in range(0, bundles, max(1, step)):
        t = tlog.Tile(0, b, entries=True)
        for e in tlog.parse_bundle((tiles / t.path).read_bytes(), t):
            doc = json.loads(e)
            sig = doc.pop("signature")
            out.append((base64.b64decode(sig["value"]), canonical_json(doc)))
        if len(out) >= count:
            break
    return out[:count]


class _AtSize(DirSource):
    """The tile directory as it was when the log had ``size`` entries: its checkpoint then
    (the tiles of that size are prefixes of, or the same as, the later ones)."""

    def __init__(self, root: Path, name: str) -> None:
        super().__init__(root)
        self.name = name

    def raw(self, path: str) -> tuple[int, bytes]:
        return super().raw("/log/" + self.name if path == "/log/checkpoint" else path)


@dataclass
class Monitor:
    """What every monitor run shares: the keys, and the bare loop's key and pairs."""

    keys: KeySet
    log_key: tlog.Verifier
    pub: Any
    pairs: list[tuple[bytes, bytes]]

    def run(
        self, label: str, base: str, sources: list[Source], jobs: int, state: HeadState
    ) -> tuple[float, float]:
        """The monitor follows a log — one audit per source (a checkpoint of a growing log),
        each resuming where the one before stopped (a consistency proof between them) —
        with a slice of the bare loop before each audit and after the last, so that the two
        share the machine's load through the whole run. Returns (seconds, ratio)."""
        per = max(1, len(self.pairs) // (len(sources) + 1))
        mon_s = bare_s = 0.0
        bare_n = audited = 0
        ok = True
        failures: list[str] = []

        def bare_slice(i: int) -> None:
            nonlocal bare_s, bare_n
            part = self.pairs[i * per : (i + 1) * per]
            verify = self.pub.verify
            t0 = time.perf_counter()
            for sig, msg in part:
                verify(sig, msg)
            bare_s += time.perf_counter() - t0
            bare_n += len(part)

        gc.collect()
        for i, source in enumerate(sources):
            bare_slice(i)
            t0 = time.perf_counter()
            res: MonitorResult = audit(base, self.keys, self.log_key, state, source, jobs=jobs)
            mon_s += time.perf_counter() - t0
            audited += res.audited
            ok = ok and res.ok
            failures += res.failures
        bare_slice(len(sources))
        rate, bare = audited / mon_s, bare_n / bare_s
        print(
            f"  {label}: {audited:,} entries in {mon_s:.1f} s"
            + (f" ({len(sources)} audits of a growing log)" if len(sources) > 1 else "")
            + f", {rate:,.0f} entries/s; bare loop beside it {bare:,.0f} /s ({bare_n:,} "
            f"verifications around the audits, one process): ratio {rate / bare:.2f}  "
            "(target >= 0.6)" + ("" if ok else f"  FAILED: {failures[:2]}")
        )
        return mon_s, rate / bare


def run() -> None:
    rng = random.Random(13)
    jobs = int(os.environ.get("QAHWA_BENCH_LOG_JOBS", str(os.cpu_count() or 1)))
    signer = Signer.generate()
    note = tlog.NoteSigner.from_seed(ORIGIN, NOTE_SEED)
    keys = KeySet({signer.key_id: signer.public_key}, source="file", origin="bench")
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-log-") as tmp_s:
        tmp = Path(tmp_s)
        urls = {n: f"sqlite:///{tmp}/{n}/q.db" for n in (SMALL, MID, BIG)}
        for n, url in urls.items():
            (tmp / str(n)).mkdir()
            db = Database(url)
            migrate.upgrade(db)
            db.dispose()
        tables = {n: log_fixture.TableWriter(tmp / str(n) / "q.db") for n in urls}
        dirs = {MID: tmp / "tiles-mid", BIG: tmp / "tiles-big"}
        writers = {n: log_fixture.TileWriter(d) for n, d in dirs.items()}
        # the checkpoints a monitor of the growing log sees: every SEGMENT entries
        segment = {MID: 16_384, BIG: 65_536}
        marks: dict[int, list[tuple[int, str]]] = {n: [] for n in dirs}
        t0 = time.perf_counter()
        done = 0
        for chunk in log_fixture.leaves(signer.private_b64(), BIG, os.cpu_count() or 1):
            for n, tw in tables.items():
                if tw.size < n:
                    tw.add(chunk[: n - tw.size])
            for n, w in writers.items():
                if w.size < n:
                    w.add(chunk[: n - w.size])
                    if w.size % segment[n] == 0 and w.size < n:
                        w.finish(note, f"checkpoint.{w.size}")
                        marks[n].append((w.size, f"checkpoint.{w.size}"))
            done += len(chunk)
        for tw in tables.values():
            tw.close()
        for n, w in writers.items():
            w.finish(note)
            marks[n].append((n, "checkpoint"))
        print(
            f"  made the log: {done:,} signed entries into 3 databases and 2 tile "
            f"directories in {time.perf_counter() - t0:.1f} s"
        )

        servers = {n: log_server(url, tmp / str(n), signer) for n, url in urls.items()}
        clients = {n: httpx.Client(base_url=servers[n].url) for n in (SMALL, BIG)}
        for n, c in clients.items():
            assert c.get("/v1/log").json()["tree_size"] == n  # first request: signs, caches
            c.get("/v1/log/proof", params={"index": 0})
            assert c.get("/log/checkpoint").text.split("\n")[1] == str(n)
        sizes = (SMALL, BIG)
        # (kind of read, HTTP or in the server's process) -> size -> times
        times: dict[tuple[str, bool], dict[int, list[float]]] = {
            (w, inp): {n: [] for n in sizes}
            for inp in (False, True)
            for w in READS
            if not inp or w in ("checkpoint", "tile", "bundle")
        }
        # Request by request, alternating the sizes (and which goes first), the kinds of
        # request round-robin, so that the load of a shared machine falls on all alike.
        for i in range(REQUESTS):
            order = sizes if i % 2 else sizes[::-1]
            for (what, inp), per in times.items():
                for n in order:
                    per[n].append(
                        _inproc_ms(servers[n], n, rng, what)
                        if inp
                        else _time_ms(clients[n], n, rng, what)
                    )
        for c in clients.values():
            c.close()
        ratios: dict[str, float] = {}  # printed at the end, as JSON
        big_k = f"{BIG // 1000:,}k"
        print(f"  reads, median of {REQUESTS} each, sizes alternating:")
        for (what, inp), per in times.items():
            a, b = statistics.median(per[SMALL]), statistics.median(per[BIG])
            label, _, target = READS[what]
            label = f"{label[4:]} (in process)" if inp else label
            print(
                f"    {label:<32} {a:6.2f} ms at 1k, {b:6.2f} ms at {big_k}: ratio {b / a:.2f}x"
                + (f"  (target <= {target}x)" if target and not inp else "")
            )
            ratios[what + ("_inproc" if inp else "")] = b / a
        old = {n: _old_way_ms(urls[n], n) for n in sizes}
        print(
            f"    the old way (every leaf read, root recomputed): {old[SMALL]:.1f} ms at 1k, "
            f"{old[BIG]:.1f} ms at {big_k} ({old[BIG] / old[SMALL]:.0f}x)"
        )

        monitor = Monitor(keys, note.verifier, signer.public_key, _bare_pairs(dirs[BIG], BIG, BARE))
        fetch = HttpFetch(servers[MID].url)
        try:
            _, ratios["monitor_http"] = monitor.run(
                f"verify log over HTTP, {MID:,} entries, {jobs} jobs",
                servers[MID].url,
                [fetch],
                jobs,
                HeadState.load(None),
            )
        finally:
            fetch.close()
        for srv in servers.values():
            srv.stop()
        for key, n, j in (("monitor_dir_1job", MID, 1), ("monitor_dir", BIG, jobs)):
            label = f"verify log from tiles on disk, {n:,} entries, {j} job{'s' if j > 1 else ''}"
            seconds, ratios[key] = monitor.run(
                label,
                label,
                [_AtSize(dirs[n], name) for _, name in marks[n]],
                j,
                HeadState.load(tmp / f"state-{n}" / "heads.json"),
            )
        print(  # the last: the big size's
            f"  1M entries audited in {seconds * 1e6 / max(BIG, 1):.0f} s "
            f"(aim: <= 60 s){'' if BIG == 1_000_000 else ' (scaled from the run)'}"
        )
        print("  " + json.dumps({k: round(v, 2) for k, v in ratios.items()}))
