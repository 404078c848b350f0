"""``python -m bench.verify_pair``: two trees' verify speed side by side, passes alternating."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import verify_pair

ROOT = Path(__file__).resolve().parents[2]


def test_two_trees_take_turns_and_the_ratio_is_printed() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.verify_pair", str(ROOT), "--games", "iraqi_domino"]
        + ["--rounds", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    line = out.splitlines()[-1]
    m = re.fullmatch(
        r"iraqi_domino +base +([\d.]+) \( *([\d.]+)\) +new +([\d.]+) \( *([\d.]+)\) +"
        r"new/base +([\d.]+)x \(quartiles ([\d.]+)-([\d.]+)\)",
        line,
    )
    assert m, out
    rates = [float(x) for x in m.groups()]
    assert all(r > 0 for r in rates)
    assert rates[1] >= rates[0] and rates[3] >= rates[2]  # best pass >= median pass


def test_a_directory_that_is_no_tree_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        verify_pair.main([str(tmp_path)])
    assert exc.value.code == 2
    assert "is not a source tree of this repository" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        verify_pair.main([str(ROOT), "--rounds", "1"])
