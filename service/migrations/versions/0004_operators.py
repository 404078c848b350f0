"""operator keys, their creation counters, and signing-key retirement

``operator_keys``: who may create matches and rng sessions (the SHA-256 of each key, never
the key). ``operator_rate``: creations per operator and minute, shared by every process on
the database. ``signing_keys.retired_at``: set by ``qahwa keys rotate`` on the keys it
replaces (they stay listed; what they signed stays verifiable).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "operator_keys",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("revoked_at", sa.String(40), nullable=True),
    )
    op.create_table(
        "operator_rate",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("minute", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("count", sa.Integer, nullable=False),
    )
    op.add_column("signing_keys", sa.Column("retired_at", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("signing_keys") as batch:
        batch.drop_column("retired_at")
    op.drop_table("operator_rate")
    op.drop_table("operator_keys")
