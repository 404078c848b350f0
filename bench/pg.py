"""What the PostgreSQL benches (and the deployment tests) share: the test server's URL from
QAHWA_TEST_PG_URL, a fresh database beside it, the machine's load average."""

from __future__ import annotations

import os
from pathlib import Path


def pg_url(bench: str, why: str = "") -> str | None:
    """QAHWA_TEST_PG_URL, or None after saying that ``bench`` does not run without it."""
    url = os.environ.get("QAHWA_TEST_PG_URL")
    if not url:
        print(f"{bench}: QAHWA_TEST_PG_URL is not set{why}")
    return url or None


def fresh_database(base_url: str, suffix: str) -> str:
    """A new empty database ``<base_url's>_<suffix>`` (dropped first): a deployment of its
    own, with no log recorded yet."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(base_url)
    name = f"{base.database}_{suffix}"
    engine = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def conninfo(url: str) -> str:
    """``url`` (SQLAlchemy's) as libpq takes it, for psycopg itself."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages, or ``?`` where /proc has none."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"
