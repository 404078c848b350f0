"""A TypeScript client needs no cast: types generated with openapi-typescript from the app's
own OpenAPI document type every action, event, view and record per game and kind, so
tests/ts/client.ts (commit, lock, reveal, play every game, read the log and the transcript,
a plain rng session) compiles under ``tsc --strict`` with no type assertion and no ``any``,
and, compiled, plays a match of each of the seven games and a session against a live server.

The npm packages are locked (tests/ts/package.json and package-lock.json, with integrity
hashes) and installed with ``npm ci`` into build/openapi-ts (git-ignored), again only when the
lock changes. Skips only without npm (under CI=true conftest makes that a failure)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.app import create_app
from tests.support import sqlite_settings
from tests.support.live_server import LiveServer

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "tests" / "ts"
CACHE = ROOT / "build" / "openapi-ts"
NPM = shutil.which("npm")
NODE = shutil.which("node")
GAMES = ("tawla", "mahbusa", "iraqi_domino", "mexican_train", "qahve", "hokm", "shelem")

needs_npm = pytest.mark.skipif(NPM is None or NODE is None, reason="npm (and node) not installed")


def run(*cmd: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout)


def node_modules() -> Path:
    """``npm ci`` of the locked packages into the cache, unless the cache has this lock."""
    lock = (TS / "package-lock.json").read_bytes()
    stamp = CACHE / "node_modules" / ".qahwa-lock-sha256"
    digest = hashlib.sha256(lock + (TS / "package.json").read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        CACHE.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json", ".npmrc"):
            shutil.copyfile(TS / name, CACHE / name)
        assert NPM is not None
        proc = run(NPM, "ci", "--no-audit", "--no-fund", cwd=CACHE)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        stamp.write_text(digest)
    return CACHE / "node_modules"


def openapi_document(tmp: Path) -> dict[str, object]:
    settings = sqlite_settings(tmp)
    return create_app(settings).openapi()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with api.d.ts generated from the app's document, the program and its
    tsconfig (strict)."""
    if NPM is None or NODE is None:
        pytest.skip("npm (and node) not installed")
    modules = node_modules()
    work = tmp_path_factory.mktemp("openapi-ts")
    doc = work / "openapi.json"
    doc.write_text(json.dumps(openapi_document(tmp_path_factory.mktemp("app"))))
    proc = run(
        NODE,
        str(modules / "openapi-typescript" / "bin" / "cli.js"),
        str(doc),
        "-o",
        str(work / "api.d.ts"),
        cwd=work,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("client.ts", "tsconfig.json"):
        shutil.copyfile(TS / name, work / name)
    return work


def tsc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return run(
        NODE,
        str(CACHE / "node_modules" / "typescript" / "bin" / "tsc"),
        "-p",
        "tsconfig.json",
        *args,
        cwd=project,
    )


def test_the_program_has_no_cast_and_no_any() -> None:
    text = (TS / "client.ts").read_text(encoding="utf-8")
    assert not re.search(r"\sas\s", text), "a type assertion (` as `)"
    assert not re.search(r"\bany\b", text), "`any`"
    assert not re.search(r"@ts-(ignore|expect-error|nocheck)", text)
    config = json.loads((TS / "tsconfig.json").read_text(encoding="utf-8"))
    assert config["compilerOptions"]["strict"] is True


def test_the_npm_packages_are_locked_with_integrity_hashes() -> None:
    pkg = json.loads((TS / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TS / "package-lock.json").read_text(encoding="utf-8"))
    wanted = pkg["devDependencies"]
    assert set(wanted) == {"openapi-typescript", "typescript"}
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in wanted.values()), wanted
    packages = lock["packages"]
    for name, version in wanted.items():
        assert packages[f"node_modules/{name}"]["version"] == version
    for path, entry in packages.items():
        if path:
            assert entry.get("integrity", "").startswith("sha512-"), path


@needs_npm
def test_the_program_compiles_under_tsc_strict(project: Path) -> None:
    proc = tsc(project)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_npm
def test_the_types_refuse_what_the_server_refuses(project: Path) -> None:
    """The types are the games' own: a tawla action has no card, a seating view no hand, an
    action request needs its version, a chance event's result is the kind's."""
    bad = project / "bad"
    bad.mkdir(exist_ok=True)
    shutil.copyfile(project / "api.d.ts", bad / "api.d.ts")
    cases = {
        "card": 'function f(v: S["TawlaView"]): string { const a = v.legal_actions[0]; '
        'return a === undefined ? "" : a.card; }',
        "hand": 'function f(v: S["SeatingView"]): string[] { return v.hand; }',
        "version": 'const body: S["ActionIn"] = { action: { type: "roll" } };',
        "kind": 'function f(e: S["DiceEvent"]): number { return e.result; }',
        "shape": 'const m: S["Move"] = { type: "move", steps: [["1", 2]] };',
    }
    for name, code in cases.items():
        (bad / "tsconfig.json").write_text(
            json.dumps(
                {
                    "compilerOptions": {
                        "strict": True,
                        "noEmit": True,
                        "target": "es2022",
                        "lib": ["es2022"],
                        "types": [],
                    },
                    "files": ["bad.ts", "api.d.ts"],
                }
            )
        )
        (bad / "bad.ts").write_text(
            'import type { components } from "./api";\n'
            'type S = components["schemas"];\n' + code + "\nexport {};\n"
        )
        proc = tsc(bad)
        assert proc.returncode != 0, f"{name}: tsc accepted {code}"
        assert "error TS" in proc.stdout, proc.stdout


@pytest.mark.slow
@needs_npm
def test_the_compiled_program_plays_every_game(project: Path) -> None:
    out = project / "out"
    proc = tsc(project, "--noEmit", "false", "--outDir", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (out / "package.json").write_text('{"type": "module"}')
    (out / "run.mjs").write_text(
        'import { main } from "./client.js";\n'
        "const lines = await main(process.argv[2], process.argv[3]);\n"
        'process.stdout.write(lines.join("\\n") + "\\n");\n'
    )
    assert NODE is not None
    with LiveServer() as srv:
        proc = run(NODE, str(out / "run.mjs"), srv.url, srv.operator_key, cwd=out)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    for game in GAMES:
        assert any(line.startswith(f"{game} m_") for line in lines), game
    assert sum(1 for line in lines if re.match(r"(finished|resigned): winners", line)) == 7
    assert any(re.fullmatch(r"seat \d resigned: resigned", line) for line in lines)  # hokm
    assert any(re.match(r"#\d+ seat \d: move \d+/\d+", line) for line in lines)  # tawla events
    assert any(re.match(r"#\d+ seat \d: play [0-9A-Z]{2}$", line) for line in lines)
    assert any(
        re.match(r"#\d+ g\d+/opening/\d+\|[0-9a-f]{64}: 2d6 = \d\+\d", line) for line in lines
    )
    assert any(line.startswith("closed: seed ") for line in lines)
