"""Run every benchmark module: ``python -m bench [name ...]``.

Benchmarks print numbers measured in one run (rates and ratios); they never pass or fail
on wall time.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if any(a in n for a in argv)]
    for name in names:
        print(f"== {name[len('bench_') :]}")
        importlib.import_module(f"bench.{name}").run()
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
