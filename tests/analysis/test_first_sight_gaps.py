"""Classes from tests/realworld/known_gaps.yaml, fixed as classes: each on a variant written here (other
ranks, hosts, formats and wording than the corpus case that showed it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.absent_rank import logger_record_of_any_rank
from triage.errors import InputError
from triage.load.inputs import load_inputs, load_log_texts
from triage.load.run_dir import load_run_dir
from triage.parsing.crashlog import CrashLineKind, parse_crash_line

# --- a failed socket call names its peer: that host is the finding (LlamaFactory#6849's class) ---

@pytest.mark.parametrize(("line", "peer"), [
    ("socketProgressOpt: Call to recv from 192.168.4.17<60112> failed : Broken pipe", "192.168.4.17<60112>"),
    ("socketProgress: Call to send to 10.2.0.9<41000> failed : Connection timed out", "10.2.0.9<41000>"),
    ("NET/Socket : Call to recv from gpu-node-b7<5000> failed : Software caused connection abort", "gpu-node-b7<5000>"),
])
def test_a_failed_socket_call_names_its_peer(line: str, peer: str) -> None:
    crash = parse_crash_line(line)
    assert crash is not None and crash.kind is CrashLineKind.NETWORK
    assert crash.peer == peer


def test_a_ranks_watchdog_exception_continued_unprefixed_names_the_peer_host() -> None:
    result = report(
        "trainer-1:811:900 [3] NCCL INFO comm 0x55d0 rank 3 nranks 4 cudaDev 3 busId 3b000 - Abort COMPLETE",
        "[rank3]:[E1102 08:14:51.000000001 ProcessGroupNCCL.cpp:1712] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was "
        "a network error, NCCL version 2.20.5",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "socketProgressOpt: Call to send to 192.168.4.17<60112> failed : Broken pipe",
        "Exception raised from checkForNCCLErrorsInternal at ProcessGroupNCCL.cpp:1900 (most recent call first):")
    assert result.verdict.kind.value == "network_error"
    assert result.verdict.culprit_ranks == ()
    assert result.verdict.culprit_host == "192.168.4.17"
    assert "Call to send to 192.168.4.17" in result.verdict.summary


# --- a python-logging record is any rank's; ranks 1..N timing out without rank 0: rank 0 never joined ---

@pytest.mark.parametrize("line", [
    "2025-01-09 07:12:44,518 - __main__ - INFO - Begin validation loop",
    "INFO:trainer:epoch 7 finished",
    "[2025-01-09 07:12:44,518][lightning][INFO] - Saving checkpoint",
    "2025-01-09 07:12:44.518 | DEBUG    | train:step:88 - entering step 400",
    "model - INFO - writing eval metrics",
])
def test_a_logging_record_is_not_rank_0s_own_work(line: str) -> None:
    assert logger_record_of_any_rank(line)


@pytest.mark.parametrize("line", [
    "Saving checkpoint to /ckpt/step_400",
    "2025-01-09 07:12:44,518 - __main__ - INFO - [rank 0] Saving checkpoint",
    "2025-01-09 07:12:44,518 - __main__ - WARNING - loss spiked",
])
def test_lines_that_can_still_show_rank_0s_work(line: str) -> None:
    assert not logger_record_of_any_rank(line)


def _timeout(rank: int, op: str = "ALLREDUCE", seq: int = 88412, numel: int = 131072) -> str:
    return (f"[E ProcessGroupNCCL.cpp:475] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for "
            f"60012{rank} milliseconds before timing out.")


def test_ranks_1_to_n_timing_out_without_rank_0_name_rank_0_missing() -> None:
    result = report("2025-01-09 07:12:44,518 - __main__ - INFO - Begin validation loop",
                    *(_timeout(r, "ALLGATHER") for r in (5, 2, 4, 1, 3)))
    assert result.verdict.kind.value == "missing_rank"
    assert result.verdict.culprit_ranks == (0,)
    assert "would settle it" in result.verdict.summary


def test_a_plain_line_of_work_still_names_rank_0_stuck_outside() -> None:
    result = report("Running evaluation on 5000 samples", *(_timeout(r) for r in (1, 2, 3)))
    assert result.verdict.kind.value == "stuck_outside_collective"
    assert result.verdict.culprit_ranks == (0,)


@pytest.mark.parametrize("timeouts", [
    [_timeout(1), _timeout(3)],                             # rank 2 is absent too
    [_timeout(1, "BROADCAST"), _timeout(2, "BROADCAST")],   # the root of a broadcast can finish its side
    [_timeout(2)],                                          # one rank only
])
def test_rank_0_is_not_named_where_it_is_not_the_one_absent(timeouts: list[str]) -> None:
    result = report(*timeouts)
    assert result.verdict.kind.value == "hang"
    assert result.verdict.culprit_ranks == ()


# --- a watchdog line that names no process group says none ("on pg ?" was the finding's text) ---

def test_a_timeout_without_a_pg_says_no_pg_and_one_with_a_pg_names_it() -> None:
    old = load_log_texts([("job.log", _timeout(2) + "\n")])
    assert [e.detail for e in old.events] == ["all_reduce SeqNum=88412 ran for 600122 ms"]
    text = ("[rank2]:[E1102 08:14:51.0 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.\n"
            "[rank2]:[E1102 08:14:51.1 ProcessGroupNCCL.cpp:1700] [PG ID 3 PG GUID 5 Rank 2] "
            "Exception (either an error or timeout) detected by watchdog at work: 9, last "
            "enqueued NCCL work: 9, last completed NCCL work: 8.\n")
    new = load_log_texts([("job.log", text)])
    assert [e.detail for e in new.events if e.rank == 2] == ["all_reduce SeqNum=9 on pg 3 ran for 600031 ms"]


# --- a node bundle without its manifest.json is said, never passed over in silence ---

def test_a_bundle_without_its_manifest_is_named_in_a_run_dir_and_refused_alone(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "golden" / "clean" / "run", run)
    cut = run / "node01" / "bundles" / "20260101T000000-hang"
    (cut / "node").mkdir(parents=True)
    (cut / "rank-0").mkdir()
    assert any("without its manifest.json" in s for s in load_run_dir(run).skipped)
    with pytest.raises(InputError, match=r"one node bundle \(without its manifest.json\)"):
        load_inputs([cut])
