"""The verifier's version (the installed ``qahwa-verify`` distribution's, written once in
verifier/pyproject.toml; the server pins exactly this one) and the protocols it verifies."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    try:
        return version("qahwa-verify")
    except PackageNotFoundError:  # pragma: no cover - sources never installed
        return "0+unknown"


VERSION = _version()
