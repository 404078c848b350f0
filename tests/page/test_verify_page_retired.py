"""The verify page and retired keys (issue 49), in Chromium: with the keys of /v1/keys, a
signature by a key listed with a ``retired_at`` counts only on a record that names its own
time before it (a qahwa-fair/2 transcript its ``ended_at``) and has no event stamped at or
after it; a genuine transcript signed before the rotation still passes its signature row."""

from __future__ import annotations

from typing import Any

import pytest

from tests.page.test_verify_page_v2 import _site, check
from tests.verify.test_verify_cli_helpers import SIGNER, key_b64, v2_match
from tests.verify.test_verify_retired import last_time, retired_at

pytestmark = [pytest.mark.browser]


def test_the_page_counts_a_retired_keys_signature_only_before_its_retirement(
    browser: Any,
) -> None:
    doc = v2_match("tawla", {"match_length": 1}, seed=4)
    (when,) = retired_at(last_time(doc), 1.0).retired.values()
    forged = SIGNER.signed(
        {k: v for k, v in doc.items() if k not in ("signature", "ended_at", "created_at")}
    )
    with _site(runtime=False) as site:
        site.keys = {
            "keys": [
                {
                    "key_id": SIGNER.key_id,
                    "alg": "ed25519",
                    "public_key": key_b64(),
                    "retired_at": when,
                }
            ]
        }
        verdict, rows, text = check(browser, site, doc)
        assert rows["signature"] == "true", text
        assert verdict != "fail", text
        verdict, rows, text = check(browser, site, forged)
        assert rows["signature"] == "false", text
        assert "NOT COUNTED" in text and "names no time of its own (ended_at)" in text
        assert verdict == "fail"
