"""The RNG certification kit, ``qahwa-certify`` (docs/certification.md).

It needs nothing of the server: the derivation (:mod:`fairness`), the games' deal rules
(:mod:`games`) and the standard library; matplotlib (the ``certify`` extra) only for the
plots in report.html.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .battery import ALPHA, Battery, Sizes, TestResult, run_battery
from .sources import DerivationSource, FileSource, SourceExhausted, WordStream

if TYPE_CHECKING:
    from .cli import certify, run


def __getattr__(name: str) -> Any:
    """``certify`` and ``run``, the command (click), loaded when first asked for: the verify
    page imports ``verify_cli.certify.statistics`` on Pyodide, which has no click."""
    if name in ("certify", "run"):
        from . import cli

        return getattr(cli, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALPHA",
    "Battery",
    "DerivationSource",
    "FileSource",
    "Sizes",
    "SourceExhausted",
    "TestResult",
    "WordStream",
    "certify",
    "run",
    "run_battery",
]
