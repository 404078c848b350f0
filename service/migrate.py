"""Apply the Alembic migrations (the service does this on start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from .db import Database

HERE = Path(__file__).resolve().parent


def alembic_config() -> Config:
    cfg = Config(str(HERE / "alembic.ini"))
    cfg.set_main_option("script_location", str(HERE / "migrations"))
    return cfg


def upgrade(db: Database) -> None:
    """Bring the database to the newest revision (idempotent; safe from several processes)."""
    cfg = alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
        conn.commit()
