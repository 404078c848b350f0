"""The RNG certification kit, ``qahwa-certify`` (docs/certification.md).

It needs nothing of the server: the derivation (:mod:`fairness`), the games' deal rules
(:mod:`games`) and the standard library; matplotlib (the ``certify`` extra) only for the
plots in report.html.
"""

from __future__ import annotations

from .battery import ALPHA, Battery, Sizes, TestResult, run_battery
from .cli import certify, run
from .sources import DerivationSource, FileSource, SourceExhausted, WordStream

__all__ = ["ALPHA", "Battery", "DerivationSource", "FileSource", "Sizes", "SourceExhausted",
           "TestResult", "WordStream", "certify", "run", "run_battery"]
