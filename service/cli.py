"""The ``qahwa`` command: ``qahwa serve`` runs the service, ``qahwa demo`` shows it off."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from .ops_cli import keys_app, operators_app

app = typer.Typer(help="qahwa: provably fair dice and shuffles for café games",
                  no_args_is_help=True, add_completion=False)
app.add_typer(operators_app, name="operators")
app.add_typer(keys_app, name="keys")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8000,
    database_url: Annotated[str | None, typer.Option(
        help="SQLAlchemy URL (default: $QAHWA_DATABASE_URL or sqlite:///./data/qahwa.db)")] = None,
    workers: Annotated[int, typer.Option(min=1, help="server processes")] = 1,
    access_log: Annotated[bool, typer.Option(
        help="log one line per request (uvicorn's access log)")] = True,
    log_format: Annotated[str, typer.Option(
        help="text, or json: one JSON object a line, with request ids and no secrets")] = "text",
) -> None:
    """Run the HTTP service (migrates the database and creates keys on first start)."""
    import uvicorn

    from . import keys, migrate
    from .db import Database
    from .logging_json import log_config
    from .operators import ensure_first_key
    from .serving import GuardedH11Protocol
    from .settings import Settings

    if log_format not in ("text", "json"):
        raise typer.BadParameter("text or json", param_hint="--log-format")

    if database_url:
        os.environ["QAHWA_DATABASE_URL"] = database_url
    settings = Settings()
    # Migrations and key files happen once here, before any worker process starts.
    db = Database(settings.database_url)
    migrate.upgrade(db)
    made = ensure_first_key(db, settings.operator_key_path)
    db.dispose()
    keys.signer(settings)
    keys.master_key(settings)
    if made:
        typer.echo(f"qahwa: operator key 'default' written to {settings.operator_key_path}: "
                   "creating matches and rng sessions needs it as 'Authorization: Bearer "
                   "<key>' (qahwa operators --help)")
    typer.echo(f"qahwa: serving on http://{host}:{port} ({_safe_url(settings.database_url)})")
    uvicorn.run("service.app:create_app", factory=True, host=host, port=port,
                workers=workers, log_level="info", ws="none", access_log=access_log,
                http=GuardedH11Protocol, log_config=log_config(log_format))


def _safe_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@app.command()
def demo(
    game: Annotated[list[str] | None, typer.Option(
        help="only this game (repeatable; default: every game and an rng session)")] = None,
    seed: Annotated[int | None, typer.Option(help="seed the bots' choices")] = None,
) -> None:
    """Start a server on a temporary database, play a demo, verify it with `verify`."""
    from .demo import run_demo
    from .server import ServerThread
    from .settings import Settings

    with tempfile.TemporaryDirectory(prefix="qahwa-demo-") as tmp:
        settings = Settings(database_url=f"sqlite:///{Path(tmp) / 'demo.db'}",
                            data_dir=Path(tmp), master_key=None, signing_key=None,
                            signing_key_file=None)
        with ServerThread(settings) as srv:
            typer.echo(f"qahwa demo server at {srv.url}")
            key = settings.operator_key_path.read_text(encoding="ascii").strip()
            rc = run_demo(srv.url, game or None, seed=seed, echo=typer.echo, operator_key=key)
    raise typer.Exit(rc)


if __name__ == "__main__":
    app()
