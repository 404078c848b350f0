"""A big signed log for the log bench, made without the service: leaves signed in worker
processes, written as a C2SP tile directory (through :mod:`tlog`) and as the service's
tables (the leaves and their stored tree), in one stream.

Leaves come in pairs: the qahwa-fair/2 lock of match ``i`` (two seats), then its reveal
(``lock_index`` the lock's entry, the server seed that matches the lock's commitment) — the
monitor checks both. Leaf ``2i`` and ``2i + 1`` depend only on ``i``, so a log of n entries
is the first n entries of a longer one.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import tlog
from fairness import V2, Signer, canonical_json
from tlog.tiles import subtree_root

CHUNK = 256 * 64  # leaves a worker signs at once (whole tiles)
AT = "2026-12-02T00:00:00.000Z"


def _pair(signer: Signer, i: int) -> tuple[bytes, bytes]:
    mid = f"m_{i:08d}"
    seed = hashlib.sha512(b"bench seed %d" % i).digest()
    lock = {
        "type": "lock",
        "protocol": V2.name,
        "match_id": mid,
        "game": "tawla",
        "ruleset": "{}",
        "commitment": V2.commitment(seed),
        "seats": [
            {
                "seat": s,
                "name": f"p{s}",
                "house": s == 1,
                "seed_commitment": hashlib.sha256(b"%d/%d" % (i, s)).hexdigest(),
                "key": None,
                "roll_chain": None,
            }
            for s in range(2)
        ],
        "locked_at": AT,
        "reveal_by": "2026-12-02T00:02:00.000Z",
        "end_by": "2026-12-03T00:00:00.000Z",
    }
    reveal = {
        "type": "reveal",
        "protocol": V2.name,
        "match_id": mid,
        "lock_index": 2 * i,
        "server_seed": seed.hex(),
        "chain": "00" * 32,
        "transcript_sha256": hashlib.sha256(mid.encode()).hexdigest(),
        "reason": "timeout" if i % 10 == 0 else "finished",
        "forfeited": [0] if i % 10 == 0 else [],
        "house": [1],
        "result": {"status": "finished"},
        "ended_at": "2026-12-02T00:30:00.000Z",
    }
    return canonical_json(signer.signed(lock)), canonical_json(signer.signed(reveal))


def _sign_chunk(private_b64: str, start: int, end: int) -> list[bytes]:
    """Leaves ``start`` … ``end - 1`` (``start`` even)."""
    signer = Signer.from_seed_b64(private_b64)
    out: list[bytes] = []
    for i in range(start // 2, (end + 1) // 2):
        out.extend(_pair(signer, i))
    return out[: end - start]


def leaves(private_b64: str, n: int, jobs: int) -> Iterator[list[bytes]]:
    """The n leaves, CHUNK at a time, in order (signed in ``jobs`` processes)."""
    starts = deque(range(0, n, CHUNK))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        window: deque[Future[list[bytes]]] = deque()
        while starts or window:
            while starts and len(window) < 2 * jobs:  # memory: a few chunks at a time
                s = starts.popleft()
                window.append(pool.submit(_sign_chunk, private_b64, s, min(s + CHUNK, n)))
            yield window.popleft().result()


class TileWriter:
    """Writes a C2SP tile directory (``checkpoint``, ``tile/<L>/…``, ``tile/entries/…``)
    as leaves stream past, and returns the checkpoint at the end."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.size = 0
        self.levels: list[list[bytes]] = [[]]  # per tile level: hashes not yet in a full tile
        self.pending: list[bytes] = []  # entries not yet in a full bundle
        self.range = tlog.CompactRange()

    def _write(self, tile: tlog.Tile, data: bytes) -> None:
        path = self.root / tile.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def _push(self, level: int, h: bytes) -> None:
        """Hash ``h`` at tile level ``level``; a full tile is written and its root pushed up."""
        if len(self.levels) == level:
            self.levels.append([])
        row = self.levels[level]
        row.append(h)
        if len(row) == tlog.TILE_WIDTH:
            n = self._done(level)
            self._write(tlog.Tile(level, n), b"".join(row))
            self.levels[level] = []
            self._push(level + 1, subtree_root(row))

    def _done(self, level: int) -> int:
        """The index of the tile at ``level`` being filled."""
        return (self.size - 1) >> (tlog.TILE_HEIGHT * (level + 1))

    def add(self, entries: list[bytes]) -> None:
        for e in entries:
            h = hashlib.sha256(b"\x00" + e).digest()
            self.size += 1
            self.range.append(h)
            self.pending.append(e)
            if len(self.pending) == tlog.TILE_WIDTH:
                self._write(
                    tlog.Tile(0, self._done(0), entries=True), tlog.encode_bundle(self.pending)
                )
                self.pending = []
            self._push(0, h)

    def finish(self, signer: tlog.NoteSigner, name: str = "checkpoint") -> tlog.Checkpoint:
        """The partial tiles of the size so far and its signed checkpoint (in the file
        ``name``: a log that grows is a series of them, each extending the one before)."""
        n = self.size
        if self.pending:
            self._write(
                tlog.Tile(0, n // tlog.TILE_WIDTH, len(self.pending), entries=True),
                tlog.encode_bundle(self.pending),
            )
        for level, row in enumerate(self.levels):
            if row:
                index = (n >> (tlog.TILE_HEIGHT * level)) // tlog.TILE_WIDTH
                self._write(tlog.Tile(level, index, len(row)), b"".join(row))
        cp = tlog.Checkpoint(signer.name, n, self.range.root())
        (self.root / name).write_text(tlog.sign_note(cp.text, [signer]))
        return cp


class TableWriter:
    """Writes leaves into a service database at its newest revision: ``translog`` and the
    stored tree ``translog_nodes`` (every complete subtree), as the service's appends do."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA synchronous = OFF")
        self.size = 0
        self.edge: list[bytes] = []  # as tlog.CompactRange: complete subtrees, largest first

    def add(self, entries: list[bytes]) -> None:
        rows, nodes = [], []
        for e in entries:
            i = self.size
            h = hashlib.sha256(b"\x00" + e).digest()
            mid = e[e.index(b'"match_id":"') + 12 :].split(b'"', 1)[0].decode()
            rows.append((i, mid, e.decode(), h.hex(), AT))
            nodes.append((0, i, h.hex()))
            level, k = 0, i
            while k & 1:
                h = tlog.node_hash(self.edge.pop(), h)
                level, k = level + 1, k >> 1
                nodes.append((level, k, h.hex()))
            self.edge.append(h)
            self.size += 1
        self.db.executemany(
            "INSERT INTO translog (log_id, idx, match_id, leaf, leaf_hash, created_at) "
            "VALUES (1, ?, ?, ?, ?, ?)",
            rows,
        )
        self.db.executemany(
            "INSERT INTO translog_nodes (log_id, level, idx, hash) VALUES (1, ?, ?, ?)", nodes
        )

    def close(self) -> None:
        self.db.commit()
        self.db.close()
