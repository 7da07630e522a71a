"""The README's Reliability figures are the tests' own constants."""

from __future__ import annotations

import test_bad_inputs
import test_crash_safety
import test_fuzz
import test_provider_faults
import test_secrets
from conftest import REPO

TIMES = "\N{MULTIPLICATION SIGN}"


def _section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return " ".join(readme.split("## Reliability", 1)[1].split())


def test_the_reliability_figures_match_the_tests() -> None:
    text = _section()
    bad = test_bad_inputs
    runs = sum(len(list(bad._runs(command))) for command in bad.COMMANDS) * len(bad.CASES)
    assert f"{len(bad.CASES)} bad inputs {TIMES} {len(bad.COMMANDS)} commands: {runs} runs" in text
    valid = [p for p in bad.VALID.iterdir() if p.suffix in (".json", ".jsonl")]
    assert f"{len(valid)} files and a valid {bad.HUGE_LINE_BYTES >> 20} MB line" in text
    assert f"{test_fuzz.FUZZ_EXAMPLES:,} generated or mutated inputs per run" in text
    crash = test_crash_safety
    assert f"{crash.KILL_POINTS} kill points" in text
    assert f"a batch of {2 * len(crash.SMALL) + 1} files around a 30 MB dataset" in text
    faults = test_provider_faults
    assert f"{faults.FAULT_KINDS} fault kinds {TIMES} {len(faults.KINDS)} APIs" in text
    assert f"{len(test_secrets.KEYS)} fake keys" in text

