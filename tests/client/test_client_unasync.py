"""The client is written once: ``qahwa_client/aio.py`` is the source, ``client.py`` is
generated from it by ``scripts/unasync.py``; both expose the same handles."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from types import ModuleType

import pytest

import qahwa_client.aio as aio
import qahwa_client.client as sync

ROOT = Path(__file__).resolve().parents[2]

PAIRS = [
    (aio.AsyncClient, sync.Client),
    (aio.AsyncMatch, sync.Match),
    (aio.AsyncSeat, sync.Seat),
    (aio.AsyncRngSession, sync.RngSession),
]
#: the async name of a method whose sync twin has another name
RENAMED = {"aclose": "close", "__aenter__": "__enter__", "__aexit__": "__exit__"}
CONTEXT = {"__aenter__", "__aexit__", "__enter__", "__exit__"}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync_script", ROOT / "scripts/unasync.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_sync_client_is_what_the_async_one_generates() -> None:
    script = _script()
    assert (ROOT / "qahwa_client/client.py").read_text(encoding="utf-8") == script.generate()
    assert script.main(["--check"]) == 0


def test_the_check_fails_on_an_edited_sync_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    edited = tmp_path / "client.py"
    edited.write_text(script.generate().replace("def act(", "def act_(", 1), encoding="utf-8")
    monkeypatch.setattr(script, "TARGET", edited)
    assert script.main(["--check"]) == 1
    assert "make unasync" in capsys.readouterr().err
    assert script.main([]) == 0  # regenerating repairs it
    assert script.main(["--check"]) == 0


def test_an_unknown_async_construct_is_refused() -> None:
    with pytest.raises(SystemExit, match="async construct"):
        _script().unasync("async def f() -> None:\n    await asyncio.gather()\n    async\n")


@pytest.mark.parametrize(("asynced", "synced"), PAIRS, ids=lambda c: c.__name__)
def test_both_clients_have_the_same_methods_and_arguments(asynced: type, synced: type) -> None:
    def methods(cls: type, rename: dict[str, str]) -> dict[str, inspect.Signature]:
        return {
            rename.get(name, name): inspect.signature(fn)
            for name, fn in vars(cls).items()
            if inspect.isfunction(fn) and (not name.startswith("_") or name in CONTEXT)
        }

    got_async = methods(asynced, RENAMED)
    got_sync = methods(synced, {})
    assert set(got_async) <= set(got_sync)
    for name, sig in got_async.items():
        assert list(sig.parameters) == list(got_sync[name].parameters), name
        # an awaitable there is a plain call here
        assert not inspect.iscoroutinefunction(getattr(synced, name)), name
    props = {n for n in dir(asynced) if isinstance(getattr(asynced, n), property)}
    assert props == {n for n in dir(synced) if isinstance(getattr(synced, n), property)}
    assert "tree_head" in vars(aio.AsyncClient) and "seat" in vars(aio.AsyncMatch)
    assert "receipts" in props or asynced in (aio.AsyncClient, aio.AsyncMatch)


def test_no_coroutine_and_no_asyncio_in_the_sync_module() -> None:
    text = (ROOT / "qahwa_client/client.py").read_text(encoding="utf-8")
    assert "await " not in text and "async " not in text and "asyncio" not in text
    assert text.startswith("# Generated from qahwa_client/aio.py")
