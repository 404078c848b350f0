"""The verify page's Python: the Pyodide runtime and this checkout's own sources.

The page (``qahwa_page/static/verify.html``) replays the game rules in the browser with the
project's own ``verify_cli.replay_core`` running on Pyodide in a Web Worker
(``qahwa_page/static/verify-worker.js``). Everything it loads comes from the serving origin
(the service, or ``verify page`` on the player's own machine):

- ``/static/pyodide/<file>``: the Pyodide core release pinned below, fetched from the npm
  registry by ``python -m qahwa_page.pyodide fetch`` (``make pyodide``, run by ``make serve``,
  ``make test`` and ``make verifier-dist``) into the git-ignored ``qahwa_page/static/pyodide/``
  (a built ``qahwa-verify`` wheel carries it there); the tarball's integrity
  (the registry's ``sha512-…``) must equal :data:`PYODIDE_INTEGRITY`, else nothing is
  installed. Without npm or network it says so and the page still checks the chance events
  (and says that the rules were not replayed).
- ``/static/qahwa-py-<sha256>.zip``: ``fairness``, ``games`` and ``verify_cli`` as they are
  installed (this checkout, or the ``qahwa-verify`` wheel), zipped when first served
  (deterministically, so the name is a content hash; the worker checks the SHA-256 before
  using it). The packages are located with ``importlib.util.find_spec``, never imported:
  the service serves them without loading ``verify_cli``.
- ``/static/qahwa-py.json``: the manifest telling the page both names.

Only the standard library is used here (the fetch runs before anything else is installed).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

PYODIDE_VERSION = "314.0.7"
PYODIDE_INTEGRITY = (
    "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+"
    "SNvi/6V5JEsOlD2R1A=="
)

# The files of the npm package the page needs (the rest: docs, console pages, typings, maps).
RUNTIME_FILES: dict[str, str] = {
    "pyodide.mjs": "text/javascript; charset=utf-8",
    "pyodide.asm.mjs": "text/javascript; charset=utf-8",
    "pyodide.asm.wasm": "application/wasm",
    "python_stdlib.zip": "application/zip",
    "pyodide-lock.json": "application/json",
    "package.json": "application/json",
}
# "<version> <integrity>" once every file above is in place, then "<sha256>  <file>" for each
# file as unpacked from the integrity-checked tarball (what check_runtime holds them to)
PIN_FILE = ".pin"

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
RUNTIME_DIR = STATIC_DIR / "pyodide"
SOURCE_PACKAGES = ("fairness", "games", "verify_cli")

# The worker (and everything it loads) runs under this policy: scripts from the origin only,
# WebAssembly compilation allowed ('wasm-unsafe-eval'), never 'unsafe-eval'.
WORKER_CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; base-uri 'none'"
)


def _pin() -> str:
    return f"{PYODIDE_VERSION} {PYODIDE_INTEGRITY}"


def runtime_installed(directory: Path = RUNTIME_DIR) -> bool:
    """Whether the pinned runtime is complete in ``directory``."""
    try:
        lines = (directory / PIN_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return lines[:1] == [_pin()] and all((directory / f).is_file() for f in RUNTIME_FILES)


def check_runtime(directory: Path = RUNTIME_DIR) -> str:
    """Hold an installed runtime to its pin, file by file (FetchError saying what is wrong).

    The pin file must name :data:`PYODIDE_VERSION` and :data:`PYODIDE_INTEGRITY`, and every
    file of :data:`RUNTIME_FILES` must have the SHA-256 recorded when it was unpacked from
    the integrity-checked tarball. ``make verifier-dist`` runs this before it builds."""
    where = f"the Pyodide runtime in {directory}"
    try:
        lines = (directory / PIN_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        raise FetchError(f"{where} is not installed (make pyodide)") from None
    if lines[:1] != [_pin()]:
        raise FetchError(
            f"{where} is not pyodide {PYODIDE_VERSION} as pinned (remove it and run make pyodide)"
        )
    recorded = {name: digest for digest, _, name in (line.partition("  ") for line in lines[1:])}
    for name in RUNTIME_FILES:
        if name not in recorded:
            raise FetchError(
                f"{where} has no recorded SHA-256 for {name} (an older fetch: "
                f"remove it and run make pyodide)"
            )
        try:
            data = (directory / name).read_bytes()
        except OSError:
            raise FetchError(f"{where} lacks {name} (remove it and run make pyodide)") from None
        if hashlib.sha256(data).hexdigest() != recorded[name]:
            raise FetchError(
                f"{where}: {name} is not the file unpacked from the pinned "
                f"release (remove it and run make pyodide)"
            )
    return f"pyodide {PYODIDE_VERSION}: every file in {directory} is as pinned"


def integrity_of(data: bytes) -> str:
    """The npm ``integrity`` string (Subresource Integrity, SHA-512) of a tarball."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


class FetchError(Exception):
    """The runtime could not be installed (the message is one line)."""


def install_tarball(data: bytes, directory: Path = RUNTIME_DIR) -> None:
    """Check a downloaded tarball against the pin and unpack the runtime files from it."""
    got = integrity_of(data)
    if got != PYODIDE_INTEGRITY:
        raise FetchError(
            f"pyodide@{PYODIDE_VERSION}: integrity {got} is not the pinned "
            f"{PYODIDE_INTEGRITY}; nothing installed"
        )
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pyodide-", dir=directory.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for name in RUNTIME_FILES:
                member = tar.getmember(f"package/{name}")
                src = tar.extractfile(member) if member.isfile() else None
                if src is None:
                    raise FetchError(f"pyodide@{PYODIDE_VERSION}: {name} is not a file")
                (staging / name).write_bytes(src.read())
        digests = [
            f"{hashlib.sha256((staging / n).read_bytes()).hexdigest()}  {n}" for n in RUNTIME_FILES
        ]
        (staging / PIN_FILE).write_text("\n".join([_pin(), *digests]) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        if directory.exists():
            shutil.rmtree(directory)
        staging.rename(directory)
    except KeyError as exc:
        raise FetchError(f"pyodide@{PYODIDE_VERSION}: the package has no {exc}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def npm_pack(npm: str = "npm") -> bytes:
    """``npm pack pyodide@<version>``: the tarball's bytes (FetchError when npm cannot)."""
    exe = shutil.which(npm)
    if exe is None:
        raise FetchError("npm is not installed")
    with tempfile.TemporaryDirectory(prefix="qahwa-npm-") as tmp:
        try:
            proc = subprocess.run(
                [
                    exe,
                    "pack",
                    f"pyodide@{PYODIDE_VERSION}",
                    "--json",
                    "--silent",
                    "--pack-destination",
                    tmp,
                ],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
                env={
                    **os.environ,
                    "npm_config_update_notifier": "false",
                    "npm_config_fund": "false",
                    "npm_config_audit": "false",
                },
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FetchError(f"npm pack failed: {exc}") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise FetchError(f"npm pack pyodide@{PYODIDE_VERSION} failed: {last}")
        tarballs = list(Path(tmp).glob("*.tgz"))
        if len(tarballs) != 1:
            raise FetchError("npm pack wrote no tarball")
        return tarballs[0].read_bytes()


def fetch(directory: Path = RUNTIME_DIR, npm: str = "npm") -> str:
    """Install the pinned runtime unless it is there already; a one-line account."""
    with suppress(FetchError):  # missing, another release, or not as unpacked: fetch it afresh
        check_runtime(directory)
        return f"pyodide {PYODIDE_VERSION}: already in {directory}"
    install_tarball(npm_pack(npm), directory)
    return f"pyodide {PYODIDE_VERSION}: installed into {directory} (integrity checked)"


# ---------------------------------------------------------------------------------------
# The checkout's sources, zipped for the browser.
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SourceZip:
    data: bytes
    sha256: str

    @property
    def name(self) -> str:
        return f"qahwa-py-{self.sha256[:16]}.zip"


class SourcesMissing(Exception):
    """A package the page runs is not installed (the message names it)."""


def package_dir(name: str) -> Path:
    """Where the installed package ``name`` lives, found without importing it."""
    spec = find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if len(locations) != 1:
        raise SourcesMissing(f"the page's Python package {name!r} is not installed")
    return Path(locations[0])


def build_source_zip(root: Path | None = None) -> SourceZip:
    """Every ``.py`` file of fairness, games and verify_cli, in a deterministic zip.

    ``root``: a directory holding the packages (a checkout); by default each package is
    taken from where it is installed."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for pkg in SOURCE_PACKAGES:
            top = root / pkg if root is not None else package_dir(pkg)
            for path in sorted(top.rglob("*.py")):
                rel = f"{pkg}/{path.relative_to(top).as_posix()}"
                if "__pycache__" in rel:
                    continue
                info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, path.read_bytes())
    data = buf.getvalue()
    return SourceZip(data, hashlib.sha256(data).hexdigest())


@lru_cache(maxsize=1)
def source_zip() -> SourceZip:
    """The zip, built once per process (when the service first serves it)."""
    return build_source_zip()


def manifest(directory: Path = RUNTIME_DIR) -> dict[str, object]:
    """What the page reads at ``/static/qahwa-py.json``."""
    z = source_zip()
    return {
        "runtime": (
            {"version": PYODIDE_VERSION, "url": f"/static/pyodide/{PYODIDE_VERSION}/"}
            if runtime_installed(directory)
            else None
        ),
        "sources": {"url": f"/static/{z.name}", "sha256": z.sha256},
        "module": "verify_cli.replay_core",
    }


# The page's own policy (also in its <meta>): inline scripts (the page is one file that also
# works saved to disk), scripts and workers from the origin, no eval of any kind.
PAGE_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; worker-src 'self'; "
    "style-src 'unsafe-inline'; img-src data:; connect-src 'self' http: https:; "
    "base-uri 'none'; form-action 'none'"
)

NO_CACHE = {"Cache-Control": "no-cache"}
IMMUTABLE = {"Cache-Control": "public, max-age=31536000, immutable"}


@dataclass(frozen=True)
class Asset:
    """One response of the page's Python assets: bytes or a file, its type and headers."""

    body: bytes | Path
    media_type: str
    headers: dict[str, str]


def asset(path: str, runtime_dir: Path = RUNTIME_DIR) -> Asset | None:
    """The asset at ``/static/<path>`` that this module serves (None: not one of them).

    ``qahwa-py.json`` (the manifest), ``qahwa-py-<hash>.zip`` (the sources),
    ``verify-worker.js`` (with the worker's CSP) and ``pyodide/<version>/<file>``.
    """
    if path == "qahwa-py.json":
        return Asset(
            json.dumps(manifest(runtime_dir)).encode("utf-8"), "application/json", dict(NO_CACHE)
        )
    if path.startswith("qahwa-py-") and path.endswith(".zip"):
        z = source_zip()
        return Asset(z.data, "application/zip", dict(IMMUTABLE)) if path == z.name else None
    if path == "verify-worker.js":
        return Asset(
            STATIC_DIR / "verify-worker.js",
            "text/javascript; charset=utf-8",
            {**NO_CACHE, "Content-Security-Policy": WORKER_CSP},
        )
    parts = path.split("/")
    if (
        len(parts) == 3
        and parts[0] == "pyodide"
        and parts[1] == PYODIDE_VERSION
        and parts[2] in RUNTIME_FILES
        and runtime_installed(runtime_dir)
    ):
        return Asset(runtime_dir / parts[2], RUNTIME_FILES[parts[2]], dict(IMMUTABLE))
    return None


def main(argv: list[str]) -> int:
    if argv[:1] not in (["fetch"], ["check"]) or len(argv) > 2:
        print("usage: python -m qahwa_page.pyodide fetch|check [DIR]", file=sys.stderr)
        return 2
    directory = Path(argv[1]) if len(argv) == 2 else RUNTIME_DIR
    try:
        print(check_runtime(directory) if argv[0] == "check" else fetch(directory))
    except FetchError as exc:
        if argv[0] == "check" or "integrity" in str(exc):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        # No npm or no registry: everything else works; the page says it cannot replay.
        print(
            f"warning: {exc}; the verify page will check chance events and signatures "
            f"but not replay the rules",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
