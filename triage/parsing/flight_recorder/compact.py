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
from itertools import compress, islice
from math import prod
from operator import itemgetter, lt, not_
from typing import Any

from triage.model import CollectiveState, SeqHistory, Signature
from triage.parsing.flight_recorder.columns import GATHER_LIKE, Columns, Sig1, collect_rows, entry_fact
from triage.parsing.flight_recorder.entries import PgStatus, Walk, read_pg_status
from triage.parsing.flight_recorder.parse import FrDump, parse_fr_json

TAIL = 80            # seqs of each group kept as Collectives (the straggler scan looks at 64)
_SIG_KEY = itemgetter(0)

Fact = tuple[int, Signature, bool, int]  # seq, one-entry signature, completed, entry index


def _collect(entries: list[Any] | tuple[Any, ...], statuses: Mapping[str, PgStatus],
             walk: Walk) -> tuple[dict[str, Columns], set[int]]:
    """Facts of the plain collective entries by group; the indexes of p2p and unusual ones
    (parsed fully by parse_fr_json). One entry at a time: for the dumps that
    columns.collect_rows leaves (an entry that is not a dict, a field missing, a seq not an int)."""
    by_pg: dict[str, Columns] = {}
    keep: set[int] = set()
    for index, entry in enumerate(entries):
        fact = entry_fact(entry, statuses, walk)
        if fact is None:
            keep.add(index)
            continue
        pg, sig, completed = fact
        cols = by_pg.get(pg) or by_pg.setdefault(pg, ([], [], [], []))
        cols[0].append(entry["collective_seq_id"])
        cols[1].append(sig)
        cols[2].append(completed)
        cols[3].append(index)
    return by_pg, keep


def _sig_order(item: Sig1) -> tuple[str, int, str, int]:
    return (item[0], item[1] or 0, item[2] or "", item[3] or 0)


def _history(cols: Columns, keep: set[int]) -> SeqHistory:
    """The group's SeqHistory; adds to ``keep`` the indexes of the entries to parse fully."""
    seqs, sigs, done, idxs = cols
    if not all(map(lt, seqs, islice(seqs, 1, None))):   # out of order or one seq twice: rare
        return _history_slow(list(zip(seqs, sigs, done, idxs, strict=True)), keep)
    top = seqs[-1]
    first = bisect_left(seqs, top - TAIL)
    opens = list(compress(range(len(seqs)), map(not_, done)))
    stop = next((k for k in range(first - 1, -1, -1) if done[k]), None)
    keep.update(idxs[first:])
    keep.update(map(idxs.__getitem__, opens))
    if stop is not None:
        keep.add(idxs[stop])
    return SeqHistory.build(seqs, sigs, frozenset(map(seqs.__getitem__, opens)))


def _as_columns(facts: list[Fact]) -> Columns:
    seqs, sigs, done, idxs = ([f[k] for f in facts] for k in range(4))
    return seqs, sigs, done, idxs  # type: ignore[return-value]


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
        if coll.op in GATHER_LIKE and coll.output_sizes:
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
    by_pg, keep = collect_rows(entries, statuses, walk) or _collect(entries, statuses, walk)
    if keep:
        odd: dict[str, list[Fact]] = {}
        _odd_facts(parse_fr_json(data, rank, source, only=sorted(keep), walk=walk), odd)
        for pg, facts in odd.items():   # after the group's other facts: its history is built the slow way
            before = list(zip(*by_pg.get(pg, ([], [], [], [])), strict=True))
            by_pg[pg] = _as_columns(before + facts)
    histories = tuple((pg, _history(cols, keep)) for pg, cols in sorted(by_pg.items()))
    keep.discard(-1)
    dump = parse_fr_json(data, rank, source, only=sorted(keep), walk=walk)
    return FrDump(
        rank=dump.rank, version=dump.version, pg_config=dump.pg_config, pg_status=dump.pg_status,
        collectives=dump.collectives, source=source, entries=dump.entries,
        frames_by_record=dump.frames_by_record, comm_lib_version=dump.comm_lib_version,
        problems=dump.problems, histories=histories,
    )
