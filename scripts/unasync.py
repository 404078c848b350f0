"""Generate the synchronous client from the asynchronous one (httpcore's unasync, small).

``qahwa_client/aio.py`` is the client's only source; this script rewrites it token by token
(``async``/``await`` dropped, ``AsyncClient`` → ``Client``, ``aclose`` → ``close``,
``asyncio.sleep`` → ``time.sleep``, …), sorts its imports and formats it with the
repository's ruff settings, and writes ``qahwa_client/client.py``.

    python scripts/unasync.py          # write client.py
    python scripts/unasync.py --check  # exit 1 if client.py is not what aio.py generates
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "qahwa_client" / "aio.py"
TARGET = ROOT / "qahwa_client" / "client.py"
#: the name ruff formats the text under (its settings are the repository's)
AS_FILE = ROOT / "qahwa_client" / "client.py"

HEADER = "# Generated from qahwa_client/aio.py by scripts/unasync.py: do not edit.\n"

#: whole words, in order; the sync name on the right
NAMES = {
    "AsyncClient": "Client",
    "AsyncMatch": "Match",
    "AsyncSeat": "Seat",
    "AsyncRngSession": "RngSession",
    "AsyncIterator": "Iterator",
    "aiter_sse": "iter_sse",
    "aiter_lines": "iter_lines",
    "aread": "read",
    "aclose": "close",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
}
#: text, in order
TEXT = [
    ("import asyncio\n", ""),
    ("asyncio.sleep(", "time.sleep("),
    ("async def ", "def "),
    ("async for ", "for "),
    ("async with ", "with "),
    ("await ", ""),
]


def unasync(source: str) -> str:
    out = source
    for old, new in TEXT:
        out = out.replace(old, new)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, NAMES)) + r")\b")
    out = pattern.sub(lambda m: NAMES[m.group(1)], out)
    if re.search(r"\basync\b|\bawait\b|\basyncio\b", out):
        raise SystemExit("unasync: an async construct is left that this script does not know")
    return HEADER + out


def _ruff(args: list[str], text: str) -> str:
    cmd = [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(AS_FILE), "-"]
    done = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"unasync: ruff {' '.join(args)} failed:\n{done.stderr}{done.stdout}")
    return done.stdout


def generate() -> str:
    """client.py's text as aio.py makes it: rewritten, imports sorted, formatted."""
    text = unasync(SOURCE.read_text(encoding="utf-8"))
    text = _ruff(["check", "--quiet", "--select", "I,F401", "--fix", "--exit-zero"], text)
    return _ruff(["format", "--quiet"], text)


def main(argv: list[str]) -> int:
    want = generate()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != want:
            print(
                f"{TARGET} is not what {SOURCE.name} generates: "
                "run `make unasync` (python scripts/unasync.py)",
                file=sys.stderr,
            )
            return 1
        return 0
    TARGET.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
