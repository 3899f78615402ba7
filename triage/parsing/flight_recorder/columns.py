"""The compact parse's per-entry facts, read once per distinct entry instead of once per entry.

parse_fr_compact (compact.py) needs of every entry its group, seq, signature (op, count, dtype,
gathered count) and whether it completed. A dump's 2,000 entries are nearly all alike except for
their ids, seqs and times: a training step repeats the same few collectives. Read one entry at a
time, that was a Python loop iteration per entry with a dozen checks and lookups: at 8,192 ranks
the largest phase after the decode. Here the fields a fact depends on are pulled out of every
entry in one C call each (``itemgetter``), one entry is read by the per-entry rules
(:func:`entry_fact`), and every entry whose fields equal that one's is matched in one C pass
(``map(eq, ...)``); the next entry left over is read and matched the same way, up to
``_REPRESENTATIVES`` times; whatever is still left is read one entry at a time.

Guarantees kept:
- the same facts as the per-entry loop (tests/parsing/test_fr_columns.py checks both on odd
  inputs): equality cannot mix up types where the rules tell them apart (``0 == False == 0.0``
  as a group id, ``1 == True`` as ``retired``), so those two fields are also checked by type
  and identity; equal shapes or dtypes give equal facts whatever their types;
- bounded work: an entry is compared only with one whose fields are small (``_small``: at most
  64 items, two levels deep), so a comparison stops within that size whatever the other entry
  holds (a pickle's shared references cannot make it walk more); each matched entry is charged
  to the dump's ``Walk`` what reading its representative cost, as the per-entry loop charges.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import compress, repeat
from math import prod
from operator import eq, is_, itemgetter, lt, not_
from typing import Any

from triage.model import CollectiveState, Signature
from triage.parsing.flight_recorder.entries import (
    DTYPE_CACHE,
    OP_CACHE,
    PgStatus,
    Walk,
    dtype_of,
    entry_state,
    op_and_peer,
    text,
)

KEYS = ("pg_id", "profiling_name", "collective_seq_id", "is_p2p", "input_sizes", "input_dtypes", "state", "retired")
FIELDS = itemgetter(*KEYS)     # one C call for the eight fields every torch entry has
GATHER_LIKE = frozenset({"all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"})
Sig1 = tuple[str, int | None, str | None, int | None]
SIGS: dict[Sig1, Signature] = {}    # interned one-entry signatures: ((op, count, dtype, out),)
PG_NAMES: dict[int, str] = {}
Fact = tuple[str, Signature, bool]   # group, one-entry signature, completed
# One group's facts, aligned: collective seqs, one-entry signatures, completed, entry indexes.
Columns = tuple[list[int], list[Signature], list[bool], list[int]]

# What a fact depends on besides the seq (output_sizes: the gathered count of gather-like ops).
_ROW_KEYS = ("pg_id", "profiling_name", "is_p2p", "input_sizes", "input_dtypes", "output_sizes", "state", "retired")
_PG, _STATE, _RETIRED = itemgetter(0), itemgetter(6), itemgetter(7)
_REPRESENTATIVES = 8     # distinct entries matched in C passes; the rest are read one at a time
_SMALL = 64              # items per level of a representative's field
_SCALARS = (str, int, float, bool, type(None))


def intern_sig(key: Sig1) -> Signature:
    sig = (key,)
    if len(SIGS) < 100_000:
        SIGS[key] = sig
    return sig


def entry_fact(entry: Any, statuses: Mapping[str, PgStatus], walk: Walk) -> Fact | None:
    """One entry's fact; None for an entry a full parse must read (not a dict, no group or name,
    a seq that is not a non-negative int, a p2p op). Only the slow paths (several tensors,
    gather outputs) walk a shape list, through ``walk``."""
    if type(entry) is not dict:
        return None
    try:
        pg, profiling, seq, p2p, sizes, dtypes, state, retired = FIELDS(entry)
    except KeyError:   # a field missing
        pg, profiling, seq, p2p, sizes, dtypes, state, retired = map(entry.get, KEYS)
    if type(pg) is int:
        pg = PG_NAMES.get(pg) or PG_NAMES.setdefault(pg, text(pg))
    if type(pg) is not str or not pg or type(profiling) is not str or not profiling or type(seq) is not int:
        return None
    op = (OP_CACHE.get(profiling) or op_and_peer(profiling))[0]
    if seq < 0 or p2p or op == "send" or op == "recv":
        return None
    if type(sizes) is list and len(sizes) == 1 and type(shape := sizes[0]) is list and len(shape) == 1 \
            and type(count := shape[0]) is int:
        pass   # the common single 1-d tensor
    else:
        count = walk.shapes(sizes)[1]
    out = None
    if op in GATHER_LIKE:
        shapes = walk.shapes(entry.get("output_sizes"))[0]
        out = sum(map(prod, shapes)) if shapes else None
    dtype = DTYPE_CACHE.get(dtypes[0]) if type(dtypes) is list and dtypes and type(dtypes[0]) is str else None
    if dtype is None:
        dtype = dtype_of(dtypes or entry.get("output_dtypes"))
    completed = state == "completed" or retired is True or (
        entry_state(entry, profiling.startswith("gloo"), statuses.get(pg)) is CollectiveState.COMPLETED)
    key = (op, count, dtype, out)
    return pg, SIGS.get(key) or intern_sig(key), completed


def _small(value: Any, depth: int = 2) -> bool:
    """A scalar (a str of at most 256 characters), or a list or tuple of at most _SMALL small values
    ``depth`` levels down: comparing anything with it stops within its size."""
    kind = type(value)
    if kind in (list, tuple):
        return depth > 0 and len(value) <= _SMALL and all(_small(item, depth - 1) for item in value)
    return kind in _SCALARS and (kind is not str or len(value) <= 256)


def _usable(row: tuple[Any, ...]) -> bool:
    """A representative: completed by its own fields (not by its group's status or its times,
    which other entries do not share) and small."""
    dtypes = row[4]    # the dtype then depends on these alone (not on output_dtypes)
    return (row[6] == "completed" or row[7] is True) and type(dtypes) is list and bool(dtypes) \
        and type(dtypes[0]) is str and all(map(_small, row))


def _same_kind(rows: list[tuple[Any, ...]], row: tuple[Any, ...]) -> bool:
    """Where equality would mix up values the per-entry rules tell apart: the group id's type
    (int or str; 0 == False == 0.0) and, when completion comes from it, ``retired is True``."""
    if not all(map(is_, map(type, map(_PG, rows)), repeat(type(row[0])))):
        return False
    return row[6] == "completed" or all(map(is_, map(_RETIRED, rows), repeat(True)))


class _Labels:
    """Each entry's fact as an index into a table of distinct facts (-1: read by the full parse)."""

    def __init__(self, n: int) -> None:
        self.of = [-1] * n
        self.table: list[Fact] = []
        self._ids: dict[Fact, int] = {}

    def set(self, indexes: list[int], fact: Fact) -> None:
        label = self._ids.get(fact)
        if label is None:
            label = self._ids[fact] = len(self.table)
            self.table.append(fact)
        of = self.of
        for index in indexes:
            of[index] = label


def _match(entries: list[Any] | tuple[Any, ...], rows: list[tuple[Any, ...]], todo: list[int],
           statuses: Mapping[str, PgStatus], walk: Walk, labels: _Labels, odd: set[int]) -> list[int]:
    """Read ``todo[0]``; label it and every entry of ``todo`` equal to it; return the others."""
    first, rest = todo[0], todo[1:]
    before = walk.left
    fact = entry_fact(entries[first], statuses, walk)
    if fact is None:
        odd.add(first)
        return rest
    labels.set([first], fact)
    row = rows[first]
    if not rest or not _usable(row):
        return rest
    same = list(map(eq, rows[1:] if len(rest) == len(rows) - 1 else map(rows.__getitem__, rest), repeat(row)))
    matched = list(compress(rest, same))
    if not matched or not _same_kind(list(map(rows.__getitem__, matched)), row):
        return rest
    if before is not None and walk.left is not None:
        walk.charge((before - walk.left) * len(matched))
    labels.set(matched, fact)
    return list(compress(rest, map(not_, same)))


def collect_rows(entries: list[Any] | tuple[Any, ...], statuses: Mapping[str, PgStatus],
                 walk: Walk) -> tuple[dict[str, Columns], set[int]] | None:
    """Facts by group (entry order) and the indexes of the entries a full parse must read: what
    :func:`entry_fact` gives each entry. None when some entry is not a dict with the fields, or
    a seq is not an int: compact.py reads those dumps one entry at a time."""
    n = len(entries)
    if not n or not all(map(is_, map(type, entries), repeat(dict))):
        return None
    # The decoded dicts share one key object per name (the pickle's memo): looked up with those
    # objects, each lookup is found by identity instead of comparing the text.
    own = {key: key for key in entries[0] if type(key) is str}
    try:
        rows = list(map(itemgetter(*(own.get(key, key) for key in _ROW_KEYS)), entries))
        seqs = list(map(itemgetter(own.get("collective_seq_id", "collective_seq_id")), entries))
    except KeyError:
        return None
    if not all(map(is_, map(type, seqs), repeat(int))):
        return None
    labels, odd = _Labels(n), set[int]()
    todo = list(range(n))
    if min(seqs) < 0:
        odd.update(compress(range(n), map(lt, seqs, repeat(0))))
        todo = [index for index in todo if index not in odd]
    for _ in range(_REPRESENTATIVES):
        if not todo:
            break
        todo = _match(entries, rows, todo, statuses, walk, labels, odd)
    for index in todo:
        fact = entry_fact(entries[index], statuses, walk)
        if fact is None:
            odd.add(index)
        else:
            labels.set([index], fact)
    return _columns(labels, seqs, odd), odd


def _columns(labels: _Labels, seqs: list[int], odd: set[int]) -> dict[str, Columns]:
    table, of = labels.table, labels.of
    sigs = [fact[1] for fact in table]
    done = [fact[2] for fact in table]
    by_pg: dict[str, set[int]] = {}
    for label, fact in enumerate(table):
        by_pg.setdefault(fact[0], set()).add(label)
    if len(by_pg) == 1 and not odd:   # one group, every entry a fact: the columns as they are
        (pg, _), = by_pg.items()
        return {pg: (seqs, list(map(sigs.__getitem__, of)), list(map(done.__getitem__, of)), list(range(len(of))))}
    out: dict[str, Columns] = {}
    for pg, members in by_pg.items():
        at = list(compress(range(len(of)), map(members.__contains__, of)))
        picked = list(map(of.__getitem__, at))
        out[pg] = (list(map(seqs.__getitem__, at)), list(map(sigs.__getitem__, picked)),
                   list(map(done.__getitem__, picked)), at)
    return out
