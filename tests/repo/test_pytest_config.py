"""The suite's own configuration: a test that hangs fails instead of hanging the run."""

from __future__ import annotations

import pytest


def test_every_test_has_a_timeout(request: pytest.FixtureRequest) -> None:
    """pytest-timeout is active and pyproject.toml gives every test a default limit (a
    generous one: the slowest test takes a few minutes)."""
    config = request.config
    assert config.pluginmanager.hasplugin("timeout")
    limit = float(config.getini("timeout"))
    assert 300 <= limit <= 1800
    assert request.node.get_closest_marker("timeout") is None  # the default applies here
