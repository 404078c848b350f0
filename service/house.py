"""House bots: the seats an operator declares as its own (``"house": true``), played by
conforming clients (``qahwa_client``, fairness-v2.md §3a) — each checks the commit record and
the lock before it reveals, signs its actions, keeps its receipts — so a table of one person
and bots can be played. ``qahwa house`` runs them beside the service; the built-in ``/play``
lobby runs them in the server's own process.

The bots play legal moves, better than random where it is cheap (:func:`choose`): in tawla
and mahbusa a move that hits (pins) and leaves fewest blots, never doubling, always taking;
in the trick games the cheapest card that wins the trick unless the partner is winning it,
else the cheapest card; in the domino games the heaviest tile.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairness import SecretBox
from qahwa_client import Client
from qahwa_client.client import Seat

log = logging.getLogger("qahwa.house")

RANKS = "23456789TJQKA"
NEVER = {"double", "resign_offer", "resign"}


# -- choosing ------------------------------------------------------------------------------


def _board_score(view: Mapping[str, Any], steps: Sequence[Sequence[int]]) -> float:
    """Hits (pins) and the blots left, after ``steps`` (the mover's own numbering)."""
    seat = int(view.get("seat", 0))
    points = [int(p) for p in view.get("points", [0] * 24)]
    sign = 1 if seat == 0 else -1
    mine = [sign * p for p in points]  # + this seat's checkers, - the opponent's

    def idx(p: int) -> int:
        return p - 1 if seat == 0 else 24 - p

    hits = 0
    off = 0
    for step in steps:
        a, b = int(step[0]), int(step[1])
        if 1 <= a <= 24:
            mine[idx(a)] -= 1
        if b == 0:
            off += 1
            continue
        if 1 <= b <= 24:
            i = idx(b)
            if mine[i] == -1:
                hits += 1
                mine[i] = 0
            mine[i] += 1
    blots = sum(1 for m in mine if m == 1)
    made = sum(1 for m in mine if m >= 2)
    return 4.0 * hits - 1.5 * blots + 0.5 * made + 1.0 * off


def _card_value(card: str, lead: str | None, trump: str | None) -> int:
    rank, suit = card[:-1], card[-1]
    r = RANKS.index(rank) if rank in RANKS else len(RANKS)  # jokers: above the aces
    if suit == trump:
        return 200 + r
    if lead is None or suit == lead:
        return 100 + r
    return r


def _choose_card(view: Mapping[str, Any], plays: list[dict[str, Any]]) -> dict[str, Any]:
    trick = [t for t in view.get("trick") or [] if isinstance(t, Mapping)]
    trump = view.get("trump") if isinstance(view.get("trump"), str) else None
    seat = int(view.get("seat", 0))
    n = len(view.get("hand_sizes") or []) or 4
    if not trick:  # lead the strongest card that is not a trump, else the strongest
        non_trump = [p for p in plays if str(p["card"])[-1] != trump]
        pool = non_trump or plays
        return max(pool, key=lambda p: _card_value(str(p["card"]), None, None))
    lead = str(trick[0].get("card", "??"))[-1]
    best = max(trick, key=lambda t: _card_value(str(t.get("card")), lead, trump))
    best_value = _card_value(str(best.get("card")), lead, trump)
    partner = (seat + 2) % n if n == 4 else None
    cheapest = min(plays, key=lambda p: _card_value(str(p["card"]), lead, trump))
    if partner is not None and best.get("seat") == partner:
        return cheapest
    winners = [p for p in plays if _card_value(str(p["card"]), lead, trump) > best_value]
    if winners:
        return min(winners, key=lambda p: _card_value(str(p["card"]), lead, trump))
    return cheapest


def _pips(tile: str) -> int:
    try:
        a, b = tile.split("-")
        return int(a) + int(b)
    except ValueError:
        return 0


def choose(view: Mapping[str, Any], rng: random.Random | None = None) -> dict[str, Any]:
    """One of the view's ``legal_actions`` (never anything else)."""
    legal = [dict(a) for a in view.get("legal_actions") or []]
    if not legal:
        raise ValueError("no legal action to choose from")
    rng = rng or random.Random()
    kinds = {a.get("type") for a in legal}
    for wanted in ("take", "accept", "roll", "roll_value"):
        if wanted in kinds:
            return next(a for a in legal if a.get("type") == wanted)
    moves = [a for a in legal if a.get("type") == "move"]
    if moves:
        return max(moves, key=lambda a: (_board_score(view, a.get("steps") or []), rng.random()))
    plays = [a for a in legal if a.get("type") == "play"]
    if plays and all("card" in a for a in plays):
        return _choose_card(view, plays)
    if plays and all("tile" in a for a in plays):
        return max(plays, key=lambda a: (_pips(str(a["tile"])), rng.random()))
    if "trump" in kinds:
        hand = [str(c) for c in view.get("hand") or []]
        counts = {s: sum(1 for c in hand if c.endswith(s)) for s in "CDHS"}
        trumps = [a for a in legal if a.get("type") == "trump"]
        return max(trumps, key=lambda a: counts.get(str(a.get("suit")), 0))
    calm = [a for a in legal if a.get("type") not in NEVER]
    suggested = [dict(a) for a in view.get("suggested_actions") or [] if a in calm]
    return rng.choice(suggested or calm or legal)


# -- sealed tables: the house seats' keys ---------------------------------------------------
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SealedKeyDir:
    """The house seats' per-hand keys of sealed tables (qahwa-fair/3), one file a key in
    ``path``, each sealed under the operator's master key (AES-256-GCM, bound to its match,
    seat and hand), so a house bot that restarts goes on with its hand. They open only the
    house seats' own items (what the operator is entitled to see); no other seat's key is
    ever here, nor anywhere on the server."""

    def __init__(self, path: Path, box: SecretBox) -> None:
        self.path = path
        self.box = box
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)

    def _file(self, match_id: str, seat: int, hand: int) -> Path:
        if not _NAME.fullmatch(match_id):
            raise ValueError(f"not a match id: {match_id!r}")
        return self.path / f"{match_id}.{int(seat)}.{int(hand)}.key"

    @staticmethod
    def _aad(match_id: str, seat: int, hand: int) -> str:
        return f"qahwa sealed house key {match_id} {seat} {hand}"

    def put(self, match_id: str, seat: int, hand: int, secret: bytes) -> None:
        f = self._file(match_id, seat, hand)
        tmp = f.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(self.box.seal(secret, aad=self._aad(match_id, seat, hand)) + "\n")
        tmp.replace(f)

    def get(self, match_id: str, seat: int, hand: int) -> bytes | None:
        f = self._file(match_id, seat, hand)
        if not f.exists():
            return None
        return self.box.open(f.read_text(encoding="ascii").strip(), self._aad(match_id, seat, hand))


# -- playing ---------------------------------------------------------------------------------


class Table:
    """What the house seats of one match in this process learnt of it, shared: the newest
    ``(version, status, turn)`` any of them read (a view, or its action's answer). One of
    them at a time waits on the match's events for the others (:meth:`wait`); a seat reads
    its own view only when the table says the turn has passed to it (its deal step or its
    play) or the match's status changed, not at every event."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.news: tuple[int, str, int | None] = (-1, "", None)
        self.after = -1  # the events seen by the seat that waits for the table
        self.polling = False

    def tell(self, view: Any) -> None:
        """A view some house seat read (or took from its action's answer)."""
        with self.cond:
            if view.version > self.news[0]:
                self.news = (view.version, view.status, view.turn)
                self.cond.notify_all()

    def wait(self, seen: int, poll: Any, timeout: float = 1.0) -> None:
        """Until the table knows of a version newer than ``seen``: one waiting seat polls
        the match's events (``poll()``, telling the table what it read) while the others
        wait for it; returns after ``timeout`` seconds without news too."""
        with self.cond:
            if self.news[0] > seen:
                return
            if self.polling:
                self.cond.wait(timeout)
                return
            self.polling = True
        try:
            poll()
        finally:
            with self.cond:
                self.polling = False
                self.cond.notify_all()


def play_seat(
    client: Client,
    match_id: str,
    seat: int,
    token: str,
    *,
    wait: float = 600.0,
    rng: random.Random | None = None,
    stop: threading.Event | None = None,
    sealed_keys: SealedKeyDir | None = None,
    table: Table | None = None,
) -> Seat:
    """Play one house seat to the end as a conforming client: commit, wait for the lock,
    check it (and its place in the log), reveal, then act whenever it is on turn. ``table``:
    what the match's other house seats in this process read, shared with them."""
    rng = rng or random.Random()
    table = table or Table()
    s = Seat(client, match_id, seat, token, sealed_keys=sealed_keys)
    s.commit()
    s.reveal(wait=wait)
    try:  # the match lasts at most its ruleset's max_seconds (default a day)
        limit = float(json.loads(client.match(match_id).ruleset).get("max_seconds", 86400))
    except (ValueError, TypeError, AttributeError):
        limit = 86400.0
    deadline = time.monotonic() + limit
    view = s.state()
    table.tell(view)

    def read() -> None:
        nonlocal view
        view = s.state()
        table.tell(view)

    def poll() -> None:  # for the table: its events, and this seat's view when they moved
        # a start draws no event in tawla: while seating, look again soon
        page = client.events(
            match_id, after=table.after, wait=20 if view.status == "playing" else 1
        )
        if page.events:
            table.after = max(table.after, int(page.events[-1]["seq"]))
        version, status, _ = table.news
        if page.version > version or page.status != status:
            read()

    while stop is None or not stop.is_set():
        if view.status == "finished":
            break
        if view.status == "playing" and view.turn == seat:
            d = view.model_dump(mode="json")
            try:
                # the answer carries this seat's next view, checked as a read one is: no read
                # of the view after its own action, and no wait for the events it logged
                view = s.act(choose(d, rng), retry_stale=True).state
                table.tell(view)
                continue
            except Exception as exc:  # the table moved on; read it again
                log.info("house seat %s/%d: %s", match_id, seat, exc)
            read()
            continue
        if time.monotonic() > deadline:
            break
        version, status, turn = table.news
        if version > view.version and (turn == seat or status != view.status):
            read()  # the turn has passed to this seat (or the match started, or ended)
            continue
        table.wait(max(version, view.version), poll)
    if s.lock is not None and s.state().status == "finished":
        s.check_transcript()
    return s


class House:
    """House seats played in threads, one per seat, against ``base_url``."""

    def __init__(
        self,
        base_url: str,
        *,
        keys: Any = None,
        seed: int | None = None,
        sealed_keys: SealedKeyDir | None = None,
    ) -> None:
        self.base_url = base_url
        self.keys = keys
        self.sealed_keys = sealed_keys
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.errors: list[str] = []
        self.done: list[tuple[str, int]] = []
        #: per match: its house seats' shared reads, and how many of them play
        self.tables: dict[str, tuple[Table, list[int]]] = {}
        self._guard = threading.Lock()

    def start_seat(self, match_id: str, seat: int, token: str) -> threading.Thread:
        rng = random.Random(self.rng.random())
        with self._guard:
            table, playing = self.tables.setdefault(match_id, (Table(), [0]))
            playing[0] += 1

        def run() -> None:
            try:
                with Client(self.base_url, keys=self.keys, timeout=60) as qc:
                    play_seat(
                        qc,
                        match_id,
                        seat,
                        token,
                        rng=rng,
                        stop=self.stop,
                        sealed_keys=self.sealed_keys,
                        table=table,
                    )
                self.done.append((match_id, seat))
            except Exception as exc:
                self.errors.append(f"{match_id}/{seat}: {type(exc).__name__}: {exc}")
                log.warning("house seat %s/%d stopped: %s", match_id, seat, exc)
            finally:
                with self._guard:
                    playing[0] -= 1
                    if not playing[0]:
                        self.tables.pop(match_id, None)

        t = threading.Thread(target=run, name=f"house-{match_id}-{seat}", daemon=True)
        t.start()
        self.threads = [x for x in self.threads if x.is_alive()] + [t]
        return t

    def close(self, timeout: float = 5.0) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=timeout)


def read_seats(path: Path) -> list[dict[str, Any]]:
    """House seats from a JSON file: ``{"match_id", "seat", "token"}`` or a list of them."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    items = doc if isinstance(doc, list) else [doc]
    out = []
    for it in items:
        if (
            not isinstance(it, dict)
            or not isinstance(it.get("match_id"), str)
            or isinstance(it.get("seat"), bool)
            or not isinstance(it.get("seat"), int)
            or not isinstance(it.get("token"), str)
        ):
            raise ValueError(f"{path}: each house seat is {{match_id, seat, token}}")
        out.append(it)
    return out


def run_inbox(
    base_url: str,
    inbox: Path,
    *,
    once: bool = False,
    poll: float = 1.0,
    keys: Any = None,
    seed: int | None = None,
    sealed_keys: SealedKeyDir | None = None,
) -> House:
    """Play every house seat the operator's backend drops into ``inbox`` as a ``*.json``
    file (moved to ``inbox/taken/`` when taken, ``inbox/bad/`` when unreadable); with
    ``once``, only those there now, waiting for their matches to end."""
    house = House(base_url, keys=keys, seed=seed, sealed_keys=sealed_keys)
    (inbox / "taken").mkdir(parents=True, exist_ok=True)
    try:
        while True:
            for f in sorted(inbox.glob("*.json")):
                try:
                    seats = read_seats(f)
                except (ValueError, OSError) as exc:
                    (inbox / "bad").mkdir(exist_ok=True)
                    f.replace(inbox / "bad" / f.name)
                    house.errors.append(f"{f.name}: {exc}")
                    log.warning("%s: %s", f.name, exc)
                    continue
                f.replace(inbox / "taken" / f.name)
                for s in seats:
                    house.start_seat(s["match_id"], int(s["seat"]), s["token"])
            if once:
                for t in list(house.threads):
                    t.join()
                return house
            time.sleep(poll)
    except KeyboardInterrupt:
        house.close()
        return house
