"""Request and response models. Requests reject unknown fields (``extra="forbid"``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(BaseModel):
    code: str = Field(description="a stable machine-readable code, e.g. stale_version")
    message: str = Field(description="what went wrong, for people")


class ErrorOut(BaseModel):
    error: ErrorBody


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": desc}
    for code, desc in {
        400: "malformed request (bad JSON, not an object)",
        401: "missing or unknown seat token",
        403: "the token is another seat's",
        404: "no such match, session, seat or log entry",
        409: "conflict: stale version, not your turn, wrong phase, already ended",
        413: "request body too large",
        422: "bad value or illegal action",
    }.items()
}


class SeatIn(Strict):
    name: str = Field(min_length=1, max_length=64, description="the player's display name")

    @field_validator("name")
    @classmethod
    def _printable(cls, v: str) -> str:
        v = v.strip()
        if not v or not v.isprintable():
            raise ValueError("a seat name must be printable and not blank")
        return v


class CreateMatchIn(Strict):
    game: str = Field(max_length=32, examples=["tawla"])
    ruleset: dict[str, Any] | None = Field(
        default=None, description="game options; omitted keys take the game's defaults")
    seats: list[SeatIn] | None = Field(
        default=None, max_length=16,
        description="one entry per seat, in seat order; omitted: default names")


class SeatOut(BaseModel):
    seat: int
    name: str
    token: str = Field(description="the seat's secret bearer token, shown only here")


class Signature(BaseModel):
    alg: str
    key_id: str
    value: str


class CommitmentOut(BaseModel):
    type: Literal["commitment"]
    protocol: str
    match_id: str
    game: str
    ruleset: str
    commitment: str
    created_at: str
    log_index: int
    signature: Signature
    status: str
    version: int
    record: dict[str, Any] = Field(description="the signed commitment record, exactly as logged")


class MatchCreatedOut(CommitmentOut):
    seats: list[SeatOut]


class SeedIn(Strict):
    client_seed: str = Field(min_length=1, max_length=128,
                             description="1-128 UTF-8 bytes, printable")


class SeatedOut(BaseModel):
    match_id: str
    status: str
    version: int
    seat: int | None = None


class ActionIn(Strict):
    action: dict[str, Any] = Field(description="one of the seat's legal_actions, as listed")
    version: StrictInt = Field(ge=0, le=2**31 - 1, description="the version of the state the move is for")


class ActionOut(BaseModel):
    match_id: str
    seat: int
    version: int
    status: str
    first_seq: int = Field(description="seq of the action's event in the log")
    state: dict[str, Any] = Field(description="the seat's view after the action")


class ResignOut(BaseModel):
    match_id: str
    status: str
    version: int
    result: dict[str, Any]


class PublicSeat(BaseModel):
    seat: int
    name: str
    has_seed: bool
    client_seed: str | None = None
    seed_source: str | None = None


class MatchOut(BaseModel):
    match_id: str
    game: str
    ruleset: str
    commitment: str
    status: str
    version: int
    seats: list[PublicSeat]
    created_at: str
    started_at: str | None
    ended_at: str | None
    log_index: int
    record: dict[str, Any]
    result: dict[str, Any] | None
    public_state: dict[str, Any] | None


class EventsOut(BaseModel):
    match_id: str
    status: str
    version: int
    next_seq: int
    events: list[dict[str, Any]]


class RngCreateIn(Strict):
    client_seed: str | None = Field(
        default=None, min_length=1, max_length=128,
        description="your seed; omitted: give it later with /seed, or the server draws one")


class RngCreatedOut(CommitmentOut):
    session_id: str
    token: str


class DrawIn(Strict):
    kind: Literal["dice", "uniform", "shuffle"]
    count: StrictInt | None = Field(default=None, description="dice: how many (1-100)")
    sides: StrictInt | None = Field(default=None, description="dice: sides (2-1000)")
    n: StrictInt | None = Field(default=None, description="uniform: 0..n-1; shuffle: 0..n-1")

    def to_action(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "draw", "kind": self.kind}
        for k in ("count", "sides", "n"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out


class DrawOut(BaseModel):
    session_id: str
    version: int
    status: str
    seq: int
    label: str
    kind: str
    args: dict[str, Any] | None = None
    result: Any


class RngClosedOut(BaseModel):
    session_id: str
    status: str
    server_seed: str
    transcript: dict[str, Any]


class KeyOut(BaseModel):
    key_id: str
    alg: str
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")
    created_at: str
    current: bool


class KeysOut(BaseModel):
    keys: list[KeyOut]


class TreeHeadOut(BaseModel):
    type: Literal["tree_head"]
    protocol: str
    tree_size: int
    root_hash: str
    timestamp: str
    signature: Signature


class ProofOut(BaseModel):
    index: int
    tree_size: int
    leaf: dict[str, Any]
    leaf_hash: str
    audit_path: list[str]
    tree_head: TreeHeadOut


class ConsistencyOut(BaseModel):
    first: int
    second: int
    proof: list[str] = Field(description="PROOF(first, D[second]) of RFC 9162 §2.1.4, hex")
    first_head: TreeHeadOut
    second_head: TreeHeadOut


class LogEntryOut(BaseModel):
    index: int
    leaf: dict[str, Any]
    leaf_hash: str


class LogEntriesOut(BaseModel):
    entries: list[LogEntryOut]
