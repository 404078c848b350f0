"""qahwa-certify: its statistics, that the real derivation passes, and that streams with a
known flaw each fail (issue 25). Small sizes and fixed seeds: every run is deterministic."""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fairness
from verify_cli.certify import battery as bat
from verify_cli.certify.battery import Sizes, hakem_probs, run_battery
from verify_cli.certify.cli import run
from verify_cli.certify.sources import DerivationSource, FileSource, WordStream
from verify_cli.certify.statistics import (
    binomial_two_sided,
    chi2_sf,
    chi_square,
    holm,
    normal_two_sided,
    pool_tail,
)

SMALL = Sizes(dice=20_000, decks=1_000, tiles=500, lots=2_000, words=16_384)
VERIFY = str(Path(sys.executable).with_name("verify"))
SMALL_ARGS = [
    "--dice",
    "20000",
    "--decks",
    "1000",
    "--tiles",
    "500",
    "--lots",
    "2000",
    "--words",
    "16384",
    "-q",
]


# -- statistics ------------------------------------------------------------------------------


def _poisson_q(a: int, x: float) -> float:
    """Q(a, x) for integer a: e^-x Σ_{i<a} x^i / i! (in logs)."""
    return sum(math.exp(-x + i * math.log(x) - math.lgamma(i + 1)) for i in range(a))


@pytest.mark.parametrize("x", [0.001, 0.5, 1.0, 3.84, 10.0, 50.0, 700.0])
def test_chi2_sf_closed_forms(x: float) -> None:
    assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10, abs=1e-300)
    assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-9, abs=1e-300)
    assert chi2_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(
    "df,x",
    [
        (2600, 2600.0),
        (2600, 2400.0),
        (2600, 2850.0),
        (8100, 8100.0),
        (8100, 8500.0),
        (70, 40.0),
        (70, 120.0),
    ],
)
def test_chi2_sf_large_df(df: int, x: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(_poisson_q(df // 2, x / 2), rel=1e-8)


def test_chi2_sf_known_quantiles() -> None:
    # textbook critical values: P(χ²(df) ≥ q) = p
    for df, q, p in (
        (1, 6.634897, 0.01),
        (5, 15.086272, 0.01),
        (35, 57.342073, 0.01),
        (5, 11.070498, 0.05),
        (63, 82.528727, 0.05),
    ):
        assert chi2_sf(q, df) == pytest.approx(p, rel=1e-5)
    assert chi2_sf(0.0, 3) == 1.0
    assert chi2_sf(1e6, 3) == 0.0
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5]
    assert holm([0.4, 0.3]) == pytest.approx([0.6, 0.6])  # monotone in rank
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1


def test_binomial_and_normal() -> None:
    assert binomial_two_sided(5, 10, 0.5) == pytest.approx(1.0)
    assert binomial_two_sided(0, 10, 0.5) == pytest.approx(2 / 1024)
    assert binomial_two_sided(10, 10, 1 / 6) == pytest.approx((1 / 6) ** 10, rel=1e-9)
    assert normal_two_sided(1.959964) == pytest.approx(0.05, rel=1e-5)


def test_chi_square_and_pooling() -> None:
    cs = chi_square([10, 20, 30], [20, 20, 20])
    assert (cs.statistic, cs.df) == (10.0, 2)
    assert cs.p_value == pytest.approx(math.exp(-5))
    assert pool_tail([0.5, 0.3, 0.15, 0.04, 0.01], 100) == [(0, 1), (1, 2), (2, 3), (3, 5)]
    with pytest.raises(ValueError):
        chi_square([1, 2], [0, 3])


def test_hakem_probabilities() -> None:
    """Exact, and not uniform: seat 0 sees the first card. Checked by enumerating where the
    first ace can fall in a small deck (8 cards, 4 aces: C(8,4) = 70 layouts)."""
    from itertools import combinations

    for cards, seats in ((8, 4), (8, 3), (9, 2)):
        counts = [0] * seats
        layouts = list(combinations(range(cards), 4))
        for aces in layouts:
            counts[min(aces) % seats] += 1
        assert hakem_probs(cards, seats) == pytest.approx([c / len(layouts) for c in counts])
    p4 = hakem_probs(52, 4)
    assert sum(p4) == pytest.approx(1) and p4[0] > p4[1] > p4[2] > p4[3]


def test_position_statistic_is_calibrated() -> None:
    """X²·(n−1)/n over a permutation count matrix has mean (n−1)² under uniform shuffles
    (checked with random.shuffle, independent of the derivation)."""
    rng = random.Random(7)
    n, draws, reps = 6, 120, 300
    stats = []
    for _ in range(reps):
        counts = [[0] * n for _ in range(n)]
        for _ in range(draws):
            perm = list(range(n))
            rng.shuffle(perm)
            for pos, item in enumerate(perm):
                counts[item][pos] += 1
        e = draws / n
        stats.append(sum((c - e) ** 2 / e for row in counts for c in row) * (n - 1) / n)
    mean = sum(stats) / reps
    # E = 25, sd of a χ²(25) is √50 ≈ 7.1, so the mean of 300 has sd ≈ 0.41
    assert abs(mean - (n - 1) ** 2) < 1.5


# -- the real derivation ---------------------------------------------------------------------


def test_the_derivation_passes(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    assert run(["--out", str(out), "--seed", "ci-1", "--no-plots", *SMALL_ARGS]) == 0
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["verdict"] == "pass" and report["tests_failed"] == []
    assert report["confirmation"] is None
    assert report["sizes"] == SMALL.as_dict()
    assert report["source"]["kind"] == "derivation"
    assert report["source"]["protocol"] == "qahwa-fair/2"
    names = {t["name"] for t in report["tests"]}
    for want in (
        "raw.bits",
        "raw.bytes",
        "dice.faces",
        "dice.pairs.within_roll",
        "dice.pairs.between_rolls",
        "dice.runs",
        "dice.serial_correlation",
        "deck52.positions",
        "deck52.item[AS]",
        "tiles28.positions",
        "tiles91.positions",
        "tiles91.item[12-12]",
        "mexican.doubles",
        "mexican.pips",
        "hokm.first_hakem.4p",
        "hokm.first_hakem.3p",
        "hokm.first_hakem.2p",
        "lots.dealer.4",
        "lots.dealer.2",
        "uniform.3",
        "uniform.7",
        "uniform.37",
        f"uniform.{2**31 + 1}",
        f"uniform.{3 * 2**30}",
    ):
        assert want in names
    for t in report["tests"]:
        assert set(t) >= {"name", "statistic", "df", "p_value", "pass"}
        assert 0 <= t["p_value"] <= t["p_adjusted"] <= 1 and t["pass"] is True
    dice = next(t for t in report["tests"] if t["name"] == "dice.faces")
    assert sum(dice["observed"]) == SMALL.dice
    # fingerprints: the kit's own files, fairness and games, each SHA-256 of the file
    fp = report["fingerprints"]["files"]
    derive = Path(fairness.__file__).parent / "derive.py"
    assert fp["fairness/derive.py"] == hashlib.sha256(derive.read_bytes()).hexdigest()
    assert "games/hokm.py" in fp and "verify_cli/certify/battery.py" in fp
    assert (out / "report.html").read_text("utf-8").count("Verdict: PASS") == 1


def test_a_seed_makes_the_run_reproducible() -> None:
    a = run_battery(DerivationSource("same"), SMALL)
    b = run_battery(DerivationSource("same"), SMALL)
    c = run_battery(DerivationSource("other"), SMALL)
    assert [r.observed for r in a.results] == [r.observed for r in b.results]
    assert [r.observed for r in a.results] != [r.observed for r in c.results]


def test_html_with_and_without_matplotlib(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        importlib.import_module("matplotlib")
        have = True
    except ImportError:
        have = False
    assert run(["--out", str(tmp_path / "a"), "--seed", "ci-1", *SMALL_ARGS]) == 0
    page = (tmp_path / "a" / "report.html").read_text("utf-8")
    assert ("data:image/png;base64," in page) is have
    assert ("plots need the certify extra" in page) is not have

    real = importlib.import_module

    def no_matplotlib(name: str, package: str | None = None) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_matplotlib)
    assert run(["--out", str(tmp_path / "b"), "--seed", "ci-1", *SMALL_ARGS]) == 0
    page = (tmp_path / "b" / "report.html").read_text("utf-8")
    assert "data:image/png" not in page and "plots need the certify extra" in page
    assert json.loads((tmp_path / "b" / "report.json").read_text("utf-8"))["verdict"] == "pass"


# -- streams with a known flaw ---------------------------------------------------------------


def _good_words(n: int, seed: int) -> bytearray:
    return bytearray(random.Random(seed).randbytes(4 * n))


def _certify_file(tmp_path: Path, data: bytes) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "words.bin"
    path.write_bytes(data)
    code = run(["--out", str(tmp_path / "out"), "--source", str(path), "--no-plots", *SMALL_ARGS])
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    return code, report


def test_a_good_word_file_passes(tmp_path: Path) -> None:
    code, report = _certify_file(tmp_path, bytes(_good_words(SMALL.words_needed(), 11)))
    assert code == 0 and report["verdict"] == "pass"
    assert report["source"]["kind"] == "file"


def test_a_stuck_bit_fails(tmp_path: Path) -> None:
    data = _good_words(SMALL.words_needed(), 12)
    stuck = bytes(range(256)).translate(bytes(v | 0x08 for v in range(256)))
    data[2::4] = bytes(data[2::4]).translate(stuck)  # bit 11 of every word is always 1
    code, report = _certify_file(tmp_path, bytes(data))
    assert code == 1 and report["verdict"] == "fail"
    assert "raw.bits" in report["tests_failed"]
    assert "raw.bits" in report["confirmation"]["tests_failed"]
    bits = next(t for t in report["tests"] if t["name"] == "raw.bits")
    assert bits["observed"][31 - 11] == SMALL.words


def test_one_percent_of_words_stuck_at_zero_fails(tmp_path: Path) -> None:
    n = SMALL.words_needed()
    data = _good_words(n, 13)
    rng = random.Random(14)
    for i in rng.sample(range(n), n // 100):
        data[4 * i : 4 * i + 4] = b"\0\0\0\0"
    code, report = _certify_file(tmp_path, bytes(data))
    assert code == 1
    assert "raw.bytes" in report["tests_failed"]
    assert "raw.bytes" in report["confirmation"]["tests_failed"]


def test_a_low_quality_lcg_fails(tmp_path: Path) -> None:
    """Numerical Recipes' quick LCG (x ← 1664525x + 1013904223 mod 2^32): its low bits
    cycle (bit 0 alternates), so the two dice of a roll always differ in parity."""
    n = SMALL.words_needed()
    x, out = 12345, []
    for _ in range(n):
        x = (1664525 * x + 1013904223) & 0xFFFFFFFF
        out.append(x)
    code, report = _certify_file(tmp_path, struct.pack(f">{n}I", *out))
    assert code == 1
    assert "dice.pairs.within_roll" in report["tests_failed"]
    assert "dice.pairs.within_roll" in report["confirmation"]["tests_failed"]


def test_a_failed_first_sample_is_confirmed_on_a_second(tmp_path: Path) -> None:
    """A run fails only when an independent second sample fails too: here the words of the
    first sample's raw segment (its first words) have a stuck bit and the rest are good, so
    the run passes, and the report says both."""
    data = _good_words(SMALL.words_needed(), 17)
    raw = 4 * SMALL.words
    zero = bytes(range(256)).translate(bytes(v & 0xF7 for v in range(256)))
    data[2:raw:4] = bytes(data[2:raw:4]).translate(zero)  # bit 11 stuck at 0
    code, report = _certify_file(tmp_path, bytes(data))
    assert code == 0 and report["verdict"] == "pass"
    assert "raw.bits" in report["tests_failed"]
    assert report["confirmation"]["tests_failed"] == []
    page = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "a second, independent sample was drawn: it passed" in page


class ModuloBiased(WordStream):
    """uniform(n) = word mod n, without rejection: the classic modulo bias."""

    def uniform(self, n: int) -> int:
        return self.word() % n


def test_a_modulo_biased_mapping_fails() -> None:
    data = bytes(_good_words(SMALL.words_needed(), 15))
    good = run_battery(FileSource(data, "good"), SMALL)
    assert all(r.passed for r in good.results)
    biased = run_battery(FileSource(data, "mod", ModuloBiased), SMALL)
    failed = {r.name for r in biased.results if not r.passed}
    # 3·2^30: words from 3·2^30 up wrap onto [0, 2^30), which then comes twice as often
    assert f"uniform.{3 * 2**30}" in failed


# -- input the kit cannot use ----------------------------------------------------------------


def test_a_short_source_file_is_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "short.bin"
    path.write_bytes(bytes(4000))
    assert run(["--out", str(tmp_path / "out"), "--source", str(path), *SMALL_ARGS]) == 2
    err = capsys.readouterr().err
    least = Sizes.smallest().words_needed() * 4
    assert "even the smallest sizes (--dice 4000 --decks 1000 --tiles 500 --lots 2000 " in err
    assert f"need at least {least:,} bytes" in err
    assert f"these sizes need {SMALL.words_needed() * 4:,} bytes" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_every_minimum_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One run names every size under its minimum, and the smallest sizes (issue 30)."""
    args = ["--dice", "100", "--decks", "10", "--tiles", "5", "--lots", "20", "--words", "40"]
    assert run(["--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    for name, least in (
        ("dice", "4,000"),
        ("decks", "1,000"),
        ("tiles", "500"),
        ("lots", "2,000"),
        ("words", "4,096"),
    ):
        assert f"--{name} must be at least {least}" in err, err
    assert (
        "the smallest sizes: --dice 4000 --decks 1000 --tiles 500 --lots 2000 --words 4096" in err
    )


def test_a_source_file_too_short_for_the_sizes_scales_them_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # between what the smallest sizes and what SMALL need
    n = (SMALL.words_needed() * 4 + Sizes.smallest().words_needed() * 4) // 2
    path = tmp_path / "half.bin"
    path.write_bytes(bytes(_good_words(n // 4, 21)))
    code = run(["--out", str(tmp_path / "out"), "--source", str(path), "--no-plots", *SMALL_ARGS])
    assert code == 0
    err = capsys.readouterr().err
    fit = SMALL.scaled_to(n // 4 * 4)
    assert fit is not None and fit != SMALL
    assert f"sizes scaled to fit the file: {fit.args()}" in err
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert report["sizes"] == fit.as_dict()
    assert fit.words_needed() * 4 <= n
    for k, v in fit.as_dict().items():
        assert Sizes.smallest().as_dict()[k] <= v <= SMALL.as_dict()[k]


def test_verify_certify_is_the_kit(tmp_path: Path) -> None:
    """`verify certify` runs the kit (qahwa-certify stays as its alias), with the same
    exit codes and reports."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [VERIFY, "certify", "--out", str(out), "--seed", "v", "--no-plots", *SMALL_ARGS[:-1]],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("verify certify: PASS")
    assert json.loads((out / "report.json").read_text("utf-8"))["verdict"] == "pass"
    bad = subprocess.run(
        [VERIFY, "certify", "--dice", "10"], capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("verify: error: --dice must be at least 4,000")
    alias = subprocess.run(
        [str(Path(VERIFY).with_name("qahwa-certify")), "--dice", "10"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert alias.returncode == 2 and alias.stderr.startswith("qahwa-certify: error: --dice")


@pytest.mark.parametrize(
    "args,message",
    [
        (["--dice", "100"], "--dice must be at least"),
        (["--dice", "20002"], "multiple of 4"),
        (["--source", "/nonexistent/words.bin"], "cannot read it"),
        (["--raw", "x.bin"], "--raw OUT and --bytes N go together"),
        (["--raw", "x.bin", "--bytes", "0"], "--bytes must be 1"),
        (["--seed", "s", "--source", "f"], "with --source the file is the stream"),
        (["--decks", "many"], "is not a valid integer"),
    ],
)
def test_unusable_options_are_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["--out", str(tmp_path / "out"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.bin").exists()


def test_raw_dump_is_the_derivation_stream(tmp_path: Path) -> None:
    out = tmp_path / "raw.bin"
    assert run(["--raw", str(out), "--bytes", "100003", "--seed", "lab", "-q"]) == 0
    data = out.read_bytes()
    assert len(data) == 100003
    key = DerivationSource("lab").key("raw", "rng", 0)
    s = fairness.Stream(key, "raw")
    words = struct.unpack(">25000I", data[:100000])
    assert list(words) == [s.word() for _ in range(25000)]
    assert data[100000:] == s.word().to_bytes(4, "big")[:3]
    # a 64-byte v2 key: HMAC-SHA512 blocks, 16 words each
    assert len(key) == 64
    assert data[:64] == fairness.Stream(key, "raw").word().to_bytes(4, "big") + data[4:64]
    again = tmp_path / "again.bin"
    assert run(["--raw", str(again), "--bytes", "100003", "--seed", "lab", "-q"]) == 0
    assert again.read_bytes() == data
    assert DerivationSource(None).key("raw", "rng", 0) != key  # fresh seeds otherwise


def test_sizes_words_needed_covers_a_run() -> None:
    """A file exactly words_needed() long is enough for the run it sizes."""
    data = bytes(_good_words(SMALL.words_needed(), 16))
    src = FileSource(data, "exact")
    run_battery(src, SMALL)
    assert src.words.words_read <= SMALL.words_needed(1)
    assert src.words.words_read > 0.98 * (SMALL.words_needed(1) - 4096)
    assert SMALL.words_needed() == 2 * SMALL.words_needed(1) - 4096  # room for a second
    assert bat.ALPHA == 0.01


def test_the_pack_needs_dieharder_and_ent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """make certify's tools are Debian's; without them the pack says what to install and
    writes nothing (its dieharder/ent runs live only in `make certify`, not in tests)."""
    from verify_cli.certify import pack

    monkeypatch.setattr(pack.shutil, "which", lambda name: None)
    assert pack.run(["--out", str(tmp_path / "pack")]) == 2
    assert "apt-get install dieharder ent" in capsys.readouterr().err
    assert not (tmp_path / "pack").exists()
    monkeypatch.setattr(pack.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert pack.run(["--out", str(tmp_path / "pack"), "--dieharder-tests", "a,b"]) == 2
    assert "--dieharder-tests must be numbers" in capsys.readouterr().err
