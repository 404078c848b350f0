"""``qahwa operators add|list|revoke`` and ``qahwa keys rotate|list`` (docs/deploy.md).

They read the same settings as ``qahwa serve`` (``QAHWA_*``, ``--database-url``) and migrate
the database first, as ``qahwa serve`` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # imported where used: `qahwa --help` stays quick
    from .db import Database
    from .errors import ServiceError
    from .settings import Settings

operators_app = typer.Typer(help="Operator keys: who may create matches and rng sessions.",
                            no_args_is_help=True, add_completion=False)
keys_app = typer.Typer(help="The Ed25519 signing keys of records and transcripts.",
                       no_args_is_help=True, add_completion=False)

DbUrl = Annotated[str | None, typer.Option(
    help="SQLAlchemy URL (default: $QAHWA_DATABASE_URL or sqlite:///./data/qahwa.db)")]


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


def _fail(exc: ServiceError) -> typer.Exit:
    typer.echo(f"qahwa: {exc.message}", err=True)
    return typer.Exit(1)


@operators_app.command("add")
def operators_add(name: Annotated[str, typer.Argument(help="a name for the key's holder")],
                  database_url: DbUrl = None) -> None:
    """Make a key for NAME; it is printed once, alone on the last line (stored hashed)."""
    from . import operators
    from .errors import ServiceError

    with _database(database_url) as (_, db):
        try:
            key = operators.add(db, name)
        except ServiceError as exc:
            raise _fail(exc) from None
    typer.echo(f"operator {name!r} added; its key (shown only now, send it as "
               "'Authorization: Bearer <key>'):")
    typer.echo(key)


@operators_app.command("list")
def operators_list(database_url: DbUrl = None) -> None:
    """Every operator: name, created, revoked (never the key)."""
    from . import operators

    with _database(database_url) as (_, db):
        rows = operators.listing(db)
    if not rows:
        typer.echo("no operators (qahwa operators add NAME)")
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "active"
        typer.echo(f"{r.name}\tcreated {r.created_at}\t{state}")


@operators_app.command("revoke")
def operators_revoke(name: Annotated[str, typer.Argument(help="the operator to revoke")],
                     database_url: DbUrl = None) -> None:
    """Revoke NAME's key: refused at once by every process on this database."""
    from . import operators
    from .errors import ServiceError

    with _database(database_url) as (_, db):
        try:
            operators.revoke(db, name)
        except ServiceError as exc:
            raise _fail(exc) from None
    typer.echo(f"operator {name!r} revoked")


@keys_app.command("rotate")
def keys_rotate(database_url: DbUrl = None) -> None:
    """Make a new signing key current; the old ones stay listed in /v1/keys as retired.

    Restart every server process afterwards: each signs with the key it started with."""
    from . import keys
    from .store import now_iso

    with _database(database_url) as (settings, db):
        with db.write() as s:
            new, private = keys.rotate(settings, s, now_iso())
    typer.echo(f"signing key {new.key_id} is now current; the others are retired "
               "(still listed in /v1/keys). Restart every server process.")
    if private is None:
        typer.echo(f"written to {settings.signing_key_path}; the old key file was kept "
                   "beside it as .retired-<key_id>: delete it once every process has restarted")
    else:
        typer.echo("QAHWA_SIGNING_KEY is set, so nothing was written: install this private "
                   "key (base64) as QAHWA_SIGNING_KEY on every host, then restart:")
        typer.echo(private)


@keys_app.command("list")
def keys_list(database_url: DbUrl = None) -> None:
    """Every signing key: id, created, current or retired."""
    from sqlmodel import col, select

    from .models import SigningKey

    with _database(database_url) as (_, db):
        with db.read() as s:
            rows = s.exec(select(SigningKey).order_by(col(SigningKey.created_at))).all()
    for r in rows:
        state = f"retired {r.retired_at}" if r.retired_at else "current"
        typer.echo(f"{r.key_id}\t{r.alg}\tcreated {r.created_at}\t{state}")
