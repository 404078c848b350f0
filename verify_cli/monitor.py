"""``verify log``: the monitor. It reads the log the way any C2SP client does — the
checkpoint, then entry bundles and level-0 tiles, 256 entries a request — and checks:

- the checkpoint is signed by the log's note key and extends every checkpoint seen before
  (a consistency proof computed from the tiles; a fork otherwise, kept as evidence);
- every entry hashes to its hash in the level-0 tile (a rewritten entry is named) and the
  entries recompute the checkpoint's root;
- every leaf: a v1 commitment record (signed, at its own ``log_index``, no match twice); a v2
  lock (signed; seats numbered in order, each with a seed commitment; its times in order) —
  a match locked twice is named; a v2 reveal (signed; its lock earlier in the log for the
  same match; its server seed matches the lock's commitment; with ``--transcripts`` its
  ``transcript_sha256`` matches the transcript the server serves);
- from the log alone, every lock without a reveal once the checkpoint's time is past its
  ``end_by`` plus the grace — the later of its newest trusted witness cosignature and the
  newest time the server signed into the log (:func:`checkpoint_time`) — and, asking the
  server, every lock still open whose match the server no longer shows (a hidden match);
- the forfeits and timeouts of non-house seats in the reveals, as rates per origin.

Memory stays bounded: match ids, locks and the position are kept in a SQLite file beside
the state file (new ones wait in memory, at most BATCH), and the audit resumes from the last
saved position. The log is read through a :class:`Source`: HTTP
(:class:`~verify_cli.log_state.HttpFetch`) or a tile directory (:class:`DirSource`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

import tlog
from fairness import PROTOCOLS, canonical_json, chain_head
from fairness.records import Lock, RecordError, check_signature, signature_body
from fairness.records import when as epoch_of

from .keys import KeySet, UnusableInput, fetch_keys, load_key_file
from .keys import http_why as _why
from .log_check import open_state
from .log_state import (
    ForkDetected,
    HeadState,
    HttpFetch,
    LogCheckFailed,
    _check_signed,
    _now,
    reconcile_checkpoint,
)
from .options import (
    jobs_option,
    json_option,
    no_state_option,
    required_option,
    state_option,
)

T = TypeVar("T")
MAX_FAILURES = 50
GRACE = 300.0  # seconds a reveal may land after its end_by (the server's sweep, checkpoints)
WINDOW = 4  # bundles fetched ahead
SAVE_EVERY = 50_000  # entries audited between two saves of the audit position
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


class Source(Protocol):
    """What the monitor reads: JSON (``__call__``) and bytes (``raw``) from the server."""

    def __call__(self, path: str, params: dict[str, Any]) -> tuple[int, Any]: ...

    def raw(self, path: str) -> tuple[int, bytes]: ...


class DirSource:
    """A log read from a directory laid out as tlog-tiles serves it (``checkpoint``,
    ``tile/<L>/<N>``, ``tile/entries/<N>``): a mirror on disk, or a static log. Paths under
    ``/log/`` are files under ``root``; it has no JSON API, so asking it about a match gives
    status 0 (unreachable), never a 404."""

    #: bundles read ahead in threads: none (a file is at hand; threads would only contend
    #: for the interpreter with the checks)
    prefetch = 0

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def __call__(self, path: str, params: dict[str, Any]) -> tuple[int, Any]:
        return 0, {
            "error": {
                "code": "unreachable",
                "message": f"{self.root} is a directory of tiles, not a server",
            }
        }

    def raw(self, path: str) -> tuple[int, bytes]:
        if not path.startswith("/log/"):
            return 404, b""
        target = (self.root / path[len("/log/") :].lstrip("/")).resolve()
        if not target.is_relative_to(self.root):
            return 404, b""
        try:
            return 200, target.read_bytes()
        except FileNotFoundError:
            return 404, b""
        except OSError as exc:
            return 0, str(exc).encode()


class ShardSource:
    """Another log of the same server: its ``/log/`` paths read from ``prefix`` (an older
    log frozen by ``qahwa keys new-log``: ``/logs/<id>/log/``, as ``/v1/keys`` lists it);
    the JSON API is the server's."""

    def __init__(self, inner: Source, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix.rstrip("/") + "/"
        self.prefetch = getattr(inner, "prefetch", WINDOW)

    def __call__(self, path: str, params: dict[str, Any]) -> tuple[int, Any]:
        return self.inner(path, params)

    def raw(self, path: str) -> tuple[int, bytes]:
        if path.startswith("/log/"):
            path = self.prefix + path[len("/log/") :]
        return self.inner.raw(path)


def _epoch(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


# -- one leaf (runs in worker processes) -----------------------------------------------------

# What the sequential stage needs of a leaf: ("commitment", match_id) | ("lock", match_id,
# commitment, end_by, non-house seats, house seats, game) | ("reveal", match_id, lock_index,
# seed commitment, transcript_sha256, reason, forfeited, house) | ("bad",); and the newest
# time the leaf carries.
Info = tuple[Any, ...]
Checked = tuple[list[str], Info, float]


def _str(value: Any) -> str:
    """A field the store keeps: the string, or "" (its leaf was already named malformed)."""
    return value if isinstance(value, str) else ""


def _commitment_problems(leaf: dict[str, Any], pos: int) -> tuple[list[str], Info]:
    """A qahwa-fair/1 commitment record's problem (its log_index is its place) and its info."""
    bad = leaf.get("log_index") != pos
    probs = [f"entry {pos}: its log_index is {leaf.get('log_index')!r}"] if bad else []
    return probs, ("commitment", _str(leaf.get("match_id")))


def _lock_problems(leaf: dict[str, Any], pos: int) -> tuple[list[str], Info]:
    """The lock leaf's problems (:meth:`fairness.records.Lock.open`, its signature checked
    apart) and what the store keeps of it."""
    try:
        lock = Lock.open(leaf, None)
    except RecordError as exc:
        mid, com, game = (_str(leaf.get(k)) for k in ("match_id", "commitment", "game"))
        return [f"entry {pos}: {exc}"], ("lock", mid, com, 0.0, 0, 0, game)
    bad = [s.seat for s in lock.seats if s.key is not None and len(s.key) != 44]
    problems = [f"entry {pos}: the lock's seat {i} has a malformed key" for i in bad]
    house = sum(s.house for s in lock.seats)
    end_by = epoch_of(lock.end_by, "lock", "end_by")
    nonhouse = len(lock.seats) - house
    return problems, ("lock", lock.match_id, lock.commitment, end_by, nonhouse, house, lock.game)


def _reveal_problems(leaf: dict[str, Any], pos: int) -> tuple[list[str], Info]:
    p = []
    li = leaf.get("lock_index")
    if not isinstance(li, int) or isinstance(li, bool) or not 0 <= li < pos:
        p.append(f"entry {pos}: the reveal's lock_index {li!r} is not an earlier entry")
        li = -1
    seed = leaf.get("server_seed")
    if isinstance(seed, str) and _HEX128.fullmatch(seed):  # what V2.commitment takes
        seed_c = hashlib.sha256(bytes.fromhex(seed)).hexdigest()
    else:
        p.append(f"entry {pos}: the reveal's server_seed is not a 64-byte seed")
        seed_c = ""
    ts = leaf.get("transcript_sha256")
    if not (isinstance(ts, str) and _HEX64.fullmatch(ts)):
        p.append(f"entry {pos}: the reveal has no transcript_sha256")
    forfeited = leaf.get("forfeited") or []
    house = leaf.get("house") or []
    if not isinstance(forfeited, list) or not isinstance(house, list):
        p.append(f"entry {pos}: the reveal's forfeited or house is not a list")
        forfeited, house = [], []
    # what the store keeps of the reveal for --transcripts: what it signs of the transcript
    signed = {k: leaf.get(k) for k in ("chain", "result", "ended_at")}
    signs = json.dumps({"sha256": _str(ts), **signed}, sort_keys=True, ensure_ascii=False)
    return p, (
        "reveal",
        _str(leaf.get("match_id")),
        li,
        seed_c,
        signs,
        leaf.get("reason"),
        [s for s in forfeited if isinstance(s, int)],
        [s for s in house if isinstance(s, int)],
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _signed_fast(raw: bytes, leaf: dict[str, Any], keys: KeySet) -> bool:
    """True when the canonical leaf ``raw`` carries a good signature by one of ``keys``,
    checked over ``raw`` less its top-level ``signature`` member
    (:func:`fairness.records.signature_body`: the canonical JSON of the record without it,
    which would otherwise be serialized again). False in any other case (the caller then
    checks it the slow way, which names what is wrong)."""
    sig = leaf.get("signature")
    body = signature_body(raw, sig) if isinstance(sig, dict) else None
    if body is None:
        return False
    try:
        check_signature(leaf, keys, "leaf", body_json=body)
    except RecordError:
        return False
    return True


def check_leaf(raw: bytes, pos: int, keys: KeySet) -> Checked:
    """The checks of one leaf that need nothing but the leaf (see the module)."""
    try:
        leaf = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except ValueError:  # UnicodeDecodeError too
        return [f"entry {pos}: not JSON"], ("bad",), 0.0
    if not isinstance(leaf, dict):
        return [f"entry {pos}: not a JSON object"], ("bad",), 0.0
    probs: list[str] = []
    try:
        canonical = canonical_json(leaf) == raw
    except ValueError:  # NaN or infinity
        canonical = False
    if not canonical:
        probs.append(f"entry {pos}: not canonical JSON")
    mid = leaf.get("match_id")
    if not isinstance(mid, str) or not mid:
        probs.append(f"entry {pos}: no match_id")
    if not (canonical and _signed_fast(raw, leaf, keys)):
        try:
            _check_signed(leaf, keys, f"entry {pos}")
        except LogCheckFailed as exc:
            probs.append(str(exc))
    kind, proto = leaf.get("type"), leaf.get("protocol")
    known = PROTOCOLS.get(proto) if isinstance(proto, str) else None
    if kind not in (known.logged if known is not None else ()):
        probs.append(
            f"entry {pos}: a {kind!r} record of {proto!r}, not a commitment, lock or reveal"
        )
        return probs, ("bad",), 0.0
    problems, at = ENTRY_CHECKS[kind]
    more, info = problems(leaf, pos)
    probs += more
    return probs, info, _epoch(leaf.get(at)) or 0.0


#: each kind of log entry's checks and the time field it is dated by (the kinds a protocol
#: logs are its :attr:`FairProtocol.logged`)
ENTRY_CHECKS: dict[str, tuple[Callable[[dict[str, Any], int], tuple[list[str], Info]], str]] = {
    "commitment": (_commitment_problems, "created_at"),
    "lock": (_lock_problems, "locked_at"),
    "reveal": (_reveal_problems, "ended_at"),
}


_WORKER_KEYS: dict[str, KeySet] = {}  # per worker process: the keys, parsed once


def check_bundle(entries: list[bytes], start: int, keys_b64: dict[str, Any]) -> list[Checked]:
    """Worker entry point: :func:`check_leaf` over one bundle."""
    tag = json.dumps(keys_b64, sort_keys=True)
    keys = _WORKER_KEYS.get(tag)
    if keys is None:
        _WORKER_KEYS.clear()
        keys = _WORKER_KEYS[tag] = KeySet.from_b64(keys_b64)
    return [check_leaf(e, start + off, keys) for off, e in enumerate(entries)]


# -- the monitor's own store (bounded memory, resumable) -------------------------------------


class Store:
    """Match ids, locks and counters in SQLite; committed with the audit position."""

    def __init__(self, path: Path | None) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="qahwa-monitor-")
            path = Path(self._tmp.name) / "seen.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS seen (match_id TEXT PRIMARY KEY, idx INTEGER NOT NULL);"
            "CREATE TABLE IF NOT EXISTS locks (match_id TEXT PRIMARY KEY, idx INTEGER NOT NULL "
            " UNIQUE, commitment TEXT, end_by REAL, nonhouse INTEGER, game TEXT, "
            " revealed INTEGER NOT NULL DEFAULT 0, transcript TEXT, "
            " checked INTEGER NOT NULL DEFAULT 0);"
            "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);"
        )
        self.db.commit()

    def meta(self) -> dict[str, Any]:
        row = self.db.execute("SELECT v FROM meta WHERE k = 'state'").fetchone()
        return json.loads(row[0]) if row else {}

    def reset(self) -> None:
        self.db.executescript("DELETE FROM seen; DELETE FROM locks; DELETE FROM meta;")
        self.db.commit()

    def commit(self, meta: dict[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('state', ?)", (json.dumps(meta),))
        self.db.commit()

    def close(self) -> None:
        self.db.rollback()
        self.db.close()
        if self._tmp is not None:
            self._tmp.cleanup()


@dataclass
class Stats:
    commitments: int = 0
    locks: int = 0
    reveals: int = 0
    nonhouse_seats: int = 0  # in revealed matches
    forfeits: int = 0  # of non-house seats
    timeouts: int = 0  # of non-house seats
    clock: float = 0.0  # the newest time written in the log

    def rates(self) -> dict[str, Any]:
        n = self.nonhouse_seats
        return {
            "commitments": self.commitments,
            "locks": self.locks,
            "reveals": self.reveals,
            "non_house_seats": n,
            "forfeits": self.forfeits,
            "timeouts": self.timeouts,
            "forfeit_rate": self.forfeits / n if n else 0.0,
            "timeout_rate": self.timeouts / n if n else 0.0,
        }


@dataclass
class MonitorResult:
    server: str
    ok: bool
    origin: str = ""
    tree_size: int = 0
    root_hash: str = ""
    audited_from: int = 0
    audited: int = 0
    witnesses: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    def fail(self, message: str) -> None:
        if len(self.failures) < MAX_FAILURES:
            self.failures.append(message)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# -- the audit -------------------------------------------------------------------------------


def audit(
    server: str,
    keys: KeySet,
    log_key: tlog.Verifier,
    state: HeadState,
    source: Source,
    *,
    witnesses: tuple[tlog.Verifier, ...] = (),
    policy: tlog.Policy | None = None,
    restart: bool = False,
    transcripts: bool = False,
    jobs: int = 1,
    grace: float = GRACE,
    progress: Callable[[int, int], None] | None = None,
) -> MonitorResult:
    """Audit the log of ``server`` (from the last saved position): see the module."""
    res = MonitorResult(server, ok=False)
    status, body = source.raw("/log/checkpoint")
    if status != 200:
        res.failures.append(f"no checkpoint from the server: {_why(status, None)}")
        return res
    try:
        note_text = body.decode("utf-8")
        if policy is not None:
            policy.verify_checkpoint(note_text)
        cp, note = tlog.open_checkpoint(note_text, log_key, witnesses)
    except (UnicodeDecodeError, tlog.NoteError, tlog.PolicyError) as exc:
        res.failures.append(f"the checkpoint: {exc}")
        return res
    res.origin, res.tree_size, res.root_hash = cp.origin, cp.size, tlog.note.b64(cp.root)
    times = [tlog.cosignature_time(s) for v, s in note.verified if v.alg == tlog.ALG_COSIGNATURE_V1]
    res.witnesses = [v.name for v, _ in note.verified if v.alg == tlog.ALG_COSIGNATURE_V1]
    try:
        res.notes.append(reconcile_checkpoint(state, cp, note_text, source, server))
    except LogCheckFailed as exc:  # a fork (ForkDetected) keeps its evidence
        res.failures.append(str(exc))
        if isinstance(exc, ForkDetected) and exc.evidence:
            res.evidence.append(str(exc.evidence))
        return res
    with closing(Store(_store_path(state, server))) as store:
        stats = _audit_entries(res, server, cp, keys, state, source, store, restart, jobs, progress)
        if stats is not None:  # every entry was read: the checks across entries
            _after(res, stats, times, source, store, transcripts, grace)
        res.ok = not res.failures
    state.save()
    return res


def _store_path(state: HeadState, server: str) -> Path | None:
    if state.path is None:
        return None
    tag = hashlib.sha256(server.encode()).hexdigest()[:16]
    return state.path.parent / f"monitor-{tag}.sqlite"


def _now_done(fn: Callable[..., T], *args: Any) -> Future[T]:
    """``fn(*args)`` run here and now, as a done future (the pools' ``submit`` without one)."""
    done: Future[T] = Future()
    done.set_result(fn(*args))
    return done


@contextmanager
def _bundles(
    source: Source, start: int, end: int
) -> Iterator[Iterator[tuple[int, list[bytes] | str, bytes]]]:
    """(first index, entries or why not, level-0 tile) per bundle from the one holding
    ``start`` to ``end``, up to ``source.prefetch`` (default WINDOW) fetched ahead in
    threads."""
    ahead = getattr(source, "prefetch", WINDOW)
    pool = ThreadPoolExecutor(max_workers=ahead) if ahead else None

    def get(n: int) -> tuple[int, list[bytes] | str, bytes]:
        bundle = tlog.tile_for_size(0, n, end, entries=True)
        assert bundle is not None
        hashes = tlog.Tile(0, n, bundle.width)
        s1, raw = source.raw("/log/" + bundle.path)
        s2, tile = source.raw("/log/" + hashes.path)
        first = n * tlog.TILE_WIDTH
        if s1 != 200 or s2 != 200:
            missing, status = (bundle.path, s1) if s1 != 200 else (hashes.path, s2)
            return first, f"the server did not give {missing}: HTTP {status}", b""
        try:
            return first, tlog.parse_bundle(raw, bundle), tile
        except tlog.TileError as exc:
            return first, str(exc), b""

    def gen() -> Iterator[tuple[int, list[bytes] | str, bytes]]:
        todo = deque(range(start // tlog.TILE_WIDTH, -(-end // tlog.TILE_WIDTH)))
        submit = pool.submit if pool is not None else _now_done
        window: deque[Future[tuple[int, list[bytes] | str, bytes]]] = deque()
        while todo or window:
            while todo and len(window) < max(ahead, 1):
                window.append(submit(get, todo.popleft()))
            yield window.popleft().result()

    try:
        yield gen()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _audit_entries(
    res: MonitorResult,
    server: str,
    cp: tlog.Checkpoint,
    keys: KeySet,
    state: HeadState,
    source: Source,
    store: Store,
    restart: bool,
    jobs: int,
    progress: Callable[[int, int], None] | None,
) -> Stats | None:
    """Read and check the entries; their stats once all were read (None otherwise)."""
    rng = tlog.CompactRange()
    stats = Stats()
    saved = None if restart else state.audits.get(server)
    meta = store.meta()
    if (
        isinstance(saved, dict)
        and saved.get("origin") == cp.origin
        and meta.get("size") == saved.get("tree_size")
    ):
        try:
            rng = tlog.CompactRange(
                int(saved["tree_size"]), [bytes.fromhex(h) for h in saved["range"]]
            )
            stats = Stats(**meta.get("stats", {}))
        except (KeyError, TypeError, ValueError):
            rng, stats = tlog.CompactRange(), Stats()
    if rng.size > cp.size:
        res.failures.append(
            f"log fork: the log was audited up to size {rng.size}, the checkpoint now has {cp.size}"
        )
        return None
    if rng.size == 0:
        store.reset()
    else:
        res.notes.append(f"resumed from the audit of size {rng.size}")
    res.audited_from = rng.size
    end = cp.size
    next_save = rng.size + SAVE_EVERY
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    submit = pool.submit if pool is not None else _now_done
    keys_b64 = keys.to_b64()
    pending: deque[tuple[int, Future[list[Checked]]]] = deque()
    seq = Sequencer(res, store, stats)

    def consume(first: int, fut: Future[list[Checked]]) -> None:
        nonlocal next_save
        for off, (probs, info, when) in enumerate(fut.result()):
            pos = first + off
            for p in probs:
                res.fail(p)
            if when > stats.clock:
                stats.clock = when
            seq.add(pos, info)
        res.audited = rng.size - res.audited_from
        if progress is not None:
            progress(rng.size, end)
        if rng.size >= next_save and not res.failures and rng.size < end:
            seq.flush()
            _save(server, cp, rng, stats, state, store)
            next_save = rng.size + SAVE_EVERY

    try:
        with _bundles(source, rng.size, end) as bundles:
            for first, entries, tile in bundles:
                if isinstance(entries, str):
                    res.fail(entries)
                    break
                skip = rng.size - first  # resuming inside a bundle
                hashes = [tile[i : i + 32] for i in range(0, len(tile), 32)]
                for off, e in enumerate(entries[skip:], skip):
                    h = sha256(b"\x00" + e).digest()  # tlog.leaf_hash
                    if h != hashes[off]:
                        res.fail(
                            f"entry {first + off}: does not hash to its hash in "
                            f"tile/0/{tlog.encode_index(first // tlog.TILE_WIDTH)} "
                            "(the entry was rewritten)"
                        )
                    rng.append(h)
                done = submit(check_bundle, entries[skip:], first + skip, keys_b64)
                pending.append((first + skip, done))
                while len(pending) > 2 * jobs:
                    consume(*pending.popleft())
        while pending:
            consume(*pending.popleft())
        seq.flush()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    res.stats = stats.rates()
    if rng.size != end:
        res.fail(f"audited {rng.size} entries, the checkpoint has {end}")
        return None
    if rng.root() != cp.root:
        res.fail(
            f"the recomputed root of the {end} entries is {rng.root().hex()[:16]}…, the "
            f"checkpoint says {cp.root.hex()[:16]}…"
        )
    elif not res.failures:
        _save(server, cp, rng, stats, state, store)
    return stats


BATCH = 8192  # locks and commitments held before they are written to the store


class Sequencer:
    """The checks that need earlier entries — match ids committed or locked twice, locks
    and their reveals — over the monitor's store. New locks and commitments wait in memory
    (at most BATCH) and are written together (:meth:`flush`); a reveal finds its lock there
    first (a reveal soon after its lock never touches the store), else in the store."""

    def __init__(self, res: MonitorResult, store: Store, stats: Stats) -> None:
        self.res, self.db, self.stats = res, store.db, stats
        self.seen: dict[str, int] = {}  # commitments not yet written: match id → entry
        self.locks: dict[str, list[Any]] = {}  # locks not yet written: match id → row
        self.by_idx: dict[int, list[Any]] = {}  # the same rows by entry

    def add(self, pos: int, info: Info) -> None:
        kind = info[0]
        if kind == "commitment":
            self.stats.commitments += 1
            mid = info[1]
            first = self._first("seen", mid, self.seen.get(mid) if mid else None)
            if first is not None:
                self.res.fail(f"entry {pos}: match id {mid} is logged twice (first at {first})")
            elif mid:
                self.seen[mid] = pos
        elif kind == "lock":
            self.stats.locks += 1
            _, mid, com, end_by, nonhouse, _house, game = info
            lock = self.locks.get(mid) if mid else None
            first = self._first("locks", mid, lock[1] if lock else None)
            if first is not None:
                self.res.fail(f"match {mid} is locked twice: entries {first} and {pos}")
            elif mid:
                lock = [mid, pos, com, end_by, nonhouse, game, 0, None]
                self.locks[mid] = self.by_idx[pos] = lock
        elif kind == "reveal":
            self.stats.reveals += 1
            self._reveal(pos, info)
        if len(self.locks) + len(self.seen) >= BATCH:
            self.flush()

    def _first(self, table: str, mid: str, waiting: int | None) -> int | None:
        """The entry that logged ``mid`` first: still ``waiting`` in memory, else in the
        store's ``table`` (``seen`` or ``locks``); None for a new match id."""
        if waiting is not None or not mid:
            return waiting
        row = self.db.execute(f"SELECT idx FROM {table} WHERE match_id = ?", (mid,)).fetchone()
        return row[0] if row else None

    def _reveal(self, pos: int, info: Info) -> None:
        _, mid, li, seed_c, ts, reason, forfeited, house = info
        lock = self.by_idx.get(li)
        stored = lock is None
        if stored:
            row = self.db.execute(
                "SELECT match_id, idx, commitment, end_by, nonhouse, game, "
                "revealed, transcript FROM locks WHERE idx = ?",
                (li,),
            ).fetchone()
            lock = list(row) if row else None
        if lock is None or lock[0] != mid:
            self.res.fail(
                f"entry {pos}: the reveal of {mid} names lock_index {li}, which is not its lock"
            )
            return
        if lock[6]:
            self.res.fail(f"match {mid} is revealed twice (again at entry {pos})")
        if seed_c and seed_c != lock[2]:
            self.res.fail(
                f"entry {pos}: the server seed revealed for {mid} does not match "
                f"the commitment in its lock (entry {li})"
            )
        lock[6], lock[7] = 1, ts
        if stored:
            self.db.execute("UPDATE locks SET revealed = 1, transcript = ? WHERE idx = ?", (ts, li))
        lost = [s for s in forfeited if s not in house]
        self.stats.nonhouse_seats += int(lock[4] or 0)
        self.stats.forfeits += len(lost)
        if reason == "timeout":
            self.stats.timeouts += len(lost)

    def flush(self) -> None:
        """Write the waiting locks and commitments to the store (not committed)."""
        if self.seen:
            self.db.executemany("INSERT INTO seen VALUES (?, ?)", self.seen.items())
        if self.locks:
            self.db.executemany(
                "INSERT INTO locks (match_id, idx, commitment, end_by, "
                "nonhouse, game, revealed, transcript) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?)",
                self.locks.values(),
            )
        self.seen.clear()
        self.locks.clear()
        self.by_idx.clear()


def _save(
    server: str,
    cp: tlog.Checkpoint,
    rng: tlog.CompactRange,
    stats: Stats,
    state: HeadState,
    store: Store,
) -> None:
    store.commit({"size": rng.size, "stats": stats.__dict__})
    state.audits[server] = {
        "origin": cp.origin,
        "tree_size": rng.size,
        "root_hash": rng.root().hex(),
        "range": [h.hex() for h in rng.hashes],
        "audited_at": _now(),
    }
    state.dirty = True
    state.save()


def checkpoint_time(cosigned_at: list[int], log_clock: float) -> tuple[float, str]:
    """The time by which the checkpoint's entries were all in the log, and its source: the
    newest timestamp of a verified witness cosignature (c2sp.org/tlog-cosignature: the
    witness saw this checkpoint as the log's newest at that time), or the newest time the
    server itself signed into one of the entries, whichever is later. Both are signed
    statements — a witness's and the server's own — that the checkpoint existed then;
    the checkpoint itself (c2sp.org/tlog-checkpoint) carries no time."""
    witness = float(max(cosigned_at)) if cosigned_at else 0.0
    if witness >= log_clock and cosigned_at:
        return witness, f"its newest witness cosignature, {_iso(witness)}"
    return log_clock, (
        f"the newest time the server signed into the log, {_iso(log_clock)}"
        + ("" if cosigned_at else "; no trusted witness cosigned it")
    )


def _after(
    res: MonitorResult,
    stats: Stats,
    cosigned_at: list[int],
    source: Source,
    store: Store,
    transcripts: bool,
    grace: float = GRACE,
) -> None:
    """Locks without reveals, hidden matches, transcripts."""
    clock, source_of = checkpoint_time(cosigned_at, stats.clock)
    res.notes.append(
        f"the checkpoint's time is {source_of}; a lock with no reveal is "
        f"reported {grace:g} s after its end_by"
    )
    db = store.db
    for mid, idx, end_by in db.execute(
        "SELECT match_id, idx, end_by FROM locks WHERE revealed = 0 AND end_by + ? < ? "
        "ORDER BY idx",
        (grace, clock),
    ):
        res.fail(
            f"match {mid} (locked at entry {idx}) has no reveal though its end_by "
            f"{_iso(end_by)} is before the checkpoint ({source_of})"
        )
    open_locks = db.execute(
        "SELECT match_id, idx, game, end_by FROM locks WHERE revealed = 0 AND end_by + ? >= ? "
        "ORDER BY idx",
        (grace, clock),
    ).fetchall()
    for mid, idx, game, end_by in open_locks:
        status, _ = source(f"/v1/rng/{mid}" if game == "rng" else f"/v1/matches/{mid}", {})
        past = end_by < clock  # its end_by has passed, the grace not yet
        if status == 404 and past:
            # not a hidden match: a lock whose end_by passed without a reveal, and the
            # server shows nothing of it
            res.fail(
                f"match {mid} (locked at entry {idx}) has no reveal though its end_by "
                f"{_iso(end_by)} has passed (the checkpoint's time: {source_of}, within the "
                f"{grace:g} s grace), and the server no longer shows it"
            )
        elif status == 404:
            res.fail(
                f"hidden match: {mid} is locked in the log (entry {idx}) but the server "
                "no longer shows it"
            )
        elif status == 200 and past:
            res.notes.append(
                f"match {mid} (locked at entry {idx}) has no reveal yet though its end_by "
                f"{_iso(end_by)} has passed; within the {grace:g} s grace"
            )
        elif status != 200:
            res.notes.append(f"could not ask the server about the open match {mid} (HTTP {status})")
    if open_locks:
        res.notes.append(f"{len(open_locks)} locked match(es) still inside their end_by")
    if transcripts:
        _check_transcripts(res, source, store)


def reveal_signs(stored: str) -> dict[str, Any]:
    """What the store keeps of a reveal record: ``sha256`` (its transcript_sha256) and, from
    stores made since issue 49, the ``chain``, ``result`` and ``ended_at`` it signs."""
    if stored.startswith("{"):
        found = json.loads(stored)
        return found if isinstance(found, dict) else {"sha256": ""}
    return {"sha256": stored}


def transcript_problem(mid: str, doc: dict[str, Any], signs: dict[str, Any]) -> str | None:
    """Why the transcript served for ``mid`` is not the one its reveal record signs: its
    SHA-256, chain head (recomputed from its events too), result and ended_at; or None."""
    try:
        digest = hashlib.sha256(canonical_json(doc)).hexdigest()
    except (TypeError, ValueError):
        digest = ""
    if digest != signs.get("sha256"):
        return (
            f"the transcript the server serves for {mid} does not hash to the "
            "transcript_sha256 in its reveal"
        )
    for name, what in (("chain", "chain head"), ("result", "result"), ("ended_at", "ended_at")):
        if name in signs and doc.get(name) != signs[name]:
            return (
                f"the transcript the server serves for {mid} has another {what} than its "
                "reveal record signs"
            )
    lock, events = doc.get("lock"), doc.get("events")
    if "chain" in signs and isinstance(lock, dict):  # a transcript with a lock chains from it
        try:
            head = chain_head(lock, events).hex() if isinstance(events, list) else None
        except (TypeError, ValueError):
            head = None
        if head != signs["chain"]:
            return (
                f"the events of the transcript the server serves for {mid} do not chain to "
                "the head its reveal record signs"
            )
    return None


def _check_transcripts(res: MonitorResult, source: Source, store: Store) -> None:
    """Each revealed match's served transcript is the one its reveal record signs: it
    hashes to the reveal's transcript_sha256, and its chain head (recomputed from its
    events), result and ended_at are the reveal's (each match once: marked checked in the
    store)."""
    db = store.db
    rows = db.execute(
        "SELECT match_id, game, transcript FROM locks WHERE revealed = 1 "
        "AND checked = 0 ORDER BY idx"
    ).fetchall()

    def one(row: tuple[str, str, str]) -> tuple[str, str | None]:
        mid, game, want = row
        path = f"/v1/rng/{mid}/transcript" if game == "rng" else f"/v1/matches/{mid}/transcript"
        status, doc = source(path, {})
        if status != 200 or not isinstance(doc, dict):
            return (
                mid,
                f"the server gives no transcript of the revealed match {mid} (HTTP {status})",
            )
        return mid, transcript_problem(mid, doc, reveal_signs(want))

    with ThreadPoolExecutor(max_workers=WINDOW) as pool:
        for mid, problem in pool.map(one, rows):
            if problem:
                res.fail(problem)
            else:
                db.execute("UPDATE locks SET checked = 1 WHERE match_id = ?", (mid,))
    db.commit()
    res.notes.append(f"{len(rows)} transcript(s) checked against their reveals")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the command -----------------------------------------------------------------------------


def _from_keys(base: str, what: str, read: Callable[[Any], T]) -> T:
    """``read`` of the server's ``/v1/keys`` (UnusableInput naming ``what`` when it cannot
    be fetched or read)."""
    import httpx

    try:
        return read(httpx.get(base + "/v1/keys", timeout=30).json())
    except (
        httpx.HTTPError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,  # tlog.NoteError is a ValueError
    ) as exc:
        raise UnusableInput(
            f"cannot fetch {what} from {base}/v1/keys: {type(exc).__name__}"
        ) from None


def _shard(base: str, origin: str) -> tuple[str, str]:
    """``(path, vkey)`` of the server's log ``origin``, from the ``logs`` of its /v1/keys."""
    logs = _from_keys(
        base,
        "the server's logs",
        lambda doc: [
            (str(x["origin"]), str(x["path"]), str(x["vkey"])) for x in doc.get("logs") or []
        ],
    )
    for name, path, vkey in logs:
        if name == origin:
            return path, vkey
    known = ", ".join(repr(name) for name, _, _ in logs) or "none listed"
    raise UnusableInput(f"{base} serves no log {origin!r} (its logs: {known})")


def _log_key(base: str, log_vkey: str | None, policy: tlog.Policy | None) -> tlog.Verifier:
    if log_vkey:
        try:
            return tlog.parse_vkey(log_vkey)
        except tlog.NoteError as exc:
            raise UnusableInput(f"--log-key: {exc}") from None
    if policy is not None and len(policy.logs) == 1:
        return policy.logs[0][0]
    return _from_keys(base, "the log's key", lambda doc: tlog.parse_vkey(doc["log"]["vkey"]))


def load_policy(path: str | None) -> tlog.Policy | None:
    if path is None:
        return None
    try:
        return tlog.parse_policy(Path(path).read_bytes())
    except OSError as exc:
        raise UnusableInput(f"cannot read the policy {path}: {exc}") from None
    except tlog.PolicyError as exc:
        raise UnusableInput(f"{path}: {exc}") from None


@click.command(
    "log",
    help="Monitor a server's transparency log from its C2SP tiles: check "
    "every entry (or those after the last audit), recompute the checkpoint's "
    "root, check it extends every checkpoint seen before, and report locks "
    "without reveals, matches locked twice and hidden matches.",
)
@required_option("--server", "URL", "The server's base URL.")
@click.option(
    "--origin",
    metavar="ORIGIN",
    help="Audit this log of the server (an older one, frozen by qahwa keys new-log, as "
    "its /v1/keys lists it; default: the log it appends to).",
)
@click.option(
    "--key",
    "key_file",
    metavar="FILE",
    help="The server's record-signing key(s) (default: fetched from its /v1/keys).",
)
@click.option(
    "--log-key",
    "log_vkey",
    metavar="VKEY",
    help="The log's note key (vkey text; default: from --policy, else fetched from /v1/keys).",
)
@click.option(
    "--policy",
    "policy_file",
    metavar="FILE",
    help="A c2sp.org/tlog-policy file: "
    "the checkpoint must meet its quorum of witness cosignatures.",
)
@click.option(
    "--transcripts",
    is_flag=True,
    help="Also fetch each revealed match's "
    "transcript and check it against its reveal's transcript_sha256.",
)
@json_option
@no_state_option
@state_option
@click.option("--restart", is_flag=True, help="Audit from entry 0, ignoring the saved position.")
@jobs_option("Worker processes checking signatures (default: all cores).")
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=GRACE,
    show_default=True,
    metavar="SECONDS",
    help="How long after a lock's end_by its reveal may still "
    "be missing from the log before the lock is reported.",
)
def log_cmd(
    server: str,
    origin: str | None,
    key_file: str | None,
    log_vkey: str | None,
    policy_file: str | None,
    transcripts: bool,
    as_json: bool,
    state_file: str | None,
    no_state: bool,
    restart: bool,
    jobs: int | None,
    grace: float,
) -> int:
    from rich.markup import escape

    from .output import echo_json, make_console, progress_bar

    if not server.startswith(("http://", "https://")):
        raise click.UsageError(f"--server must be an http(s) URL, got {server!r}")
    base = server.rstrip("/")
    state = open_state(state_file, no_state)
    policy = load_policy(policy_file)
    keys = load_key_file(key_file) if key_file else fetch_keys(base)
    fetch = HttpFetch(base)
    source: Source = fetch
    audited = base  # what the saved position is kept under
    if origin is not None:
        path, vkey = _shard(base, origin)
        log_vkey = log_vkey or vkey
        source, audited = ShardSource(fetch, path), f"{base} {origin}"
    log_key = _log_key(base, log_vkey, policy)
    witnesses = tuple(v for v, _ in policy.witnesses.values()) if policy else ()
    with progress_bar(disable=as_json, remaining=True) as bar, closing(fetch):
        task = bar.add_task("auditing", total=None)
        res = audit(
            audited,
            keys,
            log_key,
            state,
            source,
            witnesses=witnesses,
            policy=policy,
            restart=restart,
            transcripts=transcripts,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
            grace=grace,
            jobs=jobs or os.cpu_count() or 1,
        )
    state.save()
    unreachable = res.tree_size == 0 and any(
        f.startswith("no checkpoint from the server") for f in res.failures
    )
    code = 0 if res.ok else 2 if unreachable else 1
    if as_json:
        return echo_json(code, res.to_json())
    console = make_console()
    if res.ok:
        console.print(
            f"[bold green]LOG VERIFIED[/]  {escape(base)} ({escape(res.origin)}): "
            f"{res.tree_size} entries, root {res.root_hash[:16]}…"
        )
        console.print(
            f"  [green]✔[/] {res.audited} entries audited ({res.audited_from} → "
            f"{res.tree_size}): each hashes to its tile, each record signed and "
            "well-formed, no match locked or committed twice, every reveal matches "
            "its lock"
        )
        console.print(
            "  [green]✔[/] the recomputed root equals the checkpoint's, which "
            "extends every checkpoint seen before"
        )
        if res.witnesses:
            console.print(f"  [green]✔[/] cosigned by {escape(', '.join(res.witnesses))}")
    else:
        verdict = "UNUSABLE INPUT" if code == 2 else "LOG FAILED"
        console.print(f"[bold red]{verdict}[/]  {escape(base)}")
        for f in res.failures:
            console.print(f"  [red]✘[/] {escape(f)}")
    st = res.stats
    if st and st.get("reveals"):
        console.print(
            f"  {escape(res.origin)}: {st['non_house_seats']} non-house seats in "
            f"{st['reveals']} revealed matches; forfeits {st['forfeits']} "
            f"({st['forfeit_rate']:.1%}), timeouts {st['timeouts']} "
            f"({st['timeout_rate']:.1%})"
        )
    for n in res.notes:
        console.print(f"  [dim]{escape(n)}[/]")
    for e in res.evidence:
        console.print(f"  evidence kept in {escape(e)}")
    if key_file is None:
        console.print(
            "[dim]note: the record keys were fetched from the server, so the "
            "signatures are only as trustworthy as that server.[/]"
        )
    return code
