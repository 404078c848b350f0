"""The stored Merkle tree against a straightforward RFC 6962 implementation written here.

Every root, inclusion proof and consistency proof for every (m, n) with n ≤ 64 comes from
``service.translog`` (O(log n) stored nodes) and must equal the naive recursion over the
leaves; ``verify_cli.log`` must accept each one and refuse tampered ones. The migration that
builds the stored tree for an existing log gives the same roots (SQLite and PostgreSQL).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

import tlog
from fairness import Signer, verify_record
from service import migrate, translog
from service.db import Database
from tests.support.rfc6962 import leaf_hash, mth, path, proof
from tlog import CompactRange, consistent, merkle, root_from_inclusion

N = 64
SIGNER = Signer.from_seed_b64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")


# -- fixtures ----------------------------------------------------------------------------------


def record(i: int) -> dict[str, object]:
    return SIGNER.signed(
        {
            "type": "commitment",
            "protocol": "qahwa-fair/1",
            "match_id": f"m_{i:04d}",
            "game": "rng",
            "ruleset": "{}",
            "commitment": hashlib.sha256(b"%d" % i).hexdigest(),
            "created_at": "2026-12-02T00:00:00.000Z",
            "log_index": i,
        }
    )


def leaves(n: int) -> list[bytes]:
    from fairness import canonical_json

    return [canonical_json(record(i)) for i in range(n)]


def fill(db: Database, n: int) -> None:
    for i in range(n):
        with db.write() as s:
            idx = translog.add(
                db, s, record(i), match_id=f"m_{i:04d}", at="2026-12-02T00:00:00.000Z"
            )
            assert idx == i


@pytest.fixture(scope="module")
def tree_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path_factory.mktemp('tree') / 'q.db'}")
    migrate.upgrade(db)
    fill(db, N)
    yield db
    db.dispose()


# -- the stored tree ---------------------------------------------------------------------------


def test_roots_and_cached_heads_match_the_naive_tree(tree_db: Database) -> None:
    d = leaves(N)
    with tree_db.read() as s:
        assert translog.size(s, log=1) == N
        for n in range(N + 1):
            assert translog.stored_root(s, n, log=1) == mth(d[:n]), n
    for n in range(1, N + 1):
        head = translog.signed_head(tree_db, SIGNER, n, log=1)
        assert head["tree_size"] == n and head["root_hash"] == mth(d[:n]).hex()
        verify_record(head, SIGNER.public_key)
    # the head of size 0 is not cached at append time: signed on request, then cached
    h0 = translog.signed_head(tree_db, SIGNER, 0, log=1)
    assert h0["root_hash"] == hashlib.sha256(b"").hexdigest()
    assert translog.signed_head(tree_db, SIGNER, 0, log=1) == h0


def test_inclusion_proofs_for_every_pair(tree_db: Database) -> None:
    d = leaves(N)
    with tree_db.read() as s:
        for n in range(1, N + 1):
            root = mth(d[:n])
            for m in range(n):
                got = translog.inclusion_path(s, m, n, log=1)
                assert got == path(m, d[:n]), (m, n)
                assert root_from_inclusion(m, n, leaf_hash(d[m]), got) == root
                # the in-memory reader over the same leaves agrees too
                mem = tlog.ListHashReader.from_leaf_hashes([leaf_hash(x) for x in d[:n]])
                assert tlog.prove_record(n, m, mem) == got
                if got:
                    bad = [*got]
                    bad[-1] = bytes([bad[-1][0] ^ 1]) + bad[-1][1:]
                    assert root_from_inclusion(m, n, leaf_hash(d[m]), bad) != root


def test_consistency_proofs_for_every_pair(tree_db: Database) -> None:
    d = leaves(N)
    roots = [mth(d[:n]) for n in range(N + 1)]
    with tree_db.read() as s:
        for n in range(1, N + 1):
            for m in range(1, n + 1):
                got = translog.consistency_path(s, m, n, log=1)
                assert got == proof(m, d[:n]), (m, n)
                assert consistent(m, n, roots[m], roots[n], got), (m, n)
                if m < n:
                    # a different old root, a different new root, a changed proof: refused
                    assert not consistent(m, n, roots[m - 1] if m > 1 else roots[n], roots[n], got)
                    assert not consistent(m, n, roots[m], roots[n - 1], got)
                    for i in range(len(got)):
                        bad = [*got]
                        bad[i] = hashlib.sha256(bad[i]).digest()
                        assert not consistent(m, n, roots[m], roots[n], bad), (m, n, i)
                    assert not consistent(m, n, roots[m], roots[n], got[:-1])
                    assert not consistent(m, n, roots[m], roots[n], [*got, roots[0]])


def test_compact_range_gives_every_root() -> None:
    d = leaves(N)
    rng = CompactRange()
    assert rng.root() == mth([])
    for i, x in enumerate(d):
        rng.append(leaf_hash(x))
        assert rng.root() == mth(d[: i + 1])
        again = CompactRange(rng.size, rng.hashes)
        assert again.root() == rng.root()
    with pytest.raises(ValueError):
        CompactRange(5, rng.hashes[:1])


def test_a_read_touches_log_n_rows(tree_db: Database) -> None:
    # the proof shapes alone: never more nodes than 2·log2(n), whatever the log's size
    for n in (1000, 100_000, 2**31 - 1):
        bound = 2 * n.bit_length()
        for m in (0, 1, n // 3, n // 2, n - 2, n - 1):
            if not 0 <= m < n:
                continue
            ranges = merkle.path_ranges(m, 0, n)
            assert sum(len(merkle.range_nodes(a, b)) for a, b in ranges) <= bound
            if m:
                ranges = merkle.consistency_ranges(m, n)
                assert sum(len(merkle.range_nodes(a, b)) for a, b in ranges) <= bound
        assert len(merkle.range_nodes(0, n)) <= n.bit_length()


# -- the migration -----------------------------------------------------------------------------


def reset_pg(db: Database) -> None:
    """Drop every table in the PostgreSQL test database (whatever the migrations made: a
    table left behind would make the next migration fail)."""
    with db.write_engine.begin() as conn:
        names = conn.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        ).scalars()
        for t in list(names):
            conn.execute(text(f'DROP TABLE IF EXISTS "{t}" CASCADE'))


@contextmanager
def fresh_db(tmp_path: Path, which: str) -> Iterator[Database]:
    """An empty database for a log test: a SQLite file in ``tmp_path`` (``which`` =
    "sqlite"), or the PostgreSQL test database with the service's tables dropped before and
    after ("postgresql")."""
    if which == "postgresql":
        url = os.environ.get("QAHWA_TEST_PG_URL")
        if not url:
            pytest.skip("QAHWA_TEST_PG_URL is not set")
    else:
        url = f"sqlite:///{tmp_path / 'log.db'}"
    db = Database(url)
    try:
        if which == "postgresql":
            reset_pg(db)
        yield db
    finally:
        if which == "postgresql":
            reset_pg(db)
        db.dispose()


INSERT_0001 = text(
    "INSERT INTO translog (idx, match_id, leaf, leaf_hash, created_at) "
    "VALUES (:idx, :match_id, :leaf, :leaf_hash, :created_at)"
)


def row_0001(i: int, match_id: str, leaf: bytes) -> dict[str, object]:
    return {
        "idx": i,
        "match_id": match_id,
        "leaf": leaf.decode(),
        "leaf_hash": leaf_hash(leaf).hex(),
        "created_at": "2026",
    }


@pytest.mark.parametrize("which", ["sqlite", "postgresql"])
def test_migration_builds_the_same_tree(tmp_path: Path, which: str) -> None:
    with fresh_db(tmp_path, which) as db:
        n = 45
        cfg = migrate.alembic_config()
        # A log written before the stored tree existed: revision 0001, leaves only.
        with db.write_engine.connect() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0001")
            conn.commit()
        d = leaves(n)
        with db.write() as s:  # the table as revision 0001 made it (no log_id)
            for i, leaf in enumerate(d):
                s.execute(INSERT_0001, row_0001(i, f"m_{i:04d}", leaf))
        migrate.upgrade(db)
        with db.read() as s:
            for k in range(n + 1):
                assert translog.stored_root(s, k, log=1) == mth(d[:k]), k
            assert translog.consistency_path(s, 7, n, log=1) == proof(7, d)
        heads = [translog.signed_head(db, SIGNER, k, log=1)["root_hash"] for k in range(n + 1)]
        # Appending after the migration continues the same tree.
        with db.write() as s:
            translog.add(db, s, record(n), match_id="m_x", at="2026")
        d.append(leaves(n + 1)[-1])
        assert translog.signed_head(db, SIGNER, log=1)["root_hash"] == mth(d).hex()
        # Down to 0001 and up again (the populated log now built by the migration): same.
        with db.write_engine.connect() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0001")
            conn.commit()
        migrate.upgrade(db)
        again = [translog.signed_head(db, SIGNER, k, log=1)["root_hash"] for k in range(n + 1)]
        assert again == heads == [mth(d[:k]).hex() for k in range(n + 1)]


def test_migration_refuses_a_log_with_a_gap(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'gap.db'}")
    cfg = migrate.alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.commit()
    d = leaves(3)
    with db.write() as s:
        for i in (0, 2):
            s.execute(INSERT_0001, row_0001(i, f"m_{i}", d[i]))
    with pytest.raises(RuntimeError, match="entry 1 is missing"):
        migrate.upgrade(db)
    db.dispose()


def test_several_appends_in_one_transaction(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'one.db'}")
    migrate.upgrade(db)
    d = leaves(11)
    with db.write() as s:
        added = [
            translog.add(db, s, record(i), match_id=f"m_{i:04d}", at="2026") for i in range(11)
        ]
        assert added == list(range(11))
    with db.read() as s:
        assert [translog.stored_root(s, k, log=1) for k in range(12)] == [
            mth(d[:k]) for k in range(12)
        ]
    assert translog.signed_head(db, SIGNER, 6, log=1)["root_hash"] == mth(d[:6]).hex()
    db.dispose()
