"""The synchronous client: ``Client(base_url)`` → matches → seats; rng sessions; verify.

```python
with Client("http://127.0.0.1:8000") as qc:
    match = qc.create_match("tawla", {"match_length": 1}, names=["Layla", "Omar"])
    for seat in match.seats:
        seat.send_seed()
    ...
```
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import httpx
from pydantic import TypeAdapter

from .errors import ApiError, StaleVersion, raise_for
from .models import (
    ActionOut,
    DrawOut,
    EventsOut,
    KeysOut,
    MatchCreatedOut,
    MatchOut,
    ResignOut,
    RngClosedOut,
    RngCreatedOut,
    SeatedOut,
    StateOut,
    TreeHeadOut,
)
from .sse import iter_sse

STATE = TypeAdapter[StateOut](StateOut)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create_body(game: str, ruleset: Mapping[str, Any] | None,
                names: Sequence[str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"game": game}
    if ruleset is not None:
        body["ruleset"] = dict(ruleset)
    if names is not None:
        body["seats"] = [{"name": n} for n in names]
    return body


class Client:
    """One qahwa server. ``http`` may be an ``httpx.Client`` of your own (its base URL is
    then ignored in favour of ``base_url``)."""

    def __init__(self, base_url: str, *, timeout: float = 30.0,
                 http: httpx.Client | None = None, operator_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.operator_key = operator_key  # for creating matches and sessions
        self.http = http or httpx.Client(timeout=timeout)
        self._own = http is None

    # -- plumbing ----------------------------------------------------------------------------
    def request(self, method: str, path: str, *, token: str | None = None,
                json_body: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """One call; the parsed JSON answer, or :class:`ApiError` for any 4xx/5xx."""
        resp = self.http.request(method, self.base_url + path,
                                 headers=_auth(token) if token else None,
                                 json=json_body, params=params)
        raise_for(resp)
        return resp.json()

    def close(self) -> None:
        if self._own:
            self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- matches -----------------------------------------------------------------------------
    def create_match(self, game: str, ruleset: Mapping[str, Any] | None = None,
                     names: Sequence[str] | None = None, *,
                     operator_key: str | None = None) -> Match:
        """Create a match (with the server's ``operator_key``); the handle holds the signed
        commitment and every seat's token."""
        created = MatchCreatedOut.model_validate(
            self.request("POST", "/v1/matches", json_body=create_body(game, ruleset, names),
                         token=operator_key or self.operator_key))
        return Match(self, created)

    def match(self, match_id: str) -> MatchOut:
        """The public record and view of a match."""
        return MatchOut.model_validate(self.request("GET", f"/v1/matches/{match_id}"))

    def transcript(self, match_id: str) -> dict[str, Any]:
        """The signed transcript, exactly as served (409 ``not_finished`` before the end)."""
        doc: dict[str, Any] = self.request("GET", f"/v1/matches/{match_id}/transcript")
        return doc

    def events(self, match_id: str, after: int = -1, wait: float = 0) -> EventsOut:
        """The public event log after ``after`` (long-polling up to ``wait`` seconds)."""
        return EventsOut.model_validate(self.request(
            "GET", f"/v1/matches/{match_id}/events", params={"after": after, "wait": wait}))

    def stream(self, match_id: str, after: int = -1,
               timeout: float = 60) -> Iterator[dict[str, Any]]:
        """The public events as they happen (server-sent events), until the match ends."""
        last = after
        while True:
            with self.http.stream("GET", f"{self.base_url}/v1/matches/{match_id}/events/stream",
                                  params={"after": last, "timeout": timeout},
                                  timeout=httpx.Timeout(timeout + 30)) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    raise_for(resp)
                for kind, data in iter_sse(resp.iter_lines()):
                    if kind == "finished":
                        return
                    event = json.loads(data)
                    last = event["seq"]
                    yield event

    # -- keys, log, verify --------------------------------------------------------------------
    def keys(self) -> KeysOut:
        return KeysOut.model_validate(self.request("GET", "/v1/keys"))

    def tree_head(self, tree_size: int | None = None) -> TreeHeadOut:
        params = {"tree_size": tree_size} if tree_size is not None else None
        return TreeHeadOut.model_validate(self.request("GET", "/v1/log", params=params))

    def verify(self, transcript: Mapping[str, Any] | str, *,
               keys: KeysOut | None = None) -> dict[str, Any]:
        """Check a transcript (or a match id) here, with ``verify``'s own core.

        Recomputes the key, every draw, replays every action and checks the signature with
        ``keys`` (default: the server's ``/v1/keys`` — pin them for a server you distrust).
        Returns verify's report: ``report["status"] == "verified"`` when all holds.
        """
        from .verify import verify_transcript

        doc = self.transcript(transcript) if isinstance(transcript, str) else dict(transcript)
        return verify_transcript(doc, keys or self.keys(), source=self.base_url)

    # -- plain randomness ---------------------------------------------------------------------
    def rng(self, client_seed: str | None = None, *,
            operator_key: str | None = None) -> RngSession:
        """Open a plain dice/shuffle session (``client_seed`` now, later, or never)."""
        body = {"client_seed": client_seed} if client_seed is not None else {}
        created = RngCreatedOut.model_validate(self.request("POST", "/v1/rng", json_body=body,
                                                            token=operator_key or self.operator_key))
        return RngSession(self, created)


class Match:
    """A match created by this client: its commitment, and one :class:`Seat` per seat."""

    def __init__(self, client: Client, created: MatchCreatedOut) -> None:
        self.client = client
        self.created = created
        self.match_id = created.match_id
        self.seats = [Seat(client, self.match_id, s.seat, s.token) for s in created.seats]

    def seat(self, n: int) -> Seat:
        return self.seats[n]

    def public(self) -> MatchOut:
        return self.client.match(self.match_id)

    def transcript(self) -> dict[str, Any]:
        return self.client.transcript(self.match_id)

    def verify(self, *, keys: KeysOut | None = None) -> dict[str, Any]:
        return self.client.verify(self.transcript(), keys=keys)

    def events(self, after: int = -1, timeout: float = 60) -> Iterator[dict[str, Any]]:
        return self.client.stream(self.match_id, after, timeout)


class Seat:
    """One seat of a match, acting with its token. Remembers the version of its last view,
    so ``act(action)`` sends the action for the view it was chosen from."""

    def __init__(self, client: Client, match_id: str, seat: int, token: str) -> None:
        self.client = client
        self.match_id = match_id
        self.seat = seat
        self.token = token
        self.version: int | None = None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return self.client.request(method, f"/v1/matches/{self.match_id}{path}",
                                   token=self.token, json_body=body)

    def send_seed(self, client_seed: str | None = None) -> SeatedOut:
        """Give this seat's client seed (default: 16 fresh random bytes in hex)."""
        seed = client_seed if client_seed is not None else secrets.token_hex(16)
        return SeatedOut.model_validate(
            self._call("POST", f"/seats/{self.seat}/seed", {"client_seed": seed}))

    def start(self) -> SeatedOut:
        """Start now: the server draws the seeds not yet given."""
        return SeatedOut.model_validate(self._call("POST", "/start"))

    def state(self) -> StateOut:
        """This seat's view (its own hand, whose turn, ``legal_actions``, ``version``)."""
        view = STATE.validate_python(self._call("GET", "/state"))
        self.version = view.version
        return view

    def act(self, action: Mapping[str, Any], *, version: int | None = None,
            retry_stale: bool = False) -> ActionOut:
        """Send one action, at ``version`` (default: the version of this seat's last view).

        409 ``stale_version`` raises :class:`StaleVersion` unless ``retry_stale``: then the
        view is read again and, if the action is still legal there, sent once more.
        """
        if version is None:
            version = self.version if self.version is not None else self.state().version
        body = {"action": dict(action), "version": version}
        try:
            out = ActionOut.model_validate(self._call("POST", "/actions", body))
        except StaleVersion:
            if not retry_stale:
                raise
            view = self.state()
            if dict(action) not in view.legal_actions:
                raise
            out = ActionOut.model_validate(
                self._call("POST", "/actions", {"action": dict(action),
                                                "version": view.version}))
        self.version = out.state.version
        return out

    def resign(self) -> ResignOut:
        return ResignOut.model_validate(self._call("POST", "/resign"))

    def events(self, after: int = -1, timeout: float = 60) -> Iterator[dict[str, Any]]:
        """The match's public events as server-sent events, until the match ends."""
        return self.client.stream(self.match_id, after, timeout)


class RngSession:
    """A plain provably fair dice/shuffle session."""

    def __init__(self, client: Client, created: RngCreatedOut) -> None:
        self.client = client
        self.created = created
        self.session_id = created.session_id
        self.token = created.token

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return self.client.request(method, f"/v1/rng/{self.session_id}{path}",
                                   token=self.token, json_body=body)

    def send_seed(self, client_seed: str) -> SeatedOut:
        return SeatedOut.model_validate(self._call("POST", "/seed", {"client_seed": client_seed}))

    def dice(self, count: int = 1, sides: int = 6) -> DrawOut:
        return self.draw({"kind": "dice", "count": count, "sides": sides})

    def uniform(self, n: int) -> DrawOut:
        return self.draw({"kind": "uniform", "n": n})

    def shuffle(self, n: int) -> DrawOut:
        return self.draw({"kind": "shuffle", "n": n})

    def draw(self, body: Mapping[str, Any]) -> DrawOut:
        return DrawOut.model_validate(self._call("POST", "/draws", dict(body)))

    def close(self) -> RngClosedOut:
        """Close: the server seed is revealed and the signed transcript returned."""
        return RngClosedOut.model_validate(self._call("POST", "/close"))

    def transcript(self) -> dict[str, Any]:
        doc: dict[str, Any] = self._call("GET", "/transcript")
        return doc


__all__ = ["ApiError", "Client", "Match", "RngSession", "Seat", "StaleVersion"]
