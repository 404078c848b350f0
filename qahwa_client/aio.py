"""The asynchronous client: the same handles as :mod:`qahwa_client.client`, awaitable.

```python
async with AsyncClient("http://127.0.0.1:8000") as qc:
    match = await qc.create_match("hokm")
    view = await match.seats[0].state()
```
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import httpx

from .client import STATE, _auth, create_body
from .errors import StaleVersion, raise_for
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
)
from .sse import aiter_sse


class AsyncClient:
    def __init__(self, base_url: str, *, timeout: float = 30.0,
                 http: httpx.AsyncClient | None = None, operator_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.operator_key = operator_key  # for creating matches and sessions
        self.http = http or httpx.AsyncClient(timeout=timeout)
        self._own = http is None

    async def request(self, method: str, path: str, *, token: str | None = None,
                      json_body: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        resp = await self.http.request(method, self.base_url + path,
                                       headers=_auth(token) if token else None,
                                       json=json_body, params=params)
        raise_for(resp)
        return resp.json()

    async def aclose(self) -> None:
        if self._own:
            await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def create_match(self, game: str, ruleset: Mapping[str, Any] | None = None,
                           names: Sequence[str] | None = None, *,
                           operator_key: str | None = None) -> AsyncMatch:
        created = MatchCreatedOut.model_validate(await self.request(
            "POST", "/v1/matches", json_body=create_body(game, ruleset, names),
            token=operator_key or self.operator_key))
        return AsyncMatch(self, created)

    async def match(self, match_id: str) -> MatchOut:
        return MatchOut.model_validate(await self.request("GET", f"/v1/matches/{match_id}"))

    async def transcript(self, match_id: str) -> dict[str, Any]:
        doc: dict[str, Any] = await self.request("GET", f"/v1/matches/{match_id}/transcript")
        return doc

    async def events(self, match_id: str, after: int = -1, wait: float = 0) -> EventsOut:
        return EventsOut.model_validate(await self.request(
            "GET", f"/v1/matches/{match_id}/events", params={"after": after, "wait": wait}))

    async def stream(self, match_id: str, after: int = -1,
                     timeout: float = 60) -> AsyncIterator[dict[str, Any]]:
        last = after
        while True:
            async with self.http.stream(
                    "GET", f"{self.base_url}/v1/matches/{match_id}/events/stream",
                    params={"after": last, "timeout": timeout},
                    timeout=httpx.Timeout(timeout + 30)) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise_for(resp)
                async for kind, data in aiter_sse(resp.aiter_lines()):
                    if kind == "finished":
                        return
                    event = json.loads(data)
                    last = event["seq"]
                    yield event

    async def keys(self) -> KeysOut:
        return KeysOut.model_validate(await self.request("GET", "/v1/keys"))

    async def verify(self, transcript: Mapping[str, Any] | str, *,
                     keys: KeysOut | None = None) -> dict[str, Any]:
        """As :meth:`qahwa_client.Client.verify` (the checks run here, in this process)."""
        from .verify import verify_transcript

        doc = (await self.transcript(transcript) if isinstance(transcript, str)
               else dict(transcript))
        return verify_transcript(doc, keys or await self.keys(), source=self.base_url)

    async def rng(self, client_seed: str | None = None, *,
                  operator_key: str | None = None) -> AsyncRngSession:
        body = {"client_seed": client_seed} if client_seed is not None else {}
        created = RngCreatedOut.model_validate(
            await self.request("POST", "/v1/rng", json_body=body,
                               token=operator_key or self.operator_key))
        return AsyncRngSession(self, created)


class AsyncMatch:
    def __init__(self, client: AsyncClient, created: MatchCreatedOut) -> None:
        self.client = client
        self.created = created
        self.match_id = created.match_id
        self.seats = [AsyncSeat(client, self.match_id, s.seat, s.token) for s in created.seats]

    async def public(self) -> MatchOut:
        return await self.client.match(self.match_id)

    async def transcript(self) -> dict[str, Any]:
        return await self.client.transcript(self.match_id)

    async def verify(self, *, keys: KeysOut | None = None) -> dict[str, Any]:
        return await self.client.verify(await self.transcript(), keys=keys)

    def events(self, after: int = -1, timeout: float = 60) -> AsyncIterator[dict[str, Any]]:
        return self.client.stream(self.match_id, after, timeout)


class AsyncSeat:
    def __init__(self, client: AsyncClient, match_id: str, seat: int, token: str) -> None:
        self.client = client
        self.match_id = match_id
        self.seat = seat
        self.token = token
        self.version: int | None = None

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        return await self.client.request(method, f"/v1/matches/{self.match_id}{path}",
                                         token=self.token, json_body=body)

    async def send_seed(self, client_seed: str | None = None) -> SeatedOut:
        seed = client_seed if client_seed is not None else secrets.token_hex(16)
        return SeatedOut.model_validate(
            await self._call("POST", f"/seats/{self.seat}/seed", {"client_seed": seed}))

    async def start(self) -> SeatedOut:
        return SeatedOut.model_validate(await self._call("POST", "/start"))

    async def state(self) -> StateOut:
        view = STATE.validate_python(await self._call("GET", "/state"))
        self.version = view.version
        return view

    async def act(self, action: Mapping[str, Any], *, version: int | None = None,
                  retry_stale: bool = False) -> ActionOut:
        if version is None:
            version = self.version if self.version is not None else (await self.state()).version
        try:
            out = ActionOut.model_validate(await self._call(
                "POST", "/actions", {"action": dict(action), "version": version}))
        except StaleVersion:
            if not retry_stale:
                raise
            view = await self.state()
            if dict(action) not in view.legal_actions:
                raise
            out = ActionOut.model_validate(await self._call(
                "POST", "/actions", {"action": dict(action), "version": view.version}))
        self.version = out.state.version
        return out

    async def resign(self) -> ResignOut:
        return ResignOut.model_validate(await self._call("POST", "/resign"))

    def events(self, after: int = -1, timeout: float = 60) -> AsyncIterator[dict[str, Any]]:
        return self.client.stream(self.match_id, after, timeout)


class AsyncRngSession:
    def __init__(self, client: AsyncClient, created: RngCreatedOut) -> None:
        self.client = client
        self.created = created
        self.session_id = created.session_id
        self.token = created.token

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        return await self.client.request(method, f"/v1/rng/{self.session_id}{path}",
                                         token=self.token, json_body=body)

    async def send_seed(self, client_seed: str) -> SeatedOut:
        return SeatedOut.model_validate(
            await self._call("POST", "/seed", {"client_seed": client_seed}))

    async def dice(self, count: int = 1, sides: int = 6) -> DrawOut:
        return await self.draw({"kind": "dice", "count": count, "sides": sides})

    async def uniform(self, n: int) -> DrawOut:
        return await self.draw({"kind": "uniform", "n": n})

    async def shuffle(self, n: int) -> DrawOut:
        return await self.draw({"kind": "shuffle", "n": n})

    async def draw(self, body: Mapping[str, Any]) -> DrawOut:
        return DrawOut.model_validate(await self._call("POST", "/draws", dict(body)))

    async def close(self) -> RngClosedOut:
        return RngClosedOut.model_validate(await self._call("POST", "/close"))

    async def transcript(self) -> dict[str, Any]:
        doc: dict[str, Any] = await self._call("GET", "/transcript")
        return doc
