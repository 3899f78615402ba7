"""Cross-rank collective diff, per process group (pure).

Collectives are matched by (process group, seq). The first seq at which the ranks that reached
it disagree on op, count or dtype is a mismatch; the minority is blamed. Without a mismatch,
the furthest seq some rank is still waiting in tells who never arrived (stragglers).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from triage.analysis.groups import Group
from triage.model import Collective, CollectiveState, MismatchKind, SeqHistory, Signature


@dataclass(frozen=True)
class Disagreement:
    """Ranks of a group that called a different collective at the same sequence number."""
    group: Group
    seq: int
    kind: MismatchKind
    culprits: tuple[int, ...]
    majority: tuple[int, ...]
    ambiguous: bool                        # no clear minority (e.g. 1 vs 1)
    culprit_call: Collective
    majority_call: Collective
    skipped: bool = False                  # the culprit already was in the op the others call next
    next_ranks: tuple[int, ...] = ()       # majority ranks already seen in that next op (seq+1)
    in_flight: bool = False                # some rank still waits in it (a hang)
    absent: tuple[int, ...] = ()           # members that never reached this seq
    culprit_call_ranks: tuple[int, ...] = ()   # the ranks that made culprit_call
    majority_call_ranks: tuple[int, ...] = ()  # the ranks that made majority_call


@dataclass(frozen=True)
class Straggle:
    """Some members wait at ``seq`` while others never arrived there."""

    group: Group
    seq: int
    waiting: tuple[int, ...]               # ranks in the collective at seq
    behind: tuple[int, ...]                # members with data whose last seq is smaller
    no_data: tuple[int, ...]               # members with no trace at all
    call: Collective                       # what the waiting ranks called
    behind_last: tuple[tuple[int, int | None], ...] = ()   # (rank, its last seq in this pg)
    ahead: tuple[int, ...] = ()            # ranks already past seq (not blamed)


_GATHER_LIKE = frozenset({"all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"})


def _out_count(coll: Collective) -> int | None:
    """Output elements of all_gather/reduce_scatter-like ops (None for the others): a rank whose
    output is sized for another group size then differs even when its input agrees."""
    if coll.op not in _GATHER_LIKE or not coll.output_sizes:
        return None
    out = 0
    for shape in coll.output_sizes:
        n = 1
        for dim in shape:
            n *= dim
        out += n
    return out


def signature(entries: list[Collective]) -> Signature:
    if len(entries) == 1:
        only = entries[0]
        return ((only.op, only.count, only.dtype, _out_count(only)),)
    return tuple(sorted(((c.op, c.count, c.dtype, _out_count(c)) for c in entries),
                        key=lambda t: (t[0], t[1] or 0, t[2] or "", t[3] or 0)))


Index = dict[str, dict[int, list[Collective]]]   # pg -> seq -> entries, for one rank


def index_by_pg(colls: tuple[Collective, ...]) -> Index:
    """One pass over a rank's collectives (not p2p): pg -> seq -> entries."""
    index: Index = {}
    for coll in colls:
        if coll.is_p2p or coll.seq < 0:
            continue
        table = index.get(coll.pg)
        if table is None:
            table = index[coll.pg] = {}
        entries = table.get(coll.seq)
        if entries is None:
            table[coll.seq] = [coll]
        else:
            entries.append(coll)
    return index


def build_tables(group: Group, indexes: dict[int, Index]) -> dict[int, dict[int, list[Collective]]]:
    """rank -> seq -> entries, for the members of ``group`` that have a trace."""
    return {r: indexes[r].get(group.pg, {}) for r in group.members if r in indexes}


def _classify(a: Signature, b: Signature) -> MismatchKind:
    if [x[0] for x in a] != [x[0] for x in b]:
        return MismatchKind.OP
    if [x[2] for x in a] != [x[2] for x in b]:
        return MismatchKind.DTYPE
    return MismatchKind.SIZE


RankHistories = Mapping[int, Mapping[str, SeqHistory]]   # rank -> pg -> history (compacted ranks only)


def history_of(table: dict[int, list[Collective]]) -> SeqHistory:
    """The SeqHistory of one rank's complete table (seq -> entries)."""
    seqs = sorted(table)
    open_seqs = frozenset(s for s in seqs if any(c.state is not CollectiveState.COMPLETED for c in table[s]))
    return SeqHistory.build(seqs, [signature(table[s]) for s in seqs], open_seqs)


def _histories(group: Group, tables: dict[int, dict[int, list[Collective]]],
               histories: RankHistories | None) -> dict[int, SeqHistory]:
    out: dict[int, SeqHistory] = {}
    for rank, table in tables.items():
        given = histories.get(rank) if histories is not None else None
        if given is not None:
            found = given.get(group.pg)
            if found is not None and found.seqs:
                out[rank] = found
        elif table:
            out[rank] = history_of(table)
    return out


def first_disagreement(
    group: Group, tables: dict[int, dict[int, list[Collective]]], histories: RankHistories | None = None,
) -> Disagreement | None:
    """The first seq where ranks that recorded it disagree (op, then dtype, then size).

    Ranks with identical histories are folded into one class first, so 4,096 ranks that agree
    cost one comparison per seq, not 4,096. ``histories`` replaces the tables of ranks whose
    ``collectives`` were cut to the last ones."""
    filled = _histories(group, tables, histories)
    if len(filled) < 2:
        return None
    start = max(h.seqs[0] for h in filled.values())   # ring buffers: compare what all still hold
    classes: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for rank, hist in filled.items():
        classes[hist.key_from(start)].append(rank)
    if len(classes) < 2:
        return None
    reps = [(filled[ranks[0]].as_dict(start), ranks) for ranks in classes.values()]
    seqs = sorted({seq for history, _ in reps for seq in history})
    for seq in seqs:
        sigs: dict[Signature, list[int]] = defaultdict(list)
        for history, ranks in reps:
            sig = history.get(seq)
            if sig is not None:
                sigs[sig].extend(ranks)
        if len(sigs) > 1:
            present = {r for ranks in sigs.values() for r in ranks}
            absent = tuple(sorted(r for r in tables if r not in present))
            sig_at = {rank: history for history, ranks in reps for rank in ranks}
            return _disagreement(group, seq, sigs, _View(group, tables, filled, sig_at), absent)
    return None


class _View:
    """What _disagreement asks about ranks: from their histories, and their Collectives when kept."""

    def __init__(self, group: Group, tables: dict[int, dict[int, list[Collective]]],
                 histories: dict[int, SeqHistory], sigs: dict[int, dict[int, Signature]]) -> None:
        self.group, self.tables, self.histories, self.sigs = group, tables, histories, sigs

    def sig(self, rank: int, seq: int) -> Signature | None:
        return self.sigs[rank].get(seq)

    def is_open(self, rank: int, seq: int) -> bool:
        return seq in self.histories[rank].open_seqs

    def call(self, rank: int, seq: int) -> Collective:
        kept = self.tables.get(rank, {}).get(seq)
        if kept:
            return kept[0]
        sig = self.sigs[rank][seq][0]   # cut from the kept tail: rebuilt from its signature
        state = CollectiveState.IN_FLIGHT if self.is_open(rank, seq) else CollectiveState.COMPLETED
        return Collective(rank=rank, pg=self.group.pg, seq=seq, op=sig[0], count=sig[1], dtype=sig[2],
                          state=state, pg_name=self.group.name,
                          output_sizes=((sig[3],),) if sig[3] is not None else ())


def _disagreement(
    group: Group, seq: int, sigs: dict[Signature, list[int]], view: _View, absent: tuple[int, ...],
) -> Disagreement:
    ordered = sorted(sigs.items(), key=lambda kv: (-len(kv[1]), min(kv[1])))
    top_sig, top_ranks = ordered[0]
    ambiguous = len(ordered) > 1 and len(ordered[1][1]) == len(top_ranks)
    if ambiguous:
        culprits = tuple(sorted(r for _, ranks in ordered for r in ranks))
        majority: tuple[int, ...] = ()
    else:
        culprits = tuple(sorted(r for _, ranks in ordered[1:] for r in ranks))
        majority = tuple(sorted(top_ranks))
    other_sig, other_ranks = ordered[1]
    culprit_call = view.call(min(other_ranks), seq)
    majority_call = view.call(min(top_ranks), seq)
    kind = _classify(top_sig, other_sig)
    skipped = _looks_skipped(other_sig, top_ranks, view, seq)
    next_ranks = tuple(sorted(r for r in top_ranks if view.sig(r, seq + 1) is not None)) if skipped else ()
    in_flight = any(view.is_open(r, seq) for ranks in sigs.values() for r in ranks)
    return Disagreement(group, seq, kind, culprits, majority, ambiguous, culprit_call, majority_call,
                        skipped, next_ranks, in_flight, absent, tuple(sorted(other_ranks)),
                        tuple(sorted(top_ranks)))


def _looks_skipped(minority: Signature, majority_ranks: list[int], view: _View, seq: int) -> bool:
    """The minority's op at seq is what the majority calls at seq+1: it skipped one.

    Only majority ranks that already got to seq+1 can tell; all of those must agree."""
    following = [f for r in majority_ranks if (f := view.sig(r, seq + 1))]
    return bool(following) and all(f == minority for f in following)


def find_straggle(
    group: Group, tables: dict[int, dict[int, list[Collective]]]
) -> Straggle | None:
    """Members that never reached the seq most waiting ranks wait in.

    Ranks already past that seq (gloo lets some finish a broadcast early) are not blamed."""
    waiting_at: dict[int, set[int]] = defaultdict(set)
    for rank, table in tables.items():
        if not table:
            continue
        floor = max(table) - 64                    # in-flight entries are the last ones: stop early
        for seq in sorted(table, reverse=True):
            if all(c.state is CollectiveState.COMPLETED for c in table[seq]):
                if seq < floor:
                    break
                continue
            waiting_at[seq].add(rank)
    if not waiting_at:
        return None
    waiting_seq = min(waiting_at, key=lambda seq: (-len(waiting_at[seq]), seq))
    waiting = tuple(sorted(waiting_at[waiting_seq]))
    behind = tuple(sorted(r for r, t in tables.items() if not t or max(t) < waiting_seq))
    no_data = tuple(sorted(r for r in group.members if r not in tables))
    if not behind and not no_data:
        return None
    call = tables[waiting[0]][waiting_seq][0]
    last = tuple((r, max(tables[r]) if tables[r] else None) for r in behind)
    ahead = tuple(sorted(r for r, t in tables.items() if t and max(t) > waiting_seq))
    return Straggle(group, waiting_seq, waiting, behind, no_data, call, last, ahead)


def all_waiting(group: Group, tables: dict[int, dict[int, list[Collective]]]) -> tuple[int, Collective] | None:
    """(seq, call) when every traced member waits in the same unfinished collective."""
    seqs: set[int] = set()
    call: Collective | None = None
    for table in tables.values():
        if not table:
            return None
        last = max(table)
        entry = table[last][0]
        if entry.state is CollectiveState.COMPLETED:
            return None
        seqs.add(last)
        call = entry
    if len(seqs) == 1 and call is not None:
        return seqs.pop(), call
    return None
