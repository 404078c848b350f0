"""verify's messages as a new user reads them: each names its file once, a gap in the
events says which event is missing, and a report fits an 80-column terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fairness import PROTOCOL
from games.transcript import simulate_match
from tests.support import captured
from tests.support.pty_run import run_on_terminal

ROOT = Path(__file__).resolve().parents[2]


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return captured(
        [sys.executable, "-m", "verify_cli", *args, "--jobs", "1"], env=env, cwd=ROOT, timeout=120
    )


def _doc(tmp_path: Path, drop: int | None = None) -> Path:
    doc, _ = simulate_match("hokm", {"target": 1}, seed=1, protocol=PROTOCOL)
    if drop is not None:
        del doc["events"][drop]
    path = tmp_path / f"t{drop}.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_gap_says_which_event_is_missing(tmp_path: Path) -> None:
    res = verify("--no-signature", str(_doc(tmp_path, drop=20)))
    assert res.returncode == 1
    assert "replay: event 20 missing (the next event has seq 21)" in res.stdout


def test_unusable_files_are_named_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    missing = tmp_path / "missing.json"
    res = verify(str(bad), str(missing))
    assert res.returncode == 2
    reports = " ".join(res.stdout.split("verify: summary")[0].split())  # unwrap lines
    for path in (bad, missing):
        assert reports.count(str(path)) == 1, res.stdout
    assert "cannot read: No such file" in reports
    assert res.stderr.count(str(bad)) == 1 and "not JSON" in res.stderr


def test_a_report_fits_an_80_column_terminal(tmp_path: Path) -> None:
    rc, shown = run_on_terminal(
        [
            sys.executable,
            "-m",
            "verify_cli",
            "--no-signature",
            str(_doc(tmp_path)),
            str(_doc(tmp_path, drop=3)),
            "--jobs",
            "1",
        ],
        cols=80,
        cwd=ROOT,
    )
    assert rc == 1 and "VERIFIED" in shown and "FAILED" in shown
    long = [line for line in shown.splitlines() if len(line) > 80]
    assert not long, long
    # into a pipe, lines stay whole (for grep)
    res = verify("--no-signature", str(_doc(tmp_path, drop=3)))
    assert any(len(line) > 80 for line in res.stdout.splitlines())
