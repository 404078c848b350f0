"""``make serve``'s first start: the venv, the locked runtime and the Pyodide runtime, one
line per step, then ``qahwa serve``.

Run by the machine's ``python3`` (the standard library only: nothing is installed yet).
The steps overlap where they can: the Pyodide fetch (standard library too) runs beside the
venv and the installs; the editable installs, which build with the locked setuptools, run
beside the rest of the runtime's install once setuptools is in; and the runtime's install
is split in ``INSTALL_PARTS`` pip runs side by side (``--no-deps``: the lock pins every
package with its hashes, so each run installs its share and nothing else), which overlaps
one run's downloads and hash checks with another's unpacking. On a terminal one status line says what is running
and how far the install is (packages collected / to install); every finished step prints
one line with its time. Nothing else is shown unless a step fails: then its own output,
without pip's one warning per index location that does not exist on this machine.

A step whose result is current is skipped, as make would: the install when
``.venv/.installed`` is newer than the locks and the project's build files, the Pyodide
runtime when its pin file is newer than ``qahwa_page/pyodide.py``.

``python3 tools/first_start.py [--install-only] [--host H] [--port P]``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".installed"
INSTALL_INPUTS = [
    ROOT / "requirements" / "main.txt",
    ROOT / "pyproject.toml",
    ROOT / "verifier" / "pyproject.toml",
    ROOT / "verifier" / "setup.py",
]
PYODIDE_PIN = ROOT / "qahwa_page" / "static" / "pyodide" / ".pin"
PYODIDE_INPUT = ROOT / "qahwa_page" / "pyodide.py"
PIP_NOISE = re.compile(r"is ignored: it is neither a file nor a directory")
PIP = ["-m", "pip", "--disable-pip-version-check"]
EDITABLE_ENV = {"PYTHONWARNINGS": "ignore:Editable installation"}
INSTALL_PARTS = 2


def newer(target: Path, inputs: list[Path]) -> bool:
    """``target`` exists and is newer than every input (make's rule)."""
    if not target.exists():
        return False
    t = target.stat().st_mtime
    return all(p.stat().st_mtime <= t for p in inputs if p.exists())


def locked_packages() -> int:
    return len(locked_blocks())


class StepFailed(Exception):
    def __init__(self, step: str, output: str) -> None:
        super().__init__(step)
        self.step = step
        self.output = output


class Screen:
    """One line per finished step; on a terminal, a status line redrawn in place."""

    def __init__(self, stream: object | None = None) -> None:
        self.out = stream if stream is not None else sys.stdout
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.status: dict[str, str] = {}
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def _write(self, text: str) -> None:
        print(text, end="", file=self.out, flush=True)  # type: ignore[call-overload]

    def _draw(self) -> None:
        if self.tty and self.status:
            self._write(f"\r\033[K… {' · '.join(self.status.values())}"[:200])

    def set(self, key: str, text: str) -> None:
        with self.lock:
            self.status[key] = text
            self._draw()

    def done(self, key: str, line: str) -> None:
        with self.lock:
            self.status.pop(key, None)
            if self.tty:
                self._write("\r\033[K")
            self._write(f"qahwa: {line}\n")
            self._draw()


def run(
    step: str,
    cmd: list[str],
    *,
    env: dict[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """Run ``cmd`` in the repository; its output is kept, and shown only if it fails."""
    kept: list[str] = []
    with subprocess.Popen(
        cmd,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if PIP_NOISE.search(line):
                continue
            kept.append(line)
            if on_line is not None:
                on_line(line)
    if proc.returncode != 0:
        raise StepFailed(step, "".join(kept))


def bundled_pip() -> Path | None:
    """The pip wheel this Python bundles (what ``python -m venv`` installs), or None."""
    import ensurepip

    found = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    return found[-1] if found else None


def install(screen: Screen) -> None:
    """The venv, the locked runtime (requirements/main.txt, hashes checked) and the two
    editable installs (beside the runtime's install, once its build back end is in).

    pip does not byte-compile the runtime (``--no-compile``): Python compiles each module
    on its first import, so the server compiles what it uses and nothing else. The venv gets
    pip alone from the wheel this Python bundles, not ``ensurepip``'s setuptools too (the
    lock's replaces it at once). (Running every install with pip straight from that wheel
    was tried: pip from a zip compiles its own modules on every run, which cost more.)"""
    t = time.monotonic()
    pip = [str(BIN / "python"), *PIP]
    if not (BIN / "python").exists():
        screen.set("install", "making the venv .venv")
        wheel = bundled_pip()
        if wheel is None:
            run("the venv", [sys.executable, "-m", "venv", str(VENV)])
        else:  # pip alone: ensurepip would install an old setuptools, replaced at once
            run("the venv", [sys.executable, "-m", "venv", "--without-pip", str(VENV)])
            run(
                "pip in the venv",
                [str(BIN / "python"), f"{wheel}/pip", *PIP[2:], "install", "-q"]
                + ["--no-index", "--no-deps", str(wheel)],
            )
        screen.done("install", f"venv .venv made ({time.monotonic() - t:.1f} s)")
    # The build back end first (from the lock, hashes checked): the editable installs need
    # only it, so they run beside the rest of the runtime's install.
    t = time.monotonic()
    screen.set("install", "the build back end (setuptools, from the lock)")
    backend = VENV / "build-backend.txt"
    backend.write_text(locked_block("setuptools"), encoding="utf-8")
    run(
        "setuptools (requirements/main.txt)",
        [*pip, "install", "-q", "--no-deps", "--require-hashes", "-r", str(backend)],
    )
    backend.unlink()
    editables = threading.Thread(target=_editables, args=(screen, pip))
    editables.start()
    total = locked_packages()
    seen = 0

    lock = threading.Lock()

    def counted(line: str) -> None:
        nonlocal seen
        with lock:
            if line.startswith(("Collecting ", "Processing ")):
                seen += 1
                screen.set("install", f"the locked runtime: {min(seen, total)}/{total} packages")
            elif line.startswith("Installing collected packages"):
                screen.set("install", f"the locked runtime: installing {total} packages")

    screen.set("install", f"the locked runtime: 0/{total} packages")

    shares = [VENV / f"runtime-{i}.txt" for i in range(INSTALL_PARTS)]
    for path, text in zip(shares, runtime_shares(), strict=True):
        path.write_text(text, encoding="utf-8")
    failed: list[StepFailed] = []

    def share(path: Path) -> None:
        try:
            run(
                "the locked runtime (requirements/main.txt)",
                [*pip, "install", "--no-compile", "--no-deps", "--require-hashes"]
                + ["-r", str(path)],
                on_line=counted,
            )
        except StepFailed as exc:
            failed.append(exc)

    runs = [threading.Thread(target=share, args=(p,)) for p in shares]
    try:
        for th in runs:
            th.start()
    finally:
        for th in runs:
            th.join()
        editables.join()
        for path in shares:
            path.unlink(missing_ok=True)
    if failed:
        raise failed[0]
    screen.done(
        "install",
        f"the locked runtime installed: {total} packages, hashes checked "
        f"({time.monotonic() - t:.1f} s)",
    )
    if EDITABLE_FAILED:
        raise EDITABLE_FAILED[0]
    STAMP.touch()


EDITABLE_FAILED: list[StepFailed] = []


def _editables(screen: Screen, pip: list[str]) -> None:
    """qahwa and qahwa-verify, editable (one pip run), beside the runtime's install."""
    t = time.monotonic()
    screen.set("editable", "qahwa and qahwa-verify (editable)")
    try:
        run(
            "the editable installs of qahwa and qahwa-verify",
            [
                *pip,
                "install",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-e",
                ".",
                "-e",
                "./verifier",
            ],
            env=EDITABLE_ENV,
        )
    except StepFailed as exc:
        EDITABLE_FAILED.append(exc)
        screen.done("editable", "qahwa and qahwa-verify: the editable install failed")
        return
    screen.done("editable", f"qahwa and qahwa-verify installed ({time.monotonic() - t:.1f} s)")


def locked_blocks() -> list[tuple[str, str]]:
    """Every pin of requirements/main.txt with its hash lines: ``(name, block)``."""
    text = (ROOT / "requirements" / "main.txt").read_text(encoding="utf-8")
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line)
        if m:
            out.append((m.group(1).lower(), [line]))
        elif out and line.startswith(" ") and not line.strip().startswith("#"):
            out[-1][1].append(line)
    return [(name, "\n".join(lines) + "\n") for name, lines in out]


def runtime_shares() -> list[str]:
    """The lock's pins but setuptools (installed first), dealt into ``INSTALL_PARTS``
    requirement files' texts."""
    blocks = [b for name, b in locked_blocks() if name != "setuptools"]
    return ["".join(blocks[i::INSTALL_PARTS]) for i in range(INSTALL_PARTS)]


def locked_block(name: str) -> str:
    """``name``'s pin with its hashes, as requirements/main.txt has it."""
    block = dict(locked_blocks()).get(name)
    if block is None:
        raise StepFailed(f"{name} (requirements/main.txt)", f"no pin of {name} in the lock\n")
    return block


def pyodide(screen: Screen) -> None:
    """The verify page's Pyodide runtime (qahwa_page/pyodide.py); without npm or network
    it warns and everything else works."""
    t = time.monotonic()
    screen.set("pyodide", "fetching the Pyodide runtime")
    proc = subprocess.run(
        [sys.executable, "-m", "qahwa_page.pyodide", "fetch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise StepFailed("the Pyodide runtime", out)
    if PYODIDE_PIN.exists():
        PYODIDE_PIN.touch()
        screen.done("pyodide", f"the Pyodide runtime is in place ({time.monotonic() - t:.1f} s)")
    else:  # no npm or no network: said once, in one line
        said = " ".join(out.split())[:160]
        screen.done("pyodide", f"the Pyodide runtime is missing (the page cannot replay): {said}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--install-only", action="store_true", help="install, do not serve")
    ap.add_argument("--no-pyodide", action="store_true", help="leave the Pyodide runtime out")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", default="8000")
    args = ap.parse_args(argv)
    screen = Screen()
    jobs: list[tuple[str, Callable[[Screen], None]]] = []
    if not newer(STAMP, INSTALL_INPUTS):
        jobs.append(("install", install))
    if not args.no_pyodide and not newer(PYODIDE_PIN, [PYODIDE_INPUT]):
        jobs.append(("pyodide", pyodide))
    failures: list[StepFailed] = []

    def guarded(fn: Callable[[Screen], None]) -> None:
        try:
            fn(screen)
        except StepFailed as exc:
            failures.append(exc)

    threads = [threading.Thread(target=guarded, args=(fn,)) for _, fn in jobs]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if failures:
        for f in failures:
            screen.done(f.step, f"{f.step} failed:")
            sys.stderr.write(f.output)
        return 1
    if jobs:
        screen.done("total", f"ready in {time.monotonic() - screen.start:.1f} s")
    if args.install_only:
        return 0
    sys.stdout.flush()
    qahwa = str(BIN / "qahwa")
    os.execv(qahwa, [qahwa, "serve", "--host", args.host, "--port", args.port])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
