"""Count the ``if`` lines that branch on a match's protocol or deal (issue 48's target: 20).

A match's protocol and deal are its variant, chosen once: ``games.registry.find_engine``
returns the engine class that carries both (``cls.PROTOCOL``, ``cls.PROTOCOL.deal``). Code
that asks again and again "which protocol? which deal?" is what this count watches.

Counted, in the shipped Python (:data:`PACKAGES`; not tests, benches or scripts): one per
line holding the test of an ``if`` / ``elif`` statement, a conditional expression
(``a if t else b``), a comprehension's ``if`` or a ``while``, when that test

1. reads a protocol's property: ``.signed``, ``.timed``, ``.sealed``, ``.deal``,
   ``.records`` of a *protocol expression* (``m.proto.signed``, ``cls.PROTOCOL.sealed``,
   ``protocol_for(doc).signed``);
2. compares a protocol or deal expression (``proto is V1``, ``doc.get("protocol") !=
   PROTOCOL_V2``, ``deal == "seeded"``, ``raw.get("deal") != "sealed"``);
3. calls a protocol or deal predicate (:data:`PREDICATES`: ``signed_protocol(doc)``); or
4. tests a flag named for one (:data:`FLAGS`: ``if v2:``, ``x if sealed else y``).

A *protocol expression* is one of the names :data:`PROTOCOL_NAMES` (``proto``, ``V2``,
``PROTOCOL_V3``, ``CURRENT``…), an attribute ``.proto`` / ``.protocol`` / ``.PROTOCOL`` /
``.name`` of one, ``protocol_for(...)`` / ``check_protocol(...)``, a ``"protocol"`` member
(``x.get("protocol")``, ``x["protocol"]``), a ``qahwa-fair/N`` string, or a tuple of them.
A *deal expression* is the name or attribute ``deal`` / ``DEAL`` or a ``"deal"`` member.
An action's type ``"sealed"`` or a sealed hand's ``self.sealed`` is neither, and ``proto is
None`` (was a protocol given?) is no branch on which one.

    python scripts/branches.py           # the count
    python scripts/branches.py --list    # and every line counted
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the shipped Python packages: the ones pyproject.toml has mypy check strictly
PACKAGES = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["packages"]
)
PROTOCOL_NAMES = frozenset(
    {"proto", "protocol", "PROTOCOL", "PROTOCOL_V1", "PROTOCOL_V2", "PROTOCOL_V3"}
    | {"V1", "V2", "V3", "CURRENT"}
)
PROTOCOL_ATTRS = frozenset({"proto", "protocol", "PROTOCOL"})
#: a protocol's properties a branch may read
PROPERTIES = frozenset({"signed", "timed", "sealed", "deal", "records"})
PREDICATES = frozenset({"signed_protocol", "lock_is_sealed", "deal_of"})
FLAGS = frozenset({"v1", "v2", "v3", "sealed", "seeded", "signed"})
_QAHWA_FAIR = re.compile(r"^qahwa-fair/\d+$")


def _func(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _member(node: ast.AST, name: str) -> bool:
    """``x.get(name…)`` or ``x[name]``."""
    if isinstance(node, ast.Call) and _func(node) == "get" and node.args:
        arg = node.args[0]
    elif isinstance(node, ast.Subscript):
        arg = node.slice
    else:
        return False
    return isinstance(arg, ast.Constant) and arg.value == name


def is_protocol(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in PROTOCOL_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in PROTOCOL_ATTRS or (node.attr == "name" and is_protocol(node.value))
    if isinstance(node, ast.Call) and _func(node) in ("protocol_for", "check_protocol"):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(_QAHWA_FAIR.match(node.value))
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(is_protocol(e) for e in node.elts)
    return _member(node, "protocol")


def is_deal(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("deal", "DEAL")
    if isinstance(node, ast.Attribute):
        return node.attr in ("deal", "DEAL")
    return _member(node, "deal")


def _is_none(nodes: list[ast.expr]) -> bool:
    """``x is None`` / ``x is not None``: whether a value was given, not which protocol."""
    return all(isinstance(n, ast.Constant) and n.value is None for n in nodes)


def names_variant(test: ast.AST) -> bool:
    """Whether a branch's test asks for the protocol or the deal (module doc)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Attribute) and node.attr in PROPERTIES and is_protocol(node.value):
            return True
        if isinstance(node, ast.Compare) and not _is_none(node.comparators):
            if any(is_protocol(o) or is_deal(o) for o in (node.left, *node.comparators)):
                return True
        if isinstance(node, ast.Call) and _func(node) in PREDICATES:
            return True
        if isinstance(node, ast.Name) and node.id in FLAGS:
            return True
    return False


def branch_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line, source line) of each branch on the protocol or the deal in one file."""
    text = path.read_text("utf-8")
    lines = text.splitlines()
    seen: set[int] = set()
    for node in ast.walk(ast.parse(text, str(path))):
        tests: list[ast.expr] = []
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = list(node.ifs)
        for test in tests:
            if test.lineno not in seen and names_variant(test):
                seen.add(test.lineno)
                yield test.lineno, lines[test.lineno - 1].strip()


def files() -> Iterator[Path]:
    """The packages' Python files (not the fetched Pyodide runtime under ``static/``)."""
    for pkg in PACKAGES:
        yield from sorted(p for p in (ROOT / pkg).rglob("*.py") if "static" not in p.parts)


def main(argv: list[str]) -> int:
    total = 0
    for path in files():
        for line, src in branch_lines(path):
            total += 1
            if "--list" in argv:
                print(f"{path.relative_to(ROOT)}:{line}: {src}")
    print(f"if lines branching on protocol or deal: {total} (target 20; scripts/branches.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
