"""Rank lists as short ranges: ``format_ranks([0, 1, 2, 4]) -> "0-2,4"`` and back."""

from __future__ import annotations

from collections.abc import Iterable


def format_ranks(ranks: Iterable[int]) -> str:
    """Sorted, de-duplicated ranks folded into ranges: ``[4, 0, 1, 2, 2] -> "0-2,4"``."""
    ordered = sorted(set(ranks))
    if not ordered:
        return ""
    parts: list[str] = []
    start = prev = ordered[0]
    for rank in ordered[1:]:
        if rank == prev + 1:
            prev = rank
            continue
        parts.append(_span(start, prev))
        start = prev = rank
    parts.append(_span(start, prev))
    return ",".join(parts)


def _span(start: int, end: int) -> str:
    if start == end:
        return str(start)
    if end == start + 1:
        return f"{start},{end}"
    return f"{start}-{end}"


def parse_ranks(text: str) -> list[int]:
    """The inverse of :func:`format_ranks`: ``"0-2,4" -> [0, 1, 2, 4]``."""
    ranks: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            ranks.update(range(int(low), int(high) + 1))
        else:
            ranks.add(int(part))
    return sorted(ranks)


def count_ranks(count: int) -> str:
    """``"1 rank"``, ``"4 ranks"``."""
    return f"{count} rank" if count == 1 else f"{count} ranks"


def rank_word(ranks: Iterable[int]) -> str:
    """``"rank 3"`` or ``"ranks 0-2,4"``."""
    ordered = sorted(set(ranks))
    return f"rank {ordered[0]}" if len(ordered) == 1 else f"ranks {format_ranks(ordered)}"
