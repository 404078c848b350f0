"""``make serve``'s first start (tools/first_start.py): one line per step, the steps that
are current skipped, a failing step's own output shown (without pip's noise)."""

from __future__ import annotations

import importlib.util
import io
import os
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("first_start", ROOT / "tools" / "first_start.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["first_start"] = mod
    spec.loader.exec_module(mod)
    return mod


fs = _module()


def test_a_current_install_is_skipped_and_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = [tmp_path / "main.txt", tmp_path / "pyproject.toml"]
    for p in inputs:
        p.write_text("x")
    stamp = tmp_path / ".installed"
    stamp.write_text("")
    old = time.time() - 100
    for p in inputs:
        os.utime(p, (old, old))
    monkeypatch.setattr(fs, "STAMP", stamp)
    monkeypatch.setattr(fs, "INSTALL_INPUTS", inputs)
    ran: list[str] = []
    monkeypatch.setattr(fs, "install", lambda screen: ran.append("install"))
    assert fs.main(["--install-only", "--no-pyodide"]) == 0
    assert ran == [] and capsys.readouterr().out == ""
    # an input newer than the stamp: the install runs (and says it is ready)
    os.utime(inputs[0], None)
    assert fs.main(["--install-only", "--no-pyodide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert ran == ["install"] and len(out) == 1 and out[0].startswith("qahwa: ready in ")


def test_one_line_per_step_and_no_redrawing_off_a_terminal() -> None:
    out = io.StringIO()
    screen = fs.Screen(out)
    screen.set("install", "the locked runtime: 3/39 packages")
    screen.set("pyodide", "fetching the Pyodide runtime")
    screen.done("pyodide", "the Pyodide runtime is in place (1.0 s)")
    screen.done("install", "the locked runtime installed (2.0 s)")
    assert out.getvalue().splitlines() == [
        "qahwa: the Pyodide runtime is in place (1.0 s)",
        "qahwa: the locked runtime installed (2.0 s)",
    ]


def test_a_failing_step_shows_its_own_output_without_pip_noise(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = (
        "import sys\n"
        "print(\"WARNING: Location 'file:///x/' is ignored: it is neither a file nor a directory.\")\n"
        "print('ERROR: THESE PACKAGES DO NOT MATCH THE HASHES')\n"
        "sys.exit(1)\n"
    )
    with pytest.raises(fs.StepFailed) as err:
        fs.run("the locked runtime", [sys.executable, "-c", script])
    assert err.value.output == "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES\n"

    def failing(screen: object) -> None:
        raise fs.StepFailed("the locked runtime", "ERROR: THESE PACKAGES DO NOT MATCH\n")

    monkeypatch.setattr(fs, "STAMP", ROOT / "no-such-stamp")
    monkeypatch.setattr(fs, "install", failing)
    assert fs.main(["--install-only", "--no-pyodide"]) == 1
    got = capsys.readouterr()
    assert got.out == "qahwa: the locked runtime failed:\n"
    assert got.err == "ERROR: THESE PACKAGES DO NOT MATCH\n"


def test_the_runtime_shares_are_the_lock_split_whole() -> None:
    """The pip runs side by side install every pin of requirements/main.txt once, each with
    all its hashes (setuptools, installed first, in none of them)."""
    import re

    lock = (ROOT / "requirements" / "main.txt").read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", lock, flags=re.M)
    blocks = fs.locked_blocks()
    assert [name for name, _ in blocks] == [p.lower() for p in pins]
    assert len(blocks) == fs.locked_packages()
    for name, block in blocks:
        assert block == fs.locked_block(name), name
        assert block.count("--hash=sha256:") >= 1 and block.endswith("\n"), name
    shares = fs.runtime_shares()
    assert len(shares) == fs.INSTALL_PARTS >= 2
    dealt = "".join(shares)
    for name, block in blocks:
        assert dealt.count(block) == (name != "setuptools"), name
    whole = sum(len(b) for _, b in blocks) - len(fs.locked_block("setuptools"))
    assert len(dealt) == whole  # nothing else in them
    assert all(s.count("==") >= (len(blocks) - 1) // fs.INSTALL_PARTS for s in shares)
