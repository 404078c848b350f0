"""``qahwa operators add|list|revoke`` and ``qahwa keys rotate|list`` (docs/deploy.md).

They read the same settings as ``qahwa serve`` (``QAHWA_*``, ``--database-url``) and migrate
the database first, as ``qahwa serve`` does.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .cli_help import CONTEXT, DATABASE_URL, Group

if TYPE_CHECKING:  # imported where used: `qahwa --help` stays quick
    from .db import Database
    from .settings import Settings

operators_app = Group("operators", help="Operator keys: who may create matches and rng sessions.")
keys_app = Group(
    "keys",
    help="The Ed25519 signing keys of records and transcripts.",
    context_settings={**CONTEXT, "show_default": True},  # its commands show their defaults
)


def _on_database(command: Callable[..., None]) -> Callable[..., None]:
    """The command with ``--database-url``, run on that database, migrated first as ``qahwa
    serve`` does, and handed ``(settings, db, …)``; a refusal (a ServiceError) is said in
    one line, exit 1."""

    @DATABASE_URL
    @functools.wraps(command)
    def run(database_url: str | None, **kwargs: Any) -> None:
        from . import keys, migrate
        from .db import Database
        from .errors import ServiceError
        from .settings import Settings

        if database_url:
            os.environ["QAHWA_DATABASE_URL"] = database_url
        settings = Settings()
        db = Database(settings.database_url)
        try:
            migrate.upgrade(db, master_key=lambda: keys.master_key(settings))
            command(settings, db, **kwargs)
        except ServiceError as exc:  # refused: said in one line, exit 1
            click.echo(f"qahwa: {exc.message}", err=True)
            raise click.exceptions.Exit(1) from None
        finally:
            db.dispose()

    return run


@operators_app.command("add")
@click.argument("name", help="a name for the key's holder")
@_on_database
def operators_add(settings: Settings, db: Database, name: str) -> None:
    """Make a key for NAME; it is printed once, alone on the last line (stored hashed)."""
    from . import operators

    key = operators.add(db, name)
    click.echo(
        f"operator {name!r} added; its key (shown only now, send it as "
        "'Authorization: Bearer <key>'):"
    )
    click.echo(key)


@operators_app.command("list")
@_on_database
def operators_list(settings: Settings, db: Database) -> None:
    """Every operator: name, created, revoked (never the key)."""
    from . import operators

    rows = operators.listing(db)
    if not rows:
        click.echo("no operators (qahwa operators add NAME)")
    for r in rows:
        state = f"revoked {r.revoked_at}" if r.revoked_at else "active"
        click.echo(f"{r.name}\tcreated {r.created_at}\t{state}")


@operators_app.command("revoke")
@click.argument("name", help="the operator to revoke")
@_on_database
def operators_revoke(settings: Settings, db: Database, name: str) -> None:
    """Revoke NAME's key: refused at once by every process on this database."""
    from . import operators

    operators.revoke(db, name)
    click.echo(f"operator {name!r} revoked")


@keys_app.command("rotate")
@click.option(
    "--in",
    "delay",
    type=click.FloatRange(min=0),
    default=60.0,
    help="seconds until the new key signs (every process picks it up before then)",
)
@click.option(
    "--seal/--no-seal",
    default=True,
    help="keep the new key in the database sealed under the master key, so that running "
    "processes switch to it without a restart",
)
@_on_database
def keys_rotate(settings: Settings, db: Database, delay: float, seal: bool) -> None:
    """Stage a new signing key; every process switches to it without a restart.

    Listed at once in /v1/keys as next, it signs from its activation time (--in) on, and the
    keys in force now are retired at that moment. Running processes load it from the database (QAHWA_KEY_POLL_SECONDS) and switch at
    the activation time: no restart."""
    import time

    from fairness import SecretBox

    from . import keys

    box = SecretBox(keys.master_key(settings))
    if delay < settings.key_poll_seconds:
        click.echo(
            f"warning: --in {delay:g} is shorter than QAHWA_KEY_POLL_SECONDS "
            f"({settings.key_poll_seconds:g}): a running process may sign with the old key "
            "after its retirement until it re-reads the keys, and clients may meet the new "
            "key before its announcement reaches them on a stream",
            err=True,
        )
    with db.write() as s:
        new, private, at = keys.rotate(settings, s, box, time.time(), delay, seal=seal)
    click.echo(
        f"signing key {new.key_id} is staged: /v1/keys lists it as next now, it signs from "
        f"{at}, and the keys in force now are retired then (still listed in /v1/keys)."
    )
    from .logs import key_rows

    rows = key_rows(db)
    [row] = [r for r in rows if r.key_id == new.key_id]
    announcing = [r.key_id for r in keys.predecessors(rows, row)]
    click.echo(
        f"Announced by {', '.join(announcing) or 'no key'} (a signed key_announcement in "
        "/v1/keys and on the event streams): running clients that trust "
        f"{'it' if len(announcing) == 1 else 'one of them'} take the new key and play on."
    )
    if seal:
        click.echo(
            "Running processes pick it up from the database and switch at that time; "
            "no restart is needed."
        )
    else:
        click.echo(
            "Not sealed into the database: install it on every host and restart every "
            f"process before {at} (processes without it answer 503 from then on)."
        )
    if private is None:
        click.echo(
            f"written to {settings.signing_key_path} (what a restarted process loads); the "
            "old key file was kept beside it as .retired-<key_id>"
        )
    else:
        click.echo(
            "QAHWA_SIGNING_KEY is set, so no file was written: put this private key "
            "(base64) into your secret store as QAHWA_SIGNING_KEY for the next restarts:"
        )
        click.echo(private)


@keys_app.command("list")
@_on_database
def keys_list(settings: Settings, db: Database) -> None:
    """Every signing key: id, created, and next, current or retired (with the time)."""
    import time

    from .logs import key_listing

    for k in key_listing(db, time.time()):
        if k["next"]:
            state = f"next: signs from {k['activates_at']}"
        elif k["current"]:
            state = "current" + (f", retired at {k['retired_at']}" if k["retired_at"] else "")
        else:
            state = f"retired {k['retired_at']}"
        click.echo(f"{k['key_id']}\t{k['alg']}\tcreated {k['created_at']}\t{state}")


@keys_app.command("new-log")
@click.argument("origin", help="the new log's origin, e.g. dice.example.org/log/2027")
@_on_database
def keys_new_log(settings: Settings, db: Database, origin: str) -> None:
    """Start a new log: a new note key under ORIGIN (docs/deploy.md §10).

    ORIGIN becomes the deployment's log, appended to from index 0; the old log is frozen
    (its final checkpoint signed) and served read-only under /logs/<id>/log/. Restart every
    process with QAHWA_LOG_ORIGIN set to it."""
    from fairness import SecretBox

    from . import keys
    from .c2sp import LogShelf

    box = SecretBox(keys.master_key(settings))
    try:
        log_id, vkey = keys.new_log(settings, db, box, origin, os.urandom(32))
        if log_id > 1:  # the old log's final checkpoint: nothing is appended to it now
            old = LogShelf.open_frozen(db, settings, box, log_id - 1)
    except ValueError as exc:  # a refusal (ServiceError) is _on_database's
        click.echo(f"qahwa: {exc}", err=True)
        raise click.exceptions.Exit(1) from None
    if log_id > 1:
        final = old.newest()
        click.echo(
            f"the log {old.origin!r} is frozen at {final.tree_size} entries (its final "
            f"checkpoint), served read-only under /logs/{log_id - 1}/log/"
        )
    click.echo(
        f"the deployment's log is now {origin!r} (log {log_id}, new entries from index 0); "
        f"restart every process with QAHWA_LOG_ORIGIN={origin} (and no other QAHWA_LOG_KEY). "
        "Its verifier key:"
    )
    click.echo(vkey)
