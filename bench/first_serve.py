"""The first ``make serve`` on a fresh clone, to a server answering, against ``pip install
--require-hashes -r requirements/main.txt`` into a new venv alone, measured in the same run
(docs/performance.md "First start").

    python3 bench/first_serve.py [--rounds N] [--rev REV ...]

Each round clones the repository's HEAD (and each ``--rev``, e.g. the commit before a change,
to compare) into a fresh directory and times, one after the other so that they share the
machine's load: the baseline (``python3 -m venv`` untimed, then the pip install timed), and
``make serve`` on each clone until ``/healthz`` answers 200 (the Pyodide fetch included: a
fresh clone has none; npm's own cache applies as it would on a developer's machine). It
prints each time and the ratio to the baseline of the same round; nothing passes or fails.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clone(rev: str, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", rev], check=True)
    return where


def baseline(where: Path) -> float:
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    t = time.monotonic()
    subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "--disable-pip-version-check",
            "install",
            "-q",
            "--require-hashes",
            "-r",
            str(ROOT / "requirements" / "main.txt"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.monotonic() - t


def first_serve(repo: Path, log: Path) -> float:
    port = free_port()
    t = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["make", "serve", f"PORT={port}"],
            cwd=repo,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PY": sys.executable},
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                        if r.status == 200:
                            return time.monotonic() - t
                except OSError:
                    pass
                if proc.poll() is not None:
                    raise RuntimeError(f"make serve ended:\n{log.read_text(errors='replace')}")
                if time.monotonic() - t > 900:
                    raise RuntimeError("make serve did not answer within 900 s")
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--rev", action="append", default=[], help="also time this revision")
    args = ap.parse_args()
    revs = ["HEAD", *args.rev]
    print("first make serve on a fresh clone, to /healthz answering, against the pip")
    print("install of requirements/main.txt alone (same round, same machine load)")
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="qahwa-first-serve-") as tmp:
            base = baseline(Path(tmp) / "base")
            print(f"round {n + 1}: pip install -r requirements/main.txt alone: {base:6.1f} s")
            for rev in revs:
                repo = clone(rev, Path(tmp) / f"clone-{len(rev)}-{rev.replace('/', '_')}")
                took = first_serve(repo, Path(tmp) / "serve.log")
                print(
                    f"round {n + 1}: make serve ({rev}): {took:6.1f} s = {took / base:.2f}x "
                    "the pip install"
                )
                if n == 0 and rev == "HEAD":
                    shown = (Path(tmp) / "serve.log").read_text(errors="replace").splitlines()
                    print("  its screen: " + "\n  its screen: ".join(shown[:12]))


if __name__ == "__main__":
    main()
