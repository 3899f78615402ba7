"""A finished log scan turned into evidence: each rank's first failure (the most specific line
near the earliest), the watchdog's and store waits' conclusions, a rankless OOM's rank where it
can be inferred, and the launcher's records combined with what the ranks said (triage.load.logs.text
scans; this module concludes, in the order ``scan_to_ranks`` gives). Its parts, one idea each:
how a rank ended (``endings``), the waits (``rank_waits``), whose a line of no rank is (``owners``), a rank's own
error line in plain words (``own_words``), and what a launcher's record makes of a failure (``collateral``)."""

from __future__ import annotations

from dataclasses import replace

from triage.load.logs.collateral import (
    after_kill,
    barrier_echo,
    launcher_first,
    launcher_root,
    same_end_note,
    timeout_echo,
)
from triage.load.logs.endings import combine, failure_exit, failure_of
from triage.load.logs.line_events import UNFINISHED_TRACEBACK
from triage.load.logs.own_words import lost_rank_said_first, own_words_before_abort
from triage.load.logs.owners import (
    infer_oom_rank,
    infer_sole_process_rank,
    infer_spawn_rank,
    infer_thread_rank,
    named_failures,
    note_spawn_index,
)
from triage.load.logs.rank_waits import finish_raise_sites, finish_store_waits, finish_watchdog
from triage.load.logs.ray_wrapper import ray_wrapper_alone
from triage.load.logs.scan import EXIT_RECORDS, FAILURE_CLUSTER_LINES, LogScan
from triage.model.evidence import PgMembers, RankEvidence


def scan_to_ranks(scan: LogScan) -> tuple[RankEvidence, ...]:
    own_words_before_abort(scan)
    lost_rank_said_first(scan)
    named_failures(scan)
    finish_raise_sites(scan)
    finish_store_waits(scan)
    infer_oom_rank(scan)
    infer_spawn_rank(scan)
    note_spawn_index(scan)
    infer_thread_rank(scan)
    ray_wrapper_alone(scan)
    infer_sole_process_rank(scan)
    finish_watchdog(scan)
    out: list[RankEvidence] = []
    root = launcher_root(scan)
    root_of_records = launcher_first(scan)
    for rank in sorted(scan.ranks_seen | set(scan.collectives) | set(scan.exits)):
        colls = tuple(scan.collectives.get(rank, ()))
        launcher = scan.exits.get(rank)
        failure = None
        if rank in scan.failures:
            order, line, path = failure_of(scan.failures[rank])
            failure = failure_exit(line, order, path)
            timed_out = scan.first_timeout.get(rank)
            if timed_out is not None and order >= timed_out - FAILURE_CLUSTER_LINES and not failure.collateral:
                # what a rank raised after its own watchdog fired is the timeout's consequence
                failure = replace(failure, collateral=True)
        elif rank == root and (own := [o for o in scan.orphans if not o[1].collateral
                                       and not o[1].text.startswith(EXIT_RECORDS)
                                       and not after_kill(scan, rank, o[0], o[1])]):
            # one rank failed by the launcher's account; the log's unprefixed failure lines are its (not another
            # launcher's bare exit code of the whole command, SageMaker's "ExitCode 1": the rank's record says more;
            # not a line after srun's record of its task's death by a signal: Snakemake's "WorkflowError", a batch
            # script's own error, tell the step's end after the task had died)
            order, line, path = failure_of(own)
            failure = failure_exit(line, order, path)
            if (note := same_end_note(scan, own, line, rank)) is not None:
                failure = replace(failure, message=(failure.message or "") + note)
        if launcher is not None and failure is None and launcher.signal is None and (
                scan.mismatches or any(wait.timed_out for wait in scan.init_waits) or timeout_echo(scan, launcher)
                or barrier_echo(scan, rank, launcher)):
            # every rank raises the DETAIL mismatch error and exits with it, or its init wait timed out
            # (a store-based barrier that never filled) and it exits, or its collective timed out (the
            # RuntimeError "NCCL communicator was aborted ... Watchdog caught ...") and it exits: the exit is
            # its consequence
            launcher = replace(launcher, collateral=True)
        if launcher is not None and failure is not None and (failure.message or "").startswith(UNFINISHED_TRACEBACK) \
                and not launcher.ok and not launcher.collateral and rank == root_of_records:
            # (the launcher's first observed failure, its traceback cut before its exception line: its own failure,
            # not a consequence of another's)
            failure = replace(failure, collateral=False)
        exit_info = combine(launcher, failure)
        out.append(RankEvidence(
            rank=rank, host=scan.hosts.get(rank), pid=scan.pids.get(rank), world_size=scan.world_size,
            collectives=colls, has_trace=bool(colls),
            groups=(PgMembers("0", "default_pg", None),) if colls else (),
            exit=exit_info, evidence=(), last_lines=tuple(scan.last_lines.get(rank, ())),
        ))
    return tuple(out)
