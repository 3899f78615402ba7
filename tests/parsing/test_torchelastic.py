"""torchelastic error files and torchrun failure summaries, from real torchrun runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import kill_tree
from triage.parsing.torchelastic import parse_agent_death_signal, parse_error_file, parse_launcher_failures

DATA = Path(__file__).parent / "data"


def test_error_file_fixture() -> None:
    err = parse_error_file((DATA / "torchelastic_error.json").read_text(), rank=1)
    assert err is not None
    assert err.rank == 1
    assert err.message == "ValueError: bad batch at step 7"
    assert err.timestamp == 1795307024
    assert err.traceback is not None and 'raise ValueError("bad batch at step 7")' in err.traceback
    assert err.exitcode is None


def test_error_file_variants() -> None:
    copied = {"message": {"message": "RuntimeError: x", "extraInfo": {"py_callstack": "tb", "timestamp": "5"},
                          "errorCode": 1}}
    err = parse_error_file(copied)
    assert err is not None and (err.exitcode, err.timestamp, err.traceback) == (1, 5, "tb")
    plain = parse_error_file(b'{"message": "<NONE>", "timestamp": 7}')
    assert plain is not None and (plain.message, plain.timestamp) == ("<NONE>", 7)
    for bad in ("", "{", "[]", '{"other": 1}', b"\xff\xfe", "null"):
        assert parse_error_file(bad) is None


def test_segfault_summary_fixture() -> None:
    root, other = parse_launcher_failures((DATA / "torchrun_segv.log").read_text())
    assert (root.rank, root.local_rank, root.host, root.exitcode, root.signal, root.pid, root.root_cause) == (
        1, 1, "localhost", -11, "SIGSEGV", 12292, True)
    assert root.timestamp == "2026-11-22_00:23:37"
    assert root.error_file is None
    assert root.traceback == "Signal 11 (SIGSEGV) received by PID 12292"
    assert (other.rank, other.exitcode, other.signal, other.root_cause) == (0, -15, "SIGTERM", False)


def test_exception_summary_fixture() -> None:
    root, _other = parse_launcher_failures((DATA / "torchrun_raise.log").read_text())
    assert (root.rank, root.exitcode, root.signal, root.pid) == (1, 1, None, 12414)
    assert root.error_file is not None and root.error_file.endswith("/attempt_0/1/error.json")
    assert root.traceback is not None and root.traceback.rstrip().endswith("ValueError: bad batch at step 7")


def test_cut_log_falls_back_to_agent_lines() -> None:
    text = ("E1122 00:23:37.619000 12201 site-packages/torch/distributed/elastic/multiprocessing/api.py:1002] "
            "failed (exitcode: -6) local_rank: 3 (pid: 999) of binary: /usr/bin/python3\n")
    (failure,) = parse_launcher_failures(text)
    assert (failure.rank, failure.local_rank, failure.exitcode, failure.signal, failure.pid) == (
        None, 3, -6, "SIGABRT", 999)


def test_summary_with_no_other_failures_and_prefixes() -> None:
    text = """node3: Root Cause (first observed failure):
node3: [0]:
node3:   time      : 2025-09-11_10:58:45
node3:   host      : node3.cluster
node3:   rank      : 13 (local_rank: 5)
node3:   exitcode  : -9 (pid: 4242)
node3:   error_file: <N/A>
node3:   traceback : Signal 9 (SIGKILL) received by PID 4242
node3: ============================================================
"""
    (failure,) = parse_launcher_failures(text)
    assert (failure.rank, failure.local_rank, failure.host, failure.exitcode, failure.signal, failure.pid) == (
        13, 5, "node3.cluster", -9, "SIGKILL", 4242)


@pytest.mark.parametrize("text", ["", "Root Cause (first observed failure):\n[0]:\n", "[0]:\n  rank : x\n",
                                  "Failures:\n  <NO_OTHER_FAILURES>\n"])
def test_garbage(text: str) -> None:
    assert isinstance(parse_launcher_failures(text), tuple)


CRASH = """
import ctypes, os, sys, time
from torch.distributed.elastic.multiprocessing.errors import record
@record
def main():
    if int(os.environ["RANK"]) == 1:
        if sys.argv[1] == "segv":
            ctypes.string_at(0)
        raise ValueError("bad batch at step 7")
    time.sleep(60)
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["segv", "raise"])
def test_live_torchrun_failure(tmp_path: Path, mode: str) -> None:
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    proc = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script), mode],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=tmp_path,
    )
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        kill_tree(proc.pid)
        proc.wait()
    root = parse_launcher_failures(out)[0]
    assert root.root_cause and root.rank == 1 and root.local_rank == 1
    if mode == "segv":
        assert (root.exitcode, root.signal) == (-11, "SIGSEGV")
    else:
        assert (root.exitcode, root.signal) == (1, None)
        assert root.error_file is not None
        assert "ValueError: bad batch at step 7" in (root.traceback or "")
    json.dumps([f.__dict__ for f in parse_launcher_failures(out)])


# DeepSpeed's launcher (deepspeed/launcher/launch.py, sigkill_handler), as pasted in
# deepspeedai/DeepSpeedExamples#626 and deepspeedai/DeepSpeed#3232.
DEEPSPEED_SEGV = (
    "[2023-07-10 04:26:05,876] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 94985\n"
    "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/sushanta/venv/bin/"
    "python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/try/nepaligpt/clm/"
    "config/deepspeed_config.json'] exits with return code = -11\n")


def test_deepspeed_launcher_record_says_the_signal_but_not_which_of_several_processes() -> None:
    # launch.py logs its `cmd` variable: the command of the LAST process it started (here local rank 1 of 2),
    # whichever process exited non-zero
    (failure,) = parse_launcher_failures(DEEPSPEED_SEGV)
    assert (failure.local_rank, failure.exitcode, failure.signal, failure.root_cause) == (None, -11, "SIGSEGV", True)
    assert failure.note is not None and "local ranks 0-1" in failure.note


def test_deepspeed_launcher_record_of_a_single_process_launch_names_it() -> None:
    (failure,) = parse_launcher_failures(DEEPSPEED_SEGV.replace("--local_rank=1", "--local_rank=0"))
    assert (failure.local_rank, failure.signal, failure.note) == (0, "SIGSEGV", None)


def test_deepspeed_launcher_record_wrapped_by_the_terminal_is_still_read() -> None:
    # a long argv hard-wrapped mid-word, even inside the --local_rank flag itself
    text = ("[2024-03-01 10:00:00,001] [ERROR] [launch.py:325:sigkill_handler] ['/opt/py/bin/python', '-u', 'fit.py', "
            "'--local_ra\nnk=3', '--epochs', '2', '--out_d\nir', '/data/run'] exits with return code = -7\n")
    (failure,) = parse_launcher_failures(text)
    assert (failure.local_rank, failure.exitcode, failure.signal) == (None, -7, "SIGBUS")
    assert failure.note is not None and "local ranks 0-3" in failure.note


def test_deepspeed_launcher_record_without_a_local_rank_and_with_exit_1() -> None:
    text = "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py'] exits with return code = 1\n"
    (failure,) = parse_launcher_failures(text)
    assert (failure.local_rank, failure.exitcode, failure.signal) == (None, 1, None)
    assert parse_launcher_failures(text.replace("= 1", "= 0")) == ()


def test_srun_records_of_tasks_a_signal_killed_name_the_rank_and_host() -> None:
    # SLURM's own words (slurmstepd/srun), e.g. geoschem/geos-chem#1545: "srun: error: a3411n10: task 30: Out Of Memory"
    text = ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=3679495.0 cgroup.\n"
            "srun: error: gpu-node-3: task 6: Out Of Memory\n"
            "srun: error: gpu-node-2: tasks 0-1: Exited with exit code 1\n"
            "srun: error: gpu-node-4: task 9: Segmentation fault (core dumped)\n")
    failures = parse_launcher_failures(text)
    assert [(f.rank, f.host, f.signal, f.exitcode, f.root_cause) for f in failures] == [
        (6, "gpu-node-3", "SIGKILL", None, True), (0, "gpu-node-2", None, 1, False), (1, "gpu-node-2", None, 1, False),
        (9, "gpu-node-4", "SIGSEGV", None, False)]


@pytest.mark.parametrize(("host", "task", "code"), [("n1", 1, 1), ("gpu-a7.cluster", 13, 3)])
def test_srun_exit_codes_name_the_task_srun_saw_end_first(host: str, task: int, code: int) -> None:
    # srun prints each task's end as it sees it: the first record is the first task to end
    text = (f"srun: error: {host}: task {task}: Exited with exit code {code}\n"
            f"srun: error: {host}: task 0: Exited with exit code 1\nsrun: error: {host}: tasks 2-3: Terminated\n")
    assert [(f.rank, f.host, f.exitcode, f.root_cause) for f in parse_launcher_failures(text)] == [
        (task, host, code, True), (0, host, 1, False)]


def test_srun_records_after_slurms_cancellation_are_its_doing() -> None:
    text = ("slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT 2026-02-03T04:05:06 DUE TO TIME LIMIT ***\n"
            "srun: error: n1: task 0: Exited with exit code 1\nsrun: error: n1: task 1: Killed\n")
    assert parse_launcher_failures(text) == ()


def test_the_signal_torchruns_agent_received_from_outside() -> None:
    # open-mmlab/mmrotate#210, determined-ai/determined#8915's class, in the old and the new wording
    old = "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers\n"
    new = ("W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM "
           "death signal, shutting down workers\nW0409 07:28:49.531000 1359 torch/distributed/elastic/multiprocessing/"
           "api.py:897] Sending process 1365 closing signal SIGTERM\n")
    first = parse_agent_death_signal(old)
    assert first is not None and first.signal == "SIGHUP" and first.text.startswith("WARNING:torch")
    second = parse_agent_death_signal(new)
    assert second is not None and second.signal == "SIGTERM" and "Sending process" not in second.text
    assert parse_agent_death_signal("the death signal of a worker") is None


def test_a_record_pasted_without_its_header_is_read() -> None:
    (failure,) = parse_launcher_failures("  time: 2026-05-01_08:00:00\n  hostname: gpu-17\n  rank: 0 (local_rank: 0)\n"
                                         "  exitcode: -11 (pid: 4242)\n  error_file: <N/A>\n"
                                         '  msg: "Signal 11 (SIGSEGV) received by PID 4242"\n')
    assert (failure.rank, failure.host, failure.signal, failure.pid) == (0, "gpu-17", "SIGSEGV", 4242)


def test_stray_field_words_without_an_exit_code_are_no_record() -> None:
    assert parse_launcher_failures("  rank: 3\n  host: a\nsomething else\n") == ()


def test_a_headerless_record_of_a_segfault_is_read() -> None:
    # the shape of NVIDIA/Megatron-LM#1880's excerpt: a record pasted from its "rank" field on, no header
    text = ("  rank      : 2 (local_rank: 2)\n"
            "  exitcode  : -11 (pid: 5120)\n"
            "  error_file: <N/A>\n"
            "  traceback : Signal 11 (SIGSEGV) received by PID 5120\n"
            "======================================================\n")
    (failure,) = parse_launcher_failures(text)
    assert (failure.rank, failure.local_rank, failure.exitcode, failure.signal) == (2, 2, -11, "SIGSEGV")


def test_torch_distributed_launch_called_process_error() -> None:
    died = ("subprocess.CalledProcessError: Command '['/bin/python3', '-u', 'main.py', '--local_rank=2']' died with "
            "<Signals.SIGABRT: 6>.\n")
    (failure,) = parse_launcher_failures(died)
    assert (failure.local_rank, failure.signal, failure.root_cause) == (2, "SIGABRT", True)
    status = died.replace("died with <Signals.SIGABRT: 6>", "returned non-zero exit status 1")
    (failure,) = parse_launcher_failures(status)
    assert (failure.local_rank, failure.exitcode, failure.signal, failure.root_cause) == (2, 1, None, False)


def test_agent_failure_line_without_its_pid() -> None:
    # an issue title cut after the local rank ("... failed (exitcode: -6) local_rank: 1")
    (failure,) = parse_launcher_failures("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) "
                                         "local_rank: 5\n")
    assert (failure.local_rank, failure.exitcode, failure.signal, failure.pid) == (5, -7, "SIGBUS", None)
