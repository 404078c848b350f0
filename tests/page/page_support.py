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
