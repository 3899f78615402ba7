"""How the parse workers' chunks are cut: in order, every dump once, small, at most MAX_CHUNK ranks."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.load.fr_files import MAX_CHUNK, fr_chunks


@pytest.mark.parametrize(("ranks", "workers", "size"), [
    (65_536, 2, MAX_CHUNK),   # was 2,048: a worker held 2,048 ranks' results while it parsed on
    (8_192, 2, 256),
    (1_024, 2, 32),
    (100, 16, 8),
    (65_536, 16, 256),
    (7, 2, 8),
])
def test_chunks_cover_every_dump_in_order_and_stay_small(ranks: int, workers: int, size: int) -> None:
    items = [(Path(f"/dumps/rank_{rank}"), rank) for rank in range(ranks)]
    chunks = fr_chunks(items, workers)
    assert [item for chunk in chunks for item in chunk] == items
    assert max(map(len, chunks)) == min(size, ranks)
    assert all(len(chunk) <= MAX_CHUNK for chunk in chunks)
