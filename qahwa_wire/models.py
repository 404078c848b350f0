"""The wire models of the qahwa HTTP API, shared by the server and the Python client.

The service publishes these in its OpenAPI document (``service.schemas`` re-exports them) and
``qahwa_client`` is typed with them, so a client in another language gets the same types.
Requests refuse unknown fields (``extra="forbid"``); responses keep fields added later
(``extra="allow"``), so an older client still reads a newer server. This package needs only
pydantic: it imports neither the service, nor the client, nor the engines or the verifier.

What the games send and log is typed per game and per kind in the published schema:
discriminated unions on ``type`` (actions, events, signed records), ``kind`` (chance events)
and ``game`` (seat views, public views, event pages, transcripts). Where the Python value
must stay exactly as received -- an action is sent back byte for byte, a record's signature
is checked over its canonical JSON -- the field holds the JSON as a dict while its schema is
the typed one (:class:`SchemaOf`); ``tests/client/test_wire_schema.py`` holds what the server sends
to those schemas.
"""

from __future__ import annotations

import operator
from functools import reduce
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    create_model,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

GAMES = ("iraqi_domino", "mexican_train", "qahve", "hokm", "shelem", "tawla", "mahbusa")


class Strict(BaseModel):
    """A request body: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class Wire(BaseModel):
    """A response body: fields a newer server adds are kept."""

    model_config = ConfigDict(extra="allow")


class SchemaOf:
    """Annotate a field so its JSON schema is ``tp``'s while it validates as declared.

    An action is checked by the match's own engine (so a seating match answers 409
    not_started before the action's shape is looked at, and a bad shape is 422
    malformed_action with the engine's reason); a signed record is checked over its exact
    canonical JSON; an action listed in a view is sent back exactly as listed. Those fields
    keep the JSON as received (a dict) and publish the typed schema: no validation is added
    on the server's hot path, and a client in another language still gets the types.
    """

    def __init__(self, tp: Any) -> None:
        self.tp = tp

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(TypeAdapter(self.tp).core_schema)


# -- errors -----------------------------------------------------------------------------------
class ErrorBody(BaseModel):
    code: str = Field(description="a stable machine-readable code, e.g. stale_version")
    message: str = Field(description="what went wrong, for people")


class ErrorOut(BaseModel):
    error: ErrorBody
    refusal: Refusal | None = Field(
        default=None,
        description="a 4xx answer to a seat's request (commit, reveal, action, resign): the "
        "server's signed refusal of that request (fairness-v2 §7, refusals); the seat keeps "
        "it as the request's answer",
    )


# -- actions, per game (a discriminated union on ``type`` for each game) ----------------------
class _Act(Strict):
    pass


class Roll(_Act):
    type: Literal["roll"]
    entropy: StrictStr | None = Field(
        default=None,
        description="qahwa-fair/1: live entropy mixed into the roll's label (ruleset live_entropy)",
    )
    value: StrictStr | None = Field(
        default=None,
        description="qahwa-fair/2 fresh rolls: the roller's next roll-chain value (64 hex)",
    )


class RollValue(_Act):
    type: Literal["roll_value"]
    value: StrictStr | None = Field(
        default=None,
        description="qahwa-fair/2 fresh rolls: this seat's next roll-chain "
        "value (64 hex); legal_actions list it without (the client "
        "adds it)",
    )


class Double(_Act):
    type: Literal["double"]


class Take(_Act):
    type: Literal["take"]


class Drop(_Act):
    type: Literal["drop"]


class Move(_Act):
    type: Literal["move"]
    steps: list[tuple[StrictInt, StrictInt]] = Field(
        description="[from, to] pairs in the mover's numbering (25 = bar, 0 = off)"
    )


class ResignOffer(_Act):
    type: Literal["resign"]
    points: StrictInt = Field(description="1 single, 2 gammon, 3 backgammon (times the cube)")


class Accept(_Act):
    type: Literal["accept"]


class Reject(_Act):
    type: Literal["reject"]


class Pass(_Act):
    type: Literal["pass"]


class DrawTile(_Act):
    type: Literal["draw"]


class PlayTile(_Act):
    type: Literal["play"]
    tile: StrictStr = Field(description="a tile code such as '3-5'")
    end: StrictStr | None = Field(default=None, description="the open end to play on")


class PlayTrainTile(_Act):
    type: Literal["play"]
    tile: StrictStr = Field(description="a tile code such as '3-5'")
    train: StrictInt | Literal["mexican"] = Field(
        description="a seat's train (its seat number) or the Mexican train"
    )


class PlayCard(_Act):
    type: Literal["play"]
    card: StrictStr = Field(description="a card code such as 'AS' or 'TD'")


class BidTricks(_Act):
    type: Literal["bid"]
    tricks: StrictInt


class BidPoints(_Act):
    type: Literal["bid"]
    amount: StrictInt


class Trump(_Act):
    type: Literal["trump"]
    suit: Literal["S", "H", "D", "C"]
    nars: StrictBool | None = Field(
        default=None, description="hokm with ruleset nars: play it as nars"
    )


class Cut(_Act):
    type: Literal["cut"]
    k: StrictInt | None = Field(
        default=None,
        description="qahwa-fair/1: cut the deck after k cards (1-51); "
        "qahwa-fair/2 draws k, so none is sent",
    )


class Tap(_Act):
    type: Literal["tap"]


class DrawCard(_Act):
    type: Literal["draw"]
    keep: StrictBool = Field(
        description="two-player hokm: keep the stock's top card (true) "
        "or pass it over and take the next (false)"
    )


class Discard(_Act):
    type: Literal["discard"]
    cards: list[StrictStr]


class Draw(_Act):
    """A plain session's draw, as its action event logs it (``POST /v1/rng/{id}/draws``)."""

    type: Literal["draw"]
    kind: Literal["dice", "uniform", "shuffle"]
    count: StrictInt | None = None
    sides: StrictInt | None = None
    n: StrictInt | None = None


class Close(_Act):
    """A plain session's close, as its action event logs it."""

    type: Literal["close"]


_TYPE = Field(discriminator="type")
TawlaAction = Annotated[
    Roll | RollValue | Double | Take | Drop | Move | ResignOffer | Accept | Reject, _TYPE
]
IraqiDominoAction = Annotated[PlayTile | DrawTile | Pass, _TYPE]
MexicanTrainAction = Annotated[PlayTrainTile | DrawTile | Pass, _TYPE]
QahveAction = Annotated[BidTricks | PlayCard, _TYPE]
HokmAction = Annotated[Cut | Tap | Trump | DrawCard | Discard | PlayCard, _TYPE]
MahbusaAction = TawlaAction
ShelemAction = Annotated[BidPoints | Pass | Discard | PlayCard, _TYPE]
RngAction = Annotated[Draw | Close, _TYPE]

ACTIONS: dict[str, Any] = {
    "tawla": TawlaAction,
    "iraqi_domino": IraqiDominoAction,
    "mexican_train": MexicanTrainAction,
    "qahve": QahveAction,
    "hokm": HokmAction,
    "shelem": ShelemAction,
    "mahbusa": MahbusaAction,
}

# One of the games' actions. The server checks the action against the match's own game (and
# its rules); this schema tells a client the shapes it can send.
AnyAction = Annotated[
    TawlaAction | IraqiDominoAction | MexicanTrainAction | QahveAction | HokmAction | ShelemAction,
    Field(description="one of the seat's legal_actions, exactly as listed"),
]


# -- signed records (fairness-v1 §3, fairness-v2 §1, §3, §7, §8) -------------------------------
Status = Literal["seating", "playing", "finished"]


class Signature(Wire):
    alg: Literal["ed25519"]
    key_id: str
    value: str


class RecordSeat(Wire):
    seat: int
    name: str
    house: bool


class CommitRecord(Wire):
    """qahwa-fair/2's commit record (fairness-v2 §1), signed at creation (not logged)."""

    type: Literal["commit"]
    protocol: str
    match_id: str
    game: str
    ruleset: str = Field(description="the canonical ruleset string")
    commitment: str = Field(description="hex SHA-256 of the server seed")
    seats: list[RecordSeat]
    created_at: str
    signature: Signature


class CommitmentRecord(Wire):
    """qahwa-fair/1's commitment record, logged at creation."""

    type: Literal["commitment"]
    protocol: str
    match_id: str
    game: str
    ruleset: str = Field(description="the canonical ruleset string")
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    log_index: int
    signature: Signature


class LockSeat(RecordSeat):
    seed_commitment: str
    key: str | None = Field(description="the seat's Ed25519 public key (base64), or null")
    roll_chain: str | None = Field(description="the seat's roll-chain tip c[0] (hex), or null")


class LockRecord(Wire):
    """qahwa-fair/2's lock record (fairness-v2 §3), logged when every seat has committed."""

    type: Literal["lock"]
    protocol: str
    match_id: str
    game: str
    ruleset: str
    commitment: str
    seats: list[LockSeat]
    locked_at: str
    reveal_by: str
    end_by: str
    signature: Signature


TIME_AT = (
    "qahwa-fair/2: the server's UTC time when it accepted or made the event, with "
    "milliseconds (2026-12-03T21:30:00.123Z); never decreasing along the chain, and not "
    "covered by a seat's signature (fairness-v2 §7, times)"
)


class Receipt(Wire):
    type: Literal["receipt"]
    protocol: str
    match_id: str
    seq: int
    chain: str
    at: str | None = Field(
        default=None,
        description="the time `at` of the head (seq -1: the lock's locked_at); receipts "
        "made before the 2026-12-03 revision have none",
    )
    signature: Signature


class Head(Wire):
    """What the server showed at its time ``at``: the chain head after event ``seq``
    (fairness-v2 §7, heads). A later event stamped before a head that did not include it was
    back-dated: the two signed records prove it."""

    type: Literal["head"]
    protocol: str
    match_id: str
    seq: int = Field(description="the newest event's seq (-1: none yet, the lock's chain[-1])")
    chain: str = Field(description="chain[seq] (hex)")
    at: str = Field(description="the server's UTC time with milliseconds when it answered")
    signature: Signature


class Refusal(Wire):
    """A seat's request refused (fairness-v2 §7, refusals)."""

    type: Literal["refusal"]
    protocol: str
    match_id: str
    request: str = Field(description="SHA-256 (hex) of the request's body, the bytes as sent")
    status: int = Field(description="the HTTP status of the refusal (4xx)")
    reason: str = Field(description="its error code")
    at: str = Field(description="the server's UTC time with milliseconds when it refused")
    signature: Signature


CreationRecord = Annotated[CommitRecord | CommitmentRecord, _TYPE]

LOCK = SchemaOf(LockRecord)
LOCK_OR_NULL = SchemaOf(LockRecord | None)


class Result(Wire):
    """A match's result: the engine's own fields beside these (e.g. tawla's ``games``)."""

    reason: str = Field(
        description="finished, resigned, timeout, no_reveal, expired, not_locked, …"
    )
    winners: list[int] = Field(description="the winning seats (none: no winner)")
    scores: list[int] | None = Field(
        default=None, description="the score per side (none for a match that never locked)"
    )
    status: str | None = Field(default=None, description="qahwa-fair/2: finished")
    forfeited: list[int] | None = Field(
        default=None, description="qahwa-fair/2: the seats that forfeited"
    )
    resigned: int | None = Field(default=None, description="qahwa-fair/1: the seat that resigned")


RESULT_OR_NULL = SchemaOf(Result | None)


# -- events, per game (``type``: action, chance, end; chance events by ``kind``) ---------------
class _Event(Wire):
    seq: int = Field(description="the event's place in the match's log (0, 1, …)")
    at: str | None = Field(default=None, description=TIME_AT)


class DiceArgs(Wire):
    count: int
    sides: int


class UniformArgs(Wire):
    n: int


class DiceEvent(_Event):
    type: Literal["chance"]
    kind: Literal["dice"]
    label: str
    args: DiceArgs
    result: list[int]


class UniformEvent(_Event):
    type: Literal["chance"]
    kind: Literal["uniform"]
    label: str
    args: UniformArgs
    result: int


class ShuffleEvent(_Event):
    type: Literal["chance"]
    kind: Literal["shuffle"]
    label: str
    result: list[str] | list[int] | None = Field(
        default=None,
        description="the order drawn (tile or card codes; a plain session's "
        "0..n-1); left out while hidden",
    )
    hidden: bool | None = Field(
        default=None, description="true while the match runs: the shuffle's result is secret"
    )


ChanceEvent = Annotated[DiceEvent | UniformEvent | ShuffleEvent, Field(discriminator="kind")]
# A game's events: told apart by ``type`` ("action", "chance", "end"), chance events then by
# ``kind``. (One OpenAPI discriminator cannot map "chance" to three schemas, so the outer
# union is a plain one: every member's ``type`` is still a single constant.)


class EndEvent(_Event):
    type: Literal["end"]
    reason: str = Field(
        description="resigned, timeout, no_reveal, expired, chain_exhausted, abandoned (v1)"
    )
    seat: int | None = Field(default=None, description="the seat that resigned or timed out")
    seats: list[int] | None = Field(
        default=None, description="no_reveal: the seats that did not reveal"
    )
    sig: str | None = Field(
        default=None, description="qahwa-fair/2: the seat's signature, when a keyed seat resigned"
    )


class _ActionEvent(_Event):
    type: Literal["action"]
    seat: int
    sig: str | None = Field(
        default=None, description="qahwa-fair/2: the keyed seat's signature (fairness-v2 §7)"
    )


def _action_event(name: str, action: Any) -> Any:
    """``<Game>ActionEvent``: an action event whose ``action`` is the game's."""
    return create_model(name, __base__=_ActionEvent, __module__=__name__, action=(action, ...))


TawlaActionEvent = _action_event("TawlaActionEvent", TawlaAction)
IraqiDominoActionEvent = _action_event("IraqiDominoActionEvent", IraqiDominoAction)
MexicanTrainActionEvent = _action_event("MexicanTrainActionEvent", MexicanTrainAction)
QahveActionEvent = _action_event("QahveActionEvent", QahveAction)
HokmActionEvent = _action_event("HokmActionEvent", HokmAction)
ShelemActionEvent = _action_event("ShelemActionEvent", ShelemAction)
RngActionEvent = _action_event("RngActionEvent", RngAction)

TawlaEvent = TawlaActionEvent | ChanceEvent | EndEvent
MahbusaEvent = TawlaEvent
IraqiDominoEvent = IraqiDominoActionEvent | ChanceEvent | EndEvent
MexicanTrainEvent = MexicanTrainActionEvent | ChanceEvent | EndEvent
QahveEvent = QahveActionEvent | ChanceEvent | EndEvent
HokmEvent = HokmActionEvent | ChanceEvent | EndEvent
ShelemEvent = ShelemActionEvent | ChanceEvent | EndEvent
RngEvent = RngActionEvent | ChanceEvent | EndEvent


# -- public views and seat views (a discriminated union on ``game``) ---------------------------
class PublicSeat(Wire):
    seat: int
    name: str
    has_seed: bool = Field(description="v1: gave its seed; v2: revealed")
    house: bool | None = Field(default=None, description="v2: a seat the operator plays")
    committed: bool | None = Field(default=None, description="v2: sent its commitment")
    revealed: bool | None = Field(default=None, description="v2: revealed seed and nonce")
    client_seed: str | None = Field(default=None, description="shown once the match started")
    seed_source: Literal["player", "server"] | None = None


LEGAL = "every action this seat may send now, exactly as it would be sent"
SUGGESTED = "a subset of legal_actions for simple random bots"
#: the fields every game's views share (each names its own action schema)
_Acts = list[dict[str, Any]]
_LEGAL = Field(description=LEGAL)
_SUGGESTED: Any = Field(default_factory=list, description=SUGGESTED)
_HAND = (
    "this seat's {} codes; at a sealed table (deal sealed) the positions of its items in the "
    "hand's final deck, whose codes the seat's client learns itself"
)
_CARD_HAND = Field(description=_HAND.format("card"))
_TILE_HAND = Field(description=_HAND.format("tile"))


#: the kind of table (issue 34): hands hidden from the operator, or qahwa-fair/2's deals
Deal = Literal["sealed", "seeded"]
_DEAL: Any = Field(
    default="seeded",
    description='the kind of table: "sealed" (ruleset {"deal": "sealed"}, qahwa-fair/3: '
    "nobody is shown a card or tile before it is played, but a party may still work some "
    "out: the view's sealed.limits says where; docs/fairness.md) "
    'or "seeded" (qahwa-fair/2: the operator can compute every hand once seeds are revealed)',
)
#: the limits of a sealed table, code → text: games.sealed_limits.LIMITS word for word
#: (qahwa_wire imports only pydantic; tests/games/test_sealed_limits.py checks they agree)
SEALED_LIMITS: dict[str, str] = {
    "house_hands": (
        "The operator plays the house seats: it makes their keys, so it knows their cards or tiles."
    ),
    "one_person_full_deal": (
        "One person among house seats, and the whole deck is dealt: every card or tile not "
        "dealt to a house seat is dealt to that person, so the operator can work out their "
        "hand."
    ),
    "one_person_partial_deal": (
        "One person among house seats, and part of the deck is not dealt: every card or "
        "tile not dealt to a house seat is either that person's or dealt to nobody, so the "
        "operator knows their hand is among those."
    ),
}


class _Public(Wire):
    """The engine's view of the table: what everyone may see (a seat view adds its own)."""

    status: Literal["playing", "finished"]
    turn: int | None = Field(description="the seat to act, or null")
    sealed: dict[str, Any] | None = Field(
        default=None,
        description="at a sealed table (deal sealed, fairness-v3 §9a): the hand's public deal "
        "state — protocol, match_id, hand, game, items (the starting order), house, keys, "
        "hand_key, deck (base64, after the shuffles so far), shuffled, dealt (item positions "
        "per seat), shares (item → seat → hex), opened (item → code), revealed, owed "
        "({seat, step, items} or null), limits (what the table does not hide, from its game, "
        "seats and house seats alone: a list of {code, text}, empty for none; the codes and "
        "texts are stable: " + " ".join(f"{c} — {t}" for c, t in SEALED_LIMITS.items()) + ")",
    )
    result: Annotated[dict[str, Any] | None, RESULT_OR_NULL] = Field(
        default=None, description="once finished"
    )


class Deadline(Wire):
    """The seat on turn owes the next step by ``due`` (fairness-v2 §7, times)."""

    seat: int = Field(description="the seat that owes the next step")
    seq: int = Field(description="the seq its step will take")
    due: str = Field(
        description="its deadline: the `at` of the event that put it on turn (the lock's "
        "locked_at for the first step) plus turn_seconds; later only when extended after an "
        "outage. A timeout before it is signed proof against the server"
    )


class _Seat(Wire):
    """What a seat's view adds to the engine's: the match, its version and its chain."""

    match_id: str
    version: int = Field(description="send it with an action chosen from this view")
    seat: int = Field(description="the seat this view is for")
    deal: Deal = _DEAL
    protocol: str | None = None
    chain: str | None = Field(
        default=None,
        description="v2: the head of the event chain "
        "(hex); a keyed seat signs its next event over it as prev",
    )
    lock: Annotated[dict[str, Any] | None, LOCK_OR_NULL] = Field(
        default=None, description="v2: the signed lock record, once locked"
    )
    lock_index: int | None = Field(default=None, description="v2: the lock's index in the log")
    deadline: Deadline | None = Field(
        default=None,
        description="v2: who owes the next step and by when (fairness-v2 §7, times); null "
        "when nobody owes a step",
    )
    head: Head | None = Field(
        default=None,
        description="v2, GET /state once locked: the server's signed head as it answered "
        "(fairness-v2 §7, heads)",
    )
    events: list[dict[str, Any]] | None = Field(
        default=None,
        description="GET /state?events_after=n: the public log's events with seq > n up to "
        "this view's, as GET .../events shows them then (absent without events_after)",
    )


class SeatingView(_Seat):
    # "finished": a v2 match that ended before it started (never locked, or no_reveal)
    status: Literal["seating", "finished"]
    game: str
    turn: int | None = Field(default=None, description="null while seating")
    legal_actions: list[dict[str, Any]] = Field(description="none while seating")
    seats: list[PublicSeat]
    sealed: dict[str, Any] | None = Field(
        default=None,
        description="at a sealed table (deal sealed): {limits}, what the table does not hide, "
        "known from its seating (the same list as a game view's sealed.limits)",
    )


class Cube(Wire):
    value: int
    owner: int | None = Field(description="null when centred")


class FreshRoll(Wire):
    label: str = Field(description="the roll's v1 label")
    owes: list[int] = Field(description="the seats whose next value the roll still needs")


class TawlaPublic(_Public):
    game: Literal["tawla"]
    legal_actions: Annotated[_Acts, SchemaOf(list[TawlaAction])] = _LEGAL
    points: list[int] = Field(description="24 points from seat 0's side; + seat 0, - seat 1")
    bar: list[int]
    off: list[int]
    dice: list[int] | None
    cube: Annotated[dict[str, Any], SchemaOf(Cube)] = Field(
        description='{"value", "owner"} (owner null when centred)'
    )
    score: list[int]
    phase: str
    match_length: int
    crawford: bool
    may_double: bool
    on_roll: int | None = None
    pips: list[int] | None = None
    fresh_roll: Annotated[dict[str, Any] | None, SchemaOf(FreshRoll | None)] = Field(
        default=None, description="v2 fresh rolls: the roll now pending, null if none"
    )
    values_used: list[int] | None = Field(
        default=None,
        description="v2 fresh rolls: how many roll-chain values each seat has "
        "sent (a seat's next value is its values_used-th)",
    )


class TawlaView(_Seat, TawlaPublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[TawlaAction])] = _SUGGESTED


_PRISONERS: Any = Field(
    default_factory=list, description="checkers held under a blocker, per point"
)


class MahbusaPublic(TawlaPublic):
    game: Literal["mahbusa"]  # type: ignore[assignment]
    prisoners: list[int] = _PRISONERS


class MahbusaView(TawlaView):
    game: Literal["mahbusa"]  # type: ignore[assignment]
    prisoners: list[int] = _PRISONERS


class IraqiDominoPublic(_Public):
    game: Literal["iraqi_domino"]
    legal_actions: Annotated[_Acts, SchemaOf(list[IraqiDominoAction])] = _LEGAL
    line: list[list[int]] = Field(description="the tiles on the table, left to right")
    ends: dict[str, Any] | None
    pile: int
    hand_counts: list[int]
    scores: list[int]
    players: int
    round: int
    target: int


class IraqiDominoView(_Seat, IraqiDominoPublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[IraqiDominoAction])] = _SUGGESTED
    hand: list[str] | list[int] = _TILE_HAND


class MexicanTrainPublic(_Public):
    game: Literal["mexican_train"]
    legal_actions: Annotated[_Acts, SchemaOf(list[MexicanTrainAction])] = _LEGAL
    trains: list[dict[str, Any]]
    engine: str
    pile: int
    hand_counts: list[int]
    scores: list[int]
    players: int
    round: int
    rounds: int
    markers: list[int]


class MexicanTrainView(_Seat, MexicanTrainPublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[MexicanTrainAction])] = _SUGGESTED
    hand: list[str] | list[int] = _TILE_HAND


class _CardPublic(_Public):
    trick: list[dict[str, Any]] = Field(
        description="the cards played so far in this trick, by seat"
    )
    trump: str | None
    scores: list[int]
    phase: str
    dealer: int
    target: int


class QahvePublic(_CardPublic):
    game: Literal["qahve"]
    legal_actions: Annotated[_Acts, SchemaOf(list[QahveAction])] = _LEGAL
    bids: list[int | None]
    tricks_by_seat: list[int]
    hand_sizes: list[int]


class QahveView(_Seat, QahvePublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[QahveAction])] = _SUGGESTED
    hand: list[str] | list[int] = _CARD_HAND


class HokmPublic(_CardPublic):
    game: Literal["hokm"]
    legal_actions: Annotated[_Acts, SchemaOf(list[HokmAction])] = _LEGAL
    hakem: int
    tricks_by_seat: list[int]
    hand_sizes: list[int]


class HokmView(_Seat, HokmPublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[HokmAction])] = _SUGGESTED
    hand: list[str] | list[int] = _CARD_HAND


class ShelemPublic(_CardPublic):
    game: Literal["shelem"]
    legal_actions: Annotated[_Acts, SchemaOf(list[ShelemAction])] = _LEGAL
    bids: list[dict[str, Any]]
    bid: int | None
    hakem: int | None
    hand_counts: list[int]
    tricks_taken: list[int]
    points_taken: list[int]


class ShelemView(_Seat, ShelemPublic):
    suggested_actions: Annotated[_Acts, SchemaOf(list[ShelemAction])] = _SUGGESTED
    hand: list[str] | list[int] = _CARD_HAND


class RngPublic(_Public):
    game: Literal["rng"]
    legal_actions: list[dict[str, Any]] = Field(description="none: draws have their own route")
    draws: list[int | list[int]] = Field(description="every result so far, in order")


GameView = Annotated[
    TawlaView
    | MahbusaView
    | IraqiDominoView
    | MexicanTrainView
    | QahveView
    | HokmView
    | ShelemView,
    Field(discriminator="game"),
]
# While seating every game's view is the same; after the start it is the game's own. (The
# outer union is told apart by ``status``: "seating" here, "playing"/"finished" there.)
StateOut = SeatingView | GameView


# -- requests -----------------------------------------------------------------------------------
class SeatIn(Strict):
    name: str = Field(min_length=1, max_length=64, description="the player's display name")
    house: StrictBool = Field(
        default=False,
        description="a seat the operator's own software plays "
        "(shown in the commit record and the lock)",
    )

    @field_validator("name")
    @classmethod
    def _printable(cls, v: str) -> str:
        v = v.strip()
        if not v or not v.isprintable():
            raise ValueError("a seat name must be printable and not blank")
        return v


class CreateMatchIn(Strict):
    game: str = Field(
        max_length=32,
        examples=["tawla"],
        json_schema_extra={"enum": list(GAMES)},
        description="the game (another name is 422 unknown_game)",
    )
    ruleset: dict[str, Any] | None = Field(
        default=None, description="game options; omitted keys take the game's defaults"
    )
    seats: list[SeatIn] | None = Field(
        default=None,
        max_length=16,
        description="one entry per seat, in seat order; omitted: 'Seat 0', 'Seat 1', …",
    )


CLIENT_SEED = (
    "1-128 UTF-8 bytes (not characters), printable; a longer, empty or "
    "unprintable seed is 422 bad_client_seed"
)


class SeedIn(Strict):
    client_seed: StrictStr = Field(description=CLIENT_SEED)


HEX32 = "64 lowercase hex characters"
SIG = (
    'qahwa-fair/2, keyed seats: base64 Ed25519 signature of canonical({"match_id", '
    '"prev": the chain head, "event": the event without seq and sig}) (fairness-v2 §7)'
)
PREV = "the chain head the request was made at; another head is 409 stale_chain"


class ActionIn(Strict):
    action: Annotated[dict[str, Any], SchemaOf(AnyAction)] = Field(
        description="one of the seat's legal_actions, exactly as listed"
    )
    version: StrictInt = Field(
        ge=0, le=2**31 - 1, description="the version of the view the action was chosen from"
    )
    sig: StrictStr | None = Field(default=None, max_length=200, description=SIG)
    prev: StrictStr | None = Field(default=None, max_length=64, description=PREV)


class ResignIn(Strict):
    sig: StrictStr | None = Field(default=None, max_length=200, description=SIG)
    prev: StrictStr | None = Field(default=None, max_length=64, description=PREV)


class CommitIn(Strict):
    seed_commitment: StrictStr = Field(
        max_length=64, description="SHA-256 of the seat's seed and nonce (fairness-v2 §2), " + HEX32
    )
    key: StrictStr | None = Field(
        default=None, max_length=64, description="the seat's Ed25519 public key (base64), or null"
    )
    roll_chain: StrictStr | None = Field(
        default=None,
        max_length=64,
        description="the tip c[0] of the seat's roll chain where fresh rolls are on (else "
        "null), " + HEX32,
    )


class RevealIn(Strict):
    client_seed: StrictStr = Field(max_length=600, description="the committed client seed")
    nonce: StrictStr = Field(max_length=64, description="the committed nonce, " + HEX32)


class RngCreateIn(Strict):
    """Empty: the seed comes after the signed commit record (``/seed``); a ``client_seed``
    here is 422."""


class RngSeedIn(Strict):
    client_seed: StrictStr = Field(description=CLIENT_SEED)
    nonce: StrictStr | None = Field(
        default=None,
        max_length=64,
        description="32 random bytes, " + HEX32 + "; required (qahwa-fair/2), absent only "
        "for a qahwa-fair/1 session made before v2",
    )


class DrawIn(Strict):
    kind: Literal["dice", "uniform", "shuffle"]
    count: StrictInt | None = Field(default=None, description="dice: how many (1-100)")
    sides: StrictInt | None = Field(default=None, description="dice: sides (2-1000)")
    n: StrictInt | None = Field(
        default=None, description="uniform: 0..n-1 (n 1-2^32); shuffle: 0..n-1 (n 1-1000)"
    )

    def to_action(self) -> dict[str, Any]:
        return {"type": "draw", **self.model_dump(exclude_none=True)}


# -- responses ----------------------------------------------------------------------------------
class SeatOut(Wire):
    seat: int
    name: str
    token: str = Field(description="the seat's secret bearer token, shown only here")


class CreatedSeat(SeatOut):
    house: bool = False


class MatchCreatedOut(Wire):
    match_id: str
    protocol: str
    game: str
    ruleset: str = Field(description="the canonical ruleset string (every rule listed)")
    deal: Deal = _DEAL
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    status: Status
    version: int
    seats: list[CreatedSeat]
    record: Annotated[dict[str, Any], SchemaOf(CreationRecord)] = Field(
        description="the signed commit record (fairness-v2 §1)"
    )


class SeatingOut(Wire):
    """The seat's view after a commit or a reveal, with the receipt."""

    match_id: str
    seat: int
    status: Status
    version: int
    chain: str | None = Field(description="the chain head (null before the lock)")
    lock: Annotated[dict[str, Any] | None, LOCK_OR_NULL] = Field(
        description="the signed lock, once every seat committed"
    )
    receipt: Receipt | None = Field(
        description="for chain[-1] (seq -1); null for a commit that did not complete the lock"
    )


class LockOut(Wire):
    match_id: str
    lock: Annotated[dict[str, Any], LOCK] = Field(
        description="the signed lock record (fairness-v2 §3)"
    )
    log_index: int = Field(description="its index in the log")
    receipt: Receipt = Field(description="a receipt for chain[-1]")


class RngSeededOut(Wire):
    """The signed lock, its log index, the chain head and a receipt for chain[-1]. (A
    qahwa-fair/1 session made before v2 answers its seed with ``SeatedOut``.)"""

    session_id: str
    status: Status
    version: int
    chain: str
    lock: Annotated[dict[str, Any], LOCK]
    log_index: int
    receipt: Receipt


class SeatedOut(Wire):
    match_id: str
    status: Status
    version: int
    seat: int | None = None


class ActionOut(Wire):
    match_id: str
    seat: int
    version: int
    status: Status
    first_seq: int = Field(description="seq of the action's event in the log")
    state: StateOut = Field(description="the seat's view after the action")
    chain: str | None = Field(default=None, description="v2: the chain head after the action")
    receipt: Receipt | None = Field(
        default=None, description="v2: the server-signed receipt for the head after the action"
    )
    events: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            "the events the action logged (its own, then the chance events it drew), seq "
            "first_seq on, as the public log shows them now (GET .../events): redacted while "
            "the match runs (servers before it was listed here leave it out)"
        ),
    )


class ResignOut(Wire):
    match_id: str
    status: Status
    version: int
    result: Annotated[dict[str, Any], SchemaOf(Result)]
    receipt: Receipt | None = None


class MatchOut(Wire):
    """The public view of a match or a plain session. The route publishes one per game
    (:data:`AnyMatchOut`, told apart by ``game``), each with its game's ``public_state``."""

    match_id: str
    game: str
    ruleset: str
    deal: Deal = _DEAL
    commitment: str
    status: Status
    version: int
    seats: list[PublicSeat]
    created_at: str
    started_at: str | None
    ended_at: str | None
    log_index: int | None = Field(
        description="v1: the commitment's log index; v2: the lock's (null before the lock)"
    )
    record: Annotated[dict[str, Any], SchemaOf(CreationRecord)]
    result: Annotated[dict[str, Any] | None, RESULT_OR_NULL]
    public_state: dict[str, Any] | None = Field(
        description="the engine's public view (no hidden cards or tiles); null while seating"
    )
    protocol: str | None = None
    chain: str | None = Field(default=None, description="v2: the chain head (null before the lock)")
    lock: Annotated[dict[str, Any] | None, LOCK_OR_NULL] = Field(
        default=None, description="v2: the signed lock record, once locked"
    )


class EventsOut(Wire):
    """A page of a match's (or session's) public log. The route publishes one per game
    (:data:`AnyEventsOut`, told apart by ``game``), each with its game's events."""

    match_id: str
    game: str | None = Field(
        default=None, description="the game (servers before it was listed here leave it out)"
    )
    status: Status
    version: int
    next_seq: int
    events: list[dict[str, Any]] = Field(
        description="events with seq > after; redacted by the game while the match runs"
    )
    chain: str | None = Field(
        default=None, description="v2: the chain head after event next_seq - 1"
    )


class TranscriptSeat(Wire):
    seat: int
    name: str
    client_seed: str | None = Field(description="null: a v2 seat that never revealed")
    seed_source: Literal["player", "server"] | None = Field(
        default=None, description="qahwa-fair/1: who gave the seed"
    )
    house: bool | None = Field(default=None, description="qahwa-fair/2")
    nonce: str | None = Field(default=None, description="qahwa-fair/2: the revealed nonce")
    key: str | None = Field(default=None, description="qahwa-fair/2: the seat key, or null")
    roll_chain: str | None = Field(
        default=None, description="qahwa-fair/2: the roll-chain tip, or null"
    )


class TranscriptOut(Wire):
    """fairness-v1.md §6 or fairness-v2.md §9 (``protocol`` tells which). The routes publish
    one per game (:data:`AnyTranscriptOut`, told apart by ``game``), each with its game's
    events."""

    protocol: str
    match_id: str
    game: str
    ruleset: str
    commitment: str
    server_seed: str
    seats: Annotated[list[dict[str, Any]], SchemaOf(list[TranscriptSeat])]
    events: list[dict[str, Any]]
    result: Annotated[dict[str, Any] | None, RESULT_OR_NULL]
    created_at: str | None = None
    ended_at: str | None = None
    lock: Annotated[dict[str, Any] | None, LOCK_OR_NULL] = Field(
        default=None, description="qahwa-fair/2: the signed lock record"
    )
    lock_index: int | None = Field(default=None, description="qahwa-fair/2: its log index")
    chain: str | None = Field(default=None, description="qahwa-fair/2: the last chain head")
    signature: Signature


# -- per game: the public view, the event page and the transcript of each game ----------
_PUBLIC_STATE = "the engine's public view (no hidden cards or tiles); null while seating"
_EVENT_PAGE = "events with seq > after; redacted by the game while the match runs"


_PER_GAME: list[tuple[Any, Any, Any]] = []


def _outs(game: str, public: Any, events: Any) -> tuple[Any, Any, Any]:
    """``<Game>MatchOut``, ``<Game>EventsOut`` and ``<Game>TranscriptOut`` of one game: the
    shared shapes with ``game`` fixed and the game's public view and events typed."""
    name = "".join(part.capitalize() for part in game.split("_"))
    fixed: Any = Literal[game]
    listed = Annotated[list[dict[str, Any]], SchemaOf(list[events])]
    match_out = create_model(
        f"{name}MatchOut",
        __base__=MatchOut,
        __module__=__name__,
        game=(fixed, ...),
        public_state=(
            Annotated[dict[str, Any] | None, SchemaOf(public | None)],
            Field(description=_PUBLIC_STATE),
        ),
    )
    events_out = create_model(
        f"{name}EventsOut",
        __base__=EventsOut,
        __module__=__name__,
        game=(fixed, ...),
        events=(listed, Field(description=_EVENT_PAGE)),
    )
    transcript_out = create_model(
        f"{name}TranscriptOut",
        __base__=TranscriptOut,
        __module__=__name__,
        game=(fixed, ...),
        events=(listed, ...),
    )
    _PER_GAME.append((match_out, events_out, transcript_out))
    return match_out, events_out, transcript_out


TawlaMatchOut, TawlaEventsOut, TawlaTranscriptOut = _outs("tawla", TawlaPublic, TawlaEvent)
MahbusaMatchOut, MahbusaEventsOut, MahbusaTranscriptOut = _outs(
    "mahbusa", MahbusaPublic, MahbusaEvent
)
IraqiDominoMatchOut, IraqiDominoEventsOut, IraqiDominoTranscriptOut = _outs(
    "iraqi_domino", IraqiDominoPublic, IraqiDominoEvent
)
MexicanTrainMatchOut, MexicanTrainEventsOut, MexicanTrainTranscriptOut = _outs(
    "mexican_train", MexicanTrainPublic, MexicanTrainEvent
)
QahveMatchOut, QahveEventsOut, QahveTranscriptOut = _outs("qahve", QahvePublic, QahveEvent)
HokmMatchOut, HokmEventsOut, HokmTranscriptOut = _outs("hokm", HokmPublic, HokmEvent)
ShelemMatchOut, ShelemEventsOut, ShelemTranscriptOut = _outs("shelem", ShelemPublic, ShelemEvent)
RngMatchOut, RngEventsOut, RngTranscriptOut = _outs("rng", RngPublic, RngEvent)

_GAME = Field(discriminator="game")


def _one_of(i: int) -> Any:
    """One of the games' answers (the ``i``-th each :func:`_outs` made), told apart by
    ``game``."""
    return Annotated[reduce(operator.or_, (outs[i] for outs in _PER_GAME)), _GAME]


AnyMatchOut, AnyEventsOut, AnyTranscriptOut = _one_of(0), _one_of(1), _one_of(2)


class RngCreatedOut(Wire):
    session_id: str
    protocol: str
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    status: Status
    version: int
    record: Annotated[dict[str, Any], SchemaOf(CommitRecord)] = Field(
        description="the signed commit record (fairness-v2 §1)"
    )
    token: str = Field(description="the session's secret bearer token, shown only here")


class DrawOut(Wire):
    session_id: str
    version: int
    status: Status
    seq: int
    label: str
    kind: Literal["dice", "uniform", "shuffle"]
    args: dict[str, Any] | None = None
    result: int | list[int]


class RngClosedOut(Wire):
    session_id: str
    status: Status
    server_seed: str
    transcript: RngTranscriptOut  # type: ignore[valid-type]


class AnnouncedKey(Wire):
    key_id: str = Field(description="the first 16 hex digits of SHA-256 of the raw public key")
    alg: Literal["ed25519"]
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")


class KeyAnnouncementOut(Wire):
    """A key in force announcing the next one (fairness-v2.md, revision "key
    announcements"): a client that trusts the signing key takes ``key`` from ``not_before``."""

    type: Literal["key_announcement"]
    protocol: str
    key: AnnouncedKey
    not_before: str = Field(description="the announced key signs nothing before this time")
    created_at: str = Field(description="when the key was announced (`qahwa keys rotate`)")
    signature: Signature


class KeyOut(Wire):
    key_id: str
    alg: Literal["ed25519"]
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")
    created_at: str
    activates_at: str | None = Field(
        default=None,
        description="when it starts signing (a key staged by `qahwa keys rotate`: later "
        "than now while it is `next`)",
    )
    current: bool = Field(description="in force now: activated and not retired")
    next: bool = Field(
        default=False,
        description="staged by `qahwa keys rotate`: it signs from `activates_at`, nothing "
        "before; pin it now",
    )
    retired_at: str | None = Field(
        default=None,
        description="when `qahwa keys rotate` "
        "replaced it, or will (null while nothing replaces it); nothing is signed by it "
        "at or after this time, and what it signed before stays verifiable",
    )
    announcements: list[KeyAnnouncementOut] = Field(
        default_factory=list,
        description="this key's announcements, each signed by a key in force when "
        "`qahwa keys rotate` staged it: a client that trusts that key takes this one "
        "(empty for a key nobody announced: the deployment's first)",
    )


class LogKeyOut(Wire):
    origin: str = Field(description="the log's origin: its checkpoints' first line")
    vkey: str = Field(description="the log's note key, in signed-note vkey text form")


class LogShardOut(Wire):
    id: int = Field(description="the log's number: it is served under `/logs/<id>/log/`")
    origin: str = Field(description="the log's origin: its checkpoints' first line")
    vkey: str = Field(description="the log's note key, in signed-note vkey text form")
    state: Literal["active", "frozen"] = Field(
        description="`active`: new entries go to it; `frozen`: an older log (`qahwa keys "
        "new-log`), served read-only at its final checkpoint"
    )
    path: str = Field(description="where its checkpoint and tiles are served")


class KeysOut(Wire):
    keys: list[KeyOut]
    log: LogKeyOut | None = Field(
        default=None, description="the transparency log's checkpoint key (c2sp.org/tlog-checkpoint)"
    )
    logs: list[LogShardOut] | None = Field(
        default=None,
        description="every log of the deployment, oldest first: the active one and the "
        "older ones that `qahwa keys new-log` froze (docs/deploy.md §10)",
    )


class TreeHeadOut(Wire):
    type: Literal["tree_head"]
    protocol: str
    tree_size: int
    root_hash: str
    timestamp: str
    signature: Signature


class ProofOut(Wire):
    index: int
    tree_size: int
    leaf: dict[str, Any]
    leaf_hash: str
    audit_path: list[str]
    tree_head: TreeHeadOut


class ConsistencyOut(Wire):
    first: int
    second: int
    proof: list[str] = Field(description="PROOF(first, D[second]) of RFC 9162 §2.1.4, hex")
    first_head: TreeHeadOut
    second_head: TreeHeadOut


class LogEntryOut(Wire):
    index: int
    leaf: dict[str, Any]
    leaf_hash: str


class LogEntriesOut(Wire):
    entries: list[LogEntryOut]
