"""Flight Recorder dumps cut to what a cross-rank report needs, for thousands of ranks.

``parse_fr_compact`` reads every entry once into a compact per-process-group history (the
signature of each collective seq, see ``SeqHistory``) and builds full Collective objects only
for the entries the rest of the analysis looks at: the last ``TAIL`` seqs of each group, every
entry that has not completed, the completed seq right under them (where the straggler scan
stops), p2p ops and anything unusual. Entry meaning is the same as ``parse_fr_json``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import prod
from operator import itemgetter
from typing import Any

from triage.analysis.model import CollectiveState, SeqHistory, Signature
from triage.parsing.flight_recorder import (
    FrDump,
    PgStatus,
    _dtype,
    _numel,
    _op_and_peer,
    _pg_status,
    _state,
    parse_fr_json,
)

TAIL = 80            # seqs of each group kept as Collectives (the straggler scan looks at 64)
_GATHER_LIKE = frozenset({"all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"})
_PG_NAMES: dict[int, str] = {}
_SIG_KEY = itemgetter(0)

Fact = tuple[int, tuple[str, int | None, str | None, int | None], bool, int]  # seq, sig, completed, index


def _fact(entry: Any, index: int, statuses: Mapping[str, PgStatus]) -> tuple[str, Fact] | None:
    """(pg, fact) of a plain collective entry; None for p2p and anything unusual (parsed fully)."""
    if type(entry) is not dict:
        return None
    get = entry.get
    pg = get("pg_id", "")
    if type(pg) is int:
        name = _PG_NAMES.get(pg)
        if name is None:
            name = _PG_NAMES[pg] = str(pg)
        pg = name
    profiling = get("profiling_name")
    seq = get("collective_seq_id", get("seq_id"))
    if type(pg) is not str or not pg or type(profiling) is not str or not profiling or type(seq) is not int:
        return None
    op, _peer = _op_and_peer(profiling)
    if get("is_p2p") or op == "send" or op == "recv" or seq < 0:
        return None
    count = _numel(get("input_sizes"))[1]
    out = None
    if op in _GATHER_LIKE:
        shapes = _numel(get("output_sizes"))[0]
        out = sum(map(prod, shapes)) if shapes else None
    state = get("state")
    completed = state == "completed" or get("retired") is True or (
        _state(entry, profiling.startswith("gloo"), statuses.get(pg)) is CollectiveState.COMPLETED)
    return pg, (seq, (op, count, _dtype(get("input_dtypes") or get("output_dtypes")), out), completed, index)


def _sig_order(item: tuple[str, int | None, str | None, int | None]) -> tuple[str, int, str, int]:
    return (item[0], item[1] or 0, item[2] or "", item[3] or 0)


def _history(facts: list[Fact], keep: set[int]) -> SeqHistory:
    """The group's SeqHistory; adds to ``keep`` the indexes of the entries to parse fully."""
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
        if j == i + 1:
            sigs.append((sig,))
        else:
            completed = all(f[2] for f in facts[i:j])
            sigs.append(tuple(sorted((f[1] for f in facts[i:j]), key=_sig_order)))
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
        fact = (coll.seq, (coll.op, coll.count, coll.dtype, out), coll.state is CollectiveState.COMPLETED, -1)
        by_pg.setdefault(coll.pg, []).append(fact)


def parse_fr_compact(data: Mapping[str, Any], rank: int | None, source: str) -> FrDump:
    """An FrDump whose ``collectives`` are the kept entries and whose ``histories`` cover all."""
    entries = data.get("entries", []) if isinstance(data, Mapping) else None
    if not isinstance(entries, (list, tuple)):
        return parse_fr_json(data, rank, source)
    statuses = _pg_status(data.get("pg_status"))
    by_pg: dict[str, list[Fact]] = {}
    keep: set[int] = set()
    for index, entry in enumerate(entries):
        found = _fact(entry, index, statuses)
        if found is None:
            keep.add(index)
            continue
        facts = by_pg.get(found[0])
        if facts is None:
            facts = by_pg[found[0]] = []
        facts.append(found[1])
    if keep:
        _odd_facts(parse_fr_json(data, rank, source, only=sorted(keep)), by_pg)
    histories = tuple((pg, _history(facts, keep)) for pg, facts in sorted(by_pg.items()))
    keep.discard(-1)
    dump = parse_fr_json(data, rank, source, only=sorted(keep))
    return FrDump(
        rank=dump.rank, version=dump.version, pg_config=dump.pg_config, pg_status=dump.pg_status,
        collectives=dump.collectives, source=source, entries=dump.entries,
        frames_by_record=dump.frames_by_record, comm_lib_version=dump.comm_lib_version,
        problems=dump.problems, histories=histories,
    )
