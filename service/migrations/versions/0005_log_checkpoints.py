"""checkpoints of the transparency log (c2sp.org/tlog-checkpoint) and witness cosignatures"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "translog_checkpoints",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("origin", sa.String(255), nullable=False),
        sa.Column("tree_size", sa.Integer, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("origin", "tree_size"),
    )
    op.create_table(
        "translog_cosignatures",
        sa.Column("checkpoint_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("witness", sa.String(255), primary_key=True),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("translog_cosignatures")
    op.drop_table("translog_checkpoints")
