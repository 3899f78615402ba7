"""Pure analysis on hand-made evidence: mismatch kinds, minority, ambiguity, skips, crashes."""

from __future__ import annotations

import random
import signal
from dataclasses import replace

from tests.helpers.evidence import DONE, WAIT, coll, exited, hang, rank
from triage.analysis.analyze import analyze
from triage.model import MismatchKind, VerdictKind
from triage.model.evidence import Evidence, PgMembers


def test_op_mismatch_blames_minority_with_issue_wording() -> None:
    ev = hang(8, 3, 1542, {"op": "all_gather", "count": 8, "dtype": "bfloat16"}, warm=0)
    report = analyze(ev)
    assert report.verdict.kind is VerdictKind.COLLECTIVE_MISMATCH
    assert report.verdict.subkind is MismatchKind.OP
    assert report.verdict.culprit_ranks == (3,)
    assert report.verdict.summary == (
        "HANG: rank 3 (node00) called all_gather(count=8, bfloat16) at seq 1542 of pg 0 (default_pg) "
        "while ranks 0-2,4-7 called all_reduce(count=262144, float32)")


def test_dtype_then_size_classification() -> None:
    dtype = analyze(hang(4, 1, 4, {"count": 262144, "dtype": "bfloat16"}))
    assert dtype.verdict.subkind is MismatchKind.DTYPE and dtype.verdict.culprit_ranks == (1,)
    size = analyze(hang(4, 2, 4, {"count": 6}))
    assert size.verdict.subkind is MismatchKind.SIZE and size.verdict.culprit_ranks == (2,)


def test_one_versus_one_is_ambiguous() -> None:
    report = analyze(hang(2, 1, 4, {"op": "all_gather"}))
    assert report.verdict.culprit_ranks == (0, 1)
    assert "no clear minority" in report.verdict.summary
    assert report.verdict.summary.index("rank 0") < report.verdict.summary.index("rank 1 ")


def test_result_does_not_depend_on_input_order() -> None:
    base = hang(16, 5, 9, {"op": "broadcast"})
    expected = analyze(base).to_json()
    rng = random.Random(7)
    for _ in range(5):
        ranks = [replace(r, collectives=tuple(rng.sample(r.collectives, len(r.collectives)))) for r in base.ranks]
        rng.shuffle(ranks)
        assert analyze(replace(base, ranks=tuple(ranks))).to_json() == expected


def test_skipped_collective_is_reported_as_skipped() -> None:
    ranks = []
    for r in range(4):
        colls = [coll(r, 1), coll(r, 2)]
        if r == 1:  # skipped the broadcast at seq 3: its seq 3 is the all_reduce the others call at seq 4
            colls.append(coll(r, 3, count=32, state=WAIT))
        else:
            colls.append(coll(r, 3, op="broadcast", count=4))
            colls.append(coll(r, 4, count=32, state=WAIT))
        ranks.append(rank(r, colls))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4))
    assert report.verdict.culprit_ranks == (1,)
    assert "rank 1 (node00) skipped broadcast(count=4, float32) at seq 3" in report.verdict.summary


def test_subgroup_membership_is_rebuilt_when_pg_config_is_empty() -> None:
    ranks = []
    for r in range(4):
        colls = [coll(r, 1)]
        if r < 3:  # pg "1" = ranks 0-2, gloo 2.13 style: pg_config keyed by "" with no ranks
            colls.append(coll(r, 1, pg="1", op="broadcast" if r == 2 else "all_reduce", state=WAIT))
        else:
            colls.append(coll(r, 2, state=WAIT))
        ranks.append(replace(rank(r, colls), groups=(PgMembers("", "", None),)))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4))
    assert report.verdict.process_group == "1"
    assert report.verdict.culprit_ranks == (2,)
    assert {"pg": "1", "name": None, "ranks": "0-2", "rebuilt": True} in report.extra["groups"]


def test_straggler_outside_collective_and_missing_rank() -> None:
    ranks = [rank(r, [coll(r, 1), coll(r, 2, state=WAIT)]) for r in range(4) if r != 2]
    ranks.append(replace(rank(2, [coll(2, 1)]), in_collective=False, stack_top="train.py:42 in save"))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=5))
    assert report.verdict.kind is VerdictKind.STUCK_OUTSIDE_COLLECTIVE
    assert report.verdict.culprit_ranks == (2, 4)
    assert "train.py:42 in save" in report.verdict.summary
    assert any(f.kind == "missing_rank" or "4" in f.detail for f in report.findings)

    only_missing = analyze(Evidence(ranks=tuple(rank(r, [coll(r, 1), coll(r, 2, state=WAIT)]) for r in range(3)),
                                    world_size=4))
    assert only_missing.verdict.kind is VerdictKind.MISSING_RANK
    assert only_missing.verdict.culprit_ranks == (3,)


def test_earliest_failure_is_root_cause_rest_collateral() -> None:
    ranks = (
        exited(0, None, int(signal.SIGTERM), t=105.0),
        exited(1, 1, t=101.0, message="RuntimeError: Connection closed by peer"),
        exited(2, None, int(signal.SIGSEGV), t=100.0),
        exited(3, 1, t=102.0, message="RuntimeError: Connection reset"),
    )
    report = analyze(Evidence(ranks=ranks, world_size=4))
    assert report.verdict.kind is VerdictKind.CRASH
    assert report.verdict.culprit_ranks == (2,)
    assert "SIGSEGV" in report.verdict.summary and "collateral" in report.verdict.summary
    roots = [f for f in report.findings if f.root_cause]
    assert len(roots) == 1 and roots[0].ranks == (2,)
    assert all("collateral" in f.detail for f in report.findings if f.kind in ("crash", "exception") and
               not f.root_cause)


def test_silent_mismatch_in_finished_run() -> None:
    ranks = []
    for r in range(4):
        ranks.append(replace(rank(r, [coll(r, 1), coll(r, 2, dtype="int32" if r == 1 else "float32")]),
                             trace_at_exit=True, exit=exited(r, 0).exit))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4, finished_cleanly=True))
    assert report.verdict.kind is VerdictKind.COLLECTIVE_MISMATCH
    assert report.verdict.summary.startswith("SILENT MISMATCH: rank 1")
    assert report.verdict.subkind is MismatchKind.DTYPE


def test_clean_run_is_no_problem() -> None:
    ranks = tuple(replace(rank(r, [coll(r, s) for s in (1, 2, 3)]), exit=exited(r, 0).exit) for r in range(4))
    report = analyze(Evidence(ranks=ranks, world_size=4, finished_cleanly=True))
    assert report.verdict.kind is VerdictKind.NO_PROBLEM_FOUND
    assert all(r.state.value == "exited_ok" for r in report.ranks)


def test_all_waiting_in_same_collective_is_an_unexplained_hang() -> None:
    ranks = tuple(rank(r, [coll(r, 1), coll(r, 2, state=WAIT)]) for r in range(4))
    report = analyze(Evidence(ranks=ranks, world_size=4))
    assert report.verdict.kind is VerdictKind.HANG
    assert DONE is not WAIT


def _p2p(r: int, seq: int, op: str, peer: int, count: int = 4, dtype: str = "float32",
         state: object = DONE) -> object:
    return replace(coll(r, seq, op=op, count=count, dtype=dtype, state=state), is_p2p=True,  # type: ignore[arg-type]
                   peer=peer)


def test_p2p_matched_by_pair_order_and_unmatched_send() -> None:
    r0 = rank(0, [coll(0, 1), _p2p(0, 1, "send", 1), _p2p(0, 2, "send", 1, state=WAIT)])  # type: ignore[list-item]
    r1 = rank(1, [coll(1, 1), _p2p(1, 1, "recv", 0), coll(1, 2, state=WAIT)])  # type: ignore[list-item]
    report = analyze(Evidence(ranks=(r1, r0), world_size=2))
    assert report.verdict.culprit_ranks == (1,)
    assert "waits in send(count=4, float32, peer=1)" in report.verdict.summary
    assert "rank 1 never posted the matching recv" in report.verdict.summary


def test_p2p_size_mismatch() -> None:
    r0 = rank(0, [_p2p(0, 1, "send", 1, count=4)])  # type: ignore[list-item]
    r1 = rank(1, [_p2p(1, 1, "recv", 0, count=8)])  # type: ignore[list-item]
    report = analyze(Evidence(ranks=(r0, r1), world_size=2))
    assert report.verdict.subkind is MismatchKind.SIZE
    assert report.verdict.culprit_ranks == (0, 1)


def test_rank_already_past_is_not_blamed_and_cross_group_wait_is_named() -> None:
    ranks = [rank(0, [coll(0, 1), coll(0, 2, state=WAIT)]),
             rank(2, [coll(2, 1), coll(2, 2), coll(2, 3, state=WAIT)]),       # finished seq 2 early
             rank(3, [coll(3, 1), coll(3, 2, state=WAIT)]),
             rank(1, [coll(1, 1), coll(1, 1, pg="1", op="barrier", count=None, dtype=None, state=WAIT)])]
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4))
    assert report.verdict.culprit_ranks == (1,)
    assert report.verdict.kind is VerdictKind.COLLECTIVE_MISMATCH
    assert "rank 1 (node00) never reached seq 2: it is in barrier() at seq 1 of pg 1 instead" in report.verdict.summary
    assert "(rank 2 already got past it)" in report.verdict.summary


def test_coalesced_entries_at_one_seq_compare_as_a_whole() -> None:
    ranks = []
    for r in range(4):
        colls = [coll(r, 1), coll(r, 2, count=4, state=WAIT), coll(r, 2, count=6 if r == 2 else 8, state=WAIT)]
        ranks.append(rank(r, colls))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4))
    assert report.verdict.subkind is MismatchKind.SIZE
    assert report.verdict.culprit_ranks == (2,) and report.verdict.seq == 2


def test_all_gather_output_sized_for_another_group_is_a_size_mismatch() -> None:
    ranks = []
    for r in range(4):
        out = ((3, 8),) if r == 1 else ((4, 8),)   # rank 1 gathers into room for 3 ranks
        c = replace(coll(r, 2, op="all_gather", state=WAIT), input_sizes=((8,),), output_sizes=out)
        ranks.append(rank(r, [coll(r, 1), c]))
    report = analyze(Evidence(ranks=tuple(ranks), world_size=4))
    assert report.verdict.subkind is MismatchKind.SIZE and report.verdict.culprit_ranks == (1,)
