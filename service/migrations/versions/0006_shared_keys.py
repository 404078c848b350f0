"""keys every process of a deployment shares: staged signing keys and the log's identity

``signing_keys.activates_at``: when a key staged by ``qahwa keys rotate`` starts signing
(the key it replaces is retired at that moment); ``signing_keys.sealed``: the private key
sealed under the master key, so that every process switches without a restart.
``log_identity``: the transparency log's origin and note key (sealed), one row per log,
so that every host signs the same checkpoints.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.add_column("signing_keys", sa.Column("activates_at", sa.String(40), nullable=True))
    op.add_column("signing_keys", sa.Column("sealed", sa.Text, nullable=True))
    op.create_table(
        "log_identity",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("origin", sa.String(255), nullable=False, unique=True),
        sa.Column("vkey", sa.Text, nullable=False),
        sa.Column("sealed", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("log_identity")
    with op.batch_alter_table("signing_keys") as batch:
        batch.drop_column("sealed")
        batch.drop_column("activates_at")
