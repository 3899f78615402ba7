"""The compact parse reads each distinct entry once and matches the entries equal to it in C
passes (parsing/flight_recorder/columns.py): it must give exactly what reading every entry one
at a time gives (compact.py's loop), on odd dumps too, charge the budget about the same, and stay
bounded on entries built to make comparisons expensive."""

from __future__ import annotations

import pickle
import random
import resource
from typing import Any

import pytest

from tests.helpers.synthetic import fr_dump
from triage.parsing.flight_recorder import compact
from triage.parsing.flight_recorder.columns import collect_rows
from triage.parsing.flight_recorder.entries import BudgetExceeded, PgStatus, Walk, numel
from triage.parsing.flight_recorder.parse import parse_fr_json
from triage.parsing.safe_pickle import restricted_loads

# Values each field takes, torch's first, then the ones equality could mix up (0 == False == 0.0,
# 1 == True), then junk.
_VALUES: dict[str, list[Any]] = {
    "pg_id": [0, 0, 1, "0", "tp", False, 0.0, True, "", None, 300, [0]],
    "profiling_name": ["nccl:all_reduce", "nccl:all_reduce", "gloo:all_gather", "nccl:reduce_scatter",
                       "nccl:send 0->1", "nccl:recv 1<-0", "", 5, None, "nccl:broadcast"],
    "is_p2p": [False, False, 0, None, True, 1, "", 0.0],
    "input_sizes": [[[1024]], [[1024]], [[1024.0]], [[True]], [[2, 3]], [], [[1], [2]], None, "x",
                    [["ab", 3]], [[2**70]], ((4,),)],
    "input_dtypes": [["Float"], ["Float"], ["BFloat16"], [], None, ("Float",), [5], ["Float", "Half"]],
    "output_sizes": [[[1024]], [[8192]], [[1024], [1024]], None, [[2.0]]],
    "state": ["completed", "completed", "started", "scheduled", None, 3, "COMPLETED"],
    "retired": [True, True, False, 1, None, 1.0],
}


def _entry(rng: random.Random, seq: int, template: dict[str, Any]) -> dict[str, Any]:
    entry = dict(template)
    if rng.random() < 0.08:   # one field changed, from the odd values
        key = rng.choice(list(_VALUES))
        entry[key] = rng.choice(_VALUES[key])
    entry.update(collective_seq_id=seq if rng.random() > 0.03 else -seq, op_id=seq, record_id=seq,
                 time_discovered_completed_ns=rng.choice([0, 0, 5]), time_discovered_started_ns=0)
    return entry


def _dump(seed: int, n: int = 300) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    templates = [{key: rng.choice(values) for key, values in _VALUES.items()} for _ in range(rng.randint(1, 12))]
    templates[0].update(pg_id=0, profiling_name="nccl:all_reduce", is_p2p=False, input_sizes=[[1024]],
                        input_dtypes=["Float"], state="completed", retired=True)
    return [_entry(rng, seq, rng.choice(templates[:1] * 4 + templates)) for seq in range(1, n + 1)]


def _round_trip(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """As a pickle decodes them: shared key and value objects (the memo)."""
    return restricted_loads(pickle.dumps(entries))  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(60))
def test_rows_give_the_per_entry_facts(seed: int) -> None:
    entries = _round_trip(_dump(seed))
    statuses = {"0": PgStatus(None, None, 120), "tp": PgStatus(1, 1, 1)}
    one, rows = Walk(10**6), Walk(10**6)
    expected = compact._collect(entries, statuses, one)
    got = collect_rows(entries, statuses, rows)
    assert got is not None
    assert got[1] == expected[1]
    assert got[0] == expected[0]
    # charged what each entry's representative cost: the same but where equal shapes differ in
    # type ([[1024.0]] matched with [[1024]], which the loop reads without charging)
    assert one.left is not None and rows.left is not None and abs(rows.left - one.left) <= 3 * len(entries)


def test_dumps_the_rows_leave_to_the_loop() -> None:
    """Not a dict, a field missing, a seq that is not an int: read one entry at a time, the
    same report."""
    entries = fr_dump(0, 4, 50)["entries"]
    for odd in ("junk", {k: v for k, v in entries[3].items() if k != "state"}):
        changed = [*entries[:5], odd, *entries[5:]]
        assert collect_rows(changed, {}, Walk(None)) is None
        whole = compact.parse_fr_compact({"version": "2.10", "entries": changed}, 0, "x")
        full = parse_fr_json({"version": "2.10", "entries": changed}, 0, "x")
        assert whole.collectives == full.collectives[-len(whole.collectives):]
    string_seq = [*entries[:5], dict(entries[5], collective_seq_id="6"), *entries[6:]]
    assert collect_rows(string_seq, {}, Walk(None)) is None


def test_a_dump_of_alike_entries_is_matched_not_read_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _round_trip(fr_dump(0, 4, 2000)["entries"])
    calls = []
    real = compact.entry_fact

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr("triage.parsing.flight_recorder.columns.entry_fact", counting)
    by_pg, keep = collect_rows(entries, {}, Walk(None)) or ({}, set())
    assert len(calls) <= 8 and len(by_pg["0"][0]) == 2000 and not keep


def _nested(depth: int) -> list[Any]:
    """Two levels sharing one below: 2**depth leaves described by 2 * depth lists."""
    node: list[Any] = [1]
    for _ in range(depth):
        node = [node, node]
    return node


def test_entries_built_to_make_comparisons_expensive_stay_cheap() -> None:
    """Equal but distinct deep structures in every entry (comparing two costs 2**40 steps): no
    such entry is ever the one others are compared with."""
    entries = [dict(e, input_sizes=_nested(40), input_dtypes=[_nested(40)])
               for e in fr_dump(0, 4, 300)["entries"]]
    by_pg, keep = collect_rows(entries, {}, Walk(10**7)) or ({}, set())   # returns: no 2**40 comparison
    assert len(by_pg["0"][0]) + len(keep) == len(entries)


def test_a_shape_of_text_times_a_number_is_never_multiplied() -> None:
    """[["ab", 10**9]] as a tensor shape: its dimensions are checked before any product (which
    would build a 2 GB string)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert numel([["ab", 10**9]]) == (((10**9,),), None)      # a dimension that is no int: count unknown
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 512 * 1024   # KiB
    with pytest.raises(BudgetExceeded):
        collect_rows([dict(e, input_sizes=[[1] * 5000]) for e in fr_dump(0, 4, 300)["entries"]], {},
                     Walk(100_000))
