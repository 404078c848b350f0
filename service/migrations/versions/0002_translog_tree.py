"""stored Merkle tree of the transparency log: subtree hashes and cached signed heads

Builds ``translog_nodes`` (the hash of every complete subtree, RFC 6962 §2.1) for the
entries already in ``translog``, streaming them in index order with a stack of at most
log₂ n pending hashes. Tree heads are signed by the service (the migration has no key):
``translog_heads`` starts empty and fills per size on first request.
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"

BATCH = 5000


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def upgrade() -> None:
    nodes = op.create_table(
        "translog_nodes",
        sa.Column("level", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_table(
        "translog_heads",
        sa.Column("tree_size", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("head", sa.Text, nullable=False),
    )
    conn = op.get_bind()
    stack: list[tuple[int, bytes]] = []  # (level, hash) of the pending complete subtrees
    pending: list[dict[str, object]] = []
    expected = 0
    while True:
        rows = conn.execute(
            sa.text("SELECT idx, leaf_hash FROM translog WHERE idx >= :a ORDER BY idx LIMIT :n"),
            {"a": expected, "n": BATCH}).all()
        if not rows:
            break
        for idx, hexhash in rows:
            if idx != expected:
                raise RuntimeError(f"translog has a gap: entry {expected} is missing "
                                   f"(found {idx})")
            expected += 1
            cur = bytes.fromhex(hexhash)
            level, i = 0, idx
            pending.append({"level": 0, "idx": idx, "hash": hexhash})
            while i & 1:
                left_level, left = stack.pop()
                assert left_level == level
                cur = _node(left, cur)
                level, i = level + 1, i >> 1
                pending.append({"level": level, "idx": i, "hash": cur.hex()})
            stack.append((level, cur))
        op.bulk_insert(nodes, pending)
        pending = []


def downgrade() -> None:
    op.drop_table("translog_heads")
    op.drop_table("translog_nodes")
