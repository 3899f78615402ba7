"""PyTorch Flight Recorder dumps (JSON and pickle, format versions 2.x) to Collectives.

Entry mapping (see docs/formats.md):
- op: ``torch_op(profiling_name)`` ("gloo:all_reduce" -> "all_reduce"); NCCL p2p names such as
  "nccl:send 0->1" also give the peer.
- count: numel of the inputs (sum over input tensors); dtype: torch name of the first input dtype.
- seq: ``collective_seq_id`` (``p2p_seq_id`` for p2p entries); pg: ``pg_id`` as a string.
- state: gloo keeps "scheduled" forever, so an entry is COMPLETED when its state is "completed",
  it is ``retired``, it has ``time_discovered_completed_ns``, or (gloo only) its op_id is at most
  pg_status' last completed; otherwise IN_FLIGHT ("started" or any gloo entry) or SCHEDULED.
"""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Any, overload

from triage.errors import InputError
from triage.model import Collective, CollectiveState, SeqHistory
from triage.parsing.names import torch_dtype, torch_op
from triage.parsing.safe_pickle import safe_unpickle
from triage.parsing.stacks import Frame

UNKNOWN_RANK = -1  # Collective.rank when the dump's rank is not known


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


@dataclass(frozen=True)
class FrDump:
    rank: int | None
    version: str
    pg_config: Mapping[str, PgInfo]
    pg_status: Mapping[str, PgStatus]
    collectives: tuple[Collective, ...]
    source: str
    entries: Sequence[FrEntryInfo] = ()  # aligned with collectives; built on access
    # pickle only; converted on access. Both lazy views keep the decoded dump alive while the
    # FrDump lives: turn it into what you need and drop it.
    frames_by_record: Mapping[int, tuple[Frame, ...]] = field(default_factory=dict)
    comm_lib_version: str = ""
    problems: tuple[str, ...] = ()  # entries that could not be read, why
    # (pg, whole history) when ``collectives`` holds only the last ones (see flight_recorder_compact)
    histories: tuple[tuple[str, SeqHistory], ...] = ()


def _int(value: Any) -> int | None:
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
    number = _int(value)
    return None if number is None or number < 0 else number


_INT_RE = re.compile(r"-?\d+")


_RANKS_BY_TEXT: dict[str, tuple[int, ...] | None] = {}
_RANKS: dict[tuple[int, ...], tuple[int, ...]] = {}


def _parse_ranks(value: Any) -> tuple[int, ...] | None:
    """Member ranks. Every rank's dump lists the default group's 4,096 members: the same text is
    parsed once per process and gives the same tuple object (pickled once per worker batch)."""
    if isinstance(value, str):
        known = _RANKS_BY_TEXT.get(value)
        if known is not None:
            return known
        ranks = tuple(int(x) for x in _INT_RE.findall(value))
    elif isinstance(value, (list, tuple)):
        ranks = tuple(r for r in (_int(x) for x in value) if r is not None)
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


def _pg_config(raw: Any) -> dict[str, PgInfo]:
    out: dict[str, PgInfo] = {}
    if not isinstance(raw, Mapping):
        return out
    for key, info in raw.items():
        if isinstance(info, Mapping):
            name = str(info.get("name", key) or key)
            out[str(key)] = PgInfo(name, str(info.get("desc", "") or ""), _parse_ranks(info.get("ranks")))
        else:  # very old dumps: {pg_name: "[0, 1]"}
            out[str(key)] = PgInfo(str(key), "", _parse_ranks(info))
    return out


def _pg_status(raw: Any) -> dict[str, PgStatus]:
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
        dims = tuple(d for d in (_int(x) for x in shape) if d is not None)
        shapes.append(dims)
        total += prod(dims)
    return tuple(shapes), (total if shapes else None)


def _numel(sizes: Any) -> tuple[tuple[tuple[int, ...], ...], int | None]:
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
_OP_CACHE: dict[str, tuple[str, int | None]] = {}
_DTYPE_CACHE: dict[str, str] = {}


def _op_and_peer(profiling_name: str) -> tuple[str, int | None]:
    cached = _OP_CACHE.get(profiling_name)
    if cached is not None:
        return cached
    head, _, tail = profiling_name.strip().partition(" ")
    match = _P2P_PEER.search(tail)
    result = torch_op(head or "unknown"), (int(match.group(3)) if match else None)
    if len(_OP_CACHE) < 10000:
        _OP_CACHE[profiling_name] = result
    return result


def _dtype(dtypes: Any) -> str | None:
    if not isinstance(dtypes, (list, tuple)) or not dtypes:
        return None
    name = str(dtypes[0])
    cached = _DTYPE_CACHE.get(name)
    if cached is None:
        cached = torch_dtype(name)
        if len(_DTYPE_CACHE) < 1000:
            _DTYPE_CACHE[name] = cached
    return cached


def _state(entry: Mapping[str, Any], gloo: bool, status: PgStatus | None) -> CollectiveState:
    raw = entry.get("state")
    raw = raw.lower() if isinstance(raw, str) else ""
    if raw == "completed" or entry.get("retired") is True or _int(entry.get("time_discovered_completed_ns")):
        return CollectiveState.COMPLETED
    if gloo and status is not None and status.last_completed is not None:
        op_id = _int(entry.get("op_id"))
        if op_id is not None and op_id <= status.last_completed:
            return CollectiveState.COMPLETED
    if raw == "started" or gloo or _int(entry.get("time_discovered_started_ns")):
        return CollectiveState.IN_FLIGHT
    return CollectiveState.SCHEDULED


def _frames(raw: Any) -> tuple[Frame, ...]:
    if not isinstance(raw, (list, tuple)):
        return ()
    return tuple(
        Frame(str(f.get("name", "?")), str(f.get("filename", "?")), _int(f.get("line")), None)
        for f in raw if isinstance(f, Mapping)
    )


def _pg_of(entry: Mapping[str, Any]) -> tuple[str, str | None]:
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


def _entry(entry: Mapping[str, Any], rank: int, statuses: Mapping[str, PgStatus]) -> Collective:
    get = entry.get
    pg_id, pg_name = _pg_of(entry)
    profiling = get("profiling_name") or "unknown"
    profiling = profiling if type(profiling) is str else str(profiling)
    op, peer = _op_and_peer(profiling)
    is_p2p = bool(get("is_p2p")) or op in ("send", "recv")
    seq = _int(get("p2p_seq_id" if is_p2p else "collective_seq_id", get("seq_id")))
    in_shapes, count = _numel(get("input_sizes"))
    out_shapes, _ = _numel(get("output_sizes"))
    in_shapes = _SHAPES.get(in_shapes) or _shape(in_shapes)   # one object per distinct shape: thousands
    out_shapes = _SHAPES.get(out_shapes) or _shape(out_shapes)  # of ranks share them (and pickle them once)
    coll = Collective(
        rank=rank, pg=pg_id, seq=seq if seq is not None else -1, op=op, count=count,
        dtype=_dtype(get("input_dtypes") or get("output_dtypes")),
        state=_state(entry, profiling.startswith("gloo"), statuses.get(pg_id)),
        pg_name=pg_name, input_sizes=in_shapes, output_sizes=out_shapes, is_p2p=is_p2p, peer=peer,
        time_ns=_int(get("time_created_ns")) or None, source="fr",
        time_started_ns=_int(get("time_discovered_started_ns")) or None,
        time_completed_ns=_int(get("time_discovered_completed_ns")) or None,
    )
    return coll


def _entry_info(entry: Mapping[str, Any]) -> FrEntryInfo:
    get = entry.get
    profiling = get("profiling_name") or "unknown"
    duration, retired, state, thread = get("duration_ms"), get("retired"), get("state"), get("thread_name")
    try:
        duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None
    except OverflowError:
        duration = None
    return FrEntryInfo(
        _int(get("record_id")), _int(get("op_id")), profiling if type(profiling) is str else str(profiling),
        None if thread is None else str(thread), _int(get("timeout_ms")), duration,
        retired if isinstance(retired, bool) else None, None if state is None else str(state),
    )


class _LazyEntries(Sequence[FrEntryInfo]):
    """FrEntryInfo per collective, made from the raw entries on access (most callers never ask,
    and a 2000-entry dump would otherwise pay for 2000 more objects)."""

    def __init__(self, raw: list[Mapping[str, Any]]) -> None:
        self._raw = raw

    @overload
    def __getitem__(self, index: int) -> FrEntryInfo: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[FrEntryInfo, ...]: ...

    def __getitem__(self, index: int | slice) -> FrEntryInfo | tuple[FrEntryInfo, ...]:
        if isinstance(index, slice):
            return tuple(_entry_info(e) for e in self._raw[index])
        return _entry_info(self._raw[index])

    def __len__(self) -> int:
        return len(self._raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"<{len(self)} FR entries>"


class _LazyFrames(Mapping[int, tuple[Frame, ...]]):
    """record_id -> frames (innermost first), converted from the raw lists on first access:
    real stacks hold dozens of frames per entry."""

    def __init__(self, raw: dict[int, Any]) -> None:
        self._raw = raw
        self._done: dict[int, tuple[Frame, ...]] = {}

    def __getitem__(self, key: int) -> tuple[Frame, ...]:
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = _frames(self._raw[key])
        return done

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"<frames of {len(self)} FR entries>"


def parse_fr_json(data: Mapping[str, Any], rank: int | None, source: str,
                  only: Sequence[int] | None = None) -> FrDump:
    """An FrDump from a decoded dump (JSON object or the dict a pickle holds). Never raises on
    odd entries: they are skipped and listed in ``problems``. ``only``: the indexes (ascending)
    of the entries to read, the others are left out."""
    if not isinstance(data, Mapping):
        return FrDump(rank, "", {}, {}, (), source, problems=("top level is not an object",))
    statuses = _pg_status(data.get("pg_status"))
    colls: list[Collective] = []
    kept: list[Mapping[str, Any]] = []
    frames: dict[int, Any] = {}
    problems: list[str] = []
    entries = data.get("entries", [])
    if not isinstance(entries, (list, tuple)):
        problems.append("entries is not a list")
        entries = []
    rank_value = UNKNOWN_RANK if rank is None else rank
    chosen = enumerate(entries) if only is None else ((i, entries[i]) for i in only if 0 <= i < len(entries))
    for index, entry in chosen:
        if not isinstance(entry, dict) and not isinstance(entry, Mapping):
            problems.append(f"entry {index} is not an object")
            continue
        try:
            colls.append(_entry(entry, rank_value, statuses))
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            problems.append(f"entry {index}: {exc}")
            continue
        kept.append(entry)
        if "frames" in entry:
            record_id = _int(entry.get("record_id"))
            frames[index if record_id is None else record_id] = entry["frames"]
    version = str(data.get("version", ""))
    if not version.startswith("2."):
        problems.insert(0, f"unknown format version {version or '(none)'!r}, read as 2.x")
    return FrDump(
        rank=rank, version=version, pg_config=_pg_config(data.get("pg_config")),
        pg_status=statuses, collectives=tuple(colls), source=source, entries=_LazyEntries(kept),
        frames_by_record=_LazyFrames(frames), comm_lib_version=str(data.get("comm_lib_version", "") or ""),
        problems=tuple(problems),
    )


def decode_fr_bytes(data: bytes, source: str) -> Mapping[str, Any]:
    """The dump's top-level dict from JSON or pickle bytes (told apart by content)."""
    hint = "a Flight Recorder dump is JSON or a pickle written by torch; re-collect it"
    head = data.lstrip()[:1]
    if not data.strip():
        raise InputError(f"{source}: empty Flight Recorder dump", hint)
    try:
        if head in (b"{", b"["):
            try:
                decoded = json.loads(data)
            except UnicodeDecodeError:
                decoded = json.loads(data.decode("utf-8", errors="replace"))
        elif data[:1] == b"\x80":
            decoded = safe_unpickle(data)
        else:
            raise ValueError("neither JSON nor a pickle")
    except pickle.UnpicklingError as exc:
        raise InputError(f"{source}: unsafe or corrupt pickle refused: {exc}", hint) from None
    except (ValueError, EOFError, IndexError, KeyError, TypeError, OverflowError,
            RecursionError, MemoryError, AttributeError) as exc:
        raise InputError(f"{source}: not a readable Flight Recorder dump ({type(exc).__name__}: "
                         f"{str(exc)[:120]})", hint) from None
    if not isinstance(decoded, Mapping):
        raise InputError(f"{source}: Flight Recorder dump is not an object", hint)
    return decoded


def load_fr_file(path: Path, rank: int | None = None) -> FrDump:
    """Read one dump file (JSON or pickle). Raises InputError naming the file on bad content."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_fr_json(decode_fr_bytes(data, str(path)), rank, str(path))


_TRAILING_RANK = re.compile(r"(\d+)(?:\.(?:json|pkl|pickle|bin))?$")


def rank_from_filename(name: str, prefix: str | None) -> int | None:
    """The rank in a dump file name written as PREFIX + rank ("nccl_trace_rank_3" -> 3).

    With an empty prefix, the trailing number. A ".json"/".pkl" extension is tolerated.
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    prefix = (prefix or "").replace("\\", "/").rsplit("/", 1)[-1]  # TORCH_FR_DUMP_TEMP_FILE is a path
    if prefix:
        if not base.startswith(prefix):
            return None
        rest = base[len(prefix):]
        match = _TRAILING_RANK.fullmatch(rest)
    else:
        match = _TRAILING_RANK.search(base)
    return int(match.group(1)) if match else None
