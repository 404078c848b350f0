"""The RNG certification kit, ``qahwa-certify`` (docs/certification.md).

It needs nothing of the server: the derivation (:mod:`fairness`), the games' deal rules
(:mod:`games`) and the standard library; matplotlib (the ``certify`` extra) only for the
plots in report.html. The verify page imports :mod:`verify_cli.certify.statistics` on
Pyodide, which has no click: this package imports none of its modules itself.
"""
