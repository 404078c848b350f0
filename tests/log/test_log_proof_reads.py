"""An inclusion or consistency proof reads its O(log n) stored nodes by the whole primary
key, in whichever log (shard) it is (issue 50): after the log shards, ``log_id = L AND
(… OR …)`` made SQLite search the log's prefix only and read every node of the log, so a
proof's cost grew with the log."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

import tlog
from service import migrate, translog
from service.db import Database

SIZE = 300


def _store_log(path: Path, log: int, n: int) -> list[bytes]:
    """``n`` leaves of log ``log`` as the service stores them: every complete subtree's hash
    in ``translog_nodes``; returns the leaf hashes."""
    leaves = [hashlib.sha256(b"\x00" + f"log {log} leaf {i}".encode()).digest() for i in range(n)]
    nodes, edge = [], []
    for i, h in enumerate(leaves):
        nodes.append((log, 0, i, h.hex()))
        level, k = 0, i
        while k & 1:
            h = tlog.node_hash(edge.pop(), h)
            level, k = level + 1, k >> 1
            nodes.append((log, level, k, h.hex()))
        edge.append(h)
    db = sqlite3.connect(path)
    db.executemany(
        "INSERT INTO translog_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)", nodes
    )
    db.commit()
    db.close()
    return leaves


@pytest.fixture()
def logs(tmp_path: Path) -> tuple[Database, dict[int, list[bytes]]]:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    db = Database(url)
    migrate.upgrade(db)
    stored = {log: _store_log(tmp_path / "q.db", log, SIZE + 50 * log) for log in (1, 2)}
    return db, stored


def test_proofs_read_nodes_by_their_whole_key_in_every_log(
    logs: tuple[Database, dict[int, list[bytes]]],
) -> None:
    db, stored = logs
    sql: list[str] = []

    def seen(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
        if "translog_nodes" in statement and not statement.startswith("EXPLAIN"):
            sql.append(statement)

    event.listen(db._read, "before_cursor_execute", seen)
    try:
        with db.read() as s:
            for log, leaves in stored.items():
                n = len(leaves)
                reader = tlog.ListHashReader.from_leaf_hashes(leaves)
                assert translog.inclusion_path(s, 3, n, log=log) == tlog.prove_record(n, 3, reader)
                assert translog.consistency_path(s, 7, n, log=log) == tlog.prove_tree(n, 7, reader)
                assert translog.stored_root(s, n, log=log) == tlog.tree_hash(n, reader)
            assert sql
            conn = s.connection()
            for statement in sql:
                plan = [row[-1] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement)]
                searches = [p for p in plan if p.startswith("SEARCH")]
                assert searches, plan
                assert all("(log_id=? AND level=? AND idx=?)" in p for p in searches), plan
    finally:
        event.remove(db._read, "before_cursor_execute", seen)
        db.dispose()
