"""``verify page``: the verify page from this install, on 127.0.0.1 (qahwa_page.serve)."""

from __future__ import annotations

import click

from qahwa_page.pyodide import PYODIDE_VERSION, RUNTIME_DIR, runtime_installed
from qahwa_page.serve import PageServer


@click.command(
    "page",
    help="Serve the verify page from this install on 127.0.0.1: the same "
    "page and Python the server serves, and the pinned Pyodide runtime that "
    "replays the rules in your browser. Stop it with Ctrl-C.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="The port on 127.0.0.1 (0: any free one).",
)
@click.option(
    "--no-runtime",
    is_flag=True,
    help="Serve the page without Pyodide: it checks "
    "chance events and signatures but does not replay the rules (and says so).",
)
def page_cmd(port: int, no_runtime: bool) -> int:
    runtime = None if no_runtime else RUNTIME_DIR
    if runtime is not None and not runtime_installed(runtime):
        raise click.ClickException(
            f"the Pyodide runtime {PYODIDE_VERSION} is not in this install ({RUNTIME_DIR}): "
            "install the qahwa-verify wheel, or run make pyodide in a checkout; "
            "--no-runtime serves the page without it"
        )
    try:
        server = PageServer("127.0.0.1", port, runtime)
    except OSError as exc:
        raise click.ClickException(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"
        ) from None
    how = (
        "without the Pyodide runtime: the rules are not replayed"
        if runtime is None
        else f"with Pyodide {PYODIDE_VERSION}: the rules are replayed in your browser"
    )
    click.echo(f"verify page: {server.url} ({how}); Ctrl-C stops it", err=True)
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("verify page: stopped", err=True)
    return 0
