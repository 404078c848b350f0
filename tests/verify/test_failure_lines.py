"""Failure lines name the path and show both values whole (issue 30): ``result.winners:
expected [1], found [0]``, the same in the CLI, its JSON output and the verify page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect

from fairness import public_key_b64
from qahwa_page.pyodide import runtime_installed
from tests.page.test_verify_page_local import verify_page
from tests.support.browser import CHROMIUM, launch, open_page
from tests.verify.test_verify_cli_helpers import (
    SIGNER,
    full_match,
    key_b64,
    rechain,
    resign,
    v2_match,
    write,
)
from verify_cli.main import app
from verify_cli.render import differences, with_differences

LONG = "x" * 600  # far past the old 200-character cut


def _forged(v2: bool) -> tuple[dict[str, Any], int, int]:
    """A tawla match whose winner is swapped and which says more in ``result``, re-signed
    (v2: re-chained too): (doc, the true winner, the forged one)."""
    doc = v2_match("tawla", keyed=True, seed=3) if v2 else full_match("tawla")
    true = doc["result"]["winners"][0]
    doc["result"]["winners"] = [1 - true]
    doc["result"]["note"] = LONG
    return (rechain(doc) if v2 else resign(doc)), true, 1 - true


def _lines(true: int, forged: int) -> list[str]:
    return [
        f"result.winners: expected [{true}], found [{forged}]",
        f'result.note: expected (absent), found "{LONG}"',
    ]


def test_differences_name_the_deepest_path() -> None:
    assert differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}, "r") == [
        {"path": "r.a[1].b", "expected": 2, "found": 3}
    ]
    # lists of other lengths, and JSON types that differ, are shown whole
    assert differences([1, 2], [1], "r") == [{"path": "r", "expected": [1, 2], "found": [1]}]
    assert differences({"n": 1}, {"n": True}, "r") == [
        {"path": "r.n", "expected": 1, "found": True}
    ]
    assert with_differences([{"check": "x", "expected": None, "found": None}]) == [
        {"check": "x", "expected": None, "found": None}
    ]


@pytest.mark.parametrize("v2", [False, True], ids=["v1", "v2"])
def test_cli_and_json_name_the_path_with_whole_values(v2: bool, tmp_path: Path) -> None:
    doc, true, forged = _forged(v2)
    path = write(tmp_path / "t.json", doc)
    key = tmp_path / "server.pub"
    key.write_text(key_b64() + "\n")
    out = CliRunner().invoke(app, [path, "--key", str(key), "--jobs", "1"], catch_exceptions=False)
    assert out.exit_code == 1, out.output
    text = out.output
    for line in _lines(true, forged):
        assert line in text, text
    js = CliRunner().invoke(
        app, [path, "--key", str(key), "--jobs", "1", "--json"], catch_exceptions=False
    )
    res = json.loads(js.output)["results"][0]
    result_failure = next(f for f in res["failures"] if f["check"] == "result")
    assert result_failure["differences"] == [
        {"path": "result.winners", "expected": [true], "found": [forged]},
        {"path": "result.note", "expected": {"absent": True}, "found": LONG},
    ]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's /usr/bin/chromium")
def test_the_page_shows_the_same_lines() -> None:
    if not runtime_installed():
        pytest.skip("the Pyodide runtime is not installed (make pyodide)")
    with verify_page() as url, launch() as browser:
        for v2 in (False, True):
            doc, true, forged = _forged(v2)
            with open_page(browser, url + "?lang=en") as page:
                page.check("input[name=src][value=paste]")
                page.fill("#in-paste", json.dumps(doc))
                page.fill("#in-key", public_key_b64(SIGNER.public_key))
                page.click("#go")
                expect(page.locator("#verdict")).to_have_attribute(
                    "data-verdict", "fail", timeout=120_000
                )
                expect(page.locator("#verdict")).not_to_have_attribute(
                    "data-replay", "pending", timeout=120_000
                )
                shown = page.inner_text("tr[data-check=result] pre")
                assert shown.splitlines() == _lines(true, forged), shown
