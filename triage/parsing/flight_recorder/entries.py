"""One Flight Recorder entry, and a dump's process-group tables, read into model values.

The meaning of every field lives here, once, for both readers of the format: ``parse_fr_json``
(flight_recorder/parse.py: every entry in full) and ``parse_fr_compact`` (flight_recorder/compact.py:
thousands of ranks, most entries cut to their signature). See parse.py for the mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from math import prod
from typing import Any

from triage.errors import InputError
from triage.lazy_regex import lazy_regex
from triage.model import Collective, CollectiveState
from triage.parsing.names import torch_dtype, torch_op
from triage.parsing.stacks import Frame

MAX_FRAMES = 256       # frames read per entry (innermost first); torch records a few dozen
_MAX_NAME = 256        # chars of a profiling name or dtype looked at (real ones: under 40)
_MAX_NUMBER = 64       # chars of a number written as text


class BudgetExceeded(InputError):
    """A dump whose shared references make the parse visit more values than its size allows."""


Shapes = tuple[tuple[int, ...], ...]


class Walk:
    """What parsing one dump may visit, and what it has visited.

    A pickle's distinct objects are bounded by its size, but shared references (the memo) let a
    small pickle describe a large tree: 500,000 entries that all name one list of 500,000 shapes.
    The parsers walk a fixed schema (entries, their tensor shapes and frames, the groups' member
    lists), so instead of checking the whole decoded value first (``safe_pickle.check_shape``),
    they count here each value they hand on (every shape and dimension, frame, member) and
    stop with :class:`BudgetExceeded` past ``limit``. Each distinct shape list is converted
    once (by identity), so the work is the count. ``limit=None``: the data is a tree (JSON)."""

    __slots__ = ("_shapes", "left", "limit", "source")

    def __init__(self, limit: int | None, source: str = "") -> None:
        self.limit = limit
        self.left = limit
        self.source = source
        self._shapes: dict[int, tuple[Any, Shapes, int | None, int]] = {}

    def charge(self, count: int) -> None:
        if self.left is not None:
            self.left -= count
            if self.left < 0:
                raise BudgetExceeded(
                    f"{self.source}: unsafe or corrupt pickle refused: it expands to more than {self.limit} "
                    "values when its entries are read (shared references)",
                    "a Flight Recorder dump is JSON or a pickle written by torch; re-collect it")

    def shapes(self, sizes: Any) -> tuple[Shapes, int | None]:
        """:func:`numel` of ``sizes``, converted once per distinct list, charged per use."""
        known = self._shapes.get(id(sizes))
        if known is None or known[0] is not sizes:
            # charged BEFORE converting, from the lengths alone: one shared 100,000-dim shape named
            # 100,000 times is refused here, not copied 10^10 times first
            cost = _shapes_cost(sizes)
            self.charge(cost)
            shapes, count = numel(sizes)
            self._shapes[id(sizes)] = (sizes, shapes, count, cost)
            return shapes, count
        self.charge(known[3])
        return known[1], known[2]


def text(value: Any, default: str = "?") -> str:
    """``value`` as text if it is a scalar. A container is never turned into text: decoded from
    a pickle it may be shared thousands of times or nested thousands deep."""
    if type(value) is str:
        return value
    if value is None or isinstance(value, (int, float)):
        try:
            return str(value)
        except ValueError:          # an int of more than 4,300 digits
            return default
    return default


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
        if isinstance(value, str) and len(value) <= _MAX_NUMBER:
            return int(value.strip())
    except (ValueError, OverflowError):
        return None
    return None


def _opt_seq(value: Any) -> int | None:
    number = as_int(value)
    return None if number is None or number < 0 else number


_INT_RE = lazy_regex(r"-?\d+")


_RANKS_BY_TEXT: dict[str, tuple[int, ...] | None] = {}
_RANKS: dict[tuple[int, ...], tuple[int, ...]] = {}
_LONG_TEXT = 4096          # member texts from this length on are looked up by length, then compared
_RANKS_BY_LENGTH: dict[int, tuple[str, tuple[int, ...]]] = {}


def parse_ranks(value: Any) -> tuple[int, ...] | None:
    """Member ranks. Every rank's dump lists the default group's 4,096 members: the same text is
    parsed once per process and gives the same tuple object (pickled once per worker batch).
    A long text (65,536 members: 450 KB, a new string in every dump) is found by its length and
    one comparison (memcmp) instead of hashing all of it in every dump."""
    if isinstance(value, str):
        long = len(value) >= _LONG_TEXT
        if long:
            seen = _RANKS_BY_LENGTH.get(len(value))
            if seen is not None and seen[0] == value:
                return seen[1]
        else:
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
    if isinstance(value, str) and len(value) >= _LONG_TEXT and (
            len(_RANKS_BY_LENGTH) < 64 or len(value) in _RANKS_BY_LENGTH):
        _RANKS_BY_LENGTH[len(value)] = (value, ranks)     # the last text of that length
    if len(_RANKS) < 4096:
        _RANKS[ranks] = ranks
        if isinstance(value, str) and len(value) < _LONG_TEXT:
            _RANKS_BY_TEXT[value] = ranks
    return ranks


def read_pg_config(raw: Any, walk: Walk | None = None) -> dict[str, PgInfo]:
    """Groups by id. Each distinct member list is parsed once (by identity) and charged to
    ``walk`` once per group that names it."""
    out: dict[str, PgInfo] = {}
    if not isinstance(raw, Mapping):
        return out
    walk = walk or Walk(None)
    seen: dict[int, tuple[Any, tuple[int, ...] | None]] = {}
    for key, info in raw.items():
        name = text(key)
        desc = ""
        ranks_raw = info
        if isinstance(info, Mapping):
            name = text(info.get("name", key) or key)
            desc = text(info.get("desc", "") or "")
            ranks_raw = info.get("ranks")
        # else very old dumps: {pg_name: "[0, 1]"}
        known = seen.get(id(ranks_raw))
        if known is None or known[0] is not ranks_raw:
            known = seen[id(ranks_raw)] = (ranks_raw, parse_ranks(ranks_raw))
        ranks = known[1]
        walk.charge(1 + (len(ranks) if ranks else 0))
        out[text(key)] = PgInfo(name, desc, ranks)
    return out


def read_pg_status(raw: Any) -> dict[str, PgStatus]:
    out: dict[str, PgStatus] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, info in raw.items():
        if isinstance(info, Mapping):
            out[text(key)] = PgStatus(
                _opt_seq(info.get("last_enqueued_collective")),
                _opt_seq(info.get("last_started_collective")),
                _opt_seq(info.get("last_completed_collective")),
            )
    return out


# A tensor's dimensions are int64 and few; a dump's that are not are corrupt or crafted, and a product
# of many huge ints would take seconds: such dimensions are dropped and the count is unknown
MAX_DIM = 1 << 63
MAX_DIMS = 256


def _shapes_cost(sizes: Any) -> int:
    """What converting ``sizes`` visits, from lengths alone (nothing copied)."""
    if not isinstance(sizes, (list, tuple)):
        return 1
    return len(sizes) + sum(len(shape) for shape in sizes if isinstance(shape, (list, tuple)))


def _dims(shape: Any) -> tuple[tuple[int, ...], bool]:
    """The valid dimensions of one shape, and whether every one was valid."""
    dims = tuple(d for d in (as_int(x) for x in shape[:MAX_DIMS]) if d is not None and 0 <= d < MAX_DIM)
    return dims, len(dims) == len(shape)


def _numel_slow(sizes: Any) -> tuple[tuple[tuple[int, ...], ...], int | None]:
    if not isinstance(sizes, (list, tuple)):
        return (), None
    shapes: list[tuple[int, ...]] = []
    total: int | None = 0
    for shape in sizes:
        if not isinstance(shape, (list, tuple)):
            return tuple(shapes), None
        dims, whole = _dims(shape)
        shapes.append(dims)
        total = total + prod(dims) if total is not None and whole else None
    return tuple(shapes), (total if shapes else None)


def numel(sizes: Any) -> tuple[tuple[tuple[int, ...], ...], int | None]:
    """Shapes as tuples and the total element count (None when there are no tensors, or when a
    dimension is not an int64 one can have)."""
    if type(sizes) is list:  # the common case: a list of lists of ints
        try:
            shapes = tuple(map(tuple, sizes))
        except TypeError:
            return _numel_slow(sizes)
        # every dimension an int in range before any product: prod(("ab", 10**9)) would build a 2 GB
        # string, and a product of thousands of huge ints takes seconds
        flat = tuple(chain.from_iterable(shapes))
        if set(map(type, flat)) <= {int} and (not flat or (min(flat) >= 0 and max(flat) < MAX_DIM)) \
                and all(len(shape) <= MAX_DIMS for shape in shapes):
            return shapes, (sum(map(prod, shapes)) if shapes else None)
    return _numel_slow(sizes)


_P2P_PEER = lazy_regex(r"(\d+)\s*(->|<-)\s*(\d+)")
OP_CACHE: dict[str, tuple[str, int | None]] = {}
DTYPE_CACHE: dict[str, str] = {}


def op_and_peer(profiling_name: str) -> tuple[str, int | None]:
    cached = OP_CACHE.get(profiling_name)
    if cached is not None:
        return cached
    head, _, tail = profiling_name[:_MAX_NAME].strip().partition(" ")
    match = _P2P_PEER.search(tail)
    result = torch_op(head or "unknown"), (int(match.group(3)) if match else None)
    if len(OP_CACHE) < 10000:
        OP_CACHE[profiling_name] = result
    return result


def dtype_of(dtypes: Any) -> str | None:
    if not isinstance(dtypes, (list, tuple)) or not dtypes:
        return None
    name = text(dtypes[0])[:_MAX_NAME]
    cached = DTYPE_CACHE.get(name)
    if cached is None:
        cached = torch_dtype(name)
        if len(DTYPE_CACHE) < 1000:
            DTYPE_CACHE[name] = cached
    return cached


def entry_state(entry: Mapping[str, Any], gloo: bool, status: PgStatus | None) -> CollectiveState:
    raw = entry.get("state")
    raw = raw.lower() if isinstance(raw, str) and len(raw) <= _MAX_NAME else ""
    if raw == "completed" or entry.get("retired") is True or as_int(entry.get("time_discovered_completed_ns")):
        return CollectiveState.COMPLETED
    if gloo and status is not None and status.last_completed is not None:
        op_id = as_int(entry.get("op_id"))
        if op_id is not None and op_id <= status.last_completed:
            return CollectiveState.COMPLETED
    if raw == "started" or gloo or as_int(entry.get("time_discovered_started_ns")):
        return CollectiveState.IN_FLIGHT
    return CollectiveState.SCHEDULED


def frames_charge(raw: Any) -> int:
    """What :func:`read_frames` will visit of ``raw``: a parser charges it to its Walk."""
    return min(len(raw), MAX_FRAMES) if isinstance(raw, (list, tuple)) else 0


def read_frames(raw: Any) -> tuple[Frame, ...]:
    """The first :data:`MAX_FRAMES` frames (innermost first)."""
    if not isinstance(raw, (list, tuple)):
        return ()
    return tuple(
        Frame(text(f.get("name", "?")), text(f.get("filename", "?")), as_int(f.get("line")), None)
        for f in raw[:MAX_FRAMES] if isinstance(f, Mapping)
    )


def pg_of(entry: Mapping[str, Any]) -> tuple[str, str | None]:
    pg_id = text(entry.get("pg_id", ""))
    pgroup = entry.get("process_group")
    if isinstance(pgroup, (list, tuple)):
        if not pg_id and pgroup:
            pg_id = text(pgroup[0])
        return pg_id, (text(pgroup[1]) if len(pgroup) > 1 else None)
    return pg_id, None


_SHAPES: dict[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] = {}


def _shape(shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    if len(_SHAPES) < 100_000:
        _SHAPES[shapes] = shapes
    return shapes


def entry_collective(entry: Mapping[str, Any], rank: int, statuses: Mapping[str, PgStatus],
                     walk: Walk | None = None) -> Collective:
    get = entry.get
    walk = walk or Walk(None)
    pg_id, pg_name = pg_of(entry)
    profiling = text(get("profiling_name") or "unknown")
    op, peer = op_and_peer(profiling)
    is_p2p = bool(get("is_p2p")) or op in ("send", "recv")
    seq = as_int(get("p2p_seq_id" if is_p2p else "collective_seq_id", get("seq_id")))
    in_shapes, count = walk.shapes(get("input_sizes"))
    out_shapes, _ = walk.shapes(get("output_sizes"))
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
        as_int(get("record_id")), as_int(get("op_id")), text(profiling),
        None if thread is None else text(thread), as_int(get("timeout_ms")), duration,
        retired if isinstance(retired, bool) else None, None if state is None else text(state),
    )
