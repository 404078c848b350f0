"""clients/ts, the TypeScript conforming client (fairness-v2.md §3a), built and run by
``node --test``: the spec's vectors; every game and form played against a real server, each
transcript then passing ``verify`` and each seat's export passing ``verify --seat``; a seat
resumed from its file storage after a crash mid-match; a cheating server (tests/support/fake_http.py)
refused before it learns any secret; its types generated from the app's ``/openapi.json``
and not stale.

The npm packages are locked (clients/ts/package-lock.json, integrity hashes) and installed
with ``npm ci`` into clients/ts/node_modules (git-ignored), again only when the lock changes.
Skips only without node and npm (under CI=true conftest makes that a failure)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.client.test_openapi_ts import openapi_document
from tests.support.fake_http import FakeHub
from tests.support.hostile import LIES
from tests.support.live_server import LiveServer
from tests.support.witness_http import WitnessHTTP, new_log, witnessed_settings
from verify_cli.main import app as verify_app

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "ts"
NPM = shutil.which("npm")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NPM is None or NODE is None, reason="npm (and node) not installed")


def run(
    *cmd: str, cwd: Path = TS, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@contextlib.contextmanager
def _one_builder() -> Iterator[None]:
    """Held while node_modules or clients/ts/build is made: the test files that build run in
    parallel workers (``--dist loadfile``), and one worker's fresh build must not be deleted
    under another's running harness."""
    key = hashlib.sha256(str(TS).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"qahwa-ts-build-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _sources_digest() -> str:
    """What clients/ts/build is compiled from: every file of clients/ts but its packages
    and outputs."""
    h = hashlib.sha256()
    for path in sorted(TS.rglob("*")):
        rel = path.relative_to(TS)
        if rel.parts[0] in ("node_modules", "build", "dist") or not path.is_file():
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def node_modules() -> Path:
    """``npm ci`` of the locked packages, unless node_modules already has this lock."""
    with _one_builder():
        return _node_modules()


def _node_modules() -> Path:
    lock = (TS / "package-lock.json").read_bytes()
    stamp = TS / "node_modules" / ".qahwa-lock-sha256"
    digest = hashlib.sha256(lock + (TS / "package.json").read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        assert NPM is not None
        proc = run(NPM, "ci", "--no-audit", "--no-fund")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        stamp.write_text(digest)
    return TS / "node_modules"


@pytest.fixture(scope="module")
def built() -> Path:
    """clients/ts and its tests compiled under tsc --strict into clients/ts/build."""
    return build()


def build() -> Path:
    """clients/ts and its tests compiled under tsc --strict into clients/ts/build, once per
    state of its sources."""
    assert NODE is not None
    out = TS / "build"
    with _one_builder():
        modules = _node_modules()
        digest = _sources_digest()
        stamp = out / ".qahwa-sources-sha256"
        # built once per state of the sources: a worker that finds the build of these
        # sources uses it, instead of deleting it under another worker's running harness
        if not stamp.is_file() or stamp.read_text() != digest:
            shutil.rmtree(out, ignore_errors=True)
            tsc = str(modules / "typescript" / "bin" / "tsc")
            proc = run(NODE, tsc, "-p", "tsconfig.test.json")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            stamp.write_text(digest)
    return out


def node_test(built: Path, name: str, env: dict[str, str] | None = None) -> str:
    """``node --test`` of one compiled test file, ``name`` under build/ (``test/…``: the
    package's own, which ``npm test`` runs; ``harness/…``: driven by this suite)."""
    assert NODE is not None
    proc = run(NODE, "--test", str(built / name), env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    m = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    assert m is not None and int(m.group(1)) > 0, out[-2000:]
    assert re.search(r"^# fail 0$", proc.stdout, re.M), out[-2000:]
    assert re.search(r"^# skipped 0$", proc.stdout, re.M), out[-2000:]
    return proc.stdout


def test_the_package_is_locked_with_integrity_and_few_dependencies() -> None:
    pkg = json.loads((TS / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TS / "package-lock.json").read_text(encoding="utf-8"))
    assert pkg["type"] == "module" and pkg["engines"]["node"] == ">=20"
    assert set(pkg["dependencies"]) == {"@noble/curves", "@noble/ed25519", "@noble/hashes"}
    for name, version in {**pkg["dependencies"], **pkg["devDependencies"]}.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), (name, version)
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    runtime = [p for p, e in lock["packages"].items() if p and not e.get("dev")]
    assert sorted(runtime) == [
        "node_modules/@noble/curves",
        "node_modules/@noble/ed25519",
        "node_modules/@noble/hashes",
    ]
    for path, entry in lock["packages"].items():
        if path:
            assert entry.get("integrity", "").startswith("sha512-"), path
    config = json.loads((TS / "tsconfig.json").read_text(encoding="utf-8"))
    assert config["compilerOptions"]["strict"] is True


def test_npm_test_passes_on_a_fresh_copy(tmp_path: Path) -> None:
    """``npm test``, as clients/ts/README.md says to run it, in a fresh copy of clients/ts
    (its sources and lock only; the locked node_modules linked in for ``npm ci``): it runs
    the package's own tests, every one passing; the server-driven ones (harness/) are run by
    this suite, not by ``npm test``."""
    modules = node_modules()
    copy = tmp_path / "ts"
    shutil.copytree(TS, copy, ignore=shutil.ignore_patterns("node_modules", "build", "dist"))
    (copy / "node_modules").symlink_to(modules, target_is_directory=True)
    assert NPM is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("QAHWA_")}
    proc = subprocess.run(
        [NPM, "test"], cwd=copy, capture_output=True, text=True, timeout=300, env=env
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    m = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    assert m is not None and int(m.group(1)) >= 8, out[-2000:]
    assert re.search(r"^# fail 0$", proc.stdout, re.M), out[-2000:]
    assert "run by tests/client" not in out
    # among them: a sealed table refused before any secret is made or sent (test/sealed.test.ts)
    assert re.search(r"^ok \d+ - a seat of a sealed table refuses to commit", proc.stdout, re.M), (
        out[-3000:]
    )


def test_the_packages_copy_of_the_sealed_vectors_is_the_specs() -> None:
    """clients/ts/test/vectors/fairness_v3.json (what ``npm test`` checks the sealed
    cryptography of src/sealed/ against, in a copy of clients/ts too) is
    tests/vectors/fairness_v3.json, byte for byte."""
    copy = TS / "test" / "vectors" / "fairness_v3.json"
    assert copy.read_bytes() == (ROOT / "tests" / "vectors" / "fairness_v3.json").read_bytes()


def test_the_sealed_cryptography_in_typescript(built: Path) -> None:
    """src/sealed/ recomputes every proof of fairness-v3 §11 byte for byte (keys, shuffles
    with the 52-card intermediate values, shares, openings) and refuses each negative
    vector by the check it names."""
    out = node_test(built, "test/sealed-crypto.test.js")
    assert re.search(r"^ok \d+ - negative vectors", out, re.M), out[-2000:]
    assert re.search(r"^ok \d+ - a 52-card shuffle", out, re.M), out[-2000:]


def test_the_types_are_the_apps_openapi_document(tmp_path: Path) -> None:
    """src/api.d.ts is what openapi-typescript makes of the app's /openapi.json now
    (regenerate: ``make ts-types``)."""
    modules = node_modules()
    doc = tmp_path / "openapi.json"
    doc.write_text(json.dumps(openapi_document(tmp_path)))
    assert NODE is not None
    out = tmp_path / "api.d.ts"
    proc = run(
        NODE, str(modules / "openapi-typescript" / "bin" / "cli.js"), str(doc), "-o", str(out)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_text() == (TS / "src" / "api.d.ts").read_text(), (
        "clients/ts/src/api.d.ts is stale: run `make ts-types`"
    )


def test_the_spec_vectors_in_typescript(built: Path) -> None:
    out = node_test(built, "test/vectors.test.js")
    assert "the match key K and its draws" in out


def verify(*args: str) -> Any:
    return CliRunner().invoke(verify_app, list(args), catch_exceptions=False)


@pytest.mark.slow
def test_every_game_and_form_against_a_real_server(built: Path, tmp_path: Path) -> None:
    """Every transcript passes ``verify`` (with the server as log source: the lock is in its
    log) and every seat's export passes ``verify --seat N --client-seed S --nonce HEX
    --receipt``."""
    out = tmp_path / "out"
    with LiveServer(checkpoint_seconds=0.05) as srv:
        node_test(
            built,
            "harness/live.test.js",
            {
                "QAHWA_TEST_URL": srv.url,
                "QAHWA_TEST_OPERATOR_KEY": srv.operator_key,
                "QAHWA_TEST_OUT": str(out),
            },
        )
        dirs = sorted(p for p in out.iterdir() if p.is_dir())
        games = {d.name.split("-", 1)[1] for d in dirs}
        assert games >= {
            "tawla",
            "mahbusa",
            "iraqi_domino",
            "mexican_train",
            "qahve",
            "hokm",
            "shelem",
        }
        assert len(dirs) == 13
        for d in dirs:
            transcript = d / "transcript.json"
            res = verify(str(transcript), "--server", srv.url)
            assert res.exit_code == 0, (d.name, res.output)
            assert "verified" in res.output.lower()
            for seat_file in sorted(d.glob("seat-*.json")):
                seat = json.loads(seat_file.read_text())
                assert set(seat) >= {"match_id", "seat", "client_seed", "nonce", "lock", "receipts"}
                assert "key_seed" not in seat and "chain_secret" not in seat
                receipts = tmp_path / f"{d.name}-{seat_file.stem}-receipts.json"
                receipts.write_text(json.dumps(seat["receipts"]))
                args = [
                    str(transcript),
                    "--server",
                    srv.url,
                    "--seat",
                    str(seat["seat"]),
                    "--client-seed",
                    seat["client_seed"],
                    "--nonce",
                    seat["nonce"],
                    "--receipt",
                    str(receipts),
                ]
                res = verify(*args)
                assert res.exit_code == 0, (d.name, seat_file.name, res.output)
                # the same export with another seat's seed fails: --seat checks something
                other = "0" * 64 if seat["nonce"] != "0" * 64 else "1" * 64
                res = verify(*args[:-3], other, "--receipt", str(receipts))
                assert res.exit_code == 1, res.output
                # the export as it is: --seat FILE takes the seat, seed, nonce and receipts
                res = verify(str(transcript), "--server", srv.url, "--seat", str(seat_file))
                assert res.exit_code == 0, (d.name, seat_file.name, res.output)
                assert "holds exactly your client seed" in res.output
                changed = tmp_path / f"{d.name}-{seat_file.stem}-changed.json"
                changed.write_text(json.dumps({**seat, "nonce": other}))
                res = verify(str(transcript), "--server", srv.url, "--seat", str(changed))
                assert res.exit_code == 1, res.output


def test_a_cheating_server_is_refused_and_learns_no_secret(built: Path) -> None:
    with FakeHub() as hub:
        out = node_test(built, "harness/cheat.test.js", {"QAHWA_FAKE_HUB": hub.url})
        # every fake the tests made: no seed, nonce or roll-chain value reached a cheating one
        assert hub.fakes, out
        assert sum(f.before_reveal for f in hub.fakes.values()) >= 9
        for name, fake in hub.fakes.items():
            if not fake.before_reveal:
                continue
            for sent in fake.sent:
                body = sent.json()
                if isinstance(body, dict):
                    assert "client_seed" not in body and "nonce" not in body, (name, sent)


@pytest.mark.slow
def test_the_hostile_servers_of_the_conformance_suite(built: Path) -> None:
    """tests/support/hostile.py's lies, each told by its fake, against the TS client: it does what
    each entry says a conforming client must (clients/ts/harness/hostile.test.ts)."""
    lies = json.dumps([lie.to_json() for lie in LIES])
    # the sealed lies are told by a proxy in front of a real server
    with LiveServer() as srv, FakeHub(upstream=srv.url) as hub:
        out = node_test(
            built,
            "harness/hostile.test.js",
            {"QAHWA_FAKE_HUB": hub.url, "QAHWA_HOSTILE_LIES": lies},
        )
        assert re.search(rf"^# pass {len(LIES)}$", out, re.M), out[-2000:]
        made = sorted(tuple(sorted(f.tamper)) for f in hub.fakes.values())
        assert made == sorted(tuple(sorted(lie.tampers)) for lie in LIES)
        # and each fake told its lie (a sealed liar none when the client refused the table
        # before it sent anything)
        assert all(f.told == f.tamper or not f.sent for f in hub.fakes.values())


@pytest.mark.slow
def test_the_readmes_node_example_plays_a_match(tmp_path: Path) -> None:
    """clients/ts/README.md as an operator's web developer follows it: the package built
    (``npm run build``), ``npm install`` of the folder in a new project (offline: it links
    the folder), the README's ``play.mjs`` run with ``node`` against a real server."""
    modules = node_modules()
    assert NODE is not None and NPM is not None
    proc = run(NODE, str(modules / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    readme = (TS / "README.md").read_text(encoding="utf-8")
    m = re.search(r"## Play a match from Node\n.*?```sh\n(.*?)```.*?```js\n(.*?)```", readme, re.S)
    assert m is not None, "the README's Node section has an install command and a play.mjs"
    assert m.group(1).strip() == "npm install /path/to/qahwa/clients/ts"
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text('{"name": "app", "private": true, "type": "module"}')
    proc = run(NPM, "install", str(TS), "--offline", "--no-audit", "--no-fund", cwd=app)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with LiveServer(checkpoint_seconds=0.05) as srv:
        assert "http://127.0.0.1:8000" in m.group(2)
        (app / "play.mjs").write_text(m.group(2).replace("http://127.0.0.1:8000", srv.url))
        proc = run(NODE, "play.mjs", cwd=app, env={"QAHWA_OPERATOR_KEY": srv.operator_key})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "finished, the transcript checked by both seats" in proc.stdout
    assert len(list((app / "seats").iterdir())) >= 2  # both seats kept in FileStorage


@pytest.mark.slow
def test_the_witness_stops_mid_play_and_seats_play_on(built: Path, tmp_path: Path) -> None:
    """Issue 49: the server's only witness stops for real in the middle of play; seats that
    pin no witness play the match under way and a new one to the end, seats whose player
    pinned it refuse to reveal (their policy); every transcript passes ``verify`` and every
    seat's export ``verify --seat``."""
    out = tmp_path / "out"
    log = new_log()
    with (
        WitnessHTTP(log.vkey) as witness,
        LiveServer(**witnessed_settings(witness, log)) as srv,
    ):
        node_test(
            built,
            "harness/witness.test.js",
            {
                "QAHWA_TEST_URL": srv.url,
                "QAHWA_TEST_OPERATOR_KEY": srv.operator_key,
                "QAHWA_TEST_OUT": str(out),
                "QAHWA_TEST_WITNESS": witness.vkey,
                "QAHWA_TEST_WITNESS_STOP": witness.control_url,
            },
        )
        assert witness.stopped.is_set()
        dirs = sorted(p for p in out.iterdir() if p.is_dir())
        assert [d.name for d in dirs] == ["after", "first", "under-way"]
        for d in dirs:
            transcript = d / "transcript.json"
            res = verify(str(transcript), "--server", srv.url)
            assert res.exit_code == 0, (d.name, res.output)
            for seat_file in sorted(d.glob("seat-*.json")):
                res = verify(str(transcript), "--server", srv.url, "--seat", str(seat_file))
                assert res.exit_code == 0, (d.name, seat_file.name, res.output)
