"""The wire models of the qahwa HTTP API, shared by the server and this client.

The service publishes these in its OpenAPI document (``service.schemas`` re-exports them), so
a client in another language gets the same types. Requests refuse unknown fields
(``extra="forbid"``); responses keep fields added later (``extra="allow"``), so an older
client still reads a newer server. This module needs only pydantic: nothing here imports the
service, the engines or the verifier.
"""

from __future__ import annotations

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


# -- errors -----------------------------------------------------------------------------------
class ErrorBody(BaseModel):
    code: str = Field(description="a stable machine-readable code, e.g. stale_version")
    message: str = Field(description="what went wrong, for people")


class ErrorOut(BaseModel):
    error: ErrorBody


# -- actions, per game (a discriminated union on ``type`` for each game) ----------------------
class _Act(Strict):
    pass


class Roll(_Act):
    type: Literal["roll"]
    entropy: StrictStr | None = Field(
        default=None, description="qahwa-fair/1: live entropy mixed into the roll's label "
                                  "(ruleset live_entropy)")
    value: StrictStr | None = Field(
        default=None, description="qahwa-fair/2 fresh rolls: the roller's next roll-chain "
                                  "value (64 hex)")


class RollValue(_Act):
    type: Literal["roll_value"]
    value: StrictStr | None = Field(
        default=None, description="qahwa-fair/2 fresh rolls: this seat's next roll-chain "
                                  "value (64 hex); legal_actions list it without (the client "
                                  "adds it)")


class Double(_Act):
    type: Literal["double"]


class Take(_Act):
    type: Literal["take"]


class Drop(_Act):
    type: Literal["drop"]


class Move(_Act):
    type: Literal["move"]
    steps: list[tuple[StrictInt, StrictInt]] = Field(
        description="[from, to] pairs in the mover's numbering (25 = bar, 0 = off)")


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
        description="a seat's train (its seat number) or the Mexican train")


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


class Cut(_Act):
    type: Literal["cut"]
    k: StrictInt | None = Field(
        default=None, description="qahwa-fair/1: cut the deck after k cards (1-51); "
                                  "qahwa-fair/2 draws k, so none is sent")


class Tap(_Act):
    type: Literal["tap"]


class DrawCard(_Act):
    type: Literal["draw"]
    keep: StrictBool = Field(description="two-player hokm: keep the stock's top card (true) "
                                          "or pass it over and take the next (false)")


class Discard(_Act):
    type: Literal["discard"]
    cards: list[StrictStr]


_TYPE = Field(discriminator="type")
TawlaAction = Annotated[Roll | RollValue | Double | Take | Drop | Move | ResignOffer | Accept
                        | Reject, _TYPE]
IraqiDominoAction = Annotated[PlayTile | DrawTile | Pass, _TYPE]
MexicanTrainAction = Annotated[PlayTrainTile | DrawTile | Pass, _TYPE]
QahveAction = Annotated[BidTricks | PlayCard, _TYPE]
HokmAction = Annotated[Cut | Tap | Trump | DrawCard | Discard | PlayCard, _TYPE]
MahbusaAction = TawlaAction
ShelemAction = Annotated[BidPoints | Pass | Discard | PlayCard, _TYPE]

ACTIONS: dict[str, Any] = {
    "tawla": TawlaAction, "iraqi_domino": IraqiDominoAction, "mexican_train": MexicanTrainAction,
    "qahve": QahveAction, "hokm": HokmAction, "shelem": ShelemAction,
    "mahbusa": MahbusaAction,
}

# One of the games' actions. The server checks the action against the match's own game (and
# its rules); this schema tells a client the shapes it can send.
AnyAction = Annotated[
    TawlaAction | IraqiDominoAction | MexicanTrainAction | QahveAction | HokmAction
    | ShelemAction,
    Field(description="one of the seat's legal_actions, exactly as listed"),
]


# -- seat views (a discriminated union on ``status``, then on ``game``) -----------------------
Status = Literal["seating", "playing", "finished"]


class PublicSeat(Wire):
    seat: int
    name: str
    has_seed: bool = Field(description="v1: gave its seed; v2: revealed")
    house: bool | None = Field(default=None, description="v2: a seat the operator plays")
    committed: bool | None = Field(default=None, description="v2: sent its commitment")
    revealed: bool | None = Field(default=None, description="v2: revealed seed and nonce")
    client_seed: str | None = Field(default=None, description="shown once the match started")
    seed_source: Literal["player", "server"] | None = None


class _View(Wire):
    match_id: str
    version: int = Field(description="send it with an action chosen from this view")
    seat: int = Field(description="the seat this view is for")
    turn: int | None = Field(description="the seat to act, or null")
    legal_actions: list[dict[str, Any]] = Field(
        description="every action this seat may send now, exactly as it would be sent")
    chain: str | None = Field(default=None, description="v2: the head of the event chain "
                              "(hex); a keyed seat signs its next event over it as prev")
    lock: dict[str, Any] | None = Field(default=None,
                                        description="v2: the signed lock record, once locked")


class SeatingView(_View):
    # "finished": a v2 match that ended before it started (never locked, or no_reveal)
    status: Literal["seating", "finished"]
    game: str
    seats: list[PublicSeat]


class _GameView(_View):
    status: Literal["playing", "finished"]
    suggested_actions: list[dict[str, Any]] = Field(
        default_factory=list, description="a subset of legal_actions for simple random bots")


class TawlaView(_GameView):
    game: Literal["tawla"]
    points: list[int] = Field(description="24 points from seat 0's side; + seat 0, - seat 1")
    bar: list[int]
    off: list[int]
    dice: list[int] | None
    cube: dict[str, Any] = Field(description='{"value", "owner"} (owner null when centred)')
    score: list[int]
    phase: str
    match_length: int
    crawford: bool
    may_double: bool
    on_roll: int | None = None
    pips: list[int] | None = None
    fresh_roll: dict[str, Any] | None = Field(
        default=None, description='v2 fresh rolls: {"label", "owes": [seat, …]} for the roll '
                                  'now pending, null if none')
    values_used: list[int] | None = Field(
        default=None, description="v2 fresh rolls: how many roll-chain values each seat has "
                                  "sent (a seat's next value is its values_used-th)")


class MahbusaView(TawlaView):
    game: Literal["mahbusa"]  # type: ignore[assignment]
    prisoners: list[Any] = Field(default_factory=list,
                                 description="checkers held under a blocker, per point")


class IraqiDominoView(_GameView):
    game: Literal["iraqi_domino"]
    hand: list[str] = Field(description="this seat's tile codes")
    line: list[Any]
    ends: dict[str, Any] | None
    pile: int
    hand_counts: list[int]
    scores: list[int]
    players: int
    round: int
    target: int


class MexicanTrainView(_GameView):
    game: Literal["mexican_train"]
    hand: list[str] = Field(description="this seat's tile codes")
    trains: list[Any]
    engine: str
    pile: int
    hand_counts: list[int]
    scores: list[int]
    players: int
    round: int
    rounds: int
    markers: list[Any]


class _CardView(_GameView):
    hand: list[str] = Field(description="this seat's card codes")
    trick: list[Any] = Field(description="the cards played so far in this trick, by seat")
    trump: str | None
    scores: list[int]
    phase: str
    dealer: int
    target: int


class QahveView(_CardView):
    game: Literal["qahve"]
    bids: list[Any]
    tricks_by_seat: list[int]
    hand_sizes: list[int]


class HokmView(_CardView):
    game: Literal["hokm"]
    hakem: int
    tricks_by_seat: list[int]
    hand_sizes: list[int]


class ShelemView(_CardView):
    game: Literal["shelem"]
    bids: list[Any]
    bid: int | None
    hakem: int | None
    hand_counts: list[int]
    tricks_taken: list[int]
    points_taken: list[int]


GameView = Annotated[
    TawlaView | MahbusaView | IraqiDominoView | MexicanTrainView | QahveView | HokmView
    | ShelemView,
    Field(discriminator="game"),
]
# While seating every game's view is the same; after the start it is the game's own. (The
# outer union is told apart by ``status``: "seating" here, "playing"/"finished" there.)
StateOut = SeatingView | GameView


# -- requests -----------------------------------------------------------------------------------
class SeatIn(Strict):
    name: str = Field(min_length=1, max_length=64, description="the player's display name")
    house: StrictBool = Field(default=False,
                              description="a seat the operator's own software plays "
                                          "(shown in the commit record and the lock)")

    @field_validator("name")
    @classmethod
    def _printable(cls, v: str) -> str:
        v = v.strip()
        if not v or not v.isprintable():
            raise ValueError("a seat name must be printable and not blank")
        return v


class CreateMatchIn(Strict):
    game: str = Field(max_length=32, examples=["tawla"], json_schema_extra={"enum": list(GAMES)},
                      description="the game (another name is 422 unknown_game)")
    ruleset: dict[str, Any] | None = Field(
        default=None, description="game options; omitted keys take the game's defaults")
    seats: list[SeatIn] | None = Field(
        default=None, max_length=16,
        description="one entry per seat, in seat order; omitted: 'Seat 0', 'Seat 1', …")


CLIENT_SEED = ("1-128 UTF-8 bytes (not characters), printable; a longer, empty or "
               "unprintable seed is 422 bad_client_seed")


class SeedIn(Strict):
    client_seed: StrictStr = Field(description=CLIENT_SEED)


class _SchemaOf:
    """Annotate a field so its JSON schema is ``tp``'s while it validates as declared.

    An action is checked by the match's own engine (so a seating match answers 409
    not_started before the action's shape is looked at, and a bad shape is 422
    malformed_action with the engine's reason); the schema still shows every shape.
    """

    def __init__(self, tp: Any) -> None:
        self.tp = tp

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(TypeAdapter(self.tp).core_schema)
        return schema


HEX32 = "64 lowercase hex characters"
SIG = ("qahwa-fair/2, keyed seats: base64 Ed25519 signature of canonical({\"match_id\", "
       "\"prev\": the chain head, \"event\": the event without seq and sig}) (fairness-v2 §7)")
PREV = "the chain head the request was made at; another head is 409 stale_chain"


class ActionIn(Strict):
    action: Annotated[dict[str, Any], _SchemaOf(AnyAction)] = Field(
        description="one of the seat's legal_actions, exactly as listed")
    version: StrictInt = Field(ge=0, le=2**31 - 1,
                               description="the version of the view the action was chosen from")
    sig: StrictStr | None = Field(default=None, max_length=200, description=SIG)
    prev: StrictStr | None = Field(default=None, max_length=64, description=PREV)


class ResignIn(Strict):
    sig: StrictStr | None = Field(default=None, max_length=200, description=SIG)
    prev: StrictStr | None = Field(default=None, max_length=64, description=PREV)


class CommitIn(Strict):
    seed_commitment: StrictStr = Field(
        max_length=64, description="SHA-256 of the seat's seed and nonce (fairness-v2 §2), "
                                   + HEX32)
    key: StrictStr | None = Field(default=None, max_length=64,
                                  description="the seat's Ed25519 public key (base64), or null")
    roll_chain: StrictStr | None = Field(
        default=None, max_length=64,
        description="the tip c[0] of the seat's roll chain where fresh rolls are on (else "
                    "null), " + HEX32)


class RevealIn(Strict):
    client_seed: StrictStr = Field(max_length=600, description="the committed client seed")
    nonce: StrictStr = Field(max_length=64, description="the committed nonce, " + HEX32)


class RngCreateIn(Strict):
    """Empty: the seed comes after the signed commit record (``/seed``); a ``client_seed``
    here is 422."""


class RngSeedIn(Strict):
    client_seed: StrictStr = Field(description=CLIENT_SEED)
    nonce: StrictStr | None = Field(
        default=None, max_length=64,
        description="32 random bytes, " + HEX32 + "; required (qahwa-fair/2), absent only "
                    "for a qahwa-fair/1 session made before v2")


class DrawIn(Strict):
    kind: Literal["dice", "uniform", "shuffle"]
    count: StrictInt | None = Field(default=None, description="dice: how many (1-100)")
    sides: StrictInt | None = Field(default=None, description="dice: sides (2-1000)")
    n: StrictInt | None = Field(default=None,
                                description="uniform: 0..n-1 (n 1-2^32); shuffle: 0..n-1 (n 1-1000)")

    def to_action(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "draw", "kind": self.kind}
        for k in ("count", "sides", "n"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out


# -- responses ----------------------------------------------------------------------------------
class SeatOut(Wire):
    seat: int
    name: str
    token: str = Field(description="the seat's secret bearer token, shown only here")


class Signature(Wire):
    alg: Literal["ed25519"]
    key_id: str
    value: str


class CommitmentRecord(Wire):
    type: Literal["commitment"]
    protocol: str
    match_id: str
    game: str
    ruleset: str = Field(description="the canonical ruleset string")
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    log_index: int
    signature: Signature


class CommitmentOut(CommitmentRecord):
    status: Status
    version: int
    record: dict[str, Any] = Field(description="the signed commitment record, exactly as logged")


class CreatedSeat(SeatOut):
    house: bool = False


class MatchCreatedOut(Wire):
    match_id: str
    protocol: str
    game: str
    ruleset: str = Field(description="the canonical ruleset string (every rule listed)")
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    status: Status
    version: int
    seats: list[CreatedSeat]
    record: dict[str, Any] = Field(description="the signed commit record (fairness-v2 §1)")


class Receipt(Wire):
    type: Literal["receipt"]
    protocol: str
    match_id: str
    seq: int
    chain: str
    signature: Signature


class SeatingOut(Wire):
    """The seat's view after a commit or a reveal, with the receipt."""

    match_id: str
    seat: int
    status: Status
    version: int
    chain: str | None = Field(description="the chain head (null before the lock)")
    lock: dict[str, Any] | None = Field(description="the signed lock, once every seat committed")
    receipt: Receipt | None = Field(
        description="for chain[-1] (seq -1); null for a commit that did not complete the lock")


class LockOut(Wire):
    match_id: str
    lock: dict[str, Any] = Field(description="the signed lock record (fairness-v2 §3)")
    log_index: int = Field(description="its index in the log")
    receipt: Receipt = Field(description="a receipt for chain[-1]")


class RngSeededOut(Wire):
    """The signed lock, its log index, the chain head and a receipt for chain[-1]. (A
    qahwa-fair/1 session made before v2 answers its seed with ``SeatedOut``.)"""

    session_id: str
    status: Status
    version: int
    chain: str
    lock: dict[str, Any]
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
        default=None, description="v2: the server-signed receipt for the head after the action")


class ResignOut(Wire):
    match_id: str
    status: Status
    version: int
    result: dict[str, Any]
    receipt: Receipt | None = None


class MatchOut(Wire):
    match_id: str
    game: str
    ruleset: str
    commitment: str
    status: Status
    version: int
    seats: list[PublicSeat]
    created_at: str
    started_at: str | None
    ended_at: str | None
    log_index: int | None = Field(description="v1: the commitment's log index; v2: the "
                                              "lock's (null before the lock)")
    record: dict[str, Any]
    result: dict[str, Any] | None
    public_state: dict[str, Any] | None = Field(
        description="the engine's public view (no hidden cards or tiles); null while seating")


class EventsOut(Wire):
    match_id: str
    status: Status
    version: int
    next_seq: int
    events: list[dict[str, Any]] = Field(
        description="events with seq > after; redacted by the game while the match runs")


class TranscriptSeat(Wire):
    seat: int
    name: str
    client_seed: str
    seed_source: Literal["player", "server"]


class TranscriptOut(Wire):
    """fairness-v1.md §6 or fairness-v2.md §9 (``protocol`` tells which)."""

    protocol: str
    match_id: str
    game: str
    ruleset: str
    commitment: str
    server_seed: str
    seats: list[dict[str, Any]]
    events: list[dict[str, Any]]
    result: dict[str, Any] | None
    created_at: str
    ended_at: str | None
    signature: Signature


class RngCreatedOut(Wire):
    session_id: str
    protocol: str
    commitment: str = Field(description="hex SHA-256 of the server seed")
    created_at: str
    status: Status
    version: int
    record: dict[str, Any] = Field(description="the signed commit record (fairness-v2 §1)")
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
    transcript: TranscriptOut


class KeyOut(Wire):
    key_id: str
    alg: Literal["ed25519"]
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")
    created_at: str
    current: bool
    retired_at: str | None = Field(default=None, description="when `qahwa keys rotate` "
                                   "replaced it (null while current); what it signed before "
                                   "stays verifiable")


class LogKeyOut(Wire):
    origin: str = Field(description="the log's origin: its checkpoints' first line")
    vkey: str = Field(description="the log's note key, in signed-note vkey text form")


class KeysOut(Wire):
    keys: list[KeyOut]
    log: LogKeyOut | None = Field(default=None, description="the transparency log's "
                                  "checkpoint key (c2sp.org/tlog-checkpoint)")


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
