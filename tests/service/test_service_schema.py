"""Schemathesis over the app's own /openapi.json: no 5xx, responses match the schema."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from service.app import create_app
from tests.support import sqlite_settings
from tests.support.live_server import CREATING

_tmp = tempfile.TemporaryDirectory(prefix="qahwa-schema-")
_settings = sqlite_settings(Path(_tmp.name), long_poll_max_seconds=0)
APP = create_app(_settings)
OPERATOR_KEY = _settings.operator_key_path.read_text(encoding="ascii").strip()

schema = schemathesis.openapi.from_asgi("/openapi.json", APP).exclude(
    path_regex=r".*/events/stream$"
)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms(case: schemathesis.Case) -> None:
    # Every other default check applies (no 5xx, documented status codes and content
    # types, responses matching their schemas). "Valid data accepted" cannot hold here:
    # schema-valid bodies are still refused by the game rules (a seat count, a move).
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


# -- stateful: follow the schema's links (create → commit/lock/reveal/act/… with the answer's token)
class LinkedCalls(schema.as_state_machine()):  # type: ignore[misc]
    def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
        # creations carry the server's first operator key, so the links from them are
        # followed (test_api_conforms sends none: 401)
        if case.method.upper() == "POST" and case.path in CREATING:
            return {"headers": {"Authorization": f"Bearer {OPERATOR_KEY}"}}
        return {}

    def validate_response(
        self, response: Any, case: schemathesis.Case, additional_checks: Any = None, **kwargs: Any
    ) -> None:
        case.validate_response(response, excluded_checks=[positive_data_acceptance])


def test_links_are_in_the_schema() -> None:
    doc = APP.openapi()
    links = doc["paths"]["/v1/matches"]["post"]["responses"]["201"]["links"]
    assert {
        "GetMatch",
        "Commit",
        "Lock",
        "Reveal",
        "State",
        "Act",
        "Resign",
        "Events",
        "Transcript",
    } <= set(links)
    assert links["Act"]["parameters"]["header.Authorization"].startswith("Bearer {$response")


TestLinkedCalls = LinkedCalls.TestCase
TestLinkedCalls.settings = settings(
    max_examples=15, stateful_step_count=6, deadline=None, suppress_health_check=list(HealthCheck)
)


def test_routes_document_their_own_errors_in_the_error_shape() -> None:
    doc = APP.openapi()
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            errors = {int(c): r for c, r in op["responses"].items() if int(c) >= 400}
            assert 503 in errors, (method, path)
            for status, resp in errors.items():
                ref = resp["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorOut"), (method, path, status)
                assert "`" in resp["description"], (method, path, status)  # lists codes
            has_body = "requestBody" in op
            assert (413 in errors) == has_body, (method, path)
            if not op.get("parameters") and not has_body:
                assert 422 not in errors, (method, path)
    assert set(doc["paths"]["/v1/keys"]["get"]["responses"]) == {"200", "503"}
    act = doc["paths"]["/v1/matches/{match_id}/actions"]["post"]["responses"]
    assert "`stale_version`" in act["409"]["description"]
