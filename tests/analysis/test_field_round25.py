"""Classes of real pasted logs found by round 25 of the real-world corpus, each tested on a variant written
here (other hosts, ranks, pids and surrounding lines than the cases' own)."""

from __future__ import annotations

from tests.helpers.report import report_lines as report
from triage.parsing.launchers import parse_rank_deaths


# Open MPI's record of the process that ended the job, pasted cut before "on signal N (Name)." under its
# "Primary job terminated normally" box (mfem/mfem#3424's shape, rewritten with another rank, pid and node)
def test_mpiruns_noticed_record_cut_before_its_signal_still_names_the_rank_and_node() -> None:
    result = report(
        "Assembling: matrix ... --------------------------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "--------------------------------------------------------------------------",
        "mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited",
    )
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,)
    assert "cn-gpu-17" in result.verdict.summary


def test_the_whole_record_still_gives_its_signal() -> None:
    result = report("mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited on signal 11 "
                    "(Segmentation fault).")
    assert result.verdict.kind.value == "crash"
    assert result.verdict.culprit_ranks == (3,)
    assert "SIGSEGV" in result.verdict.summary


def test_exited_in_the_middle_of_a_sentence_is_not_read_as_the_cut_record() -> None:
    deaths = parse_rank_deaths("mpirun noticed that process rank 3 with PID 48213 on node cn-gpu-17 exited with "
                               "status 0 and the job went on\n")
    assert not any(death.host == "cn-gpu-17" for death in deaths)


# MPICH Hydra's older termination box: no "RANK N PID P RUNNING AT host" line, only the exit code and its string
# (openai/mlsh#17's shape, rewritten with another code and signal)
def test_hydras_box_without_its_pid_line_is_the_crash_of_a_process_of_no_named_rank() -> None:
    result = report(
        "=====================================================================================",
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   EXIT CODE: 139",
        "=   CLEANING UP REMAINING PROCESSES",
        "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
        "=====================================================================================",
        "APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)",
    )
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert "SIGSEGV" in result.verdict.summary


# Paddle's launcher, the record of a trainer that ended badly (PaddlePaddle/PaddleOCR#11773's shape, rewritten with
# another rank, command and code)
def test_paddles_launcher_record_with_a_negative_code_is_that_ranks_death_by_the_signal() -> None:
    result = report(
        "LAUNCH INFO 2025-01-02 03:04:05,678 Pod failed",
        "LAUNCH ERROR 2025-01-02 03:04:05,680 Container failed !!!",
        "Container rank 2 status failed cmd ['/opt/venv/bin/python', '-u', 'train.py', '--cfg', 'a.yml'] code -11 "
        "log log/workerlog.2",
    )
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (2,)
    assert "SIGSEGV" in result.verdict.summary


def test_paddles_launcher_record_with_a_positive_code_names_that_rank() -> None:
    result = report("Container rank 1 status failed cmd ['python', '-u', 'train.py'] code 1 log log/workerlog.1")
    assert result.verdict.culprit_ranks == (1,), result.verdict.summary


# Ascend HCCL's collective timeout (vllm-project/vllm-ascend#3413's shape, rewritten with another group, op and ranks)
def test_hccls_notify_wait_timeout_is_a_collective_that_never_completed() -> None:
    result = report(
        "[ERROR] 2025-03-04-05:06:07 (PID:8812, Device:3, RankID:11) ERR00100 PTA call acl api failed.",
        "EI0002: [PID: 8812] 2025-03-04-05:06:07.123.456 The wait execution of the Notify register times out. "
        "Reason: The Notify register has not received the Notify record from remote rank: [5]. base information: "
        "[streamID:[3], taskID[17], taskType[Notify Wait], tag[AllGather_group_name_77], AlgType(level 0-1-2):"
        "[fullmesh-ring-NHR].]. task information: [notify id:[0x0000000000000011], stage:[0], remote rank:[5]]. "
        "group information: [group:[group_name_77], user define information[Unspecified], rankSize[8], "
        "rankId[3 5]]",
    )
    assert result.verdict.kind.value == "hang", result.verdict.summary
    assert result.verdict.culprit_ranks == ()
    assert "all_gather" in result.verdict.summary
