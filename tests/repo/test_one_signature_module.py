"""Record signatures are checked in one module (issue 48): ``fairness/records.py`` holds the
only Ed25519 verify calls of the shipped Python. ``tlog/note.py`` is the C2SP signed-note
verifier (a checkpoint's and its witnesses' signatures, not a record's); the sealed deal's
crypto (``sealed/``, ``games/sealed_backend.py``) checks proofs, which are not signatures.

A module checks an Ed25519 signature when it imports pyca's Ed25519 key types and calls a
``verify`` method, catches ``cryptography.exceptions.InvalidSignature``, or imports PyNaCl's
signing module."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the shipped Python packages: the ones pyproject.toml has mypy check strictly (as
#: scripts/branches.py counts them)
PACKAGES = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["packages"]
)
#: the modules that may check an Ed25519 signature (the module doc)
ALLOWED = {"fairness/records.py", "tlog/note.py"}
_ED25519 = "cryptography.hazmat.primitives.asymmetric.ed25519"


def signature_checks(source: str) -> list[str]:
    """What in ``source`` checks an Ed25519 signature (the module doc): one line each."""
    tree = ast.parse(source)
    found: list[str] = []
    uses_ed25519 = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {a.name for a in node.names}
            if node.module == _ED25519:
                uses_ed25519 = True
            if node.module == "cryptography.exceptions" and "InvalidSignature" in names:
                found.append(f"line {node.lineno}: imports InvalidSignature")
            if node.module.startswith("nacl"):
                found.append(f"line {node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == _ED25519:
                    uses_ed25519 = True
                if alias.name.startswith("nacl"):
                    found.append(f"line {node.lineno}: imports {alias.name}")
    if uses_ed25519:
        found += [
            f"line {node.lineno}: calls .verify() beside Ed25519 keys"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "verify"
        ]
    return found


def shipped_files() -> list[Path]:
    return [
        p
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
        if "static" not in p.relative_to(ROOT).parts
    ]


def test_the_checker_finds_a_signature_check() -> None:
    assert signature_checks(
        "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey\n"
        "def ok(pub: Ed25519PublicKey, sig: bytes, msg: bytes) -> None:\n"
        "    pub.verify(sig, msg)\n"
    ) == ["line 3: calls .verify() beside Ed25519 keys"]
    assert signature_checks("from cryptography.exceptions import InvalidSignature\n") == [
        "line 1: imports InvalidSignature"
    ]
    assert signature_checks("import nacl.signing\n") == ["line 1: imports nacl.signing"]
    assert signature_checks("def f(p):\n    return p.verify(b'', b'')\n") == []


def test_records_is_the_one_module_that_checks_signatures() -> None:
    files = shipped_files()
    assert len(files) > 50, "the shipped packages were not found"
    found = {
        rel: hits
        for p in files
        if (rel := p.relative_to(ROOT).as_posix()) not in ALLOWED
        and (hits := signature_checks(p.read_text("utf-8")))
    }
    assert found == {}, f"an Ed25519 signature checked outside {sorted(ALLOWED)}: {found}"
    # and the allowed module does check them (else the rule names the wrong module)
    assert signature_checks((ROOT / "fairness/records.py").read_text("utf-8"))
