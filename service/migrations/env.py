"""Alembic environment: runs on the connection the service hands over, or on ``-x url=``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

import service.models  # noqa: F401  (registers the tables on SQLModel.metadata)

target_metadata = SQLModel.metadata
config = context.config


def _run(connection: object) -> None:
    context.configure(connection=connection, target_metadata=target_metadata)  # type: ignore[arg-type]
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":  # type: ignore[attr-defined]
            # Several processes may start at once: one migrates, the others wait.
            connection.execute(text("SELECT pg_advisory_xact_lock(7461626)"))  # type: ignore[attr-defined]
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("give the database with: alembic -x url=... upgrade head")
    engine = create_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported")
run_migrations_online()
