"""A small server-sent events parser (the subset qahwa sends: ``id``, ``event``, ``data``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator


def _feed(line: str, state: dict[str, list[str]]) -> tuple[str, str] | None:
    if line == "":
        if not state["data"]:
            state["event"].clear()
            return None
        kind = state["event"][-1] if state["event"] else "message"
        data = "\n".join(state["data"])
        state["event"].clear()
        state["data"].clear()
        return kind, data
    if line.startswith(":"):
        return None
    name, _, value = line.partition(":")
    value = value.removeprefix(" ")
    if name == "event":
        state["event"].append(value)
    elif name == "data":
        state["data"].append(value)
    return None


def iter_sse(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(event name, data)`` for each complete event in a stream of lines."""
    state: dict[str, list[str]] = {"event": [], "data": []}
    for line in lines:
        out = _feed(line.rstrip("\r"), state)
        if out is not None:
            yield out


async def aiter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    state: dict[str, list[str]] = {"event": [], "data": []}
    async for line in lines:
        out = _feed(line.rstrip("\r"), state)
        if out is not None:
            yield out
