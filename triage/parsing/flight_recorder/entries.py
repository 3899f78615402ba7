"""One Flight Recorder entry, and a dump's process-group tables, read into model values.

The meaning of every field lives here, once, for both readers of the format: ``parse_fr_json``
(flight_recorder/parse.py: every entry in full) and ``parse_fr_compact`` (flight_recorder/compact.py:
thousands of ranks, most entries cut to their signature). See parse.py for the mapping.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import Any

from triage.model import Collective, CollectiveState
from triage.parsing.names import torch_dtype, torch_op
from triage.parsing.stacks import Frame


@dataclass(frozen=True)
class PgInfo:
    name: str
    desc: str
    ranks: tuple[int, ...] | None  # None when absent, unparsable or "[]" (gloo subgroups in 2.13)


@dataclass(frozen=True)
class PgStatus:
    last_enqueued: int | None
    last_started: int | None
    last_completed: int | None


@dataclass(frozen=True)
class FrEntryInfo:
    """Per-entry facts that have no place in Collective, aligned with FrDump.collectives."""

    record_id: int | None
    op_id: int | None
    profiling_name: str
    thread_name: str | None
    timeout_ms: int | None
    duration_ms: float | None
    retired: bool | None
    raw_state: str | None


def as_int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, (bool, int)):
        return int(value)
    try:
        if isinstance(value, float):
            return int(value)
        if isinstance(value, str):
            return int(value.strip())
    except (ValueError, OverflowError):
        return None
    return None


def _opt_seq(value: Any) -> int | None:
    number = as_int(value)
    return None if number is None or number < 0 else number


_INT_RE = re.compile(r"-?\d+")


_RANKS_BY_TEXT: dict[str, tuple[int, ...] | None] = {}
_RANKS: dict[tuple[int, ...], tuple[int, ...]] = {}


def parse_ranks(value: Any) -> tuple[int, ...] | None:
    """Member ranks. Every rank's dump lists the default group's 4,096 members: the same text is
    parsed once per process and gives the same tuple object (pickled once per worker batch)."""
    if isinstance(value, str):
        known = _RANKS_BY_TEXT.get(value)
        if known is not None:
            return known
        ranks = tuple(int(x) for x in _INT_RE.findall(value))
    elif isinstance(value, (list, tuple)):
        ranks = tuple(r for r in (as_int(x) for x in value) if r is not None)
    else:
        return None
    if not ranks:
        return None
    ranks = _RANKS.get(ranks) or ranks
    if len(_RANKS) < 4096:
        _RANKS[ranks] = ranks
        if isinstance(value, str):
            _RANKS_BY_TEXT[value] = ranks
    return ranks


def read_pg_config(raw: Any) -> dict[str, PgInfo]:
    out: dict[str, PgInfo] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, info in raw.items():
        if isinstance(info, Mapping):
            name = str(info.get("name", key) or key)
            out[str(key)] = PgInfo(name, str(info.get("desc", "") or ""), parse_ranks(info.get("ranks")))
        else:  # very old dumps: {pg_name: "[0, 1]"}
            out[str(key)] = PgInfo(str(key), "", parse_ranks(info))
    return out


def read_pg_status(raw: Any) -> dict[str, PgStatus]:
    out: dict[str, PgStatus] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, info in raw.items():
        if isinstance(info, Mapping):
            out[str(key)] = PgStatus(
                _opt_seq(info.get("last_enqueued_collective")),
                _opt_seq(info.get("last_started_collective")),
                _opt_seq(info.get("last_completed_collective")),
            )
    return out


def _numel_slow(sizes: Any) -> tuple[tuple[tuple[int, ...], ...], int | None]:
    if not isinstance(sizes, (list, tuple)):
        return (), None
    shapes: list[tuple[int, ...]] = []
    total = 0
    for shape in sizes:
        if not isinstance(shape, (list, tuple)):
            return tuple(shapes), None
        dims = tuple(d for d in (as_int(x) for x in shape) if d is not None)
        shapes.append(dims)
        total += prod(dims)
    return tuple(shapes), (total if shapes else None)


def numel(sizes: Any) -> tuple[tuple[tuple[int, ...], ...], int | None]:
    """Shapes as tuples and the total element count (None when there are no tensors)."""
    if type(sizes) is list:  # the common case: a list of lists of ints
        try:
            shapes = tuple(map(tuple, sizes))
            total = sum(map(prod, shapes))
        except TypeError:
            return _numel_slow(sizes)
        if type(total) is int and all(type(d) is int for shape in shapes for d in shape):
            return shapes, (total if shapes else None)
    return _numel_slow(sizes)


_P2P_PEER = re.compile(r"(\d+)\s*(->|<-)\s*(\d+)")
OP_CACHE: dict[str, tuple[str, int | None]] = {}
DTYPE_CACHE: dict[str, str] = {}


def op_and_peer(profiling_name: str) -> tuple[str, int | None]:
    cached = OP_CACHE.get(profiling_name)
    if cached is not None:
        return cached
    head, _, tail = profiling_name.strip().partition(" ")
    match = _P2P_PEER.search(tail)
    result = torch_op(head or "unknown"), (int(match.group(3)) if match else None)
    if len(OP_CACHE) < 10000:
        OP_CACHE[profiling_name] = result
    return result


def dtype_of(dtypes: Any) -> str | None:
    if not isinstance(dtypes, (list, tuple)) or not dtypes:
        return None
    name = str(dtypes[0])
    cached = DTYPE_CACHE.get(name)
    if cached is None:
        cached = torch_dtype(name)
        if len(DTYPE_CACHE) < 1000:
            DTYPE_CACHE[name] = cached
    return cached


def entry_state(entry: Mapping[str, Any], gloo: bool, status: PgStatus | None) -> CollectiveState:
    raw = entry.get("state")
    raw = raw.lower() if isinstance(raw, str) else ""
    if raw == "completed" or entry.get("retired") is True or as_int(entry.get("time_discovered_completed_ns")):
        return CollectiveState.COMPLETED
    if gloo and status is not None and status.last_completed is not None:
        op_id = as_int(entry.get("op_id"))
        if op_id is not None and op_id <= status.last_completed:
            return CollectiveState.COMPLETED
    if raw == "started" or gloo or as_int(entry.get("time_discovered_started_ns")):
        return CollectiveState.IN_FLIGHT
    return CollectiveState.SCHEDULED


def read_frames(raw: Any) -> tuple[Frame, ...]:
    if not isinstance(raw, (list, tuple)):
        return ()
    return tuple(
        Frame(str(f.get("name", "?")), str(f.get("filename", "?")), as_int(f.get("line")), None)
        for f in raw if isinstance(f, Mapping)
    )


def pg_of(entry: Mapping[str, Any]) -> tuple[str, str | None]:
    pg_id = entry.get("pg_id", "")
    pg_id = pg_id if type(pg_id) is str else str(pg_id)
    pgroup = entry.get("process_group")
    if isinstance(pgroup, (list, tuple)):
        if not pg_id and pgroup:
            pg_id = str(pgroup[0])
        return pg_id, (str(pgroup[1]) if len(pgroup) > 1 else None)
    return pg_id, None


_SHAPES: dict[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] = {}


def _shape(shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    if len(_SHAPES) < 100_000:
        _SHAPES[shapes] = shapes
    return shapes


def entry_collective(entry: Mapping[str, Any], rank: int, statuses: Mapping[str, PgStatus]) -> Collective:
    get = entry.get
    pg_id, pg_name = pg_of(entry)
    profiling = get("profiling_name") or "unknown"
    profiling = profiling if type(profiling) is str else str(profiling)
    op, peer = op_and_peer(profiling)
    is_p2p = bool(get("is_p2p")) or op in ("send", "recv")
    seq = as_int(get("p2p_seq_id" if is_p2p else "collective_seq_id", get("seq_id")))
    in_shapes, count = numel(get("input_sizes"))
    out_shapes, _ = numel(get("output_sizes"))
    in_shapes = _SHAPES.get(in_shapes) or _shape(in_shapes)   # one object per distinct shape: thousands
    out_shapes = _SHAPES.get(out_shapes) or _shape(out_shapes)  # of ranks share them (and pickle them once)
    coll = Collective(
        rank=rank, pg=pg_id, seq=seq if seq is not None else -1, op=op, count=count,
        dtype=dtype_of(get("input_dtypes") or get("output_dtypes")),
        state=entry_state(entry, profiling.startswith("gloo"), statuses.get(pg_id)),
        pg_name=pg_name, input_sizes=in_shapes, output_sizes=out_shapes, is_p2p=is_p2p, peer=peer,
        time_ns=as_int(get("time_created_ns")) or None, source="fr",
        time_started_ns=as_int(get("time_discovered_started_ns")) or None,
        time_completed_ns=as_int(get("time_discovered_completed_ns")) or None,
    )
    return coll


def entry_info(entry: Mapping[str, Any]) -> FrEntryInfo:
    get = entry.get
    profiling = get("profiling_name") or "unknown"
    duration, retired, state, thread = get("duration_ms"), get("retired"), get("state"), get("thread_name")
    try:
        duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None
    except OverflowError:
        duration = None
    return FrEntryInfo(
        as_int(get("record_id")), as_int(get("op_id")), profiling if type(profiling) is str else str(profiling),
        None if thread is None else str(thread), as_int(get("timeout_ms")), duration,
        retired if isinstance(retired, bool) else None, None if state is None else str(state),
    )
