"""``verify`` on a sealed 4-seat hokm match beside a seeded one (``python -m bench sealed_verify``).

Both matches are genuine: ``simulate_match`` plays hokm at four (the default ruleset: to 7
points), keyed seats (every action signed) and one house seat, once with ``"deal":
"sealed"`` (qahwa-fair/3: the simulated sealed seats of ``games.sealed_sim`` make every key,
shuffle with proof, share, opening and key reveal) and once seeded (qahwa-fair/2), both
signed. Printed, for each: the transcript's size (canonical JSON), its hands and events, the
time of the ``verify`` command on it (a child process, as a user runs it: the best of a few
runs, wall time) and of ``verify_document`` in this process (CPU time, the best of a few);
then the sealed/seeded ratios. Timings are figures, never a verdict.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fairness import Signer, public_key_b64
from games.transcript import simulate_match
from verify_cli.core import VERIFIED, verify_document
from verify_cli.keys import parse_keys

REPEAT = 3
#: the match: hokm at four with one house seat, to the ruleset's target
RULESET: dict[str, Any] = {"target": int(os.environ.get("QAHWA_BENCH_SEALED_TARGET", "7"))}


def _cli_once(path: Path, key: Path) -> tuple[float, float]:
    """The ``verify`` command on ``path``: (wall seconds, the child's CPU seconds)."""
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-m", "verify_cli", str(path), "--key", key],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"verify failed on {path}: {out.stdout[-2000:]}{out.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _in_process(doc: dict[str, Any], keys: Any) -> float:
    best = float("inf")
    for _ in range(REPEAT):
        t0 = time.process_time()
        rep = verify_document(doc, keys, draws_limit=12)
        best = min(best, time.process_time() - t0)
        if rep["status"] != VERIFIED:
            raise RuntimeError(f"not verified: {[c for c in rep['checks'] if c['ok'] is False]}")
    return best


def measure() -> dict[str, dict[str, float]]:
    signer = Signer.generate()
    key = public_key_b64(signer.public_key)
    keys = parse_keys(key, source="file", origin="bench")
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        key_file = Path(tmp) / "server.key"
        key_file.write_text(key + "\n", encoding="ascii")
        for deal in ("sealed", "seeded"):
            t0 = time.process_time()
            doc, engine = simulate_match(
                "hokm",
                {**RULESET, "deal": deal},
                seed=1,
                keyed=True,
                house=(1,),
                signer=signer,
                timed=True,
            )
            made = time.process_time() - t0
            text = json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
            path = Path(tmp) / f"{deal}.json"
            path.write_text(text, encoding="utf-8")
            hands = len(getattr(engine, "history", []))
            runs = [_cli_once(path, key_file) for _ in range(REPEAT)]  # the best of each
            cli, cli_cpu = min(wall for wall, _ in runs), min(cpu for _, cpu in runs)
            out[deal] = {
                "bytes": len(text.encode("utf-8")),
                "events": len(doc["events"]),
                "hands": hands,
                "made": made,
                "cli": cli,
                "cli_cpu": cli_cpu,
                "cpu": _in_process(doc, keys),
            }
    return out


def run() -> None:
    m = measure()
    for deal in ("sealed", "seeded"):
        r = m[deal]
        print(
            f"hokm at 4, {deal}: {r['hands']:.0f} hands, {r['events']:.0f} events, transcript "
            f"{r['bytes'] / 1024:.0f} KiB ({r['bytes'] / max(r['hands'], 1) / 1024:.0f} KiB a "
            f"hand); verify (CLI) {r['cli']:.2f} s wall, {r['cli_cpu']:.2f} s CPU; verify_document "
            f"(CPU) "
            f"{r['cpu']:.2f} s ({r['cpu'] / max(r['hands'], 1) * 1e3:.0f} ms a hand); "
            f"the match made (every seat's steps) in {r['made']:.1f} s CPU"
        )
    s, d = m["sealed"], m["seeded"]
    print(
        f"sealed/seeded: transcript size {s['bytes'] / d['bytes']:.1f}x, verify CLI "
        f"{s['cli'] / d['cli']:.1f}x wall, {s['cli_cpu'] / d['cli_cpu']:.1f}x CPU, verify_document CPU {s['cpu'] / d['cpu']:.1f}x "
        f"(per hand: size {s['bytes'] / s['hands'] / (d['bytes'] / d['hands']):.1f}x, "
        f"CPU {s['cpu'] / s['hands'] / (d['cpu'] / d['hands']):.1f}x)"
    )


if __name__ == "__main__":
    run()
