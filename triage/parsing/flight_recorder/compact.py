"""Flight Recorder dumps cut to what a cross-rank report needs, for thousands of ranks.

``parse_fr_compact`` reads every entry once into a compact per-process-group history (the
signature of each collective seq, see ``SeqHistory``) and builds full Collective objects only
for the entries the rest of the analysis looks at: the last ``TAIL`` seqs of each group, every
entry that has not completed, the completed seq right under them (where the straggler scan
stops), p2p ops and anything unusual. Entry meaning is the same as ``parse_fr_json``'s.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from itertools import islice
from math import prod
from operator import itemgetter, lt
from typing import Any

from triage.model import CollectiveState, SeqHistory, Signature
from triage.parsing.flight_recorder.entries import (
    DTYPE_CACHE,
    OP_CACHE,
    PgStatus,
    Walk,
    dtype_of,
    entry_state,
    op_and_peer,
    read_pg_status,
    text,
)
from triage.parsing.flight_recorder.parse import FrDump, parse_fr_json

TAIL = 80            # seqs of each group kept as Collectives (the straggler scan looks at 64)
_GATHER_LIKE = frozenset({"all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"})
_PG_NAMES: dict[int, str] = {}
_SIG_KEY = itemgetter(0)
Sig1 = tuple[str, int | None, str | None, int | None]
_SIGS: dict[Sig1, Signature] = {}    # interned one-entry signatures: ((op, count, dtype, out),)

Fact = tuple[int, Signature, bool, int]  # seq, one-entry signature, completed, entry index


def _intern(key: Sig1) -> Signature:
    sig = (key,)
    if len(_SIGS) < 100_000:
        _SIGS[key] = sig
    return sig


_KEYS = ("pg_id", "profiling_name", "collective_seq_id", "is_p2p", "input_sizes", "input_dtypes", "state", "retired")
_FIELDS = itemgetter(*_KEYS)   # one C call for the eight fields every torch entry has


def _collect(entries: list[Any] | tuple[Any, ...], statuses: Mapping[str, PgStatus],
             by_pg: dict[str, list[Fact]], keep: set[int], walk: Walk) -> None:
    """Facts of the plain collective entries into ``by_pg``; the indexes of p2p and unusual ones
    (parsed fully by parse_fr_json) into ``keep``. One tight loop: this is per entry. Only the
    slow paths (several tensors, gather outputs) walk a shape list, through ``walk``."""
    ops, dtypes_cache, sigs, pg_names, fields = OP_CACHE, DTYPE_CACHE, _SIGS, _PG_NAMES, _FIELDS
    last_pg: str | None = None
    facts: list[Fact] = []
    for index, entry in enumerate(entries):
        try:
            pg, profiling, seq, p2p, sizes, dtypes, state, retired = fields(entry)
        except (KeyError, TypeError, IndexError):   # a field missing, or not a dict
            if type(entry) is not dict:
                keep.add(index)
                continue
            pg, profiling, seq, p2p, sizes, dtypes, state, retired = map(entry.get, _KEYS)
        if type(pg) is int:
            pg = pg_names.get(pg) or pg_names.setdefault(pg, text(pg))
        if type(pg) is not str or not pg or type(profiling) is not str or not profiling or type(seq) is not int:
            keep.add(index)
            continue
        op = (ops.get(profiling) or op_and_peer(profiling))[0]
        if seq < 0 or p2p or op == "send" or op == "recv":
            keep.add(index)
            continue
        if type(sizes) is list and len(sizes) == 1 and type(shape := sizes[0]) is list and len(shape) == 1 \
                and type(count := shape[0]) is int:
            pass   # the common single 1-d tensor
        else:
            count = walk.shapes(sizes)[1]
        out = None
        if op in _GATHER_LIKE:
            shapes = walk.shapes(entry.get("output_sizes"))[0]
            out = sum(map(prod, shapes)) if shapes else None
        dtype = dtypes_cache.get(dtypes[0]) if type(dtypes) is list and dtypes and type(dtypes[0]) is str else None
        if dtype is None:
            dtype = dtype_of(dtypes or entry.get("output_dtypes"))
        completed = state == "completed" or retired is True or (
            entry_state(entry, profiling.startswith("gloo"), statuses.get(pg)) is CollectiveState.COMPLETED)
        key = (op, count, dtype, out)
        if pg != last_pg:
            facts = by_pg.setdefault(pg, [])
            last_pg = pg
        facts.append((seq, sigs.get(key) or _intern(key), completed, index))


def _sig_order(item: Sig1) -> tuple[str, int, str, int]:
    return (item[0], item[1] or 0, item[2] or "", item[3] or 0)


def _history(facts: list[Fact], keep: set[int]) -> SeqHistory:
    """The group's SeqHistory; adds to ``keep`` the indexes of the entries to parse fully."""
    seqs = [f[0] for f in facts]
    if not all(map(lt, seqs, islice(seqs, 1, None))):   # out of order or one seq twice: rare
        return _history_slow(facts, keep)
    top = seqs[-1]
    first = bisect_left(seqs, top - TAIL)
    opens = [f for f in facts if not f[2]]
    stop = next((k for k in range(first - 1, -1, -1) if facts[k][2]), None)
    keep.update([f[3] for f in facts[first:]] + [f[3] for f in opens])
    if stop is not None:
        keep.add(facts[stop][3])
    return SeqHistory.build(seqs, [f[1] for f in facts], frozenset(f[0] for f in opens))


def _history_slow(facts: list[Fact], keep: set[int]) -> SeqHistory:
    facts.sort(key=_SIG_KEY)
    seqs: list[int] = []
    sigs: list[Signature] = []
    open_seqs: set[int] = set()
    i, n = 0, len(facts)
    while i < n:
        seq, sig, completed, _index = facts[i]
        j = i + 1
        while j < n and facts[j][0] == seq:
            j += 1
        if j > i + 1:
            completed = all(f[2] for f in facts[i:j])
            sig = tuple(sorted((f[1][0] for f in facts[i:j]), key=_sig_order))
        sigs.append(sig)
        seqs.append(seq)
        if not completed:
            open_seqs.add(seq)
        i = j
    top = seqs[-1]
    below = [s for s in seqs if s < top - TAIL and s not in open_seqs]
    stop = below[-1] if below else top
    keep.update(f[3] for f in facts if f[0] >= top - TAIL or f[0] == stop or f[0] in open_seqs)
    return SeqHistory.build(seqs, sigs, frozenset(open_seqs))


def _odd_facts(dump: FrDump, by_pg: dict[str, list[Fact]]) -> None:
    """Entries the fast path left to parse_fr_json join the histories (index -1: already kept)."""
    for coll in dump.collectives:
        if coll.is_p2p or coll.seq < 0:
            continue
        out = None
        if coll.op in _GATHER_LIKE and coll.output_sizes:
            out = sum(map(prod, coll.output_sizes))
        fact = (coll.seq, ((coll.op, coll.count, coll.dtype, out),), coll.state is CollectiveState.COMPLETED, -1)
        by_pg.setdefault(coll.pg, []).append(fact)


def parse_fr_compact(data: Mapping[str, Any], rank: int | None, source: str, walk: Walk | None = None) -> FrDump:
    """An FrDump whose ``collectives`` are the kept entries and whose ``histories`` cover all.
    ``walk``: as parse_fr_json's (one budget for the whole parse)."""
    walk = walk or Walk(None)
    entries = data.get("entries", []) if isinstance(data, Mapping) else None
    if not isinstance(entries, (list, tuple)):
        return parse_fr_json(data, rank, source, walk=walk)
    statuses = read_pg_status(data.get("pg_status"))
    by_pg: dict[str, list[Fact]] = {}
    keep: set[int] = set()
    _collect(entries, statuses, by_pg, keep, walk)
    if keep:
        _odd_facts(parse_fr_json(data, rank, source, only=sorted(keep), walk=walk), by_pg)
    histories = tuple((pg, _history(facts, keep)) for pg, facts in sorted(by_pg.items()))
    keep.discard(-1)
    dump = parse_fr_json(data, rank, source, only=sorted(keep), walk=walk)
    return FrDump(
        rank=dump.rank, version=dump.version, pg_config=dump.pg_config, pg_status=dump.pg_status,
        collectives=dump.collectives, source=source, entries=dump.entries,
        frames_by_record=dump.frames_by_record, comm_lib_version=dump.comm_lib_version,
        problems=dump.problems, histories=histories,
    )
