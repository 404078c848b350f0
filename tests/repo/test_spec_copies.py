"""docs/spec/ carries the specs this repository implements, in step with upstream.

The copies must match the sums recorded in docs/spec/README.md (an edit is deliberate and
records its new sum). Where the upstream spec folder is beside the repository (on the
developers' machines and in CI), each copy must equal it byte for byte, unless the copy
declares itself corrected here (its text holds the marker below and says what differs).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec"
UPSTREAM = ROOT.parent / "shared" / "spec"
CORRECTED = "Corrected in this repository"
#: a spec this repository writes itself (upstream has a design brief for it, not the spec)
WRITTEN_HERE = "Written in this repository"

SUMS = {
    name: digest
    for digest, name in re.findall(
        r"^([0-9a-f]{64})  (\S+)$", (SPEC / "README.md").read_text("utf-8"), re.M
    )
}
FILES = sorted(str(p.relative_to(SPEC)) for p in SPEC.rglob("*.md") if p.name != "README.md")


def test_every_copy_has_a_recorded_sum() -> None:
    assert {"fairness-v1.md", "api.md"} <= set(FILES)
    assert set(SUMS) == set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_copy_matches_its_recorded_sum(name: str) -> None:
    got = hashlib.sha256((SPEC / name).read_bytes()).hexdigest()
    assert got == SUMS[name], f"docs/spec/{name} changed: record its new sum in docs/spec/README.md"


@pytest.mark.parametrize("name", FILES)
def test_copy_is_in_step_with_upstream(name: str) -> None:
    upstream = UPSTREAM / name
    if not UPSTREAM.is_dir():
        return  # a clone on its own: the recorded sums above are the check
    copy = (SPEC / name).read_bytes()
    if not upstream.is_file() and WRITTEN_HERE in copy.decode("utf-8"):
        return
    assert upstream.is_file(), f"upstream has no {name} any more"
    if CORRECTED in copy.decode("utf-8"):
        return
    assert copy == upstream.read_bytes(), f"docs/spec/{name} differs from upstream: copy it"
