"""The web table at ``/play`` (issue 32) and its built-in lobby.

``GET /play`` serves qahwa_page/static/play.html, whose script (``/static/play.js``, built
from clients/ts/play/ by ``make play-js`` and committed) plays one person's seat through the
TypeScript conforming client. ``POST /play/tables`` is the built-in lobby: it creates a match
with the operator's authority, the person's seat (and a friend's, when asked) open and every
other seat a house seat, played by service/house.py's bots in this process. It is for trying
qahwa (docs/play.md): in production the operator's own backend creates tables and runs
``qahwa house``. So the lobby (:class:`Lobby`) is:

- **on only where it is safe**: ``QAHWA_PLAY_LOBBY=1`` turns it on, ``0`` off; unset, it
  answers only a request that reached a loopback address from a loopback address, not
  through a proxy (no ``X-Forwarded-For`` or ``Forwarded``): a stranger gets 403;
- **limited as a whole**: ``QAHWA_PLAY_LOBBY_PER_MINUTE`` tables a minute from every
  address together (429 ``rate_limited``, ``Qahwa-Limit: lobby``), and at most
  ``QAHWA_PLAY_LOBBY_BOTS`` house seats at once, waiting or playing (503 ``unavailable``,
  ``Qahwa-Limit: lobby_bots``);
- **sealed only where it protects**: a sealed table (``{"deal": "sealed"}``) of a game the
  page deals (:data:`PAGE_SEALED_GAMES`), for two people or one whose deal leaves stock
  undealt (``games.sealed_limits.full_deal``); its house seats are conforming sealed clients
  (qahwa_client's ``Seat``) that make and hold their own per-hand keys, as ``qahwa house``
  does, never the server's request path;
- **unlogged until played**: the house seats commit only once every person's seat has
  committed; a table whose people have not all committed within
  ``QAHWA_PLAY_LOBBY_SEAT_SECONDS`` is closed by a house seat's resignation before any
  lock, so nothing reaches the log.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from games.registry import engine_class
from games.sealed_limits import full_deal
from qahwa_wire.models import GAMES

from .clock import Clock
from .kinds import Kind
from .settings import STATIC_DIR, Settings

if TYPE_CHECKING:
    from .house import House
    from .matches import MatchService

log = logging.getLogger("qahwa.play")

router = APIRouter(include_in_schema=False)

#: the play page's policy: its own script, its sealed seat's worker, the verify page in a
#: frame, nothing else
PLAY_CSP = (
    "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'"
)
#: the sealed seat's worker (play-worker.js): the core's chunk from the origin, and nothing
#: else (it computes; the page does the talking)
PLAY_WORKER_CSP = "default-src 'none'; script-src 'self'; base-uri 'none'"


#: the sealed games the web table deals (clients/ts SEALED_GAMES): the lobby seats a sealed
#: table of these only, and only where it protects the people's hands
PAGE_SEALED_GAMES = ("hokm", "iraqi_domino", "qahve")


class TableIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str = Field(max_length=32)
    ruleset: dict[str, Any] | None = None
    friend: bool = False


def _loopback(addr: Any) -> bool:
    """Whether an ASGI ``(host, port)`` is a loopback address (a unix socket: not)."""
    if not addr:
        return False
    try:
        return ipaddress.ip_address(str(addr[0])).is_loopback
    except ValueError:
        return False


def refused_because(request: Request, settings: Settings) -> str | None:
    """Why the lobby does not answer this request, or None when it does."""
    if settings.play_lobby is not None:
        return None if settings.play_lobby else "the built-in lobby is off on this server"
    scope = request.scope
    proxied = any(name in (b"x-forwarded-for", b"forwarded") for name, _ in scope["headers"])
    if _loopback(scope.get("server")) and _loopback(scope.get("client")) and not proxied:
        return None
    return (
        "the built-in lobby creates tables with the operator's authority: it answers only "
        "on the server's own machine (a loopback address, not through a proxy), unless the "
        "operator sets QAHWA_PLAY_LOBBY=1; the operator's own lobby hands out seat links"
    )


@dataclass
class _Waiting:
    """A lobby table whose people have not all committed yet: its house seats wait."""

    match_id: str
    people: list[int]
    house: list[tuple[int, str]]  # (seat, token)
    until: float  # the clock's monotonic time it closes at, unplayed
    closer: str  # the token of the seat that resigns to close it (a house seat's if any)


class Lobby:
    """The built-in lobby's state in this process: its rate, its house seats, the tables
    waiting for their people (one thread watches them while there are any)."""

    POLL_SECONDS = 0.2

    def __init__(self, service: MatchService, settings: Settings, clock: Clock) -> None:
        self.service = service
        self.settings = settings
        self.clock = clock
        self.rate = settings.play_lobby_per_minute / 60.0
        self.burst = max(1.0, settings.play_lobby_per_minute / 4)
        self._tokens = self.burst
        self._at = clock.monotonic()
        self._guard = threading.Lock()
        self._waiting: dict[str, _Waiting] = {}
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()
        self.house: House | None = None
        #: tables closed unplayed (tests, logs)
        self.closed: list[str] = []

    def _house(self, request: Request) -> House:
        """This process's house bots, playing against the server's own listening address."""
        if self.house is None:
            # the bots are clients (qahwa_client): loaded with the first table, so serving
            # the app alone never loads the client (tests/repo/test_layering.py)
            from .house import House

            server = request.scope.get("server") or ("127.0.0.1", 8000)
            host, port = str(server[0]), int(server[1])
            if host in ("0.0.0.0", "::", ""):
                host = "127.0.0.1"
            if ":" in host:
                host = f"[{host}]"
            self.house = House(f"http://{host}:{port}")
        return self.house

    def bots(self) -> int:
        """House seats playing (live threads) or waiting for their table's people."""
        playing = 0 if self.house is None else sum(t.is_alive() for t in self.house.threads)
        return playing + sum(len(w.house) for w in self._waiting.values())

    def _take(self) -> float:
        """One table from the global bucket: 0.0, or the seconds until there is one."""
        now = self.clock.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.rate

    def open_table(
        self,
        request: Request,
        game: str,
        ruleset: dict[str, Any] | None,
        names: list[str],
        house: list[bool],
    ) -> dict[str, Any]:
        """Create the table if the lobby has room and rate for it; its house seats wait."""
        need = sum(house)
        with self._guard:
            if self.bots() + need > self.settings.play_lobby_bots:
                raise HTTPException(
                    503,
                    f"the built-in lobby is full: it runs at most "
                    f"{self.settings.play_lobby_bots} house seats at once "
                    "(QAHWA_PLAY_LOBBY_BOTS); retry later",
                    headers={"Retry-After": "30", "Qahwa-Limit": "lobby_bots"},
                )
            wait = self._take()
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                raise HTTPException(
                    429,
                    f"the built-in lobby opens at most {self.settings.play_lobby_per_minute:g} "
                    f"tables a minute (QAHWA_PLAY_LOBBY_PER_MINUTE); retry in {seconds} s",
                    headers={"Retry-After": str(seconds), "Qahwa-Limit": "lobby"},
                )
            created = self.service.create_match(game, ruleset=ruleset, names=names, house=house)
            self._house(request)
            house_seats = [(int(s["seat"]), s["token"]) for s in created["seats"] if s["house"]]
            self._waiting[created["match_id"]] = _Waiting(
                created["match_id"],
                [int(s["seat"]) for s in created["seats"] if not s["house"]],
                house_seats,
                self.clock.monotonic() + self.settings.play_lobby_seat_seconds,
                # a table of friends only: one of theirs (before the lock it only closes)
                house_seats[0][1] if house_seats else created["seats"][0]["token"],
            )
            if not self._stop.is_set() and (self._watcher is None or not self._watcher.is_alive()):
                self._watcher = threading.Thread(
                    target=self._watch, name="qahwa-lobby", daemon=True
                )
                self._watcher.start()
        return created

    def close(self, timeout: float = 5.0) -> None:
        """The app stops: the watcher stops, and the house seats stop at their next turn."""
        self._stop.set()
        watcher = self._watcher
        if watcher is not None:
            watcher.join(timeout)
        if self.house is not None:
            self.house.stop.set()

    def _watch(self) -> None:
        """While tables wait: start a table's house seats once its people all committed;
        close it (a house seat resigns: before the lock nothing is logged) when its time
        is up."""
        while not self._stop.is_set():
            with self._guard:
                waiting = list(self._waiting.values())
                if not waiting:
                    self._watcher = None
                    return
            for w in waiting:
                try:
                    done = self._step(w)
                except Exception:  # keep watching the others; logged without details
                    log.exception("lobby table %s", w.match_id)
                    done = self.clock.monotonic() > w.until + 60
                if done:
                    with self._guard:
                        self._waiting.pop(w.match_id, None)
            self._stop.wait(self.POLL_SECONDS)

    def _step(self, w: _Waiting) -> bool:
        """One look at a waiting table; whether it no longer waits."""
        pub = self.service.public(w.match_id, kind=Kind.MATCH)
        if pub["status"] != "seating" or pub.get("lock") is not None:
            return True  # ended (or locked) by other means: nothing to start
        seats = pub["seats"]
        if all(seats[p]["committed"] for p in w.people):
            assert self.house is not None
            for seat, token in w.house:
                self.house.start_seat(w.match_id, seat, token)
            return True
        if self.clock.monotonic() > w.until:
            self.service.resign(w.match_id, token=w.closer)
            self.closed.append(w.match_id)
            log.info("lobby table %s closed unplayed", w.match_id)
            return True
        return False


_lock = threading.Lock()


def _lobby(request: Request) -> Lobby:
    app = request.app
    with _lock:
        lobby: Lobby | None = getattr(app.state, "play_lobby", None)
        if lobby is None:
            lobby = Lobby(app.state.service, app.state.settings, app.state.clock)
            app.state.play_lobby = lobby
        return lobby


def _installed(name: str, media_type: str, policy: str, *, needs: str | None = None) -> Response:
    """One of the web table's files under its own policy (404 while the table, or the file
    ``needs`` beside it, is not installed)."""
    file = STATIC_DIR / name
    if not file.is_file() or (needs is not None and not (STATIC_DIR / needs).is_file()):
        raise HTTPException(404, "the web table is not installed on this server")
    return Response(
        file.read_bytes(),
        media_type=media_type,
        headers={"Content-Security-Policy": policy, "Cache-Control": "no-cache"},
    )


@router.get("/play")
def play_page() -> Response:
    return _installed("play.html", "text/html; charset=utf-8", PLAY_CSP, needs="play.js")


@router.get("/static/play-worker.js")
def play_worker() -> Response:
    """The sealed seat's Web Worker (clients/ts/play/worker.ts, built with play.js), under a
    policy of its own (a worker's script brings its own: it inherits none from the page)."""
    return _installed("play-worker.js", "text/javascript; charset=utf-8", PLAY_WORKER_CSP)


@router.post("/play/tables", status_code=201)
def new_table(body: TableIn, request: Request) -> dict[str, Any]:
    """A new table: the person's seat 0 (and seat 1 for a friend), house bots elsewhere."""
    why = refused_because(request, request.app.state.settings)
    if why is not None:
        raise HTTPException(403, why)
    if body.game not in GAMES:
        raise HTTPException(422, f"unknown game {body.game!r}; one of: {', '.join(GAMES)}")
    deal = (body.ruleset or {}).get("deal", "seeded")
    if deal not in ("seeded", "sealed"):
        raise HTTPException(422, f"bad ruleset: deal is 'seeded' or 'sealed', not {deal!r}")
    if deal == "sealed" and body.game not in PAGE_SEALED_GAMES:
        raise HTTPException(
            422,
            f"the web table does not deal sealed {body.game} yet: a sealed table here is one "
            f"of {', '.join(PAGE_SEALED_GAMES)}",
        )
    try:
        cls = engine_class(body.game)
        # the deal is the service's, not the engine's: the seats are counted without it
        rules = {k: v for k, v in (body.ruleset or {}).items() if k != "deal"}
        n = cls.seat_count(cls.parse_ruleset(rules))
    except (ValueError, TypeError, KeyError) as exc:
        raise HTTPException(422, f"bad ruleset: {exc}") from exc
    people = 2 if body.friend and n > 1 else 1
    if deal == "sealed" and people < 2 and full_deal(body.game, n):
        # one person among house seats with the whole deck dealt: the operator, who makes
        # the house seats' keys, could work out the person's hand (sealed.limits)
        raise HTTPException(
            422,
            f"a sealed {body.game} table for {n} with one person and house seats would not "
            "protect your hand: the whole deck is dealt, so the operator, who plays the house "
            "seats, can work it out; leave a seat for a friend, or pick a table that leaves "
            "stock undealt (hokm for two, Iraqi dominoes for two)",
        )
    house = [i >= people for i in range(n)]
    names = [("You" if i == 0 else "Friend" if i < people else f"House {i}") for i in range(n)]
    created = _lobby(request).open_table(request, body.game, body.ruleset, names, house)
    return {
        "match_id": created["match_id"],
        "game": created["game"],
        "ruleset": created["ruleset"],
        "people": [
            {"seat": s["seat"], "token": s["token"]} for s in created["seats"] if not s["house"]
        ],
    }
