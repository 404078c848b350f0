"""The ``qahwa`` command: ``qahwa serve`` runs the service, ``qahwa demo`` shows it off."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from .cli_help import DATABASE_URL, Group
from .ops_cli import keys_app, operators_app
from .version import PROTOCOLS, VERSION


@click.group(cls=Group, help="qahwa: provably fair dice and shuffles for café games")
@click.version_option(
    VERSION,
    prog_name="qahwa",
    message=f"%(prog)s %(version)s ({', '.join(PROTOCOLS)})",
)
def app() -> None:
    pass


@app.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=int, default=8000, show_default=True, help="port to listen on")
@DATABASE_URL
@click.option(
    "--workers", type=click.IntRange(min=1), default=1, show_default=True, help="server processes"
)
@click.option(
    "--access-log/--no-access-log",
    default=True,
    show_default=True,
    help="log one line per request (uvicorn's access log)",
)
@click.option(
    "--log-format",
    default="text",
    show_default=True,
    help="text, or json: one JSON object a line, with request ids and no secrets",
)
def serve(
    host: str, port: int, database_url: str | None, workers: int, access_log: bool, log_format: str
) -> None:
    """Run the HTTP service (migrates the database and creates keys on first start)."""
    import uvicorn
    from sqlalchemy.engine import make_url

    from . import keys, migrate
    from .db import Database
    from .logging_json import log_config
    from .operators import ensure_first_key
    from .serving import GuardedHttpToolsProtocol
    from .settings import Settings

    if log_format not in ("text", "json"):
        raise click.BadParameter("text or json", param_hint="--log-format")

    if database_url:
        os.environ["QAHWA_DATABASE_URL"] = database_url
    settings = Settings()
    # Migrations and key files happen once here, before any worker process starts.
    db = Database(settings.database_url)
    migrate.upgrade(db, master_key=lambda: keys.master_key(settings))
    made = ensure_first_key(db, settings.operator_key_path)
    try:  # a retired signing key, another log's key or origin: one line, no traceback
        keys.preflight(settings, db)
    except keys.StartupError as exc:
        click.echo(f"qahwa: not serving: {exc}", err=True)
        raise click.exceptions.Exit(1) from None
    finally:
        db.dispose()
    if made:
        click.echo(
            f"qahwa: operator key 'default' written to {settings.operator_key_path}: "
            "creating matches and rng sessions needs it as 'Authorization: Bearer "
            "<key>' (qahwa operators --help)"
        )
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    click.echo(f"qahwa: serving on http://{host}:{port} ({shown})")
    uvicorn.run(
        "service.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        ws="none",
        access_log=access_log,
        http=GuardedHttpToolsProtocol,
        log_config=log_config(log_format),
    )


@app.command()
@click.option(
    "--game",
    multiple=True,
    help="only this game (repeatable; default: every game and an rng session)",
)
@click.option("--seed", type=int, help="seed the bots' choices")
def demo(game: tuple[str, ...], seed: int | None) -> None:
    """Start a server on a temporary database, play a demo, verify it with `verify`."""
    from .demo import run_demo
    from .server import ServerThread
    from .settings import Settings

    with tempfile.TemporaryDirectory(prefix="qahwa-demo-") as tmp:
        settings = Settings(
            database_url=f"sqlite:///{Path(tmp) / 'demo.db'}",
            data_dir=Path(tmp),
            master_key=None,
            signing_key=None,
            signing_key_file=None,
        )
        with ServerThread(settings) as srv:
            click.echo(f"qahwa demo server at {srv.url}")
            key = settings.operator_key_path.read_text(encoding="ascii").strip()
            rc = run_demo(srv.url, list(game) or None, seed=seed, echo=click.echo, operator_key=key)
    raise click.exceptions.Exit(rc)


@app.command()
@click.option(
    "--server",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="the qahwa service the house seats are at",
)
@click.option(
    "--inbox",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="a folder your backend drops house seats into: *.json files, each "
    '{"match_id", "seat", "token"} or a list of them (moved to taken/ once taken)',
)
@click.option("--once", is_flag=True, help="play the seats there now to the end, then exit")
@click.option(
    "--keys",
    "keys_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="the server's /v1/keys answer, pinned (default: fetched from --server)",
)
@click.option("--seed", type=int, help="seed the bots' choices")
@click.option(
    "--sealed-keys",
    "sealed_keys",
    type=click.Path(file_okay=False, path_type=Path),
    help="keep the house seats' keys of sealed tables in this folder, each sealed under the "
    "master key (QAHWA_MASTER_KEY, or master.key in QAHWA_DATA_DIR), so a restarted bot "
    "goes on with its hand (default: in memory only)",
)
def house(
    server: str,
    inbox: Path,
    once: bool,
    keys_file: Path | None,
    seed: int | None,
    sealed_keys: Path | None,
) -> None:
    """Play an operator's house seats (declared "house": true) as conforming clients."""
    import json

    from .house import run_inbox

    keys = json.loads(keys_file.read_text(encoding="utf-8")) if keys_file else None
    store = None
    if sealed_keys is not None:
        from fairness import SecretBox

        from . import keys as server_keys
        from .house import SealedKeyDir
        from .settings import Settings

        store = SealedKeyDir(sealed_keys, SecretBox(server_keys.master_key(Settings())))
    click.echo(f"qahwa house: playing the house seats dropped into {inbox} at {server}")
    h = run_inbox(server, inbox, once=once, keys=keys, seed=seed, sealed_keys=store)
    for e in h.errors:
        click.echo(f"error: {e}", err=True)
    click.echo(f"{len(h.done)} house seat(s) played to the end")
    raise click.exceptions.Exit(1 if h.errors else 0)


app.add_command(operators_app, "operators")
app.add_command(keys_app, "keys")


if __name__ == "__main__":
    app(prog_name="qahwa")
