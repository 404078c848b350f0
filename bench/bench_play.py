"""The web table's script (``python -m bench play``; part of ``make bench``).

The size of qahwa_page/static/play.js — the committed esbuild bundle of clients/ts/play with
the conforming client in it, without Pyodide and the verify page (loaded only at the end, in
a frame) — raw and gzipped (level 9), against the target (issue 32): ≤ 80 kB gzipped. Its
ratio to the target is printed; a size, not a time, so it does not depend on the machine.
"""

from __future__ import annotations

import gzip
from pathlib import Path

BUNDLE = Path(__file__).resolve().parent.parent / "qahwa_page" / "static" / "play.js"
TARGET = 80_000


def run() -> None:
    raw = BUNDLE.read_bytes()
    gz = len(gzip.compress(raw, 9))
    print(f"play.js: {len(raw) / 1000:.1f} kB raw, {gz / 1000:.1f} kB gzipped")
    print(f"  gzipped / target (80 kB): {gz / TARGET:.2f}x (target <= 1.00x)")
