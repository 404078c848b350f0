"""What the page tests share besides the browser fixture (tests/page/conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

TS = Path(__file__).resolve().parents[2] / "clients" / "ts"
NPM = shutil.which("npm")


def npm_build(script: str, out: Path) -> bytes:
    """``npm run build:<script>`` of clients/ts (its locked packages installed first) into
    ``out``: the bytes built, to hold a committed bundle to."""
    from test_clients_ts import node_modules

    node_modules()
    subprocess.run(
        [str(NPM), "run", "--silent", f"build:{script}", "--", f"--outfile={out}"],
        cwd=TS,
        check=True,
        capture_output=True,
    )
    return out.read_bytes()
