"""PyTorch Flight Recorder dumps (JSON and pickle, format versions 2.x) to Collectives.

Entry mapping (see docs/formats.md):
- op: ``torch_op(profiling_name)`` ("gloo:all_reduce" -> "all_reduce"); NCCL p2p names such as
  "nccl:send 0->1" also give the peer.
- count: numel of the inputs (sum over input tensors); dtype: torch name of the first input dtype.
- seq: ``collective_seq_id`` (``p2p_seq_id`` for p2p entries); pg: ``pg_id`` as a string.
- state: gloo keeps "scheduled" forever, so an entry is COMPLETED when its state is "completed",
  it is ``retired``, it has ``time_discovered_completed_ns``, or (gloo only) its op_id is at most
  pg_status' last completed; otherwise IN_FLIGHT ("started" or any gloo entry) or SCHEDULED.

How each field reads is in entries.py (shared with compact.py).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from triage.errors import InputError
from triage.lazy_regex import lazy_regex
from triage.model import Collective, SeqHistory
from triage.parsing.flight_recorder.entries import (
    FrEntryInfo,
    PgInfo,
    PgStatus,
    Walk,
    as_int,
    entry_collective,
    entry_info,
    frames_charge,
    read_frames,
    read_pg_config,
    read_pg_status,
    text,
)
from triage.parsing.safe_pickle import MAX_NODES, restricted_loads
from triage.parsing.stacks import Frame
from triage.regular_files import loads_json, read_regular_bytes

__all__ = ["UNKNOWN_RANK", "FrDump", "FrEntryInfo", "PgInfo", "PgStatus", "decode_fr_bytes", "fr_walk", "load_fr_file",
           "parse_fr_json", "rank_from_filename"]

UNKNOWN_RANK = -1  # Collective.rank when the dump's rank is not known


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
    # (pg, whole history) when ``collectives`` holds only the last ones (see compact.py)
    histories: tuple[tuple[str, SeqHistory], ...] = ()


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
            return tuple(entry_info(e) for e in self._raw[index])
        return entry_info(self._raw[index])

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
            done = self._done[key] = read_frames(self._raw[key])
        return done

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"<frames of {len(self)} FR entries>"


def parse_fr_json(data: Mapping[str, Any], rank: int | None, source: str,
                  only: Sequence[int] | None = None, walk: Walk | None = None) -> FrDump:
    """An FrDump from a decoded dump (JSON object or the dict a pickle holds). Never raises on
    odd entries: they are skipped and listed in ``problems``. ``only``: the indexes (ascending)
    of the entries to read, the others are left out. ``walk``: for a decoded pickle, the budget
    (:func:`fr_walk`) whose excess raises ``BudgetExceeded`` (an InputError)."""
    if not isinstance(data, Mapping):
        return FrDump(rank, "", {}, {}, (), source, problems=("top level is not an object",))
    walk = walk or Walk(None)
    statuses = read_pg_status(data.get("pg_status"))
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
            colls.append(entry_collective(entry, rank_value, statuses, walk))
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            problems.append(f"entry {index}: {exc}")
            continue
        kept.append(entry)
        if "frames" in entry:
            record_id = as_int(entry.get("record_id"))
            frames[index if record_id is None else record_id] = raw_frames = entry["frames"]
            walk.charge(frames_charge(raw_frames))
    version = text(data.get("version", ""), "")
    if not version.startswith("2."):
        problems.insert(0, f"unknown format version {version or '(none)'!r}, read as 2.x")
    return FrDump(
        rank=rank, version=version, pg_config=read_pg_config(data.get("pg_config"), walk),
        pg_status=statuses, collectives=tuple(colls), source=source, entries=_LazyEntries(kept),
        frames_by_record=_LazyFrames(frames), comm_lib_version=text(data.get("comm_lib_version", "") or "", ""),
        problems=tuple(problems),
    )


def fr_walk(data: bytes, source: str) -> Walk:
    """The budget for parsing the dump decoded from ``data``: what a tree of that size could hold
    (each value of a tree costs a pickle at least one byte), and never less than MAX_NODES."""
    return Walk(MAX_NODES + len(data), source)


def decode_fr_bytes(data: bytes, source: str) -> Mapping[str, Any]:
    """The dump's top-level dict from JSON or pickle bytes (told apart by content).

    A pickle is decoded without the generic shape check (``safe_pickle.restricted_loads``): hand
    the value only to ``parse_fr_json`` / ``parse_fr_compact`` with ``fr_walk(data, source)``,
    which walk the dump's schema within that budget."""
    hint = "a Flight Recorder dump is JSON or a pickle written by torch; re-collect it"
    head = data.lstrip()[:1]
    if not data.strip():
        raise InputError(f"{source}: empty Flight Recorder dump", hint)
    try:
        if head in (b"{", b"["):
            try:
                decoded = loads_json(data)
            except UnicodeDecodeError:
                decoded = loads_json(data.decode("utf-8", errors="replace"))
        elif data[:1] == b"\x80":
            decoded = restricted_loads(data)
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
        data = read_regular_bytes(path, MAX_FR_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    decoded = decode_fr_bytes(data, str(path))
    if isinstance(decoded, Mapping) and not any(key in decoded for key in _FR_KEYS):
        raise InputError(f"{path}: not a Flight Recorder dump (an object with none of {', '.join(_FR_KEYS)})",
                         "pass the file PyTorch wrote (TORCH_NCCL_DEBUG_INFO_TEMP_FILE), or leave this one out")
    return parse_fr_json(decoded, rank, str(path), walk=fr_walk(data, str(path)))


# Every dump PyTorch writes (format 2.x) has at least one of these; an object with none ("{}") is no dump.
_FR_KEYS = ("version", "entries", "pg_config", "pg_status", "nccl_version", "comm_lib_version")


MAX_FR_BYTES = 256 * 1024 * 1024   # a real dump is a few MB; a bigger (or sparse) file is refused by its size
_TRAILING_RANK = lazy_regex(r"(\d+)(?:\.(?:json|pkl|pickle|bin))?$")


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
