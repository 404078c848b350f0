"""Draws in human form: dice faces, dealt hands with suit symbols, domino tiles."""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

from fairness import format_time_ms
from fairness.protocol import known_protocol
from games.cards import SUIT_SYMBOLS, sort_hand
from games.deals import (
    cut_deck,
    deal_tiles,
    first_ace_index,
    hokm_deal,
    qahve_deal,
    shelem_layout,
)
from games.errors import ReplayError
from games.iraqi_domino import HAND as IRAQI_HAND
from games.mexican_train import hand_size as train_hand_size

DIE_FACES = "⚀⚁⚂⚃⚄⚅"
CARD_GAMES = ("hokm", "qahve", "shelem")
BOARD_GAMES = ("tawla", "mahbusa")
_HAND = re.compile(r"^h(\d+)/shuffle$")
_ROUND = re.compile(r"^r(\d+)/shuffle$")
_OPENING = re.compile(r"^g(\d+)/opening/(\d+)(?:\|[0-9a-f]{64})?$")
_CUT = re.compile(r"^h(\d+)/cut$")
_ROLL = re.compile(r"^g(\d+)/roll/(\d+)(?:\|(.*))?$")


def is_int(v: Any) -> TypeGuard[int]:
    """A JSON integer (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool)


def when(us: int) -> str:
    """Microseconds since the epoch as §1's time with milliseconds (and microseconds, when
    it has them), for messages."""
    text = format_time_ms(us)
    return text if us % 1000 == 0 else text[:-1] + f"{us % 1000:03d}Z"


def short(value: Any, limit: int = 90) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, type-strictly (``3``, ``3.0`` and ``true`` all differ)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _type_note(a: Any, b: Any) -> str:
    return (
        " (the same value as another JSON type: ints only, no floats, no true/false)"
        if a == b
        else ""
    )


#: the transcript field a failure's ``expected``/``found`` stand for, by check
_ROOTS = {"result": "result", "chain": "chain", "commitment": "commitment"}
#: ``differences`` of a value that is not there (a key one side lacks)
ABSENT = {"absent": True}


def _whole(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def differences(expected: Any, found: Any, root: str) -> list[dict[str, Any]]:
    """Where ``found`` differs from ``expected``, field by field: ``[{"path", "expected",
    "found"}]`` at the deepest path that differs (objects by key, lists of one length that
    hold objects or lists by index; a list of plain values is one value), both values whole; a key one side lacks is :data:`ABSENT` there. Values equal
    as Python but not as JSON types (``1``, ``1.0``, ``true``) differ."""
    if _same(expected, found):
        return []
    if isinstance(expected, dict) and isinstance(found, dict):
        out: list[dict[str, Any]] = []
        for k in [*expected, *(k for k in found if k not in expected)]:
            out += differences(expected.get(k, ABSENT), found.get(k, ABSENT), f"{root}.{k}")
        return out
    if (
        isinstance(expected, list)
        and isinstance(found, list)
        and len(expected) == len(found)
        and any(isinstance(x, dict | list) for x in [*expected, *found])
    ):
        out = []
        for i, (a, b) in enumerate(zip(expected, found, strict=True)):
            out += differences(a, b, f"{root}[{i}]")
        return out
    return [{"path": root, "expected": expected, "found": found}]


def failure_root(failure: dict[str, Any]) -> str:
    """The name a failure's differences start from: the transcript field it checked
    (``result``, ``chain``, …), ``events[seq]`` for an event, else the check's name."""
    check = str(failure.get("check"))
    if check in _ROOTS:
        return _ROOTS[check]
    seq = failure.get("seq")
    if isinstance(seq, int) and check in ("replay", "chance", "fresh rolls"):
        return f"events[{seq}]"
    return check


def with_differences(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``failures`` with ``differences`` (:func:`differences`) where they carry values."""
    out = []
    for f in failures:
        if f.get("expected") is None and f.get("found") is None:
            out.append(f)
        else:
            root = failure_root(f)
            diffs = differences(f.get("expected"), f.get("found"), root) or [
                {"path": root, "expected": f.get("expected"), "found": f.get("found")}
            ]
            out.append({**f, "differences": diffs})
    return out


def difference_line(d: dict[str, Any]) -> str:
    """``result.winners: expected [1], found [0]``: the path and both values whole."""
    e = "(absent)" if d["expected"] == ABSENT else _whole(d["expected"])
    f = "(absent)" if d["found"] == ABSENT else _whole(d["found"])
    return f"{d['path']}: expected {e}, found {f}{_type_note(d['expected'], d['found'])}"


def first_difference(expected: Any, found: Any) -> str:
    """Where two chance results differ, in words."""
    if isinstance(expected, list) and isinstance(found, list):
        for i, (a, b) in enumerate(zip(expected, found, strict=False)):
            if not _same(a, b):
                return (
                    f"first difference at position {i}: expected {short(a)}, found "
                    f"{short(b)}{_type_note(a, b)}"
                )
        return f"expected {len(expected)} items, found {len(found)}"
    return f"expected {short(expected)}, found {short(found)}{_type_note(expected, found)}"


def dice_text(result: list[int], sides: int) -> str:
    if sides == 6 and all(isinstance(d, int) and 1 <= d <= 6 for d in result):
        return " ".join(DIE_FACES[d - 1] for d in result) + f"  ({'-'.join(map(str, result))})"
    return ", ".join(map(str, result)) + f"  (d{sides})"


def card_text(code: Any) -> str:
    if code == "JB":
        return "🃏black"
    if code == "JR":
        return "🃏red"
    if isinstance(code, str) and len(code) == 2 and code[1] in SUIT_SYMBOLS:
        rank = "10" if code[0] == "T" else code[0]
        return rank + SUIT_SYMBOLS[code[1]]
    return str(code)


def cards_text(codes: list[Any], *, sort: bool = True) -> str:
    try:
        ordered = sort_hand(codes) if sort else list(codes)
    except (ValueError, IndexError):
        ordered = list(codes)
    return " ".join(card_text(c) for c in ordered)


def tile_text(code: Any) -> str:
    if isinstance(code, str) and "-" in code:
        a, b = code.split("-", 1)
        return f"[{a}|{b}]"
    return str(code)


def tiles_text(codes: list[Any]) -> str:
    return " ".join(tile_text(c) for c in codes)


def board_text(view: dict[str, Any]) -> str:
    """A tawla or mahbusa board in seat 0's numbering: ``p:n`` for seat 0's checkers on its
    point p, ``p:-n`` for seat 1's; a prisoner as ``(+1)`` / ``(-1)`` after its point."""
    points = view.get("points") or []
    prisoners = view.get("prisoners") or [0] * len(points)
    cells = []
    for i, n in enumerate(points):
        held = prisoners[i] if i < len(prisoners) else 0
        if n or held:
            cells.append(f"{i + 1}:{n:+d}" + (f"({held:+d})" if held else ""))
    off = view.get("off") or [0, 0]
    bar = view.get("bar") or [0, 0]
    return (
        (" ".join(cells) or "empty")
        + f"; off {off[0]}-{off[1]}"
        + (f"; bar {bar[0]}-{bar[1]}" if any(bar) else "")
    )


def seat_names(doc: dict[str, Any]) -> dict[int, Any]:
    seats = doc.get("seats")
    return {
        s["seat"]: s.get("name")
        for s in (seats if isinstance(seats, list) else [])
        if isinstance(s, dict) and isinstance(s.get("seat"), int)
    }


class DrawContext:
    """Collects the chance events of a replay with what is needed to show them."""

    def __init__(
        self, doc: dict[str, Any], computed: dict[int, tuple[Any, bool]] | None = None
    ) -> None:
        """``computed``: a map where :meth:`observe` notes each chance event's result as
        recomputed, by its seq (the replay calls it only for an event it has checked)."""
        self.doc = doc
        self.computed = computed
        self.game = doc.get("game")
        try:
            rs = json.loads(doc.get("ruleset") or "{}")
            self.ruleset: dict[str, Any] = rs if isinstance(rs, dict) else {}
        except ValueError:
            self.ruleset = {}
        self.names = seat_names(doc)
        self.n = len(self.names)
        self.entries: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.last_actor: int | None = None
        self.total = 0
        self._cards = self.game in CARD_GAMES
        self._board_game = self.game in BOARD_GAMES
        #: board games: the games ended so far, and the board the last action left
        #: (points, off, bar, prisoners or None), copied as _note_game_end says
        self._games_seen = 0
        self._before: tuple[list[Any], list[Any], list[Any], list[Any] | None] | None = None
        #: a sealed match (qahwa-fair/3): the hand being dealt (the engine's own object, kept
        #: until its line is written), each item's opening (item → seq, seat, what opened it)
        #: and the seq of the last event seen
        self._sealed: Any = None
        self._opened_at: dict[int, tuple[Any, Any, str]] = {}
        self._last_seq: Any = None
        #: the sealed hands' lines written (they count among the draws shown)
        self.sealed_total = 0

    def seat(self, s: Any) -> str:
        name = self.names.get(s) if isinstance(s, int) else None
        return f"seat {s} ({name})" if name else f"seat {s}"

    def observe(self, ev: dict[str, Any], engine: Any) -> None:
        """Note one replayed event; ``engine`` is the engine as that event left it."""
        etype = ev.get("type")
        if engine.proto.sealed:
            self._note_sealed(ev, engine)
        if etype == "chance":
            self.total += 1
            info: dict[str, Any] = {"actor": self.last_actor}
            if self._cards and _HAND.match(str(ev.get("label", ""))):
                info.update(self.seat_roles(engine))
            self.entries.append((ev, info))
            computed = self.computed
            if computed is not None:
                seq = ev.get("seq")
                if isinstance(seq, int):
                    computed[seq] = (ev.get("result"), True)  # = its recomputation
        elif etype == "action":
            self.last_actor = ev.get("seat")
            if self._board_game:
                self._note_game_end(ev, engine)
            elif self.game == "shelem":
                self._note_reveal(ev, engine)

    def seat_roles(self, engine: Any) -> dict[str, int]:
        """The ``dealer`` and ``hakem`` the engine's view shows now, read from the engine's
        own fields of those names (each card game's view shows them as they are) instead of
        building its whole view."""
        return {k: v for k in ("dealer", "hakem") if is_int(v := getattr(engine, k, None))}

    def _note_reveal(self, ev: dict[str, Any], engine: Any) -> None:
        """Two-player shelem: the moment the six pile tops turn up (after the other player
        answered the hakem's first lead), as a line among the draws."""
        # Most actions turn nothing up: settle those from the engine's own fields, without
        # building its whole view (the view shows the same fields).
        revealed = getattr(engine, "revealed", None)
        if (
            getattr(engine, "n", 2) != 2
            or revealed is False
            or (
                revealed is True
                and getattr(engine, "hand_number", None) == getattr(self, "_revealed", None)
            )
        ):
            return
        try:
            view = engine.view(None)
        except Exception:  # the display must never break a verification
            return
        hand = view.get("hand_number")
        if not view.get("piles_revealed") or hand == getattr(self, "_revealed", None):
            return
        self._revealed = hand
        self._reveal_line(ev, hand, view)

    def _reveal_line(self, ev: dict[str, Any], hand: Any, view: dict[str, Any]) -> None:
        """Shelem's pile tops, turned up in hand ``hand``, as a line among the draws."""
        tops = []
        for s, piles in enumerate(view.get("piles") or []):
            shown = " ".join(card_text(p.get("top")) for p in piles if p.get("top"))
            tops.append(f"{self.seat(s)} {shown}")
        text = f"hand {hand}: the pile tops turn up: " + "; ".join(tops)
        self.entries.append(
            ({"seq": ev.get("seq"), "label": f"h{hand}/reveal", "kind": "reveal"}, {"text": text})
        )

    def _note_game_end(self, ev: dict[str, Any], engine: Any) -> None:
        """Tawla and mahbusa: each game's end, with the last move and the board it was
        played on (mahbusa: its prisoners too), as a line among the draws. (The engine has
        set up the next game by then, so the board shown is the one before that move.)

        The board an action left (the fields of the engine's view that ``board_text``
        shows) is copied after a move, after a game ends (the next game's board is set up)
        and after the first action: no other action moves a checker, so between those the
        last copy is the board. The text is made only when a game ends."""
        raw = ev.get("action")
        act: dict[str, Any] = raw if isinstance(raw, dict) else {}
        before = self._before
        try:
            games = engine.games
            ended = isinstance(games, list) and len(games) > self._games_seen
            if before is None or ended or act.get("type") == "move":
                # (read from the instance's own fields: a getattr that misses costs an
                # exception inside, and tawla has no prisoners)
                fields = vars(engine)
                held = fields.get("prisoners")
                self._before = (
                    list(engine.points),
                    list(engine.off),
                    list(engine.bar),
                    None if held is None else list(held),
                )
        except (AttributeError, TypeError):  # the display must never break a verification
            return
        if not ended:
            return
        self._games_seen = len(games)
        shown = ""
        if before is not None:  # (no prisoners, as tawla's: board_text shows none)
            points, off, bar, held = before
            shown = board_text({"points": points, "off": off, "bar": bar, "prisoners": held})
        self._game_end_line(ev, games[-1], act, shown)

    def _game_end_line(
        self, ev: dict[str, Any], g: dict[str, Any], act: dict[str, Any], shown: str
    ) -> None:
        """Game ``g``'s end (the last of the engine's ``games``), ended by ``act``, played
        on the board ``shown``, as a line among the draws."""
        who = "nobody (a drawn game)" if g.get("winner") is None else self.seat(g["winner"])
        last = f"; last move {short(act.get('steps'))}" if act.get("type") == "move" else ""
        text = (
            f"game {g.get('game')} ends: {who}, {g.get('how')}, {g.get('points')} point(s)"
            f"{last}" + (f", played on {shown}" if shown and last else "")
        )
        self.entries.append(
            (
                {"seq": ev.get("seq"), "label": f"g{g.get('game')}/end", "kind": "board"},
                {"text": text},
            )
        )

    # -- a sealed match's deals ---------------------------------------------------------------
    def _note_sealed(self, ev: dict[str, Any], engine: Any) -> None:
        """A sealed match (the engines of ``games/sealed_*.py``): each item's opening as it
        happens, and each hand's line once the engine has moved on to the next hand (the
        last ``reveal_key`` of a hand opens it whole and deals the next one at once)."""
        try:
            hand = engine.sealed
            opened: dict[int, str] = hand.opened
        except AttributeError:  # the display must never break a verification
            return
        seq = ev.get("seq")
        if hand is not self._sealed:
            self.finish_sealed(seq)
            self._sealed = hand
        if len(opened) > len(self._opened_at):
            act = ev.get("action")
            kind = act.get("type") if isinstance(act, dict) else None
            what = str(act.get("step")) if kind == "sealed" and isinstance(act, dict) else kind
            for item in list(opened)[len(self._opened_at) :]:
                self._opened_at[item] = (seq, ev.get("seat"), str(what))
        self._last_seq = seq

    def finish_sealed(self, seq: Any = None) -> None:
        """Write the line of the sealed hand being dealt (at event ``seq``: by default the
        last event seen), if any: the match's last hand, or one cut short by its end."""
        hand, self._sealed = self._sealed, None
        opened_at, self._opened_at = self._opened_at, {}
        if hand is None:
            return
        at = self._last_seq if seq is None else seq
        try:
            deal = self._sealed_deal(hand, opened_at)
        except (AttributeError, TypeError, IndexError, KeyError, ValueError):
            return  # the display must never break a verification
        self.entries.append(
            (
                {"seq": at, "label": f"h{deal['hand']}/sealed", "kind": "sealed"},
                {"deal": deal},
            )
        )
        self.sealed_total += 1

    def _sealed_deal(self, hand: Any, opened_at: dict[int, tuple[Any, Any, str]]) -> dict[str, Any]:
        """A sealed hand as the report shows it: every item by the seat it was dealt to
        (codes once the hand was opened whole, else only the items opened), the items dealt
        to nobody, and each opening with the event that made it."""
        codes: list[str] | None = list(hand.codes) if hand.codes is not None else None
        items = len(hand.items)

        def code(i: int) -> str | None:
            return codes[i] if codes is not None else hand.opened.get(i)

        n = len(hand.keys)
        dealt: dict[str, list[str | None]] = {
            str(s): [code(i) for i in sorted(i for i, o in hand.owner.items() if o == s)]
            for s in range(n)
        }
        rest = [code(i) for i in range(items) if i not in hand.owner]
        return {
            "hand": hand.number,
            "whole": codes is not None,
            "revealed": [s for s, r in enumerate(hand.revealed) if r is not None],
            "dealt": dealt,
            "undealt": rest,
            "opened": [
                {"item": i, "code": c, "seat": seat, "seq": seq, "by": by}
                for i, c in hand.opened.items()
                for seq, seat, by in [opened_at.get(i, (None, None, ""))]
            ],
        }

    def sealed_text(self, deal: dict[str, Any]) -> str:
        """A sealed hand's line: who was dealt what, and when each item was opened."""
        cards = self.game in CARD_GAMES
        shown = cards_text if cards else tiles_text

        def items_text(codes: list[Any]) -> str:
            known = [c for c in codes if c is not None]
            hidden = len(codes) - len(known)
            text = shown(known) if known else ""
            if hidden:
                text += (" + " if text else "") + f"{hidden} never opened"
            return text or "(none)"

        h = deal["hand"]
        if deal["whole"]:
            head = f"hand {h}, sealed deal, opened whole with every seat's revealed key:"
        else:
            who = ", ".join(map(str, deal["revealed"])) or "none"
            head = (
                f"hand {h}, sealed deal, cut short before every key was revealed (revealed: "
                f"{who}): only the items opened in play are known"
            )
        lines = [head]
        lines += [f"  {self.seat(int(s))}: {items_text(c)}" for s, c in deal["dealt"].items()]
        if deal["undealt"]:
            lines.append(f"  dealt to nobody: {items_text(deal['undealt'])}")
        if deal["opened"]:
            shown_one = card_text if cards else tile_text
            opened = ", ".join(
                f"{shown_one(o['code'])} by {self.seat(o['seat'])} at #{o['seq']} ({o['by']})"
                for o in deal["opened"]
            )
            lines.append(f"  opened: {opened}")
        return "\n".join(lines)

    def lines(self, limit: int | None) -> list[dict[str, Any]]:
        self.finish_sealed()
        chosen = self.entries if limit is None else self.entries[:limit]
        out = []
        for ev, info in chosen:
            try:
                text = self.text(ev, info)
            except Exception:
                text = short(ev.get("result"))
            line = {**{k: ev.get(k) for k in ("seq", "label", "kind")}, "text": text}
            if ev.get("kind") == "sealed":
                line["sealed"] = info["deal"]
            out.append(line)
        return out

    # -- one draw --------------------------------------------------------------------------
    def text(self, ev: dict[str, Any], info: dict[str, Any]) -> str:
        kind, label = ev.get("kind"), str(ev.get("label"))
        if kind in ("reveal", "board"):
            return str(info["text"])
        if kind == "sealed":
            return self.sealed_text(info["deal"])
        result: Any = ev.get("result")
        if kind == "dice":
            faces = dice_text(result, (ev.get("args") or {}).get("sides", 6))
            m = _OPENING.match(label)
            if m and self.game in BOARD_GAMES and len(result) == 2:
                a, b = result
                then = "equal, roll again" if a == b else f"{self.seat(0 if a > b else 1)} starts"
                return (
                    f"game {m.group(1)} opening roll {m.group(2)}: {self.seat(0)} "
                    f"{DIE_FACES[a - 1]} {a}, {self.seat(1)} {DIE_FACES[b - 1]} {b} → {then}"
                )
            m = _ROLL.match(label)
            if m and self.game in BOARD_GAMES:
                extra = ""
                if m.group(3):
                    extra = known_protocol(self.doc).roll_entropy.format(m.group(3))
                who = self.seat(info["actor"]) if info["actor"] is not None else "?"
                return f"game {m.group(1)} roll {m.group(2)} for {who}: {faces}{extra}"
            return f"{label}: {faces}"
        if kind == "uniform":
            n = (ev.get("args") or {}).get("n")
            if label == "dealer":
                return f"first dealer: {self.seat(result)}"
            m = _CUT.match(label)
            if m and isinstance(result, int):
                return f"hand {m.group(1)} cut drawn: k = {result + 1}"
            return f"{label}: {result} (of 0…{n - 1 if isinstance(n, int) else '?'})"
        if kind == "shuffle" and isinstance(result, list):
            return self.shuffle_text(ev, label, result, info)
        return f"{label}: {short(result)}"

    def shuffle_text(
        self, ev: dict[str, Any], label: str, result: list[Any], info: dict[str, Any]
    ) -> str:
        if label == "hakem" and self.game == "hokm":
            try:
                i = first_ace_index(result)
            except (ValueError, TypeError, IndexError):
                return f"hakem deal: {cards_text(result, sort=False)}"
            shown = " ".join(card_text(c) for c in result[: i + 1])
            who = self.seat(i % (self.n or 4))
            return f"first hakem: {who} (face up: {shown}, the first ace to {who})"
        m = _HAND.match(label)
        if m and self.game in CARD_GAMES:
            return self.card_deal(int(m.group(1)), ev, result, info)
        m = _ROUND.match(label)
        if m and self.game in ("iraqi_domino", "mexican_train"):
            h = IRAQI_HAND if self.game == "iraqi_domino" else train_hand_size(self.n)
            hands, rest = deal_tiles(result, self.n, h)
            lines = [f"round {m.group(1)}, tiles dealt:"]
            lines += [f"  {self.seat(s)}: {tiles_text(t)}" for s, t in enumerate(hands)]
            pile = "boneyard" if self.game == "mexican_train" else "draw pile"
            lines.append(f"  {pile} ({len(rest)}): {tiles_text(rest) or '(empty)'}")
            return "\n".join(lines)
        if all(isinstance(x, int) for x in result):
            body = " ".join(map(str, result[:30])) + (" …" if len(result) > 30 else "")
            return f"{label}: shuffle of 0…{len(result) - 1}: {body}"
        if all(isinstance(x, str) and "-" in x for x in result):
            return f"{label}: {tiles_text(result)}"
        return f"{label}: {cards_text(result, sort=False)}"

    def _cut_for(self, seq: Any) -> tuple[int | None, bool]:
        """The cut k of the hand whose shuffle is event ``seq`` and whether it was tapped
        (hokm with ``cut``): the first cut or tap action after that shuffle."""
        events = self.doc.get("events", [])
        if not isinstance(seq, int):
            return None, False
        for e in events[seq + 1 :]:
            if not isinstance(e, dict):
                continue
            if e.get("type") == "chance" and _HAND.match(str(e.get("label"))):
                break
            if (
                e.get("type") == "chance"
                and _CUT.match(str(e.get("label")))
                and isinstance(e.get("result"), int)
            ):
                return int(e["result"]) + 1, False  # qahwa-fair/2: k = 1 + u, drawn
            act = e.get("action")
            if isinstance(act, dict) and act.get("type") == "tap":
                return None, True
            if isinstance(act, dict) and act.get("type") == "cut" and isinstance(act.get("k"), int):
                return int(act["k"]), False
        return None, False

    def card_deal(self, h: int, ev: dict[str, Any], deck: list[Any], info: dict[str, Any]) -> str:
        """A hand's shuffle as the deal it became, through the engines' own deal functions
        (``games.deals``): nothing about a deal is derived here."""
        n = self.n or 4
        start = info.get("hakem" if self.game == "hokm" else "dealer")
        if start is None:
            return f"hand {h}: {cards_text(deck, sort=False)}"
        who = f"dealer {self.seat(start)}"
        extra: list[tuple[str, list[Any]]] = []
        if self.game == "shelem":
            layout = shelem_layout(deck, start, n)
            hands = dict(enumerate(layout.hands))
            for s, piles in enumerate(layout.piles):
                if piles:
                    shown = " | ".join(cards_text(p, sort=False) for p in piles)
                    extra.append(
                        (
                            f"{self.seat(s)} piles (face down until the other player "
                            f"answers the first lead; top last): {shown}",
                            [],
                        )
                    )
            extra.append(("kitty", layout.kitty))
        elif self.game == "hokm":
            who = f"hakem {self.seat(start)}"
            if self.ruleset.get("cut", True):
                k, tapped = self._cut_for(ev.get("seq"))
                if k is not None and 1 <= k < len(deck):
                    deck = cut_deck(deck, k)
                    who += f", cut at {k}"
                elif tapped:
                    who += ", tapped (dealt uncut)"
            deal = hokm_deal(deck, start, n)
            hands = {s: deal.full(s) for s in range(n)}
            if deal.stock:
                extra.append((f"stock ({len(deal.stock)}, top first)", deal.stock))
        else:
            hands = dict(enumerate(qahve_deal(deck, start)))
        lines = [f"hand {h}, {who}:"]
        lines += [f"  {self.seat(s)}: {cards_text(hands[s])}" for s in sorted(hands)]
        for name, cards in extra:
            lines.append(f"  {name}" + (f": {cards_text(cards, sort=False)}" if cards else ""))
        return "\n".join(lines)


def result_text(result: dict[str, Any], doc: dict[str, Any]) -> str:
    names = seat_names(doc)
    winners = result.get("winners") or []
    who = (
        ", ".join(f"seat {w} ({names.get(w)})" if names.get(w) else f"seat {w}" for w in winners)
        or "nobody"
    )
    scores = result.get("scores") or []
    score = "–".join(map(str, scores))
    return f"result reached: {result.get('reason')}, won by {who}" + (
        f", scores {score}" if scores else ""
    )


def describe_replay_error(exc: ReplayError, events: list[Any]) -> str:
    """A replay failure as one line naming the event, from the error's ``kind`` and fields
    (never by parsing its message)."""
    seq = exc.seq
    msg = str(exc)
    if seq is not None:
        msg = msg.removeprefix(f"event {seq}: ")
    if exc.kind == "seq" and is_int(seq) and 0 <= seq < len(events):
        ev = events[seq]
        got = ev.get("seq") if isinstance(ev, dict) else None
        if is_int(got) and got > seq:
            n = got - seq
            missing = f"event {seq}" if n == 1 else f"events {seq}-{seq + n - 1}"
            return f"{missing} missing (the next event has seq {got})"
    if exc.kind == "truncated":
        return msg
    if seq is not None and 0 <= seq < len(events) and isinstance(events[seq], dict):
        ev = events[seq]
        if ev.get("type") == "chance":
            what = f"chance event {seq} ({ev.get('kind')} {ev.get('label')!r})"
        elif ev.get("type") == "action":
            act = ev.get("action")
            atype = act.get("type") if isinstance(act, dict) else act
            what = f"event {seq} (action {atype!r} by seat {ev.get('seat')})"
        else:
            what = f"event {seq} ({ev.get('type')})"
        if exc.kind == "chance" and isinstance(exc.expected, dict) and isinstance(exc.found, dict):
            if exc.expected.get("label") == exc.found.get("label"):
                return (
                    f"{what}: the result differs from its recomputation from the seeds "
                    f"({first_difference(exc.expected.get('result'), exc.found.get('result'))})"
                )
            return (
                f"{what}: the rules draw {exc.expected.get('kind')} "
                f"{exc.expected.get('label')!r} here"
            )
        return f"{what}: {msg}"
    return msg
