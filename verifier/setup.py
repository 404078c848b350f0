"""Which packages make up qahwa-verify, and the checks that the wheel is complete.

The packages are the repository's own directories next to this one (``package_dir``
points one level up); ``VERIFIER_PACKAGES`` is the one list of them. A listed package that
is missing fails the build naming it, and so does a wheel build (``bdist_wheel``) without
the pinned Pyodide runtime in ``qahwa_page/static/pyodide/`` (``make pyodide`` fetches it,
``make verifier-dist`` runs both). An editable install (``make`` for development) needs
no runtime.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent.parent

#: every top-level package of the verifier: the protocol, sealed deals' cryptography, the
#: rules, the verify page and the CLI, and the transparency-log package; never a package of
#: the server.
VERIFIER_PACKAGES = ("fairness", "sealed", "tlog", "games", "qahwa_page", "verify_cli")
#: package data beside the modules: every package is typed; the page has its static files
PACKAGE_DATA = {p: ["py.typed"] for p in VERIFIER_PACKAGES} | {
    "qahwa_page": [
        "py.typed",
        "static/*.html",
        "static/*.js",
        "static/pyodide/*",
        "static/pyodide/.pin",
    ],
}


def packages() -> list[str]:
    missing = [p for p in VERIFIER_PACKAGES if not (ROOT / p / "__init__.py").is_file()]
    if missing:
        raise SystemExit(
            f"qahwa-verify: listed package(s) {', '.join(missing)} missing "
            f"from {ROOT} (verifier/setup.py VERIFIER_PACKAGES)"
        )
    found = find_packages(
        where=str(ROOT), include=[q for p in VERIFIER_PACKAGES for q in (p, f"{p}.*")]
    )
    return sorted(found)


def check_runtime() -> None:
    """A wheel carries the pinned Pyodide runtime: check it file by file before building."""
    proc = subprocess.run(
        [sys.executable, "-m", "qahwa_page.pyodide", "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"qahwa-verify: cannot build the wheel: {proc.stderr.strip()}")


def main() -> None:
    if "bdist_wheel" in sys.argv:
        check_runtime()
        # setuptools copies into build/lib and keeps what is there: a module deleted since
        # the last build would ship again. Every wheel starts from nothing.
        shutil.rmtree(Path(__file__).resolve().parent / "build", ignore_errors=True)
    setup(
        packages=packages(),
        package_dir={"": ".."},
        package_data=PACKAGE_DATA,
        include_package_data=False,
    )


if __name__ == "__main__":  # as setuptools runs it (tests import the lists)
    main()
