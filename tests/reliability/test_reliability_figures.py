"""The figures of docs/reliability.md are the tests' own constants."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import test_bad_inputs
import test_batch_trust
import test_cache_trust
import test_crash_safety
import test_dataset_sniffing
import test_engine_trust
import test_file_trust
import test_fuzz
import test_output_hygiene
import test_provider_faults
import test_resources
import test_secrets
import test_summary_marker
import test_trust_config
from conftest import REPO

TIMES = "\N{MULTIPLICATION SIGN}"


def _section() -> str:
    page = (REPO / "docs" / "reliability.md").read_text(encoding="utf-8")
    return " ".join(page.split())


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



def _cases(module: ModuleType) -> int:
    """The test cases a module holds, as pytest collects them (each parametrized case)."""
    total = 0
    for name, function in vars(module).items():
        if name.startswith("test_") and callable(function):
            count = 1
            for mark in getattr(function, "pytestmark", []):
                if mark.name == "parametrize":
                    count *= len(mark.args[1])
            total += count
    return total


def test_the_attack_counts_by_class_match_the_tests() -> None:
    text = _section()
    for module in (
        test_trust_config,
        test_cache_trust,
        test_batch_trust,
        test_summary_marker,
        test_file_trust,
        test_resources,
        test_output_hygiene,
        test_dataset_sniffing,
        test_engine_trust,
    ):
        where = Path(module.__file__ or "").resolve().relative_to(REPO).as_posix()
        assert f"(`{where}`) | {_cases(module)} cases:" in text, where
