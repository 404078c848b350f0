"""qahwa-fair/2: seat commitments, the lock, the event chain, deadlines

Adds, per match: ``protocol`` (existing rows are qahwa-fair/1 and keep working as v1), the
signed ``lock`` record and its ``lock_index`` in the log, ``reveal_by`` / ``end_by`` /
``deadline`` (epoch seconds; ``deadline`` is the time by which seat ``owes`` must take the
next step), the chain head ``chain`` and the signature of the transcript whose SHA-256 the
reveal record logged (``transcript_sig``). Per seat: ``house``, ``seed_commitment``,
``nonce``, ``key``, ``roll_chain`` (the tip) and ``revealed``. Per event: ``chain`` (the
head after it). ``service_heartbeat`` remembers when the service last swept, so a turn
deadline that passed while nothing was serving is extended (fairness-v2.md §7).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"

_MATCH_COLS = (
    ("lock", sa.Text), ("lock_index", sa.Integer), ("reveal_by", sa.Float),
    ("end_by", sa.Float), ("chain", sa.String(64)), ("deadline", sa.Float),
    ("owes", sa.Integer), ("transcript_sig", sa.Text),
)
_SEAT_COLS = (
    ("seed_commitment", sa.String(64)), ("nonce", sa.String(64)), ("key", sa.String(64)),
    ("roll_chain", sa.String(64)),
)


def upgrade() -> None:
    op.add_column("matches", sa.Column("protocol", sa.String(16), nullable=False,
                                       server_default="qahwa-fair/1"))
    for name, typ in _MATCH_COLS:
        op.add_column("matches", sa.Column(name, typ, nullable=True))
    op.create_index("ix_matches_deadline", "matches", ["deadline"])
    op.add_column("seats", sa.Column("house", sa.Boolean, nullable=False,
                                     server_default=sa.false()))
    for name, typ in _SEAT_COLS:
        op.add_column("seats", sa.Column(name, typ, nullable=True))
    op.add_column("seats", sa.Column("revealed", sa.Boolean, nullable=False,
                                     server_default=sa.false()))
    op.add_column("events", sa.Column("chain", sa.String(64), nullable=True))
    op.create_table(
        "service_heartbeat",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("service_heartbeat")
    with op.batch_alter_table("events") as b:
        b.drop_column("chain")
    with op.batch_alter_table("seats") as b:
        for name in ("revealed", *(n for n, _ in _SEAT_COLS), "house"):
            b.drop_column(name)
    op.drop_index("ix_matches_deadline", "matches")
    with op.batch_alter_table("matches") as b:
        for name in (*(n for n, _ in _MATCH_COLS), "protocol"):
            b.drop_column(name)
