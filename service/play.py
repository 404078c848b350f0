"""The web table at ``/play`` (issue 32) and its built-in lobby.

``GET /play`` serves qahwa_page/static/play.html, whose script (``/static/play.js``, built
from clients/ts/play/ by ``make play-js`` and committed) plays one person's seat through the
TypeScript conforming client. ``POST /play/tables`` is the built-in lobby: it creates a match
with the operator's authority, the person's seat (and a friend's, when asked) open and every
other seat a house seat, played by service/house.py's bots in this process. It is for trying
qahwa (docs/play.md): in production the operator's own backend creates tables and runs
``qahwa house``. ``QAHWA_PLAY_LOBBY=0`` turns the built-in lobby off.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from games.registry import engine_class
from qahwa_wire.models import GAMES

from .settings import STATIC_DIR

if TYPE_CHECKING:
    from .house import House

router = APIRouter(include_in_schema=False)

#: the play page's policy: its own script, the verify page in a frame, nothing else
PLAY_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; "
    "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'"
)


class TableIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str = Field(max_length=32)
    ruleset: dict[str, Any] | None = None
    friend: bool = False


_lock = threading.Lock()


def _house(request: Request) -> House:
    """This process's house bots, playing against the server's own listening address."""
    app = request.app
    with _lock:
        house: House | None = getattr(app.state, "play_house", None)
        if house is None:
            # the bots are clients (qahwa_client): loaded with the first table, so serving
            # the app alone never loads the client (tests/repo/test_layering.py)
            from .house import House

            server = request.scope.get("server") or ("127.0.0.1", 8000)
            host, port = str(server[0]), int(server[1])
            if host in ("0.0.0.0", "::", ""):
                host = "127.0.0.1"
            if ":" in host:
                host = f"[{host}]"
            house = House(f"http://{host}:{port}")
            app.state.play_house = house
        return house


@router.get("/play")
def play_page() -> Response:
    page = STATIC_DIR / "play.html"
    if not page.is_file() or not (STATIC_DIR / "play.js").is_file():
        raise HTTPException(404, "the web table is not installed on this server")
    return Response(
        page.read_bytes(),
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": PLAY_CSP, "Cache-Control": "no-cache"},
    )


@router.post("/play/tables", status_code=201)
def new_table(body: TableIn, request: Request) -> dict[str, Any]:
    """A new table: the person's seat 0 (and seat 1 for a friend), house bots elsewhere."""
    if os.environ.get("QAHWA_PLAY_LOBBY", "1") == "0":
        raise HTTPException(404, "the built-in lobby is off on this server (QAHWA_PLAY_LOBBY=0)")
    if body.game not in GAMES:
        raise HTTPException(422, f"unknown game {body.game!r}; one of: {', '.join(GAMES)}")
    if (body.ruleset or {}).get("deal", "seeded") != "seeded":
        # its house bots would run in this process, beside the keys of the server: a sealed
        # table's house seats are played by `qahwa house` (docs/api.md, sealed tables)
        raise HTTPException(
            422,
            "the built-in lobby seats only seeded tables for now: create a sealed table "
            '({"deal": "sealed"}) with POST /v1/matches and play its house seats with '
            "`qahwa house`",
        )
    try:
        cls = engine_class(body.game)
        n = cls.seat_count(cls.parse_ruleset(body.ruleset or {}))
    except (ValueError, TypeError, KeyError) as exc:
        raise HTTPException(422, f"bad ruleset: {exc}") from exc
    people = 2 if body.friend and n > 1 else 1
    house = [i >= people for i in range(n)]
    names = [("You" if i == 0 else "Friend" if i < people else f"House {i}") for i in range(n)]
    created = request.app.state.service.create_match(
        body.game, ruleset=body.ruleset, names=names, house=house
    )
    bots = _house(request)
    for s in created["seats"]:
        if s["house"]:
            bots.start_seat(created["match_id"], int(s["seat"]), s["token"])
    return {
        "match_id": created["match_id"],
        "game": created["game"],
        "ruleset": created["ruleset"],
        "people": [
            {"seat": s["seat"], "token": s["token"]} for s in created["seats"] if not s["house"]
        ],
    }


def install(app: FastAPI) -> None:
    app.include_router(router)
