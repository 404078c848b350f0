"""``qahwa operators add|list|revoke`` and ``qahwa keys rotate|list`` (docs/deploy.md).

They read the same settings as ``qahwa serve`` (``QAHWA_*``, ``--database-url``) and migrate
the database first, as ``qahwa serve`` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from .cli_help import Group

if TYPE_CHECKING:  # imported where used: `qahwa --help` stays quick
    from .db import Database
    from .errors import ServiceError
    from .settings import Settings

operators_app = Group("operators", help="Operator keys: who may create matches and rng sessions.")
keys_app = Group("keys", help="The Ed25519 signing keys of records and transcripts.")

db_url = click.option(
    "--database-url",
    help="SQLAlchemy URL (default: $QAHWA_DATABASE_URL or sqlite:///./data/qahwa.db)",
)


@contextmanager
def _database(database_url: str | None) -> Iterator[tuple[Settings, Database]]:
    from . import migrate
    from .db import Database
    from .settings import Settings

    if database_url:
        os.environ["QAHWA_DATABASE_URL"] = database_url
    settings = Settings()
    db = Database(settings.database_url)
    try:
        migrate.upgrade(db)
        yield settings, db
    finally:
        db.dispose()


def _fail(exc: ServiceError) -> click.exceptions.Exit:
    click.echo(f"qahwa: {exc.message}", err=True)
    return click.exceptions.Exit(1)


@operators_app.command("add")
@click.argument("name", help="a name for the key's holder")
@db_url
def operators_add(name: str, database_url: str | None) -> None:
    """Make a key for NAME; it is printed once, alone on the last line (stored hashed)."""
    from . import operators
    from .errors import ServiceError

    with _database(database_url) as (_, db):
        try:
            key = operators.add(db, name)
        except ServiceError as exc:
            raise _fail(exc) from None
    click.echo(
        f"operator {name!r} added; its key (shown only now, send it as "
        "'Authorization: Bearer <key>'):"
    )
    click.echo(key)


@operators_app.command("list")
@db_url
def operators_list(database_url: str | None) -> None:
    """Every operator: name, created, revoked (never the key)."""
    from . import operators

    with _database(database_url) as (_, db):
        rows = operators.listing(db)
    if not rows:
        click.echo("no operators (qahwa operators add NAME)")
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "active"
        click.echo(f"{r.name}\tcreated {r.created_at}\t{state}")


@operators_app.command("revoke")
@click.argument("name", help="the operator to revoke")
@db_url
def operators_revoke(name: str, database_url: str | None) -> None:
    """Revoke NAME's key: refused at once by every process on this database."""
    from . import operators
    from .errors import ServiceError

    with _database(database_url) as (_, db):
        try:
            operators.revoke(db, name)
        except ServiceError as exc:
            raise _fail(exc) from None
    click.echo(f"operator {name!r} revoked")


@keys_app.command("rotate")
@db_url
def keys_rotate(database_url: str | None) -> None:
    """Make a new signing key current; the old ones stay listed in /v1/keys as retired.

    Restart every server process afterwards: each signs with the key it started with."""
    from . import keys
    from .store import now_iso

    with _database(database_url) as (settings, db):
        with db.write() as s:
            new, private = keys.rotate(settings, s, now_iso())
    click.echo(
        f"signing key {new.key_id} is now current; the others are retired "
        "(still listed in /v1/keys). Restart every server process."
    )
    if private is None:
        click.echo(
            f"written to {settings.signing_key_path}; the old key file was kept "
            "beside it as .retired-<key_id>: delete it once every process has restarted"
        )
    else:
        click.echo(
            "QAHWA_SIGNING_KEY is set, so nothing was written: install this private "
            "key (base64) as QAHWA_SIGNING_KEY on every host, then restart:"
        )
        click.echo(private)


@keys_app.command("list")
@db_url
def keys_list(database_url: str | None) -> None:
    """Every signing key: id, created, current or retired."""
    from sqlmodel import col, select

    from .models import SigningKey

    with _database(database_url) as (_, db):
        with db.read() as s:
            rows = s.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all()
    for r in rows:
        state = f"retired {r.retired_at}" if r.retired_at else "current"
        click.echo(f"{r.key_id}\t{r.alg}\tcreated {r.created_at}\t{state}")
