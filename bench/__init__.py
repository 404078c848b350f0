"""Benchmarks (`make bench`): each ``bench/bench_*.py`` has ``run() -> None`` printing ratios."""
