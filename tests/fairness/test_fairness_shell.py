"""The by-hand checks of docs/fairness.md, run for real with bash, xxd and openssl, and the
benchmark's measurement run once (tiny, no timing asserted)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fairness
from tests.support import vector

ROOT = Path(__file__).resolve().parents[2]
VECTORS = vector("fairness_v1.json")
DOC = (ROOT / "docs" / "fairness.md").read_text("utf-8")

needs_tools = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("bash", "xxd", "openssl", "sha256sum")),
    reason="needs bash, xxd, openssl and sha256sum",
)

# The same lines as docs/fairness.md shows (test_doc_shows_these_lines keeps them in step).
COMMITMENT = 'printf %s "$SEED" | xxd -r -p | sha256sum'
HELPERS = """\
u32() { printf '%08x' "$1" | xxd -r -p; }
lp()  { u32 "$(printf %s "$1" | wc -c)"; printf %s "$1"; }
hmac() { openssl dgst -sha256 -mac HMAC -macopt "hexkey:$1" | awk '{print $NF}'; }"""
T_FILE = """\
{ printf 'qahwa-fair/1\\000'; lp "$MATCH_ID"; lp "$GAME"; lp "$RULESET"
  u32 2; lp "$SEED0"; lp "$SEED1"; } > T"""
K_LINE = "openssl dgst -sha256 -mac HMAC -macopt hexkey:$SEED T"
BLOCK = """B=$({ printf '%s\\000' "$LABEL"; u32 0; } | hmac "$K")"""
DIE = "echo $(( 0x${B:0:8} % 6 + 1 )) $(( 0x${B:8:8} % 6 + 1 ))"


def bash(script: str, **env: str) -> str:
    out = subprocess.run(
        ["bash", "-euc", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.environ.get("TMPDIR", "/tmp"),
        env={**os.environ, **env},
        encoding="utf-8",
    )
    return out.stdout


def test_doc_shows_these_lines() -> None:
    for snippet in (COMMITMENT, HELPERS, T_FILE, K_LINE, BLOCK, DIE):
        assert snippet in DOC, snippet


@needs_tools
def test_commitment_by_hand() -> None:
    spec = VECTORS["spec"]
    out = bash(COMMITMENT, SEED=spec["server_seed"])
    assert out.split()[0] == spec["commitment"]
    seed = fairness.new_server_seed().hex()
    assert bash(COMMITMENT, SEED=seed).split()[0] == fairness.commitment(seed)


def _k_by_hand(tmp_path: Path, v: dict[str, str | list[str]]) -> str:
    script = f"{HELPERS}\ncd {tmp_path}\n{T_FILE}\n{K_LINE}"
    seeds = v["client_seeds"]
    assert isinstance(seeds, list) and len(seeds) == 2
    out = bash(
        script,
        SEED=str(v["server_seed"]),
        MATCH_ID=str(v["match_id"]),
        GAME=str(v["game"]),
        RULESET=str(v["ruleset"]),
        SEED0=seeds[0],
        SEED1=seeds[1],
    )
    return out.split()[-1]


@needs_tools
def test_match_key_by_hand(tmp_path: Path) -> None:
    spec = VECTORS["spec"]
    assert _k_by_hand(tmp_path, spec) == spec["K"]
    unicode = next(v for v in VECTORS["derived"] if v["name"] == "unicode-ids-and-seeds")
    assert _k_by_hand(tmp_path, unicode) == unicode["K"]


@needs_tools
def test_dice_by_hand() -> None:
    spec = VECTORS["spec"]
    out = bash(f"{HELPERS}\n{BLOCK}\n{DIE}", K=spec["K"], LABEL="g0/opening/0")
    assert out.split() == ["1", "3"]
    out = bash(f"{HELPERS}\n{BLOCK}\n{DIE}", K=spec["K"], LABEL="g0/roll/1")
    assert out.split() == ["2", "5"]
    key = bytes.fromhex(spec["K"])
    for label in ("g1/roll/7", "g0/roll/2|player entropy"):
        out = bash(f"{HELPERS}\n{BLOCK}\n{DIE}", K=spec["K"], LABEL=label)
        assert [int(x) for x in out.split()] == fairness.dice(key, label, 2)


def test_bench_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # bench/ is not an installed package
    from bench import bench_fairness

    m = bench_fairness.measure(number=5)
    assert m.blocks == 7  # 51 words, no rejection: ceil(51 / 8) blocks
    assert m.ours > 0 and m.system_random > 0
    assert set(m.floors) == {"hmac.new", "hmac.digest", "keyed copy"}


def test_doc_verify_derive_example() -> None:
    """The `verify derive` example of docs/fairness.md prints the spec's first roll."""
    import re
    import shlex
    import sys

    m = re.search(r"```sh\n(verify derive .*?)\n```", DOC, re.S)
    assert m, "docs/fairness.md lost its verify derive example"
    argv = shlex.split(m.group(1).replace("\\\n", " "))
    out = subprocess.run(
        [sys.executable, "-m", "verify_cli", *argv[1:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["result"] == [1, 3]
    assert doc["match_key"] == VECTORS["spec"]["K"]
    assert doc["commitment"] == VECTORS["spec"]["commitment"]
