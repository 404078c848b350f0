"""initial schema: matches, seats, server seeds, events, transparency log, keys"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "matches",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("ruleset", sa.Text, nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("n_seats", sa.Integer, nullable=False),
        sa.Column("next_seq", sa.Integer, nullable=False),
        sa.Column("log_index", sa.Integer, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("started_at", sa.String(40), nullable=True),
        sa.Column("ended_at", sa.String(40), nullable=True),
        sa.Column("last_activity", sa.Float, nullable=False),
    )
    op.create_index("ix_matches_status", "matches", ["status"])
    op.create_index("ix_matches_last_activity", "matches", ["last_activity"])
    op.create_table(
        "seats",
        sa.Column("match_id", sa.String(64), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("client_seed", sa.String(600), nullable=True),
        sa.Column("seed_source", sa.String(8), nullable=True),
    )
    op.create_table(
        "server_seeds",
        sa.Column("match_id", sa.String(64), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("sealed", sa.Text, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("match_id", sa.String(64), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "translog",
        sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("match_id", sa.String(64), nullable=False),
        sa.Column("leaf", sa.Text, nullable=False),
        sa.Column("leaf_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_translog_match", "translog", ["match_id"])
    op.create_table(
        "signing_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column("alg", sa.String(16), nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    for table in ("signing_keys", "translog", "events", "server_seeds", "seats", "matches"):
        op.drop_table(table)
