"""No package registry or index is named anywhere in the repository: installs use pip (and
npm, uv) as the machine configures them, and the locks pin every file by hash."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Hosts of package registries and their file servers, written so that this file names none
# of them itself (each pattern has a character class where the host has a plain letter).
HOSTS = re.compile(
    r"py[p]i\.(org|io|python\.org)|[f]iles\.pythonhosted|pythonhoste[d]\.org"
    r"|np[m]js\.(org|com)|registry\.yarnp[k]g|[c]rates\.io|rubyg[e]ms\.org"
    r"|proxy\.golan[g]\.org|repo[1]\.maven|package[s]\.debian|anaconda\.(org|com)",
    re.IGNORECASE,
)
# Settings that point pip or uv at an index (any index: the machine's configuration decides)
INDEX_SETTINGS = re.compile(
    r"(PIP|UV)_(EXTRA_)?INDEX_URL|--(extra-)?index-url|\[\[tool\.uv\.inde[x]\]\]"
    r"|npm_config_registr[y]|--registr[y]\b",
    re.IGNORECASE,
)


def tracked_text_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    files = [ROOT / p for p in out.decode().split("\0") if p]
    return [f for f in files if f.is_file() and b"\0" not in f.read_bytes()[:4096]]


def offending(pattern: re.Pattern[str]) -> list[str]:
    hits = []
    for f in tracked_text_files():
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    return hits


def test_the_patterns_catch_what_they_are_for() -> None:
    for text in (
        "PIP_EXTRA_" + "INDEX_URL=https://" + "pypi" + ".org/simple",
        "https://" + "files." + "pythonhosted" + ".org/packages/x.whl",
        "https://registry." + "npmjs" + ".org/pyodide",
    ):
        assert HOSTS.search(text) or INDEX_SETTINGS.search(text), text
    assert INDEX_SETTINGS.search("pip install --" + "index-url file:///x")
    assert not HOSTS.search("the npm registry and PyPI, by package name")


def test_no_registry_host_is_named_in_the_repository() -> None:
    assert len(tracked_text_files()) > 50
    assert offending(HOSTS) == []


def test_nothing_points_pip_uv_or_npm_at_an_index() -> None:
    assert offending(INDEX_SETTINGS) == []
