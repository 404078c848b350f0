"""What the page tests share besides the browser fixture (tests/page/conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "qahwa_page" / "static"
PAGE = STATIC / "verify.html"
TS = ROOT / "clients" / "ts"
NPM = shutil.which("npm")


def npm_build(script: str, out: Path) -> bytes:
    """``npm run build:<script>`` of clients/ts (its locked packages installed first) into
    ``out``: the bytes built, to hold a committed bundle to."""
    from tests.client.test_clients_ts import node_modules

    node_modules()
    subprocess.run(
        [str(NPM), "run", "--silent", f"build:{script}", "--", f"--outfile={out}"],
        cwd=TS,
        check=True,
        capture_output=True,
    )
    return out.read_bytes()


#: the bundles one esbuild run of ``npm run build:tab`` writes into qahwa_page/static (ESM,
#: split): play.js, its sealed seat's worker play-worker.js and sealed-verify.js, with the code
#: they share (the @noble libraries, the sealed cryptography) in chunk-*.js files they import,
#: so a /play tab that frames /verify loads them once
TAB_ENTRIES = ("play.js", "play-worker.js", "sealed-verify.js")


def tab_build(out: Path) -> dict[str, bytes]:
    """``npm run build:tab`` of clients/ts into the directory ``out``: every file it wrote
    (name → bytes), to hold the committed play.js, sealed-verify.js and chunks to."""
    from tests.client.test_clients_ts import node_modules

    node_modules()
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(NPM), "run", "--silent", "build:tab", "--", f"--outdir={out}"],
        cwd=TS,
        check=True,
        capture_output=True,
    )
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def tab_files(static: Path = STATIC) -> dict[str, bytes]:
    """The committed files of ``build:tab`` under ``static``: its entries and its chunks."""
    names = [*TAB_ENTRIES, *sorted(p.name for p in static.glob("chunk-*.js"))]
    return {n: (static / n).read_bytes() for n in names}


#: The body's end of a page ``evaluate`` over a spec vector ``v``: window.qahwaFair ``f``
#: draws every one of ``v.draws`` under ``out.K`` into ``out.draws``, and ``out`` is returned.
VECTOR_DRAWS_JS = """
  const items = (s) => s === 'deck52' ? f.deck52()
    : s === 'deck_qahve' ? f.deckQahve() : s === 'tiles:6' ? f.tiles(6)
    : f.tiles(12).filter(t => t !== '12-12');
  for (const d of v.draws) {
    if (d.kind === 'dice') out.draws.push(await f.dice(out.K, d.label, d.count, d.sides));
    else if (d.kind === 'uniform') out.draws.push(await f.uniform(out.K, d.label, d.n));
    else out.draws.push(await f.shuffle(out.K, d.label, items(d.items)));
  }
  return out;
}"""


def assert_vector_draws(v: dict[str, Any], draws: list[Any]) -> None:
    """The page's ``draws`` are the spec vector's: each result, or its listed prefix."""
    for d, r in zip(v["draws"], draws, strict=True):
        if "result" in d:
            assert r == d["result"], d["label"]
        else:
            assert r[: len(d["result_prefix"])] == d["result_prefix"], d["label"]
