"""The transparency log at 1k and at 1M entries (`make bench`, `python -m bench log`).

One stream of signed leaves (qahwa-fair/2 locks and their reveals, signed in worker
processes: :mod:`bench.log_fixture`) is written, without the service, as

- the service's tables of three SQLite databases — the first 1,000 entries, the first
  ``QAHWA_BENCH_LOG_HTTP`` (default 51,200) and all ``QAHWA_BENCH_LOG_BIG`` (default
  1,000,000) — the leaves and their stored tree, as the service's appends write them;
- C2SP tile directories (checkpoint, hash tiles of every level, entry bundles) of the first
  ``QAHWA_BENCH_LOG_HTTP`` and of all the entries, through :mod:`tlog`.

**Reads, flat in size.** A server (uvicorn in a thread) per database of 1k and of the big
size answers the C2SP reads (``GET /log/checkpoint``, a random full hash tile, a random full
entry bundle; target ≤ 1.2×) and the JSON reads (``GET /v1/log``, ``/v1/log/proof``,
``/v1/log/consistency``; target ≤ 1.5×): the medians of ``QAHWA_BENCH_LOG_REQUESTS`` (600)
requests each, alternating between the sizes request by request so that load on a shared
machine falls on both alike, and their ratio (big / 1k). The same C2SP reads are also timed
inside the server's process (``LogC2SP.checkpoint`` / ``.tile``, no HTTP), interleaved the
same way. For comparison, the old way (read every leaf hash, recompute the root) is timed
once at each size.

**The monitor.** ``verify log``'s audit (:func:`verify_cli.monitor.audit`, every leaf's
signature and fields checked, every entry hashed to its tile, the root recomputed) runs

- over HTTP against the server of the middle size (the path a monitor of a live log takes);
- from the tile directory of the middle size, one process;
- from the tile directory of the big size, all cores (``--jobs``, default ``os.cpu_count()``)
  — the 1M run: its time is printed.

The directory reader (:class:`verify_cli.monitor.DirSource`) stands behind the same
``Source`` interface as the HTTP reader, so the audit runs the same code either way. Beside
each run, a bare loop of Ed25519 verifications — ``Ed25519PublicKey.verify(sig, message)``
over ``BARE`` of the same leaves, their signatures and signed bytes prepared beforehand, one
process — is timed just before and just after it; the monitor's rate over the bare loop's
(the mean of the two) is the ratio (target ≥ 0.6). The bare loop is single-threaded; a
monitor run with more than one job is reported as such.
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


def _make_db(path: Path) -> tuple[str, log_fixture.TableWriter]:
    url = f"sqlite:///{path}"
    db = Database(url)
    migrate.upgrade(db)
    db.dispose()
    return url, log_fixture.TableWriter(path)


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


def _inproc_ms(srv: ServerThread, n: int, rng: random.Random, what: str) -> float:
    """One C2SP read inside the server's process (no HTTP)."""
    c2sp = srv.app.state.log_c2sp
    t0 = time.perf_counter()
    if what == "checkpoint":
        c2sp.checkpoint()
    else:
        c2sp.tile(tlog.Tile(0, rng.randrange(n // 256), entries=what == "bundle").path)
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


def _bare_rate(pub: Any, pairs: list[tuple[bytes, bytes]]) -> float:
    """Verifications per second of a bare loop (one process)."""
    verify = pub.verify
    t0 = time.perf_counter()
    for sig, msg in pairs:
        verify(sig, msg)
    return len(pairs) / (time.perf_counter() - t0)


def _monitor(
    label: str,
    base: str,
    keys: KeySet,
    log_key: tlog.Verifier,
    source: Source,
    jobs: int,
    pub: Any,
    pairs: list[tuple[bytes, bytes]],
) -> dict[str, float]:
    gc.collect()
    pairs = pairs[: len(pairs) // 4]
    before = _bare_rate(pub, pairs)
    t0 = time.perf_counter()
    res: MonitorResult = audit(base, keys, log_key, HeadState.load(None), source, jobs=jobs)
    took = time.perf_counter() - t0
    after = _bare_rate(pub, pairs)
    bare = (before + after) / 2
    rate = res.audited / took
    print(
        f"  {label}: {res.audited:,} entries in {took:.1f} s, {rate:,.0f} entries/s; bare "
        f"loop beside it {bare:,.0f} /s ({before:,.0f} before, {after:,.0f} after, one "
        f"process): ratio {rate / bare:.2f}  (target >= 0.6)"
        + ("" if res.ok else f"  FAILED: {res.failures[:2]}")
    )
    return {
        "entries": res.audited,
        "seconds": took,
        "entries_per_s": rate,
        "bare_per_s": bare,
        "ratio": rate / bare,
        "jobs": jobs,
        "ok": float(res.ok),
    }


class _AtSize(DirSource):
    """The tile directory as it was when the log had ``size`` entries: its checkpoint then
    (the tiles of that size are prefixes of, or the same as, the later ones)."""

    def __init__(self, root: Path, name: str) -> None:
        super().__init__(root)
        self.name = name

    def raw(self, path: str) -> tuple[int, bytes]:
        return super().raw("/log/" + self.name if path == "/log/checkpoint" else path)


def _segmented(
    label: str,
    tiles: Path,
    marks: list[tuple[int, str]],
    keys: KeySet,
    log_key: tlog.Verifier,
    jobs: int,
    pub: Any,
    pairs: list[tuple[bytes, bytes]],
    state_dir: Path,
) -> dict[str, float]:
    """The monitor follows a growing log — one audit per checkpoint in ``marks``, each
    resuming where the one before stopped (a consistency proof from the tiles between
    them) — with a slice of the bare loop before each audit and after the last, so that
    the two share the machine's load through the whole run."""
    state = HeadState.load(state_dir / "heads.json")
    per = max(1, len(pairs) // (len(marks) + 1))
    mon_s = bare_s = 0.0
    bare_n = audited = 0
    ok = True
    failures: list[str] = []

    def bare_slice(i: int) -> None:
        nonlocal bare_s, bare_n
        part = pairs[i * per : (i + 1) * per]
        verify = pub.verify
        t0 = time.perf_counter()
        for sig, msg in part:
            verify(sig, msg)
        bare_s += time.perf_counter() - t0
        bare_n += len(part)

    gc.collect()
    for i, (_size, name) in enumerate(marks):
        bare_slice(i)
        t0 = time.perf_counter()
        res = audit(label, keys, log_key, state, _AtSize(tiles, name), jobs=jobs)
        mon_s += time.perf_counter() - t0
        audited += res.audited
        ok = ok and res.ok
        failures += res.failures
    bare_slice(len(marks))
    rate, bare = audited / mon_s, bare_n / bare_s
    print(
        f"  {label}: {audited:,} entries in {mon_s:.1f} s ({len(marks)} audits of a growing "
        f"log), {rate:,.0f} entries/s; bare loop beside it {bare:,.0f} /s ({bare_n:,} "
        f"verifications between the audits, one process): ratio {rate / bare:.2f}  "
        "(target >= 0.6)" + ("" if ok else f"  FAILED: {failures[:2]}")
    )
    return {
        "entries": audited,
        "seconds": mon_s,
        "entries_per_s": rate,
        "bare_per_s": bare,
        "ratio": rate / bare,
        "jobs": jobs,
        "ok": float(ok),
    }


def run() -> None:
    rng = random.Random(13)
    jobs = int(os.environ.get("QAHWA_BENCH_LOG_JOBS", str(os.cpu_count() or 1)))
    signer = Signer.generate()
    note = tlog.NoteSigner.from_seed(ORIGIN, NOTE_SEED)
    keys = KeySet({signer.key_id: signer.public_key}, source="file", origin="bench")
    with tempfile.TemporaryDirectory(prefix="qahwa-bench-log-") as tmp_s:
        tmp = Path(tmp_s)
        urls: dict[int, str] = {}
        tables: dict[int, log_fixture.TableWriter] = {}
        for n in (SMALL, MID, BIG):
            (tmp / str(n)).mkdir()
            urls[n], tables[n] = _make_db(tmp / str(n) / "q.db")
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

        servers: dict[int, ServerThread] = {}
        for n in (SMALL, MID, BIG):
            servers[n] = ServerThread(
                Settings(
                    database_url=urls[n],
                    data_dir=tmp / str(n),
                    master_key=None,
                    signing_key=signer.private_b64(),
                    signing_key_file=None,
                    log_origin=ORIGIN,
                    log_key=base64.b64encode(NOTE_SEED).decode(),
                    checkpoint_seconds=3600,
                )
            ).start()
        clients = {n: httpx.Client(base_url=servers[n].url) for n in (SMALL, BIG)}
        for n, c in clients.items():
            assert c.get("/v1/log").json()["tree_size"] == n  # first request: signs, caches
            c.get("/v1/log/proof", params={"index": 0})
            assert c.get("/log/checkpoint").text.split("\n")[1] == str(n)
        sizes = (SMALL, BIG)
        http: dict[str, dict[int, list[float]]] = {
            w: {n: [] for n in sizes}
            for w in ("checkpoint", "tile", "bundle", "head", "proof", "consistency")
        }
        inproc: dict[str, dict[int, list[float]]] = {
            w: {n: [] for n in sizes} for w in ("checkpoint", "tile", "bundle")
        }
        # Request by request, alternating the sizes (and which goes first), the kinds of
        # request round-robin, so that the load of a shared machine falls on all alike.
        for i in range(REQUESTS):
            order = sizes if i % 2 else sizes[::-1]
            for what, per in http.items():
                for n in order:
                    per[n].append(_time_ms(clients[n], n, rng, what))
            for what, per in inproc.items():
                for n in order:
                    per[n].append(_inproc_ms(servers[n], n, rng, what))
        for c in clients.values():
            c.close()
        out: dict[str, Any] = {}
        labels = {
            "head": "GET /v1/log",
            "proof": "GET /v1/log/proof",
            "consistency": "GET /v1/log/consistency",
            "checkpoint": "GET /log/checkpoint",
            "tile": "GET /log/tile/0/N",
            "bundle": "GET /log/tile/entries/N",
        }
        targets = {
            "head": "1.5",
            "proof": "1.5",
            "checkpoint": "1.2",
            "tile": "1.2",
            "bundle": "1.2",
        }
        big_k = f"{BIG // 1000:,}k"
        print(f"  reads, median of {REQUESTS} each, sizes alternating:")
        for what, per in http.items():
            a, b = statistics.median(per[SMALL]), statistics.median(per[BIG])
            target = targets.get(what)
            print(
                f"    {labels[what]:<32} {a:6.2f} ms at 1k, {b:6.2f} ms at {big_k}: "
                f"ratio {b / a:.2f}x" + (f"  (target <= {target}x)" if target else "")
            )
            out[what] = {"ms_small": a, "ms_big": b, "ratio": b / a}
        for what, per in inproc.items():
            a, b = statistics.median(per[SMALL]), statistics.median(per[BIG])
            label = f"{labels[what][4:]} (in process)"
            print(f"    {label:<32} {a:6.2f} ms at 1k, {b:6.2f} ms at {big_k}: ratio {b / a:.2f}x")
            out[what + "_inproc"] = {"ms_small": a, "ms_big": b, "ratio": b / a}
        old = {n: _old_way_ms(urls[n], n) for n in sizes}
        print(
            f"    the old way (every leaf read, root recomputed): {old[SMALL]:.1f} ms at 1k, "
            f"{old[BIG]:.1f} ms at {big_k} ({old[BIG] / old[SMALL]:.0f}x)"
        )

        pub = signer.public_key
        pairs = _bare_pairs(dirs[BIG], BIG, BARE)
        mid_url = servers[MID].url
        fetch = HttpFetch(mid_url)
        try:
            out["monitor_http"] = _monitor(
                f"verify log over HTTP, {MID:,} entries, {jobs} jobs",
                mid_url,
                keys,
                note.verifier,
                fetch,
                jobs,
                pub,
                pairs,
            )
        finally:
            fetch.close()
        for srv in servers.values():
            srv.stop()
        out["monitor_dir_1job"] = _segmented(
            f"verify log from tiles on disk, {MID:,} entries, 1 job",
            dirs[MID],
            marks[MID],
            keys,
            note.verifier,
            1,
            pub,
            pairs,
            tmp / "state-mid",
        )
        big = out["monitor_dir"] = _segmented(
            f"verify log from tiles on disk, {BIG:,} entries, {jobs} jobs",
            dirs[BIG],
            marks[BIG],
            keys,
            note.verifier,
            jobs,
            pub,
            pairs,
            tmp / "state-big",
        )
        print(
            f"  1M entries audited in {big['seconds'] * 1e6 / max(BIG, 1):.0f} s "
            f"(aim: <= 60 s){'' if BIG == 1_000_000 else ' (scaled from the run)'}"
        )
        print("  " + json.dumps({k: round(v["ratio"], 2) for k, v in out.items()}))
