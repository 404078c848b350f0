"""Hostile input: every file ``verify`` is given exits 2 with one line or is judged (exit 0 or
1), never a traceback; chance results compare type-strictly; a hypothesis fuzz of the CLI.

The fuzz runs a fast version in CI. The long run (an hour on the 2-core build machine) is::

    QAHWA_FUZZ_EXAMPLES=18000 .venv/bin/pytest -q -p no:cacheprovider \\
        tests/verify/test_verify_hostile.py -k fuzz

(docs/verify.md, "Hostile input", gives the rate measured and the figure to use.)
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairness import PROTOCOL
from games.transcript import simulate_match
from tests.verify.test_verify_cli_helpers import (
    KEYS,
    SIGNER,
    full_match,
    rechain,
    run,
    v2_match,
    write,
)
from verify_cli import inputs
from verify_cli.core import FAILED, UNUSABLE, VERIFIED, verify_document
from verify_cli.inputs import InputError, parse_json

FUZZ_EXAMPLES = int(os.environ.get("QAHWA_FUZZ_EXAMPLES", "60"))


def one_line_exit_2(res: Any) -> str:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return str(lines[0])


# -- files that are not transcripts ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000, "[" * 70 + "]" * 70],
)
def test_deep_nesting_exits_2_with_one_line(tmp_path: Path, text: str) -> None:
    p = tmp_path / "deep.json"
    p.write_text(text)
    assert "nested too deeply" in one_line_exit_2(run(str(p)))


def test_a_file_too_large_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = write(tmp_path / "t.json", v2_match("rng"))
    monkeypatch.setattr(inputs, "MAX_DOCUMENT_BYTES", 1000)
    assert "too large" in one_line_exit_2(run(p))


@pytest.mark.parametrize(
    "data", [b"\xff\xfe{}", '{"protocol": "caf\xe9"}'.encode("latin-1"), b'{"a": "\xed\xa0\x80"}']
)
def test_bytes_not_utf8_exit_2(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "bin.json"
    p.write_bytes(data)
    assert "not UTF-8" in one_line_exit_2(run(str(p)))


@pytest.mark.parametrize("make", ["v1", "v2"])
def test_a_duplicate_key_exits_2(tmp_path: Path, make: str) -> None:
    doc = v2_match("rng") if make == "v2" else full_match("rng")
    text = json.dumps(doc)
    # the same key twice: a reader could take either value
    text = text.replace('"match_id": ', '"match_id": "other", "match_id": ', 1)
    p = tmp_path / "dup.json"
    p.write_text(text)
    assert "duplicate key 'match_id'" in one_line_exit_2(run(str(p)))


@pytest.mark.parametrize("text", ["", "{nope", "NaN", '{"a": Infinity}', "[1, 2,]"])
def test_not_json_exits_2(tmp_path: Path, text: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(text)
    assert "not JSON" in one_line_exit_2(run(str(p)))


def test_a_lone_surrogate_exits_2(tmp_path: Path) -> None:
    doc = full_match("rng")
    doc["seats"][0]["name"] = "\ud800"
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))  # ensure_ascii: written as the escape \\ud800
    assert "lone surrogate" in one_line_exit_2(run(str(p)))


def test_a_v2_transcript_outside_canonical_json_exits_2(tmp_path: Path) -> None:
    for path, value in ((("lock_index",), 2**60), (("result", "x"), 1.5)):
        doc = v2_match("rng")
        target = doc
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        p = write(tmp_path / "c.json", doc)
        assert "not canonical JSON" in one_line_exit_2(run(p))


def test_parse_json_refuses_what_it_should() -> None:
    assert parse_json(b'{"a": [1, "x", null, true]}') == {"a": [1, "x", None, True]}
    for bad in (b'{"a": 1, "a": 2}', b"[" * 65 + b"]" * 65, b"\xc3\x28"):
        with pytest.raises(InputError):
            parse_json(bad)


# -- chance results compare type-strictly ----------------------------------------------------


def _first_dice(doc: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in doc["events"] if e["type"] == "chance" and e["kind"] == "dice")


@pytest.mark.parametrize("as_type", ["float", "bool"])
def test_a_v1_die_as_float_or_bool_fails(as_type: str) -> None:
    doc = full_match("tawla")
    ev = _first_dice(doc)
    if as_type == "bool":
        i = ev["result"].index(1) if 1 in ev["result"] else None
        if i is None:  # find a die showing 1
            ev = next(
                e
                for e in doc["events"]
                if e["type"] == "chance" and e["kind"] == "dice" and 1 in e["result"]
            )
            i = ev["result"].index(1)
        ev["result"][i] = True
    else:
        ev["result"][0] = float(ev["result"][0])
    rep = verify_document(SIGNER.signed(doc), KEYS)
    assert rep["status"] == FAILED
    f = rep["failures"][0]
    assert f["check"] == "replay" and f["seq"] == ev["seq"]
    assert "ints only" in f["message"]


def test_a_v2_die_as_bool_fails() -> None:
    doc = v2_match("tawla", {"match_length": 1})
    ev = next(
        e
        for e in doc["events"]
        if e["type"] == "chance" and e["kind"] == "dice" and 1 in e["result"]
    )
    ev["result"][ev["result"].index(1)] = True
    rep = verify_document(rechain(doc), KEYS)
    assert rep["status"] == FAILED
    assert any(f["check"] == "replay" and "ints only" in f["message"] for f in rep["failures"]), (
        rep["failures"]
    )


def test_a_v2_die_as_float_is_unusable(tmp_path: Path) -> None:
    doc = v2_match("tawla", {"match_length": 1})
    _first_dice(doc)["result"][0] = 3.0
    p = write(tmp_path / "f.json", rechain(doc))
    assert "not canonical JSON" in one_line_exit_2(run(p))


def test_a_uniform_as_bool_fails() -> None:
    for seed in range(40):  # a first dealer drawn as seat 0 or 1
        doc, _ = simulate_match("shelem", seed=seed, resign_at=0, protocol=PROTOCOL)
        ev = doc["events"][0]
        if ev["label"] == "dealer" and ev["result"] in (0, 1):
            break
    else:
        raise AssertionError("no dealer draw of 0 or 1 in 40 seeds")
    ev["result"] = bool(ev["result"])
    rep = verify_document(SIGNER.signed(doc), KEYS)
    assert rep["status"] == FAILED and "ints only" in rep["failures"][0]["message"]


# -- fuzz ------------------------------------------------------------------------------------

_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
)
_json = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def _genuine() -> dict[str, Any]:
    return v2_match("tawla", {"match_length": 1}, keyed=True)


def _mutate(doc: Any, data: st.DataObject) -> Any:
    """Replace one value somewhere in ``doc`` with generated JSON."""
    node = doc
    for _ in range(data.draw(st.integers(0, 5))):
        if isinstance(node, dict) and node:
            k = data.draw(st.sampled_from(sorted(node)))
            if not isinstance(node[k], dict | list) or not node[k]:
                break
            node = node[k]
        elif isinstance(node, list) and node:
            nxt = node[data.draw(st.integers(0, len(node) - 1))]
            if not isinstance(nxt, dict | list) or not nxt:
                break
            node = nxt
        else:
            break
    value = data.draw(_json)
    if isinstance(node, dict):
        node[data.draw(st.sampled_from([*sorted(node), "extra"]))] = value
    elif isinstance(node, list) and node:
        node[data.draw(st.integers(0, len(node) - 1))] = value
    return doc


def _signed_part(doc: Any) -> str:
    """What the transcript's signature covers, and its value: a change elsewhere (the
    signature's ``key_id``, an extra field in it) is not covered by anything, and with a
    single key given the key is used whatever id is named (docs/verify.md, "Keys")."""
    if not isinstance(doc, dict):
        return json.dumps(doc)
    sig = doc.get("signature")
    value = sig.get("value") if isinstance(sig, dict) else sig
    return json.dumps({**doc, "signature": value}, sort_keys=True)


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzz_verify_on_generated_json(tmp_path: Path, key_file: str, data: st.DataObject) -> None:
    """Whatever the file holds, ``verify`` judges it (0/1) or exits 2 with one line; a changed
    genuine transcript never verifies."""
    how = data.draw(st.sampled_from(["json", "mutant", "resigned mutant", "bytes"]))
    original = _genuine()
    changed = True
    p = tmp_path / "fuzz.json"
    if how == "json":
        p.write_text(json.dumps(data.draw(_json)))
    elif how == "bytes":
        p.write_bytes(data.draw(st.binary(max_size=200)))
    else:
        doc = _mutate(copy.deepcopy(original), data)
        changed = _signed_part(doc) != _signed_part(original)
        if (
            how == "resigned mutant"
            and isinstance(doc.get("events"), list)
            and all(isinstance(e, dict) for e in doc["events"])
            and isinstance(doc.get("lock"), dict)
        ):
            try:
                doc = rechain(doc)
            except (TypeError, ValueError):
                pass  # a mutant the server could not even sign: written as it is
            # a re-signing server may change what nothing else covers (created_at, an
            # extra field): only "never a traceback, one line for exit 2" holds then
            changed = False
        p.write_text(json.dumps(doc))
    res = run(str(p), "--key", key_file, "--no-state", "--jobs", "1")
    assert "Traceback" not in res.output
    assert res.exit_code in (0, 1, 2), res.output
    if res.exit_code == 2:
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    if changed:
        assert res.exit_code != 0, res.output


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(data=st.data())
def test_fuzz_verify_document_never_raises(data: st.DataObject) -> None:
    doc = _mutate(copy.deepcopy(_genuine()), data)
    rep = verify_document(doc, KEYS)
    assert rep["status"] in (VERIFIED, FAILED, UNUSABLE)
    assert not rep.get("reason") or "internal error" not in str(rep["reason"])


@pytest.mark.parametrize("sep", ["\n", "\x85", "\u2028", "\r"])
def test_an_error_naming_odd_characters_is_still_one_line(tmp_path: Path, sep: str) -> None:
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"protocol": [f"a{sep}b"]}))
    line = one_line_exit_2(run(str(p)))
    assert "unknown protocol" in line
