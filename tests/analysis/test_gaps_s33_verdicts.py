"""Classes of issue 23 on the verdict side, closed as classes: each on variants written here and on real
text from public reports (log text only), end to end through ``triage report``.

1. Open MPI's own records of a failed rank: the error handler's block (``*** An error occurred in MPI_X``,
   ``*** reported by process [J,R]``: rank R), ``MPI_ABORT was invoked on rank R``, ``mpirun has exited due
   to process rank R ... exiting improperly``, ``Primary job terminated normally, but 1 process returned a
   non-zero exit code``: the rank and host they name are the failure, never a refusal;
2. torchrun's agent getting SIGTERM or SIGHUP with no scheduler line: the ``stopped`` verdict (who sent it,
   the input does not say: what would tell), unless a rank failed or hung before it (then that failure is the
   verdict and the stop follows it); Ctrl-C (SIGINT) stays a reaction, never the verdict;
3. the known gaps fixed as classes: lines every rank prints (a warning's source line, a library's advisory,
   a trainer's metric dict) are no evidence that rank 0 alone was at other work; a launcher's bare exit
   record of the rank that reported a failed monitored_barrier is that error's echo, not a first failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.analysis.test_gaps_s32 import OMPI_ERRHANDLER
from tests.helpers.report import report_log
from triage.analysis.absent_rank import metric_dict, printed_by_any_rank
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.torchelastic import parse_agent_death_signal


def verdict(text: str, tmp_path: Path) -> dict[str, Any]:
    code, out = report_log(text, tmp_path)
    assert code != 2, out.get("stderr")
    assert code not in (0, 70), out
    return dict(out["verdict"])


# --- 1. Open MPI's records ---------------------------------------------------------------------------------

# pytorch/pytorch#20200 (Open MPI 3.1, MPI backend, reduce across two nodes): refused before
PYTORCH_20200 = OMPI_ERRHANDLER       # (tests/analysis/test_gaps_s32.py holds the text)

# pytorch/pytorch#54097 (CI of the MPI backend's tests): rank 2's error, then the test runner's own exception
PYTORCH_54097 = """\
Mar 16 01:30:00   test_destroy_group (__main__.TestMPIWithFork) ... [a34ceb6576ba:611] *** An error occurred in MPI_Comm_create
Mar 16 01:30:00 [a34ceb6576ba:611] *** reported by process [3044540417,2]
Mar 16 01:30:00 [a34ceb6576ba:611] *** on communicator MPI_COMM_WORLD
Mar 16 01:30:00 [a34ceb6576ba:611] *** MPI_ERR_IN_STATUS: error code in status
Mar 16 01:30:00 [a34ceb6576ba:611] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
Mar 16 01:30:00 [a34ceb6576ba:611] ***    and potentially your MPI job)
Mar 16 01:30:00 Traceback (most recent call last):
Mar 16 01:30:00   File "test/run_test.py", line 1075, in <module>
Mar 16 01:30:00     main()
Mar 16 01:30:00   File "test/run_test.py", line 1054, in main
Mar 16 01:30:00     raise RuntimeError(err_message)
Mar 16 01:30:00 RuntimeError: distributed/test_distributed_fork failed!
"""


@pytest.mark.parametrize(("text", "rank", "host", "words"), [
    (PYTORCH_20200, 0, "g2-nasp", "MPI_Reduce failed: MPI_ERR_ROOT: invalid root"),
    (PYTORCH_54097, 2, "a34ceb6576ba", "MPI_Comm_create failed: MPI_ERR_IN_STATUS"),
])
def test_open_mpi_error_handler_real(text: str, rank: int, host: str, words: str, tmp_path: Path) -> None:
    got = verdict(text, tmp_path)
    assert got["culprit_ranks"] == [rank]
    assert words in got["summary"] and host in got["summary"]


# variants written here: Open MPI 5's process name, a gloo job's banner around it, two ranks' blocks
OMPI5_BLOCK = """\
[rank0]: step 10 loss 2.1
[rank1]: step 10 loss 2.2
[gpu-b7:81234] *** An error occurred in MPI_Allreduce
[gpu-b7:81234] *** reported by process [prterun-gpu-a1-1200@1,3]
[gpu-b7:81234] *** on communicator MPI COMMUNICATOR 4 DUP FROM 0
[gpu-b7:81234] *** MPI_ERR_TRUNCATE: message truncated
[gpu-b7:81234] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[gpu-b7:81234] ***    and MPI will try to terminate your MPI job as well)
[gpu-a1:81200] *** An error occurred in MPI_Allreduce
[gpu-a1:81200] *** reported by process [prterun-gpu-a1-1200@1,0]
[gpu-a1:81200] *** on communicator MPI COMMUNICATOR 4 DUP FROM 0
[gpu-a1:81200] *** MPI_ERR_TRUNCATE: message truncated
"""


def test_open_mpi_error_handler_variant_first_block_first(tmp_path: Path) -> None:
    errors = parse_mpi_errors(OMPI5_BLOCK)
    assert [(e.rank, e.host) for e in errors] == [(3, "gpu-b7"), (0, "gpu-a1")]
    assert "on communicator MPI COMMUNICATOR 4 DUP FROM 0" in errors[0].text
    got = verdict(OMPI5_BLOCK, tmp_path)
    # the same error on both: a cause they share, rank 3's (the first) said first, with its host
    assert got["culprit_ranks"] == [0, 3]
    assert got["summary"].startswith("EXCEPTION: rank 3 (gpu-b7) raised: MPI_Allreduce failed: MPI_ERR_TRUNCATE")


def test_open_mpi_old_block_names_the_host_not_a_rank(tmp_path: Path) -> None:
    text = ("[gpu3:5512] *** An error occurred in MPI_Allreduce\n[gpu3:5512] *** on communicator MPI_COMM_WORLD\n"
            "[gpu3:5512] *** MPI_ERR_TRUNCATE: message truncated\n"
            "[gpu3:5512] *** MPI_ERRORS_ARE_FATAL: your MPI job will now abort\n")
    got = verdict(text, tmp_path)
    assert got["culprit_ranks"] == []
    assert "gpu3" in got["summary"] and "MPI_Allreduce failed" in got["summary"]


@pytest.mark.parametrize(("text", "rank", "words"), [
    (("epoch 1 step 20\n" + "-" * 74 + "\nMPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\n"
      "with errorcode 1.\n\nNOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"),
     3, "MPI_Abort"),
    (("Traceback (most recent call last):\n  File \"train.py\", line 10, in <module>\n    main()\nSystemExit: 1\n"
      "mpirun has exited due to process rank 2 with PID 0 on\nnode gpu-12 exiting improperly. There are three "
      "reasons this could occur:\n"), 2, "MPI_Finalize"),
])
def test_mpi_abort_and_improper_exit_name_the_rank(text: str, rank: int, words: str, tmp_path: Path) -> None:
    got = verdict(text, tmp_path)
    assert got["culprit_ranks"] == [rank] and words in got["summary"]


def test_primary_job_non_zero_alone_is_a_failure_of_no_known_rank(tmp_path: Path) -> None:
    text = ("loading data\n-------------------------------------------------------\nPrimary job  terminated "
            "normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n")
    got = verdict(text, tmp_path)
    assert got["culprit_ranks"] == [] and "non-zero exit code" in got["summary"]
    # with mpirun's box after it, the box names the rank (read as before)
    boxed = text + ("mpirun detected that one or more processes exited with non-zero status, thus causing\nthe job "
                    "to be terminated. The first process to do so was:\n\n  Process name: [[50371,1],1]\n"
                    "  Exit code:    1\n")
    assert verdict(boxed, tmp_path)["culprit_ranks"] == [1]


def test_mpi_records_never_raise_on_cut_text() -> None:
    for cut in range(0, len(PYTORCH_20200), 7):
        parse_mpi_errors(PYTORCH_20200[:cut])
    assert parse_mpi_errors("no mpi here") == ()


# --- 2. torchrun's agent stopped from outside ------------------------------------------------------------------

# PrimeIntellect-ai/prime-rl#1360: the trainer's agent got SIGTERM (the launcher's supervisor stopped it)
PRIME_RL_1360 = """\
[default0]:12:13:46    INFO Starting from step 0 (total_tokens=0, total_samples=0)
[default0]:12:13:46    INFO Initializing data loader (fake=None)
[default0]:12:13:46    INFO Starting training loop (max_steps=100)
[default0]:12:13:46    INFO Starting training step 0
[default0]:12:13:46    INFO Waiting for training batch to arrive
W1130 12:13:49.388000 124326 torch/distributed/elastic/agent/server/api.py:723] Received 15 death signal, shutting down workers
W1130 12:13:49.389000 124326 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 124533 closing signal SIGTERM
"""

AGENT_TERM = """\
W1126 10:05:12.123000 140 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers
W1126 10:05:12.124000 140 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 141 closing signal SIGTERM
W1126 10:05:12.124000 140 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 142 closing signal SIGTERM
Traceback (most recent call last):
  File "/usr/bin/torchrun", line 8, in <module>
    sys.exit(main())
torch.distributed.elastic.multiprocessing.api.SignalException: Process 140 got signal: 15
"""
PROGRESS = "[rank0]: step 100 loss 2.31\n[rank1]: step 100 loss 2.30\n"
TIMEOUT = ("[rank1]:[E1126 10:04:00.000000 141 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 "
           "milliseconds before timing out.\n")
RAISED = ('[rank1]: Traceback (most recent call last):\n[rank1]:   File "train.py", line 5, in <module>\n'
          "[rank1]: ValueError: bad batch\n")


def test_agent_sigterm_real_is_stopped(tmp_path: Path) -> None:
    got = verdict(PRIME_RL_1360, tmp_path)
    assert got["kind"] == "stopped" and got["culprit_ranks"] == []
    assert "SIGTERM" in got["summary"] and "sacct" in got["summary"] and "kubectl" in got["summary"]


@pytest.mark.parametrize(("signal_line", "name", "step"), [
    ("Received Signals.SIGHUP death signal, shutting down workers", "SIGHUP", "tmux"),
    ("Received 1 death signal, shutting down workers", "SIGHUP", "tmux"),
    ("Received 15 death signal, shutting down workers", "SIGTERM", "sacct"),
])
def test_agent_signal_variants_are_stopped(signal_line: str, name: str, step: str, tmp_path: Path) -> None:
    text = PROGRESS + f"WARNING:torch.distributed.elastic.agent.server.api:{signal_line}\n"
    got = verdict(text, tmp_path)
    assert got["kind"] == "stopped" and name in got["summary"] and step in got["summary"]
    assert "this input does not say" in got["summary"]


def test_agent_sigterm_after_progress_is_stopped(tmp_path: Path) -> None:
    got = verdict(PROGRESS + AGENT_TERM, tmp_path)
    assert got["kind"] == "stopped"
    assert parse_agent_death_signal(PROGRESS + AGENT_TERM).offset == len(PROGRESS)  # type: ignore[union-attr]


@pytest.mark.parametrize(("before", "kind", "ranks"), [
    (TIMEOUT, "stuck_outside_collective", [0]),     # rank 1 timed out while rank 0's last line shows work
    (RAISED, "exception", [1]),
])
def test_failure_before_the_stop_stays_the_verdict(before: str, kind: str, ranks: list[int], tmp_path: Path) -> None:
    got = verdict(PROGRESS + before + AGENT_TERM, tmp_path)
    assert got["kind"] == kind and got["culprit_ranks"] == ranks
    assert "then torchrun's agent received SIGTERM" in got["summary"]


def test_failure_after_the_stop_is_its_consequence(tmp_path: Path) -> None:
    after = RAISED.replace("ValueError: bad batch", "RuntimeError: Connection reset by peer")
    got = verdict(PROGRESS + AGENT_TERM + after, tmp_path)
    assert got["kind"] == "stopped"


def test_ctrl_c_is_never_the_verdict(tmp_path: Path) -> None:
    text = PROGRESS + "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n"
    got = verdict(text, tmp_path)
    assert got["kind"] != "stopped" and got["culprit_ranks"] == []


# --- 3. the known gaps' classes ---------------------------------------------------------------------------

@pytest.mark.parametrize(("tail", "index", "every_rank"), [
    (("/x/torch/functional.py:504: UserWarning: torch.meshgrid: pass the indexing argument.",
      "return _VF.meshgrid(tensors, **kwargs)  # type: ignore[attr-defined]"), 1, True),
    ((("Token indices sequence length is longer than the specified maximum sequence length for this model "
       "(288925 > 131072). Running this sequence through the model will result in indexing errors"),), 0, True),
    (("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)`",), 0, True),
    (("Saving model checkpoint to out/checkpoint-500",), 0, False),
    (("/x/a.py:3: UserWarning: y", "/x/b.py:9: FutureWarning: z"), 1, False),   # a head is not a source line
])
def test_lines_every_rank_prints(tail: tuple[str, ...], index: int, every_rank: bool) -> None:
    assert printed_by_any_rank(tail, index) is every_rank


@pytest.mark.parametrize(("text", "is_report"), [
    ("{'loss': 0.6894, 'learning_rate': 4.000000000000001e-06, 'epoch': 0.0}", True),
    ('{"eval_loss": 1.25, "eval_runtime": 30.1, "epoch": 2}', True),
    ("{'loss': nan, 'grad_norm': inf}", True),
    ("{'model': 'llama', 'path': '/data'}", False),
])
def test_metric_dict(text: str, is_report: bool) -> None:
    assert metric_dict(text) is is_report


def _timeouts(ranks: list[int], seq: int) -> str:
    return "".join(f"[E ProcessGroupNCCL.cpp:828] [Rank {r}] Watchdog caught collective operation timeout: "
                   f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802339 milliseconds "
                   "before timing out.\n" for r in ranks)


@pytest.mark.parametrize("before", [
    # a warning's source line after its head, glued to a progress bar by a carriage return
    ("  3%|▏  | 4/120 [00:09<04:30,  2.33s/it]/opt/py/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a "
     "cudnnException\n  return F.conv2d(input, weight, bias, self.stride,\n"),
    # a library's advisory about the input
    ("Token indices sequence length is longer than the specified maximum sequence length for this model (9000 > "
     "4096). Running this sequence through the model will result in indexing errors\n"),
    # a trainer's metric dict: routine progress of every rank
    "{'loss': 1.2031, 'grad_norm': 3.5, 'learning_rate': 1e-05, 'epoch': 0.01}\n",
])
def test_no_rank0_inferred_from_lines_every_rank_prints(before: str, tmp_path: Path) -> None:
    got = verdict(before + _timeouts([1, 3], 41), tmp_path)
    assert got["kind"] == "hang" and got["culprit_ranks"] == []
    assert "ranks 1,3" in got["summary"] and "would settle it" in got["summary"]


def test_rank0_work_is_still_inferred(tmp_path: Path) -> None:
    got = verdict("Saving model checkpoint to out/checkpoint-500\n" + _timeouts([1, 3], 41), tmp_path)
    assert got["kind"] == "stuck_outside_collective" and got["culprit_ranks"] == [0]


# HorizonRobotics/RoboOrchardLab#33 (abridged by its reporter): rank 1's monitored barrier heard nothing from rank 0
ROBO_ORCHARD_33 = """\
RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.
...
Original exception:
[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129]
Timed out waiting 600000ms for send operation to complete
...
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
rank : 1 (local_rank: 1)
exitcode : 1
============================================================
"""

BARRIER_ECHO = """\
RuntimeError: Rank 2 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 1. Please check rank 1 logs for faulty rank.
Root Cause (first observed failure):
[0]:
  time      : 2026-11-26_10:00:00
  host      : gpu4
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 81)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
"""


@pytest.mark.parametrize(("text", "missing"), [(ROBO_ORCHARD_33, [0]), (BARRIER_ECHO, [1])])
def test_monitored_barrier_reporter_exit_is_an_echo(text: str, missing: list[int], tmp_path: Path) -> None:
    got = verdict(text, tmp_path)
    assert got["kind"] == "missing_rank" and got["culprit_ranks"] == missing


def test_a_real_failure_beside_the_barrier_still_counts(tmp_path: Path) -> None:
    # the reporting rank's own error (not the barrier's) is a failure, not an echo
    text = BARRIER_ECHO.replace("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/"
                                "errors.html", "  traceback : Traceback (most recent call last):\n"
                                "    ValueError: bad shape")
    got = verdict(text, tmp_path)
    assert got["culprit_ranks"] == [2]
