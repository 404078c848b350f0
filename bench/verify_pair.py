"""Verify speed of two trees, side by side: ``python -m bench.verify_pair BASE [NEW]``.

``BASE`` and ``NEW`` are source trees of this repository (``NEW`` defaults to this one);
an older commit is made into one with ``git archive COMMIT | tar -x -C DIR``. For each game
(``--games``, default tawla, mahbusa and shelem) one worker process per tree builds the
bench's transcripts (12 signed qahwa-fair/1 random-bot matches, as ``python -m bench verify``
makes them) with its own tree's code; then the two take turns verifying all of them, one
pass each, ``--rounds`` times. Every pass is timed in its process's CPU seconds.

On a shared machine the speed of both changes from minute to minute; a pass of one tree
next to a pass of the other sees nearly the same machine, so the median of the per-round
ratios says how much faster one tree is far more steadily than two separate runs. The
rates printed beside it are CPU matches/s (median and best pass) of each tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MATCHES = 12
HERE = Path(__file__).resolve()


def worker(game: str) -> None:
    """Build the transcripts with this process's tree; verify them once per input line."""
    from fairness import PROTOCOL, Signer, public_key_b64
    from games.transcript import simulate_match
    from verify_cli.core import VERIFIED, verify_document
    from verify_cli.keys import parse_keys

    signer = Signer.generate()
    keys = parse_keys(public_key_b64(signer.public_key), source="file", origin="bench")
    docs = []
    for seed in range(MATCHES):
        try:
            doc, _ = simulate_match(game, seed=seed, max_actions=20_000, protocol=PROTOCOL)
        except RuntimeError:
            doc, _ = simulate_match(game, seed=seed, resign_at=200, protocol=PROTOCOL)
        docs.append(signer.signed(doc))
    print("ready", flush=True)
    for _ in sys.stdin:
        start = time.process_time()
        for doc in docs:
            rep = verify_document(doc, keys, draws_limit=12)
            if rep["status"] != VERIFIED:
                raise SystemExit(f"{game}: a genuine transcript did not verify")
        print(time.process_time() - start, flush=True)


class Worker:
    def __init__(self, tree: Path, game: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(tree))
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE), "--worker", game],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        line = self.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"the worker for {tree} did not start ({line!r})")

    def one_pass(self) -> float:
        self.stdin.write("go\n")
        self.stdin.flush()
        return float(self.stdout.readline())

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait()


def compare(base: Path, new: Path, game: str, rounds: int) -> str:
    a, b = Worker(base, game), Worker(new, game)
    try:
        ta, tb = [], []
        for _ in range(rounds):
            ta.append(a.one_pass())
            tb.append(b.one_pass())
    finally:
        a.close()
        b.close()
    ratios = [x / y for x, y in zip(ta, tb, strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return (
        f"{game:<10} base {MATCHES / statistics.median(ta):7.1f} ({MATCHES / min(ta):6.1f})  "
        f"new {MATCHES / statistics.median(tb):7.1f} ({MATCHES / min(tb):6.1f})  "
        f"new/base {statistics.median(ratios):5.2f}x (quartiles {q1:.2f}-{q3:.2f})"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.verify_pair", description=__doc__)
    parser.add_argument("base", type=Path, nargs="?")
    parser.add_argument("new", type=Path, nargs="?", default=HERE.parent.parent)
    parser.add_argument("--games", default="tawla,mahbusa,shelem")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if args.base is None:
        parser.error("give the base tree (a directory made with git archive)")
    for tree in (args.base, args.new):
        if not (tree / "games" / "replay.py").is_file():
            parser.error(f"{tree} is not a source tree of this repository")
    if args.rounds < 2:
        parser.error("--rounds must be at least 2")
    print(
        f"CPU matches/s, median (best) of {args.rounds} alternating passes over "
        f"{MATCHES} qahwa-fair/1 transcripts; base {args.base}, new {args.new}"
    )
    for game in [g for g in args.games.split(",") if g]:
        print(compare(args.base.resolve(), args.new.resolve(), game, args.rounds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
