"""Apply the Alembic migrations (the service does this on start)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config

from .db import Database

HERE = Path(__file__).resolve().parent


def alembic_config() -> Config:
    cfg = Config(str(HERE / "alembic.ini"))
    cfg.set_main_option("script_location", str(HERE / "migrations"))
    return cfg


def upgrade(db: Database, master_key: Callable[[], bytes] | None = None) -> None:
    """Bring the database to the newest revision (idempotent; safe from several processes).

    ``master_key``: gives the master key, for a migration that opens sealed seeds (0008 ends
    unfinished qahwa-fair/1 matches; called only when there are any)."""
    cfg = alembic_config()
    with db.write_engine.connect() as conn:
        cfg.attributes["connection"] = conn
        cfg.attributes["master_key"] = master_key
        command.upgrade(cfg, "head")
        conn.commit()
