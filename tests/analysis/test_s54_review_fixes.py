"""Session 54's review (rev54) of the session's readers by variants: a merged log of two nodes is no one node's (F2), a
user's print of its global rank before --tee's local prefix keeps the global rank (F5), and a debugger's exception view
the run went on past ended nothing (F8)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report import failure_verdict, report_log

AGENT = "W1129 10:00:01.000000 140 torch/distributed/elastic/multiprocessing/api.py:897] "
FAILED = ("E1129 10:00:02.000000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
          "local_rank: 1 (pid: 202) of binary: /usr/bin/python3\n")


def test_more_ranks_in_sight_than_the_agent_ran_keep_the_local_rank_unmapped(tmp_path: Path) -> None:
    # eight ranks' lines, one agent that stopped two workers and lost one: the other five ranks are another node's
    text = "".join(f"[rank{r}]: step 100 loss 1.23\n" for r in range(8)) + "".join(
        f"{AGENT}Sending process {pid} closing signal SIGTERM\n" for pid in (201, 203)) + FAILED
    got = failure_verdict(text, tmp_path)
    assert got["culprit_ranks"] == [] and "global rank is not in this input" in got["summary"]


def test_an_agent_of_as_many_workers_as_ranks_in_sight_maps_its_local_rank(tmp_path: Path) -> None:
    text = "".join(f"[rank{r}]: step 100 loss 1.23\n" for r in range(3)) + f"{AGENT}Sending process 201 closing " \
        "signal SIGTERM\n" + f"{AGENT}Sending process 203 closing signal SIGTERM\n" + FAILED
    assert failure_verdict(text, tmp_path)["culprit_ranks"] == [1]


def test_a_users_global_rank_print_before_a_local_prefix_is_the_rank(tmp_path: Path) -> None:
    text = ("Rank 5: [default1]:Traceback (most recent call last):\n"
            "Rank 5: [default1]:  File \"/workspace/train.py\", line 211, in <module>\n"
            "Rank 5: [default1]:    main()\n"
            "Rank 5: [default1]:RuntimeError: shape mismatch: value tensor of shape [8] cannot be broadcast\n"
            "Rank 4: [default0]:step 100 loss 1.2\n")
    got = failure_verdict(text, tmp_path)
    assert got["culprit_ranks"] == [5] and "local rank 1" in got["summary"]


VIEW = ("Exception has occurred: FileNotFoundError       (note: full exception trace is shown but execution is paused "
        "at: load_cache)\n[Errno 2] No such file or directory: '/data/cache/index.pkl'\n"
        "  File \"/home/me/proj/data.py\", line 41, in load_cache\n    with open(path, \"rb\") as f:\n")


def test_a_debugger_view_the_run_went_on_past_is_no_exception(tmp_path: Path) -> None:
    text = VIEW + "epoch 1 step 100 loss 2.31\nepoch 2 step 100 loss 1.77\nTraining finished.\n"
    _, got = report_log(text, tmp_path)
    assert got.get("verdict", {}).get("kind") != "exception"


def test_a_debugger_view_that_ended_the_run_stays_its_exception(tmp_path: Path) -> None:
    got = failure_verdict(VIEW, tmp_path)
    assert got["kind"] == "exception" and "FileNotFoundError: [Errno 2]" in got["summary"]


def test_the_note_on_a_line_of_its_own_is_no_message(tmp_path: Path) -> None:
    text = VIEW.replace("       (note:", "\n(note:")
    got = failure_verdict(text, tmp_path)
    assert "FileNotFoundError: [Errno 2]" in got["summary"] and "(note:" not in got["summary"]


ABORT = ("--------------------------------------------------------------------------\n"
         "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n\n"
         "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
         "--------------------------------------------------------------------------\n")


def test_a_fatal_line_tagged_with_another_rank_than_the_abort_is_that_ranks(tmp_path: Path) -> None:
    # (rank 3 found it, rank 0 aborts the job after a reduction of error flags: review rev54's F7)
    got = failure_verdict("[3] FATAL ERROR: negative density in cell 1182\n" + ABORT, tmp_path)
    assert got["culprit_ranks"] == [3] and "negative density" in got["summary"] and "then its MPI abort" not in \
        got["summary"]


def test_a_fatal_line_of_the_aborting_rank_is_paired_with_its_abort(tmp_path: Path) -> None:
    got = failure_verdict("[0] FATAL ERROR: negative density in cell 1182\n" + ABORT, tmp_path)
    assert got["culprit_ranks"] == [0] and "then its MPI abort" in got["summary"]
