"""Short human words for collectives, ranks and hosts, shared by analysis and reporters."""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping

from triage.analysis.ranks import format_ranks, rank_word
from triage.model import Collective


def call(coll: Collective, out: bool = False) -> str:
    """``all_gather(count=8, bfloat16)``; p2p ops add the peer; ``out`` adds the output elements."""
    parts: list[str] = []
    if coll.count is not None:
        parts.append(f"count={coll.count}")
    if out and coll.output_sizes:
        parts.append(f"out={sum(_numel(shape) for shape in coll.output_sizes)}")
    if coll.dtype:
        parts.append(coll.dtype)
    if coll.is_p2p and coll.peer is not None:
        parts.append(f"peer={coll.peer}")
    return f"{coll.op}({', '.join(parts)})"


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for dim in shape:
        n *= dim
    return n


def who(ranks: tuple[int, ...] | list[int], hosts: Mapping[int, str | None]) -> str:
    """``rank 3 (node07)``, ``ranks 0-2,4 (node01)`` or ``ranks 0-7 (node01, node02)``."""
    ordered = sorted(set(ranks))
    names = sorted({h for r in ordered if (h := hosts.get(r))})
    where = ""
    if names:
        where = f" ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
    return f"{rank_word(ordered)}{where}"


def others(ranks: tuple[int, ...] | list[int]) -> str:
    return rank_word(ranks) if ranks else "no other rank"


def signal_name(number: int | None, given: str | None = None) -> str:
    if given:
        return given
    if number is None:
        return "a signal"
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def ranks_text(ranks: tuple[int, ...] | list[int]) -> str:
    return format_ranks(ranks)
