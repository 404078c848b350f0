"""Fixtures of the verify tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.verify.test_verify_cli_helpers import key_b64


@pytest.fixture
def key_file(tmp_path: Path) -> str:
    """The tests' server key, written to a file as ``verify --key`` reads it."""
    p = tmp_path / "server.pub"
    p.write_text(key_b64() + "\n")
    return str(p)
