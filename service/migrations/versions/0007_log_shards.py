"""log shards: every stored entry, tree node and signed head belongs to one log

``qahwa keys new-log`` starts a new log (docs/deploy.md §10): a new origin and note key
whose tree starts again from index 0, the older logs kept and served read-only. The
``log_id`` of ``translog``, ``translog_nodes`` and ``translog_heads`` is the ``id`` of the
log's ``log_identity`` row, and it leads each table's primary key, so every lookup of the
tree stays one index search within its log.

The entries already stored belong to the newest log of ``log_identity`` (the one their
checkpoints are signed under), or to log 1 when no process has recorded a log yet (the
first one it records gets id 1). Each table is copied into a new one with the new key (the
same statements on SQLite and PostgreSQL).
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"

Table = tuple[str, tuple["sa.Column[Any]", ...], tuple[str, ...]]


def _tables() -> tuple[Table, ...]:
    """(table, its columns after log_id, its primary key after log_id): new Column objects
    on each call (a Column belongs to one table)."""
    return (
        (
            "translog",
            (
                sa.Column("idx", sa.Integer, nullable=False, autoincrement=False),
                sa.Column("match_id", sa.String(64), nullable=False),
                sa.Column("leaf", sa.Text, nullable=False),
                sa.Column("leaf_hash", sa.String(64), nullable=False),
                sa.Column("created_at", sa.String(40), nullable=False),
            ),
            ("idx",),
        ),
        (
            "translog_nodes",
            (
                sa.Column("level", sa.Integer, nullable=False, autoincrement=False),
                sa.Column("idx", sa.Integer, nullable=False, autoincrement=False),
                sa.Column("hash", sa.String(64), nullable=False),
            ),
            ("level", "idx"),
        ),
        (
            "translog_heads",
            (
                sa.Column("tree_size", sa.Integer, nullable=False, autoincrement=False),
                sa.Column("head", sa.Text, nullable=False),
            ),
            ("tree_size",),
        ),
    )


def _copy(
    table: str, columns: tuple["sa.Column[Any]", ...], key: tuple[str, ...], shards: bool
) -> None:
    names = [c.name for c in columns]
    new = f"{table}_new"
    lead = [sa.Column("log_id", sa.Integer, nullable=False, autoincrement=False)] if shards else []
    pk = (("log_id",) if shards else ()) + key
    op.create_table(
        new,
        *lead,
        *columns,
        sa.PrimaryKeyConstraint(*pk, name=f"pk_{table}_{'log' if shards else 'one'}"),
    )
    cols = ", ".join(names)
    if shards:
        op.execute(
            f"INSERT INTO {new} (log_id, {cols}) SELECT "
            "(SELECT COALESCE(MAX(id), 1) FROM log_identity), "
            f"{cols} FROM {table}"
        )
    else:
        op.execute(f"INSERT INTO {new} ({cols}) SELECT {cols} FROM {table}")
    if table == "translog":
        op.drop_index("ix_translog_match", table_name=table)
    op.drop_table(table)
    op.rename_table(new, table)
    if table == "translog":
        op.create_index("ix_translog_match", table, ["match_id"])


def upgrade() -> None:
    for table, columns, key in _tables():
        _copy(table, columns, key, shards=True)


def downgrade() -> None:
    conn = op.get_bind()
    logs = conn.execute(sa.text("SELECT COUNT(DISTINCT log_id) FROM translog")).scalar()
    if logs and logs > 1:
        raise RuntimeError(
            "the database holds entries of more than one log (qahwa keys new-log): "
            "revision 0006 keeps one log only"
        )
    for table, columns, key in _tables():
        _copy(table, columns, key, shards=False)
