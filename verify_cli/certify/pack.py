"""The lab pack (``make certify``): the kit's report, a raw dump of the derivation with its
SHA-256, and Debian's ``dieharder`` and ``ent`` run on that dump, in one directory.

    python -m verify_cli.certify.pack --out DIR [--bytes N] [--seed S] [kit options …]

DIR gets report.json and report.html (the kit), raw.bin (the dump, for NIST SP 800-22 or
TestU01 too), dieharder.txt, ent.txt and pack.json (what ran, the hashes, the verdicts).
Exit 0 when the kit passes and no dieharder test FAILED (WEAK results happen by chance:
dieharder's own threshold for them is p < 0.005 or > 0.995 per test); 1 otherwise; 2 when a
tool is missing or the input is unusable.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from .cli import Unusable, certify, dump_raw, run_command, size_options, sizes_from

#: dieharder tests that run in seconds to a minute each on a file (dieharder -l lists all)
DIEHARDER_TESTS = (0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 15, 16, 100, 101, 102)
DEFAULT_BYTES = 256 << 20


def _hash(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def run_dieharder(dump: Path, tests: tuple[int, ...], out: Path) -> dict[str, Any]:
    counts = {"PASSED": 0, "WEAK": 0, "FAILED": 0}
    with out.open("w", encoding="utf-8") as log:
        for d in tests:
            cmd = ["dieharder", "-g", "201", "-f", str(dump), "-d", str(d)]
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            log.write(proc.stdout + proc.stderr + "\n")
            for verdict in counts:
                counts[verdict] += len(re.findall(rf"\|\s*{verdict}\s*$", proc.stdout, re.M))
    return {"tests": list(tests), "generator": "201 (file_input_raw)", **counts, "output": out.name}


def run_ent(dump: Path, out: Path) -> dict[str, Any]:
    proc = subprocess.run(["ent", str(dump)], capture_output=True, text=True, check=False)
    out.write_text(f"$ ent {dump}\n{proc.stdout}{proc.stderr}", encoding="utf-8")
    found: dict[str, Any] = {"output": out.name}
    for key, pattern in (
        ("entropy_bits_per_byte", r"Entropy = ([\d.]+) bits per byte"),
        ("chi_square", r"Chi square distribution for \d+ samples is ([\d.]+)"),
        (
            "chi_square_exceeded_percent",
            r"would exceed this value\s+"
            r"(?:less than )?([\d.]+) percent",
        ),
        ("mean", r"Arithmetic mean value of data bytes is ([\d.]+)"),
        ("pi_estimate", r"Monte Carlo value for Pi is ([\d.]+)"),
        ("serial_correlation", r"Serial correlation coefficient is (-?[\d.]+)"),
    ):
        m = re.search(pattern, proc.stdout)
        found[key] = float(m.group(1)) if m else None
    return found


@click.command(
    help="Write the lab pack: the kit's report, a raw dump with its hash, and "
    "dieharder's and ent's outputs on it."
)
@click.option("--out", required=True, metavar="DIR", help="The pack's directory.")
@click.option(
    "--bytes",
    "nbytes",
    type=int,
    default=DEFAULT_BYTES,
    show_default=True,
    help="Bytes of raw derivation stream to dump for dieharder and ent.",
)
@click.option("--seed", metavar="S", help="Reproducible run (kit and dump).")
@click.option(
    "--dieharder-tests",
    default=",".join(map(str, DIEHARDER_TESTS)),
    show_default=True,
    help="dieharder -d numbers, comma-separated.",
)
@size_options
def main(out: str, nbytes: int, seed: str | None, dieharder_tests: str, **sizes: int) -> int:
    missing = [t for t in ("dieharder", "ent") if shutil.which(t) is None]
    if missing:
        raise Unusable(f"{' and '.join(missing)} not found: apt-get install dieharder ent")
    try:
        tests = tuple(int(t) for t in dieharder_tests.split(",") if t.strip())
    except ValueError:
        raise Unusable(f"--dieharder-tests must be numbers, got {dieharder_tests!r}") from None
    if nbytes < 1 << 20:
        raise Unusable("--bytes must be at least 1 MiB for dieharder")
    pack = Path(out)
    pack.mkdir(parents=True, exist_ok=True)
    click.echo("pack: the kit …", err=True)
    code, report = certify(pack, sizes_from(sizes), seed, None, quiet=True)
    click.echo(f"pack: kit verdict {report['verdict']}; dumping {nbytes:,} bytes …", err=True)
    dump = pack / "raw.bin"
    raw = dump_raw(str(dump), nbytes, seed)
    click.echo("pack: ent …", err=True)
    ent = run_ent(dump, pack / "ent.txt")
    click.echo(f"pack: dieharder -d {dieharder_tests} …", err=True)
    dh = run_dieharder(dump, tests, pack / "dieharder.txt")
    files = {
        p.name: _hash(p) for p in sorted(pack.iterdir()) if p.is_file() and p.name != "pack.json"
    }
    verdict = "pass" if code == 0 and dh["FAILED"] == 0 else "fail"
    manifest: dict[str, Any] = {
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kit": {
            "verdict": report["verdict"],
            "report": "report.json",
            "fingerprint": report["fingerprints"]["combined"],
            "tests": report["tests_total"],
            "failed": report["tests_failed"],
        },
        "raw": {**raw, "file": "raw.bin"},
        "ent": ent,
        "dieharder": dh,
        "sha256": files,
        "verdict": verdict,
    }
    (pack / "pack.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    click.echo(
        f"pack: {verdict.upper()} — kit {report['verdict']}, dieharder "
        f"{dh['PASSED']} passed / {dh['WEAK']} weak / {dh['FAILED']} failed, ent "
        f"entropy {ent['entropy_bits_per_byte']} bits/byte; {pack / 'pack.json'}"
    )
    return 0 if verdict == "pass" else 1


def run(argv: list[str] | None = None) -> int:
    return run_command(main, argv, "python -m verify_cli.certify.pack", "pack")


if __name__ == "__main__":
    sys.exit(run())
