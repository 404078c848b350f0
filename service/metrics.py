"""``GET /metrics``: Prometheus text format (prometheus-client), one registry per app.

What is measured (docs/deploy.md "What to monitor"):

- ``qahwa_http_request_duration_seconds{method,route}``: latency histogram by route
  template (``/v1/matches/{match_id}/actions``; ``unmatched`` when no route matched, so
  scanners cannot blow up the label set); an event stream counts its whole duration;
- ``qahwa_http_requests_total{method,route,status}``;
- ``qahwa_actions_total{kind}``: accepted match actions (``match``) and rng draws (``rng``);
  ``qahwa_created_total{kind}``: matches and sessions created;
- ``qahwa_rate_limited_total{limit}``: 429s by the limit that refused them (the answer's
  ``Qahwa-Limit``): ``create`` (per operator key), ``token`` (per seat or session token),
  ``address`` (per client address), ``lobby`` (the built-in lobby's tables a minute);
- ``qahwa_connections_dropped_total``: connections closed by the header timeout or the
  connection cap (:mod:`service.serving`);
- ``qahwa_matches{kind,status}``, ``qahwa_log_entries``, ``qahwa_operator_keys{state}``:
  read from the database at scrape time (cached ``CACHE_SECONDS``);
  ``qahwa_database_up``: 0 when that read failed;
- ``qahwa_sweep_runs_total{outcome}`` and ``qahwa_swept_matches_total``: the abandonment
  sweep;
- ``qahwa_witness_lag_entries{witness}``: per configured witness, how many log entries the
  newest checkpoint it cosigned is behind the newest checkpoint (the whole log for one that
  never cosigned), set by :class:`service.c2sp.LogC2SP` after each checkpoint and each
  submission through ``app.state.metrics.witness_lag``; no samples while no witness is
  configured;
- ``qahwa_build_info{version,protocols}``: always 1, labelled with this server's version and
  the protocols it serves (:mod:`service.version`);
- ``process_*`` and ``python_*``: prometheus-client's process and platform collectors.

Counters are per process: scrape each ``qahwa serve`` process on its own port (with
``--workers N`` a scrape reaches one worker at random).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from . import serving
from .db import Database
from .kinds import Kind
from .models import LogEntry, LogIdentity, Match
from .operators import OperatorKey
from .version import PROTOCOLS, VERSION

CACHE_SECONDS = 5.0
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
ACTION_ROUTES = {
    ("POST", "/v1/matches/{match_id}/actions"): Kind.MATCH,
    ("POST", "/v1/rng/{session_id}/draws"): Kind.RNG,
}
CREATE_ROUTES = {("POST", "/v1/matches"): Kind.MATCH, ("POST", "/v1/rng"): Kind.RNG}
#: the limits a 429 names (``Qahwa-Limit``): service.limits, service.operators, service.play
LIMITS = ("create", "token", "address", "lobby")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class DatabaseCollector(Collector):
    """Gauges read from the database at scrape time, cached for ``ttl`` seconds."""

    def __init__(self, db: Database, ttl: float = CACHE_SECONDS) -> None:
        self.db = db
        self.ttl = ttl
        self._at = -float("inf")
        self._cached: list[Metric] = []
        self._guard = threading.Lock()

    def describe(self) -> Iterator[Metric]:
        return iter(())  # no database read when the collector is registered

    def collect(self) -> Iterator[Metric]:
        with self._guard:
            if time.monotonic() - self._at > self.ttl:
                self._cached = self._read()
                self._at = time.monotonic()
            return iter(list(self._cached))

    def _read(self) -> list[Metric]:
        up = GaugeMetricFamily(
            "qahwa_database_up", "1 if the last metrics read of the database succeeded"
        )
        try:
            keys = OperatorKey.__table__  # type: ignore[attr-defined]
            table = Match.__table__  # type: ignore[attr-defined]
            with self.db.connect(write=False) as c:
                by_state = c.execute(
                    select(table.c.kind, table.c.status, func.count()).group_by(
                        table.c.kind, table.c.status
                    )
                ).all()
                size = c.execute(  # the active log's (qahwa keys new-log starts another)
                    select(func.coalesce(func.max(LogEntry.idx) + 1, 0)).where(
                        LogEntry.log_id  # type: ignore[arg-type]
                        == select(func.coalesce(func.max(LogIdentity.id), 1)).scalar_subquery()
                    )
                ).scalar()
                ops = c.execute(
                    select(keys.c.revoked_at.is_(None), func.count()).group_by(
                        keys.c.revoked_at.is_(None)
                    )
                ).all()
        except Exception:
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        matches = GaugeMetricFamily(
            "qahwa_matches", "Matches and rng sessions by status", labels=["kind", "status"]
        )
        for kind, status, n in by_state:
            matches.add_metric([str(kind), str(status)], int(n))
        log_size = GaugeMetricFamily("qahwa_log_entries", "Entries in the transparency log")
        log_size.add_metric([], int(size or 0))
        operators = GaugeMetricFamily(
            "qahwa_operator_keys", "Operator keys by state", labels=["state"]
        )
        counts = {bool(active): int(n) for active, n in ops}
        operators.add_metric(["active"], counts.get(True, 0))
        operators.add_metric(["revoked"], counts.get(False, 0))
        return [up, matches, log_size, operators]


class _Dropped(Collector):
    def collect(self) -> Iterator[Metric]:
        m = CounterMetricFamily(
            "qahwa_connections_dropped",
            "Connections closed by the header timeout or the connection cap",
        )
        m.add_metric([], serving.STATS.dropped)
        yield m


class Metrics:
    """The app's registry and its metrics (see the module doc)."""

    def __init__(self, db: Database) -> None:
        r = self.registry = CollectorRegistry()
        self.latency = Histogram(
            "qahwa_http_request_duration_seconds",
            "HTTP request latency by route template",
            ["method", "route"],
            buckets=BUCKETS,
            registry=r,
        )
        self.requests = Counter(
            "qahwa_http_requests",
            "HTTP requests by route and status",
            ["method", "route", "status"],
            registry=r,
        )
        self.actions = Counter(
            "qahwa_actions", "Accepted match actions and rng draws", ["kind"], registry=r
        )
        self.created = Counter(
            "qahwa_created", "Matches and rng sessions created", ["kind"], registry=r
        )
        self.rate_limited = Counter(
            "qahwa_rate_limited", "Requests refused with 429", ["limit"], registry=r
        )
        self.sweep_runs = Counter("qahwa_sweep_runs", "Abandonment sweeps", ["outcome"], registry=r)
        self.swept = Counter("qahwa_swept_matches", "Matches ended by the sweep", registry=r)
        Gauge(
            "qahwa_build_info",
            "This server's version and the protocols it serves (always 1)",
            ["version", "protocols"],
            registry=r,
        ).labels(version=VERSION, protocols=",".join(PROTOCOLS)).set(1)
        self.witness_lag = Gauge(
            "qahwa_witness_lag_entries",
            "Log entries between the newest checkpoint and the newest one each witness cosigned",
            ["witness"],
            registry=r,
        )
        for outcome in ("ok", "error"):
            self.sweep_runs.labels(outcome=outcome)
        for kind in Kind:
            self.actions.labels(kind=kind)
            self.created.labels(kind=kind)
        for limit in LIMITS:
            self.rate_limited.labels(limit=limit)
        r.register(DatabaseCollector(db))
        r.register(_Dropped())
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)

    def swept_run(self, ended: int | None) -> None:
        """One sweep: ``ended`` matches, or None when it failed."""
        if ended is None:
            self.sweep_runs.labels(outcome="error").inc()
        else:
            self.sweep_runs.labels(outcome="ok").inc()
            self.swept.inc(ended)
