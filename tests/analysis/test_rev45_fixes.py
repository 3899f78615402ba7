"""Session 46's fixes of the review rev45's open findings (issue 23): each class on variants written here, with a
negative beside each."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report


def _steps(*ranks: int, step: int = 1) -> list[str]:
    return [f"[rank{r}]: step {step} loss 2.{r}1" for r in ranks]


# (1) a rank-less exception line or traceback, after which every rank this input shows printed progress and a rank
# said the run ended well: a trace a library logged or one it handled, a note, never the failure
_LOGGED = {
    "java debug trace": ["24/11/28 09:00:01 DEBUG ipc.Client: closing ipc connection",
                         "java.lang.Exception: Stack trace",
                         "\tat org.apache.hadoop.ipc.Client$Connection.close(Client.java:1234)"],
    "py4j": ["py4j.protocol.Py4JNetworkError: Answer from Java side is empty"],
    "handled bare StopIteration": ["WARNING:prefetch:worker thread ended, restarting the iterator:",
                                   "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/mylib/prefetch.py", line 40, in w',
                                   "    batch = next(self.it)", "StopIteration"],
    "logging thread's traceback": ["Exception in thread uploader:", "Traceback (most recent call last):",
                                   '  File "/opt/venv/lib/python3.11/site-packages/tracker/upload.py", line 9, in run',
                                   "ConnectionResetError: [Errno 104] Connection reset by peer"],
}


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_went_on_past_and_ended_is_no_failure(name: str) -> None:
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), *_steps(0, 1, 2, step=3),
                    "[rank0]: Training complete", "[rank1]: Training complete")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "went on after an error line" in result.verdict.summary, result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_one_rank_printed_nothing_after_stays_the_failure(name: str) -> None:
    # rank 2 printed nothing after it: the trace may be rank 2's, its last words
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("name", sorted(_LOGGED))
def test_a_rank_less_trace_every_rank_stepped_after_but_none_ended_stays_the_failure(name: str) -> None:
    # every rank printed one more step (the work in flight) and then nothing: no rank said the run ended
    result = report(*_steps(0, 1, 2), *_LOGGED[name], *_steps(0, 1, 2, step=2), "+ echo Done.", "Done.")
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


def test_a_ranks_own_trace_the_others_went_on_past_stays_that_ranks_failure() -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):",
                    "[rank1]: ValueError: bad shard 7", *_steps(0, step=2), "[rank0]: Training complete")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


# a metric named "...Error" logged with its value is no exception at all
@pytest.mark.parametrize("metric", ["eval.Error: 0.3912", "top1.Error: 29.4%", "val.MeanSquaredError: 1.2e-03",
                                    "test.Error: .05"])
def test_a_metric_named_error_with_its_value_is_no_exception(metric: str) -> None:
    result = report(*_steps(0, 1), metric, *_steps(0, 1, step=2), metric)
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary


@pytest.mark.parametrize("last", ["KeyError: 0", "ValueError: 0.5 is not a valid probability"])
def test_an_exception_whose_message_is_not_only_a_fraction_stays_one(last: str) -> None:
    result = report(*_steps(0, 1), "[rank1]: Traceback (most recent call last):", f"[rank1]: {last}")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


# (2) an MPICH/Intel MPI rank whose record says it lost a peer ("Communication error with rank 2") that Hydra's box
# shows killed by a signal: that peer's death is the first failure, the reporters and the other killed boxes after it
def _box(rank: int, host: str, end: str, framed: bool = True) -> list[str]:
    lines = ["BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", f"RANK {rank} PID {5000 + rank} RUNNING AT {host}",
             end]
    return ["=" * 83, *(f"=   {line}" for line in lines), "=" * 83, ""] if framed else \
        [line + "," for line in lines[:-1]] + [end + ".", ""]


def _mpich_record(rank: int, peer: int, deep: bool) -> list[str]:
    head = (f"Abort(806995983) on node {rank} (rank {rank} in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, "
            "error stack:")
    stack = [("PMPI_Allreduce(472)..............: MPI_Allreduce(sbuf=0x7ffd, rbuf=0x7ffc, count=1, MPI_DOUBLE, "
              "MPI_SUM, MPI_COMM_WORLD) failed"), "MPIR_Allreduce_intra_auto(207)...: "] if deep else []
    return [head, *stack, f"MPIDI_CH3I_Progress(1051)........: Communication error with rank {peer}"]


@pytest.mark.parametrize("reporters_end", ["EXIT STATUS: 15", "EXIT STATUS: 1"])
@pytest.mark.parametrize("framed", [True, False])
@pytest.mark.parametrize("peer", [2, 3])
def test_the_peer_an_mpich_record_says_it_lost_is_the_failure(reporters_end: str, framed: bool, peer: int) -> None:
    lines = ["[0] step 10 residual 1.2e-3", *_mpich_record(0, peer, True), *_mpich_record(1, peer, False), ""]
    for rank in range(4):
        lines += _box(rank, f"node{rank // 2}", reporters_end if rank < 2 else "KILLED BY SIGNAL: 9 (Killed)", framed)
    result = report(*lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (peer,), result.verdict.summary
    assert "SIGKILL" in result.verdict.summary and "MPI records of ranks 0,1 say it lost" in result.verdict.summary
    assert "failed after it (collateral)" in result.verdict.summary, result.verdict.summary


def test_a_lost_peer_that_ended_by_itself_leaves_the_reading_as_it_was() -> None:
    # the peer the record names exited with code 1 (its own end, no kill): the records' network error stands
    lines = [*_mpich_record(0, 2, True), "", *_box(0, "node0", "EXIT STATUS: 1"), *_box(2, "node1", "EXIT STATUS: 1"),
             *_box(3, "node1", "KILLED BY SIGNAL: 9 (Killed)")]
    result = report(*lines)
    assert 3 not in result.verdict.culprit_ranks, result.verdict.summary


def test_an_abort_that_names_no_lost_peer_keeps_the_kills_hydras_cleanup() -> None:
    lines = ["Abort(1) on node 0 (rank 0 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0", "",
             *_box(0, "node0", "EXIT STATUS: 1"), *_box(1, "node0", "KILLED BY SIGNAL: 9 (Killed)"),
             *_box(2, "node1", "KILLED BY SIGNAL: 9 (Killed)")]
    result = report(*lines)
    assert tuple(result.verdict.culprit_ranks) == (0,), result.verdict.summary


# (2) a rank's record of its failed MPI call (mpi4jax's abort line) and Open MPI's record that the same rank was the
# first to exit with a code: one failure, the call's words; Open MPI's tag names the world rank, mpi4jax's "rN" the
# rank in the call's communicator
_FIRST_PROCESS = ["-" * 74, "Primary job  terminated normally, but 1 process returned",
                  "a non-zero exit code. Per user-direction, the job has been aborted.", "-" * 74, "-" * 74,
                  "mpirun detected that one or more processes exited with non-zero status, thus causing",
                  "the job to be terminated. The first process to do so was:", "",
                  "  Process name: [[4455,1],{rank}]", "  Exit code:    1", "-" * 74]


@pytest.mark.parametrize(("tag", "rank"), [("[1,1]<stderr>:", 1), ("", 1), ("[1,5]<stderr>:", 5),
                                           ("[1,6]<stdout>: ", 6)])
@pytest.mark.parametrize("call", ["MPI_Allreduce returned error code 15: b'MPI_ERR_TRUNCATE: message truncated'",
                                  "MPI_Sendrecv returned error code 3: b'MPI_ERR_COMM: invalid communicator'"])
def test_mpi4jaxs_line_with_open_mpis_first_process_record_is_one_failure(tag: str, rank: int, call: str) -> None:
    result = report("[1,0]<stdout>:step 10 loss 0.5", "[1,1]<stdout>:step 10 loss 0.5",
                    f"{tag}r1 | {call} - aborting", *(line.format(rank=rank) for line in _FIRST_PROCESS))
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (rank,), result.verdict.summary
    assert "failed in MPI_" in result.verdict.summary and "collateral" not in result.verdict.summary


def test_open_mpis_first_process_record_alone_still_names_its_rank() -> None:
    result = report("[1,0]<stdout>:step 10 loss 0.5", *(line.format(rank=3) for line in _FIRST_PROCESS))
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary
    assert "exited with code 1" in result.verdict.summary, result.verdict.summary


# (3) a rank's own exception under Hydra's -prepend-rank ("[3] numpy.linalg.LinAlgError: ...") among Hydra's own
# unprefixed boxes: that rank's line, and with its box's bare exit code one failure, the exception's words
def _prepended_traceback(rank: int, last: str) -> list[str]:
    return [f"[{rank}] Traceback (most recent call last):", f'[{rank}]   File "solve.py", line 77, in <module>',
            f"[{rank}]     x = np.linalg.solve(A, b)", f"[{rank}] {last}", ""]


@pytest.mark.parametrize("rank", [1, 3])
@pytest.mark.parametrize("last", ["numpy.linalg.LinAlgError: Singular matrix", "KeyError: 'rho'"])
def test_a_prepended_ranks_exception_among_hydras_boxes_is_its_failure(rank: int, last: str) -> None:
    lines = _prepended_traceback(rank, last)
    for other in range(4):
        lines += _box(other, f"node{other // 2}", "EXIT STATUS: 1" if other == rank else "KILLED BY SIGNAL: 9 (Killed)")
    result = report(*lines)
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (rank,), result.verdict.summary
    assert last.split(":")[0] in result.verdict.summary, result.verdict.summary


def test_hydras_exit_box_alone_still_says_its_exit_code() -> None:
    lines = ["[0] step 1 residual 0.3", "[0] step 2 residual 0.2"]
    for other in range(2):
        lines += _box(other, "node0", "EXIT STATUS: 1" if other == 1 else "KILLED BY SIGNAL: 9 (Killed)")
    result = report(*lines)
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary
    assert "exited with code 1" in result.verdict.summary, result.verdict.summary


# (5) MPICH ch3:sock's record of a link it could not make, under Hydra's -prepend-rank: a network error, as bare
_CH3 = [("[ch3:sock] rank {r} unable to connect to rank {p} using business card <port=55228 description=10.35.1.13 "
         "host13 ifname=10.35.1.13 >"), "unable to connect to 10.35.1.13 host13  on port 55228, exhausted all endpoints",
        "Fatal error in MPI_Allgather: Other MPI error, error stack:",
        "MPIC_Sendrecv(116)........:",
        "MPIDI_CH3I_Sock_connect(387): [ch3:sock] rank {r} unable to connect to rank {p} using business card <port=1 >"]


@pytest.mark.parametrize(("reporter", "peer"), [(0, 19), (5, 2)])
@pytest.mark.parametrize("head", ["[{r}] ", "[{r}]\t", ""])
def test_a_ch3_sock_record_under_prepend_rank_is_a_network_error(reporter: int, peer: int, head: str) -> None:
    result = report(*(head.format(r=reporter) + line.format(r=reporter, p=peer) for line in _CH3))
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert f"could not connect to rank {peer}" in result.verdict.summary, result.verdict.summary


def test_a_prepended_ch3_sock_record_the_job_went_on_past_is_no_failure() -> None:
    result = report(*(f"[0] {line.format(r=0, p=3)}" for line in _CH3[:2]), "[0] step 1 loss 2.1",
                    "[0] step 2 loss 2.0", "[0] Training complete")
    assert "could not connect" not in result.verdict.summary, result.verdict.summary


# (5) Hydra's box pattern matches a blank line's space one way only: a box cut after a viewer's numbered blank lines
# is read in linear time (it took seconds per extra line before)
def test_hydras_box_over_many_numbered_blank_lines_is_read_at_once() -> None:
    from triage.parsing.frameworks import parse_framework_records
    from triage.parsing.launchers import parse_rank_deaths

    text = ("[80001] " + "=" * 83 + "\n[80002] =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            + "".join(f"[{80003 + i}] \n" for i in range(60)) + "[80070] =   RANK 1 PID 3 RUNNING AT h\n")
    assert parse_rank_deaths(text) == ()
    assert not [d for d in parse_framework_records(text) if d.rank == 1]
    box = text.replace("[80070] =   RANK 1 PID 3 RUNNING AT h\n", "[80070] =   RANK 1 PID 3 RUNNING AT h\n"
                       "[80071] =   KILLED BY SIGNAL: 9 (Killed)\n")
    assert [d.rank for d in parse_framework_records(box) if d.signal == "SIGKILL"] == [1]


# (3) the same program started again after a failure (a job script's retry, an older run's log above the new one),
# the later run ending well: the earlier run's failure is a note; a later run that fails is the story
_LAMMPS_FAIL = ["ERROR: Lost atoms: original 32000 current 31998 (src/thermo.cpp:488)", "Last command: run 10000",
                "-" * 74, "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD", "with errorcode 1.",
                "-" * 74]
_TRAIN_FAIL = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
               "RuntimeError: loss is nan at step 300"]


def _steps_plain(end: str) -> list[str]:
    return [f"step {n} loss 1.{9 - n // 1000}" for n in range(0, 5000, 500)] + [end]


@pytest.mark.parametrize(("start", "again", "failed", "end"), [
    ("+ mpirun -np 4 python train_md.py --lr 1e-3", "+ mpirun -np 4 python train_md.py --lr 1e-3 --dt 0.5",
     _LAMMPS_FAIL, "Training complete"),
    ("$ srun ./lmp -in in.lj", "$ srun ./lmp -in in.lj -var dt 0.5", _LAMMPS_FAIL, "Total wall time: 0:01:00"),
    ("LAMMPS (2 Aug 2023)", "LAMMPS (2 Aug 2023)", _LAMMPS_FAIL, "Total wall time: 0:01:00"),
    ("+ torchrun --nproc_per_node 2 train.py", "+ torchrun --nproc_per_node 2 train.py --resume", _TRAIN_FAIL,
     "Training complete"),
])
def test_a_failed_run_the_program_was_started_again_after_and_ended_well_is_a_note(
        start: str, again: str, failed: list[str], end: str) -> None:
    result = report(start, "step 0 loss 2.0", *failed, "+ echo retrying", "retrying", again, *_steps_plain(end))
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "an earlier run, before the program started again" in result.verdict.summary, result.verdict.summary


def test_a_later_run_that_fails_too_is_no_all_clear() -> None:
    result = report("+ srun python train.py", *_LAMMPS_FAIL, "+ srun python train.py --resume", "step 0 loss 2.0",
                    *_TRAIN_FAIL)
    assert result.verdict.kind.value == "exception", result.verdict.summary


def test_another_program_after_a_failure_ending_well_leaves_the_failure() -> None:
    result = report("+ srun python preprocess.py", *_TRAIN_FAIL, "+ srun python train.py", *_steps_plain("Done."))
    assert result.verdict.kind.value == "exception", result.verdict.summary


def test_a_retry_that_did_not_say_it_ended_leaves_the_failure() -> None:
    result = report("+ srun ./lmp -in in.lj", *_LAMMPS_FAIL, "+ srun ./lmp -in in.lj", "step 0 loss 2.0",
                    "step 500 loss 1.9")
    assert result.verdict.kind.value == "exception", result.verdict.summary


# (4) wording: GROMACS's message wrapped at 80 columns is joined to its blank line, cut at a whole sentence; WRF's
# reason is the line after its "FATAL CALLED FROM FILE:" place; an MPI link's failure is settled with the MPI
# runtime's and its fabric's own logs, not NCCL's
_GMX_MESSAGE = ["Step 4200: The total potential energy is nan, which is not finite. The LJ and",
                "electrostatic contributions to the energy are 0 and -84310.2, respectively. A",
                "non-finite potential energy can be caused by overlapping interactions in bonded",
                "interactions or very large or Nan coordinate values. Usually this is caused by",
                "a badly or non-equilibrated initial configuration, incorrect interactions or",
                "parameters in the topology."]


@pytest.mark.parametrize("head", ["", "[1,2]<stderr>:"])
def test_gromacs_wrapped_message_is_joined_to_a_whole_sentence(head: str) -> None:
    banner = ["-" * 55, "Program:     gmx mdrun, version 2021.5", "MPI rank:    2 (out of 4)", "", "Fatal error:",
              *_GMX_MESSAGE, "", "For more information and tips for troubleshooting, please check the GROMACS", "-" * 55]
    result = report(*(head + line for line in banner), "-" * 74,
                    "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD", "with errorcode 1.")
    assert tuple(result.verdict.culprit_ranks) == (2,), result.verdict.summary
    assert "-84310.2, respectively." in result.verdict.summary, result.verdict.summary
    assert "The LJ and;" not in result.verdict.summary and "For more information" not in result.verdict.summary


@pytest.mark.parametrize(("reason", "said"), [("cfl error on task", "cfl error on task (called from <stdin> line 981)"),
                                              ("", "FATAL CALLED FROM FILE: <stdin> LINE: 981")])
def test_wrfs_reason_is_the_line_after_its_place(reason: str, said: str) -> None:
    result = report("taskid: 1 hostname: node171", "-------------- FATAL CALLED ---------------",
                    "FATAL CALLED FROM FILE:  <stdin>  LINE:     981", *([reason] if reason else []),
                    "-------------------------------------------")
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary
    assert said in result.verdict.summary, result.verdict.summary


def test_an_mpi_links_failure_is_settled_with_the_fabrics_own_log() -> None:
    result = report("MPICH ERROR [Rank 12] [job id 1234567.0] [Sat Nov 28 07:00:02 2026] [nid001230] - "
                    "Abort(806995983) (rank 12 in comm 0): Fatal error in PMPI_Wait: Other MPI error, error stack:",
                    "PMPI_Wait(204)...........: MPI_Wait(request=0x7ffd, status=0x1) failed",
                    "MPIDI_OFI_handle_cq_error(1064): OFI poll failed (ofi_events.c:1064:MPIDI_OFI_handle_cq_error:"
                    "Input/output error - PTLTE_NOT_FOUND)")
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert "FI_LOG_LEVEL" in result.verdict.summary and "NCCL_DEBUG" not in result.verdict.summary


def test_nccls_network_failure_keeps_nccls_advice() -> None:
    result = report("[rank0]: RuntimeError: NCCL communicator was aborted: ncclSystemError: System call (e.g. socket, "
                    "malloc) or external library call failed or device error.")
    assert "FI_LOG_LEVEL" not in result.verdict.summary, result.verdict.summary


# (rev46) an exception's own type is never a metric: a builtin exception ending a traceback with a fraction (the value
# an `assert x < 0.5, x` says), a module path's exception, with or without a rank prefix
@pytest.mark.parametrize("last", ["AssertionError: 0.7312", "ValueError: 0.25", "ZeroDivisionError: .5",
                                  "pkg.errors.ToleranceError: 0.73", "train.AssertionError: 1.5e-03"])
@pytest.mark.parametrize("prefixed", [True, False])
def test_an_exception_type_with_a_fraction_ending_a_traceback_is_the_failure(last: str, prefixed: bool) -> None:
    head = "[rank1]: " if prefixed else ""
    result = report(*(_steps(0, 1) if prefixed else ["epoch 1 step 10 loss 0.91"]),
                    f"{head}Traceback (most recent call last):", f'{head}  File "/w/train.py", line 71, in main',
                    f"{head}    assert grad_norm < 0.5, grad_norm", f"{head}{last}")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert last in result.verdict.summary, result.verdict.summary
    if prefixed:
        assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary


def test_a_builtin_exception_type_with_a_fraction_is_an_unread_failure_line() -> None:
    from triage.parsing.unread_failure import unread_failure
    assert unread_failure("AssertionError: 0.7312") is not None
    assert unread_failure("val.MeanSquaredError: 1.2e-03") is None      # the negative: a split's metric


# (rev46) a rank's own MPI error (its record names no lost peer) comes first: the peer another rank's record says it
# lost, killed, is the launcher's cleanup after it
@pytest.mark.parametrize("own_first", [True, False])
@pytest.mark.parametrize("framed", [True, False])
def test_a_ranks_own_mpich_error_comes_before_the_peer_another_rank_lost(own_first: bool, framed: bool) -> None:
    own = ["Abort(403275522) on node 1 (rank 1 in comm 0): Fatal error in PMPI_Send: Invalid rank, error stack:",
           "PMPI_Send(159): MPI_Send(buf=0x7ffe, count=10, MPI_DOUBLE, dest=7, tag=0, MPI_COMM_WORLD) failed",
           "PMPI_Send(97).: Invalid rank has value 7 but must be nonnegative and less than 4", ""]
    peer = [*_mpich_record(0, 2, True), ""]
    lines = ["step 10 residual 1.2e-03", *(own + peer if own_first else peer + own)]
    for rank in range(4):
        lines += _box(rank, f"node{rank // 2 + 1}", "EXIT STATUS: 1" if rank < 2 else "KILLED BY SIGNAL: 9 (Killed)",
                      framed)
    result = report(*lines)
    assert 2 not in result.verdict.culprit_ranks, result.verdict.summary
    assert "it lost this rank" not in result.verdict.summary, result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (1,), result.verdict.summary
    # (the record's innermost line is its own stack's, not the next record's)
    assert "Invalid rank has value 7" in result.verdict.summary, result.verdict.summary


# (3b) what starts a run: a banner names something (a separator, a traceback's head repeat in any log); a job
# script's next stage, the same program on another input, is another run; the later run shows its own progress
@pytest.mark.parametrize("first", ["=" * 64, "-" * 40, "Traceback (most recent call last):", "2026-11-28 10:00:01"])
def test_a_repeated_line_that_names_no_run_starts_none(first: str) -> None:
    result = report(first, "job 4411 on node7", first, "step 0 loss 2.0", *_TRAIN_FAIL, first, "Done.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "an earlier run" not in result.verdict.summary


@pytest.mark.parametrize(("start", "again"), [
    ("+ srun ./lmp -in in.minimize", "+ srun ./lmp -in in.analysis"),
    ("$ mpirun -np 8 ./solver --config stage1.yaml", "$ mpirun -np 8 ./solver --config stage2.yaml"),
])
def test_a_job_scripts_next_stage_is_another_run(start: str, again: str) -> None:
    result = report(start, *_LAMMPS_FAIL, again, *_steps_plain("Total wall time: 0:00:01"))
    assert result.verdict.kind.value != "no_problem_found", result.verdict.summary


def test_a_start_again_whose_later_run_shows_no_progress_of_its_own_leaves_the_failure() -> None:
    result = report("+ srun python train.py", "step 0 loss 2.0", *_TRAIN_FAIL, "+ srun python train.py --resume",
                    "Done.")
    assert result.verdict.kind.value == "exception", result.verdict.summary


# (rev46) the lost-peer records under a launcher's rank head on each line (Hydra's -prepend-rank "[0] ", srun's "0: "):
# the same reading as bare
@pytest.mark.parametrize("head", ["[{r}] ", "{r}: "])
def test_the_lost_peer_read_under_a_rank_head(head: str) -> None:
    lines = [head.format(r=r) + "step 10 residual 1.2e-03" for r in range(4)]
    for rank in (0, 1):
        lines += [head.format(r=rank) + line for line in _mpich_record(rank, 2, True)]
    lines.append("")
    for rank in (2, 3):
        lines += _box(rank, "node2", "KILLED BY SIGNAL: 9 (Killed)")
    result = report(*lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (2,), result.verdict.summary
    assert "MPI records of ranks 0,1 say it lost" in result.verdict.summary, result.verdict.summary


def test_prefixed_records_that_lost_no_killed_peer_stay_the_ranks_error() -> None:
    # the negative: the peer the records name exited by itself (no kill): no peer is named from them
    lines = [f"[{rank}] " + line for rank in (0, 1) for line in _mpich_record(rank, 3, True)]
    lines += ["", *_box(0, "node0", "EXIT STATUS: 1"), *_box(2, "node1", "KILLED BY SIGNAL: 9 (Killed)"),
              *_box(3, "node1", "EXIT STATUS: 1")]
    result = report(*lines)
    assert "it lost this rank" not in result.verdict.summary, result.verdict.summary
    assert 2 not in result.verdict.culprit_ranks, result.verdict.summary


# (rev46, 95add309) a launcher's record that a rank exited first with a code, and the rank's own exception lines: the
# last one before its end is what ended it (a chain's last exception; not a handled one it went on past)
_HYDRA_EXIT_3 = ["", *_box(3, "node1", "EXIT STATUS: 1")]


@pytest.mark.parametrize("head", ["[3] ", "3: "])
def test_the_ranks_last_exception_line_is_what_the_exit_record_ended(head: str) -> None:
    chained = ["Traceback (most recent call last):", "KeyError: 'shard-0003'", "",
               "During handling of the above exception, another exception occurred:", "",
               "Traceback (most recent call last):", "FileNotFoundError: /data/shard-0003.npy"]
    result = report("[0] step 1 loss 2.1", *(head + line for line in chained), *_HYDRA_EXIT_3)
    assert "FileNotFoundError: /data/shard-0003.npy" in result.verdict.summary, result.verdict.summary
    handled = ["FileNotFoundError: [Errno 2] No such file or directory: '/cache/index.pkl' (rebuilding the index)",
               "step 1 loss 2.3", "step 2 loss 2.2", "Traceback (most recent call last):",
               "numpy.linalg.LinAlgError: Singular matrix"]
    result = report("[0] step 1 loss 2.1", *(head + line for line in handled), *_HYDRA_EXIT_3)
    assert "LinAlgError: Singular matrix" in result.verdict.summary, result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (3,), result.verdict.summary


def test_a_ranks_one_exception_line_under_the_exit_record_stays_it() -> None:
    result = report("[0] step 1 loss 2.1", "[3] step 1 loss 2.3", "[3] step 2 loss 2.2",
                    "[3] Traceback (most recent call last):", '[3]   File "/app/train.py", line 50, in <module>',
                    "[3] ValueError: bad shard 7", *_HYDRA_EXIT_3)
    assert "ValueError: bad shard 7" in result.verdict.summary, result.verdict.summary


# (rev47 r2) the same launch command with words added is the run started again only where the later run redoes the
# earlier run's work (progress of a kind the earlier run reported); a next stage doing other work (an evaluation after
# a training run that failed) leaves the failure
@pytest.mark.parametrize(("start", "before", "again", "after"), [
    ("+ mpirun -np 8 python main.py --cfg a.yaml", ["epoch 1 loss 0.9"],
     "+ mpirun -np 8 python main.py --cfg a.yaml --test-only", [f"batch {n}/40 loss 0.3" for n in range(10, 50, 10)]),
    ("$ srun -n 2 python run.py", [], "$ srun -n 2 python run.py --mode predict --weights w.pt",
     [f"predict step {n}/20" for n in range(5, 25, 5)]),
])
def test_the_same_command_with_words_added_doing_other_work_is_a_next_stage(
        start: str, before: list[str], again: str, after: list[str]) -> None:
    result = report(start, *before, *_TRAIN_FAIL, again, *after, "Done.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert "an earlier run" not in result.verdict.summary, result.verdict.summary


def test_the_same_command_with_words_added_redoing_the_work_is_the_run_started_again() -> None:
    # the negative: epochs before, epochs after (a resume from the checkpoint): the failure is a note
    result = report("+ mpirun -np 8 python main.py --cfg a.yaml", "epoch 1 loss 0.9", *_TRAIN_FAIL,
                    "+ mpirun -np 8 python main.py --cfg a.yaml --resume ckpt/last.pt",
                    *[f"epoch {n} loss 0.{9 - n}" for n in range(2, 6)], "Training complete")
    assert result.verdict.kind.value == "no_problem_found", result.verdict.summary
    assert "an earlier run, before the program started again" in result.verdict.summary, result.verdict.summary


def test_the_reviewers_eval_stage_after_a_failed_training_stage() -> None:
    result = report("+ srun -n 4 python train.py --config cfg.yaml", "[rank2]: Traceback (most recent call last):",
                    '[rank2]:   File "train.py", line 210, in <module>', "[rank2]:     main()",
                    "[rank2]: ValueError: shard 17 has 0 samples", "srun: error: node12: task 2: Exited with exit code 1",
                    "+ srun -n 4 python train.py --config cfg.yaml --eval-only --ckpt ckpt/last.pt",
                    "[rank0]: eval step 10/50", "[rank0]: eval step 50/50", "[rank0]: Eval accuracy: 0.71", "Done.")
    assert result.verdict.kind.value == "exception", result.verdict.summary
    assert tuple(result.verdict.culprit_ranks) == (2,), result.verdict.summary
