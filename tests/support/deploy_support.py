"""What the deployment and log tests share (tests/repo/test_deployment.py,
tests/log/test_log_shards.py, tests/log/test_witness_proof.py): a fresh PostgreSQL database,
a witness over real HTTP, a closed rng session, ``verify --json`` and ``qahwa keys``."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import tlog
from bench.pg import fresh_database
from tests.support import serving
from tests.support.live_server import QAHWA
from verify_cli.main import app as verify_app
from verify_cli.witness import WitnessServer, make_server

PG_URL = os.environ.get("QAHWA_TEST_PG_URL")
needs_pg = pytest.mark.skipif(not PG_URL, reason="QAHWA_TEST_PG_URL is not set")


def fresh_pg(name: str) -> str:
    """A new empty PostgreSQL database beside QAHWA_TEST_PG_URL's (dropped first): one
    deployment of its own, with no log recorded yet."""
    assert PG_URL is not None
    return fresh_database(PG_URL, name)


def url_of(srv: WitnessServer) -> str:
    host, port = srv.server_address[:2]
    return f"http://{host!s}:{port}"


@contextmanager
def running_witness(
    folder: Path, name: str, log: tlog.Verifier
) -> Iterator[tuple[WitnessServer, str]]:
    """``verify witness`` for ``log`` as ``witness.test/<name>`` (its key and state in
    ``folder``, kept across restarts) on a port the kernel picks: the server and its
    QAHWA_WITNESSES entry."""
    srv = make_server(
        [log],
        "127.0.0.1:0",
        folder / "witness.key",
        f"witness.test/{name}",
        folder / "witness.json",
    )
    with serving(srv) as url:
        yield srv, f"{name} {srv.witness.signer.vkey} {url}"


def witness_fixture(log: tlog.NoteSigner) -> Any:
    """A ``witness`` fixture: :func:`running_witness` ``w1`` for ``log``, in the test's
    tmp_path (a module binds it as ``witness = witness_fixture(LOG)``)."""

    @pytest.fixture(name="witness")
    def witness(tmp_path: Path) -> Iterator[WitnessServer]:
        with running_witness(tmp_path / "w", "w1", log.verifier) as (srv, _):
            yield srv

    return witness


def rng_session(c: httpx.Client, seed: str) -> tuple[str, list[dict[str, Any]]]:
    """A closed qahwa-fair/2 rng session: created, locked by its seed (the lock is its log
    entry, the one its tlog-proof proves), drawn from and closed (the reveal is logged); its
    id and every signed record it was given."""
    r = c.post("/v1/rng", json={})
    assert r.status_code == 201, r.text
    s = r.json()
    h = {"Authorization": f"Bearer {s['token']}"}
    sid = s["session_id"]
    seeded = c.post(
        f"/v1/rng/{sid}/seed", json={"client_seed": seed, "nonce": "ab" * 32}, headers=h
    )
    assert seeded.status_code == 200, seeded.text
    drawn = c.post(f"/v1/rng/{sid}/draws", json={"kind": "dice", "count": 2, "sides": 6}, headers=h)
    assert drawn.status_code == 200, drawn.text
    closed = c.post(f"/v1/rng/{sid}/close", headers=h)
    assert closed.status_code == 200, closed.text
    transcript = closed.json()["transcript"]
    return str(sid), [s["record"], transcript["lock"], transcript]


def verify(*args: str) -> tuple[int, dict[str, Any]]:
    """``verify ARGS --json`` in this process: its exit code and its JSON document."""
    res = CliRunner().invoke(verify_app, [*args, "--json"], catch_exceptions=False)
    assert res.stdout, res.stderr
    return res.exit_code, json.loads(res.stdout)


def qahwa_keys(database_url: str, env: dict[str, str], *args: str) -> str:
    """``qahwa keys ARGS --database-url URL`` with ``env`` added; it must succeed: its output."""
    out = subprocess.run(
        [str(QAHWA), "keys", *args, "--database-url", database_url],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout
