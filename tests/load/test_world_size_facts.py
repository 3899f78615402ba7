"""The world size a log states: each pattern runs only where the text holds its literal (a large log's
excerpt reads in a tenth of the time); the answer is that of every pattern run over all the text."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.load.logs.facts import _PATTERNS, MAX_WORLD_SIZE, WorldSize, world_size_facts

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def _every_pattern(text: str) -> WorldSize | None:
    best: WorldSize | None = None
    for pattern, source, _needle in _PATTERNS:
        for match in pattern.finditer(text):
            size = int(match.group(1))
            if 1 < size <= MAX_WORLD_SIZE and (best is None or size > best.size):
                best = WorldSize(size, source)
    return best


@pytest.mark.parametrize("text, size", [
    ("WoRlD SiZe: 16\n", 16),                       # any mix of cases
    ("ℹ İ WORLD_SIZE=8 ß\n", 8),                    # characters whose lower case is longer before it
    ("'world_size': 4, nranks 32\n", 32),
    ("comm 0x1 rank 3 nRanks 8 nNodes 1\n", 8),
    ("GLOBAL_RANK: 0, MEMBER: 1/24\n", 24),
    ("Num processes: 6\n", 6),
    ("num_processes = 12\n", 12),
    ("global_world_sizes=[64, 64]\n", 64),
    ("a world of trouble, sizes 9\n", None),
    ("", None),
])
def test_each_pattern_is_read_where_its_literal_is(text: str, size: int | None) -> None:
    found = world_size_facts(text)
    assert found == _every_pattern(text)
    assert (found.size if found else None) == size


def test_the_realworld_corpus_gives_what_every_pattern_gives() -> None:
    logs = sorted(CASES.glob("*/*.txt")) + sorted(CASES.glob("*/*.log"))
    assert len(logs) > 100
    stated = 0
    for log in logs:
        text = log.read_text(encoding="utf-8", errors="replace")
        found = world_size_facts(text)
        assert found == _every_pattern(text), log
        stated += found is not None
    assert stated > 0
