"""Issue 23: general readers for what first sight still misses (session 40). Variants written here, none taken from
a round's case.

1. The unknown-failure fallback (triage.parsing.unread_failure) reads a logger's CRITICAL, a PANIC / ``panic:``, a
   "could not / cannot / unable to" + an action, and glog's/absl's error head (``E1127 10:00:01 ...``) whatever the
   line's words; with the same guards: only where nothing stronger fails, never after text shows success, never a
   false all-clear, warnings and fallbacks stay unread.
2. A launcher that could not start the program (triage.parsing.launch_failure): Hydra's ``execvp error``, Open MPI's
   "unable to launch the specified application", Slurm's ``execve()``, a shell's ``Permission denied`` / ``Exec format
   error`` / a launcher ``command not found``, Python's ``can't open file``: the program never ran there, with the
   host where the text names it; the launcher's clean-up of the other ranks after it is its consequence.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.parsing.launch_failure import launch_failure
from triage.parsing.unread_failure import unread_failure

report = failure_verdict


_TWICE = ("E0000 00:00:1732700000.1 4242 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register "
          "factory for plugin cuDNN when one has already been registered")
_WORK = "loading checkpoint shards: 100%\nepoch 0 step 10 loss 2.31\nepoch 0 step 20 loss 2.12\n"


# --- 1. the fallback's level words, "could not", glog heads -----------------------------------------------------

@pytest.mark.parametrize("line", [
    "2026-11-27 10:00:01,234 CRITICAL [engine] the transport went away under the collective engine",
    "[orchestrator] CRIT: heartbeat lost from the shard server",
    "PANIC: the memory pool is corrupt (pool 3, block 0x7f00)",
    "panic: runtime: unexpected nil pointer in the scheduler",
    "fabric: could not open the device mlx5_2 (no such device)",
    "Cannot allocate the pinned host buffer of 2 GiB",
    "loader: unable to launch the decode workers: resource temporarily unavailable",
    "Couldn't load the shared library libfoo_plugin.so",
    "the checkpoint could not be written to /scratch/ckpt/step_100",
    "E1127 10:00:01.123456 4242 transport.cc:88] the queue pair 0x3 went down",
    "E0000 00:00:1732700000.123456   4242 cuda_executor.cc:1001] the device memory pool is exhausted",
    "F1127 10:00:01.123456 4242 collective.cc:12] the group size does not match the mesh",
])
def test_a_level_word_or_a_could_not_is_a_failure_of_unknown_rank(line: str, tmp_path: Path) -> None:
    assert unread_failure(line) is not None
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] == "failure_unlocated"
    assert not verdict["culprit_ranks"]
    assert "a failure of unknown rank" in verdict["summary"]
    assert line.split()[-1] in verdict["summary"]


@pytest.mark.parametrize("line", [
    "WARNING: could not open the optional profile file, profiling is off",
    "could not import apex, using the default fused optimizer",
    "cannot find libnvtx: skipping the ranges",
    "Unable to load the fast tokenizer; falling back to the slow one",
    "I cannot tell which rank hung from this",
    "we could not reproduce it on two nodes",
    _TWICE,
    "W1127 10:00:01.123456 4242 transport.cc:88] could not connect yet",
    "I1127 10:00:01.123456 4242 transport.cc:88] CRITICAL path latency 3 ms",
    "python train.py --on-panic=dump",
])
def test_soft_lines_stay_unread(line: str) -> None:
    assert unread_failure(line) is None


@pytest.mark.parametrize("text", [
    _WORK + "WARNING: could not open the optional profile file, profiling is off\n",
    # (an error line the run went on after to its successful end: the all-clear that quotes it, test_gaps_s41.py)
    _WORK + _TWICE + "\n",
])
def test_text_that_only_warns_or_ends_well_is_no_failure(text: str, tmp_path: Path) -> None:
    code, out = report_log(text, tmp_path)
    assert code == 2, out         # nothing recognisable: never an all-clear, never a failure it does not show


def test_a_could_not_never_displaces_a_ranks_exception(tmp_path: Path) -> None:
    text = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 9, in <module>\n"
            "[rank1]: ValueError: bad shape\nfabric: could not open the device mlx5_2\n"
            "PANIC: the memory pool is corrupt\n")
    verdict = report(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [1]


# --- 2. a launcher that could not start the program ---------------------------------------------------------------

@pytest.mark.parametrize(("text", "program", "host"), [
    (("[proxy:0:1@node2] HYD_spawn (lib/utils/launch.c:74): execvp error on file ./bin/solver (No such file or "
     "directory)\n"), "./bin/solver", "node2"),
    (("[proxy:0:0@gpu-a3] HYDU_create_process (utils/launch/launch.c:75): execvp error on file /opt/app/run "
     "(Permission denied)\n"), "/opt/app/run", "gpu-a3"),
    (("--------------------------------------------------------------------------\n"
     "mpirun was unable to launch the specified application as it could not access\nor execute an executable:\n\n"
     "Executable: ./solver\nNode: cn042\n\nwhile attempting to start process rank 0.\n"
     "--------------------------------------------------------------------------\n"), None, "cn042"),
    ("slurmstepd: error: execve(): run_train.sh: No such file or directory\n", "run_train.sh", None),
    ("srun: error: execve(): /home/u/job/run.sh: Permission denied\n", "/home/u/job/run.sh", None),
    ("bash: ./solver_arm64: cannot execute binary file: Exec format error\n", "./solver_arm64", None),
    ("/bin/sh: 1: /home/u/job/start.sh: Permission denied\n", "/home/u/job/start.sh", None),
    ("bash: torchrun: command not found\n", "torchrun", None),
    ("exec /usr/local/bin/python: exec format error\n", "/usr/local/bin/python", None),
])
def test_a_program_the_launcher_could_not_start_is_the_story(text: str, program: str | None, host: str | None,
                                                             tmp_path: Path) -> None:
    verdict = report(_WORK + text, tmp_path)
    assert "the program never ran" in verdict["summary"]
    assert not verdict["culprit_ranks"]
    if program is not None:
        assert f"could not start {program}" in verdict["summary"]
    assert verdict.get("culprit_host") == host
    assert "no rank at fault" in verdict["summary"]


def test_the_launchers_clean_up_after_it_is_its_consequence(tmp_path: Path) -> None:
    text = ("[proxy:1:1@node2] HYD_spawn (spawn.c:117): execvp error on file MLROOT/bin/ep_server (No such file or "
            "directory)\n[mpiexec@node1] HYD_sock_write (sock.c:357): write error (Bad file descriptor)\n\n"
            "===================================================================================\n"
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 3 PID 30362 RUNNING AT node2\n"
            "=   KILLED BY SIGNAL: 9 (Killed)\n"
            "===================================================================================\n")
    verdict = report(text, tmp_path)
    assert "the program never ran" in verdict["summary"]
    assert verdict.get("culprit_host") == "node2"
    assert not verdict["culprit_ranks"]


def test_a_script_python_could_not_open_is_that_ranks_launch_failure(tmp_path: Path) -> None:
    text = ("[rank1]: /usr/bin/python3: can't open file '/home/u/trian.py': [Errno 2] No such file or directory\n"
            "E1127 10:00:01.123000 4242 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 2) "
            "local_rank: 1 (pid: 1464) of binary: /usr/bin/python3\n")
    verdict = report(text, tmp_path)
    assert verdict["culprit_ranks"] == [1]
    assert "could not start /home/u/trian.py" in verdict["summary"]


def test_a_rank_that_failed_in_its_own_words_first_stays_the_story(tmp_path: Path) -> None:
    text = ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"train.py\", line 9, in <module>\n"
            "[rank1]: ValueError: bad shape\n"
            "[proxy:0:1@node2] HYD_spawn (spawn.c:117): execvp error on file ./helper (No such file or directory)\n")
    verdict = report(text, tmp_path)
    assert verdict["kind"] == "exception"
    assert verdict["culprit_ranks"] == [1]
    assert "ValueError" in verdict["summary"]


@pytest.mark.parametrize("line", [
    "bash: /var/log/train.log: Permission denied",                  # a redirect, not a program
    "bash: line 3: nvidia-smi: command not found",                 # a helper of a script, not the job's program
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",   # the program ran, and read
    "Permission denied (publickey).",                               # ssh: its own reading
    "cp: cannot stat 'ckpt/last.pt': No such file or directory",
])
def test_lines_that_are_no_launch_failure(line: str) -> None:
    assert launch_failure(line) is None


def test_real_shells_and_python_that_could_not_start_a_program(tmp_path: Path) -> None:
    """The real words of bash (a file without the execute bit, a binary of no known format) and of Python (a script
    that is not there), read as launch failures."""
    script = tmp_path / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o644)
    binary = tmp_path / "solver"
    binary.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00\xff\xff" + b"\x00" * 44)
    binary.chmod(0o755)
    for argv, program in ((["bash", "-c", str(script)], str(script)), (["bash", "-c", str(binary)], str(binary)),
                          ([sys.executable, str(tmp_path / "trian.py")], str(tmp_path / "trian.py"))):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode != 0
        said = [launch_failure(line) for line in done.stderr.splitlines()]
        assert any(s is not None and f"could not start {program}" in s for s in said), done.stderr


# --- 3. a rank prefix under a logging timestamp; a program's ABORT message ------------------------------------------

@pytest.mark.parametrize("head", ["", "2026-11-27 12:00:00 ", "2026-11-27T12:00:00.123Z ", "[12:00:00] ",
                                  "12:00:00.123 "])
def test_a_programs_abort_message_under_a_rank_prefix_is_no_sigabrt(head: str, tmp_path: Path) -> None:
    verdict = report(_WORK + f"{head}3: ABORT: the mesh file has negative volumes\n", tmp_path)
    assert verdict["culprit_ranks"] == [3]
    assert verdict["kind"] == "exception"
    assert "SIGABRT" not in verdict["summary"]


@pytest.mark.parametrize("line", ["3: ABORT: caught signal 6", "3: abort: received SIGABRT",
                                  "3: Aborted (core dumped)", "3: ABORTED by the runtime"])
def test_an_abort_that_names_the_signal_or_says_aborted_is_sigabrt(line: str, tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["culprit_ranks"] == [3]
    assert verdict["kind"] == "crash"
    assert "SIGABRT" in verdict["summary"]


@pytest.mark.parametrize("head", ["[12:00:00] ", "12:00:00,123 ", "[12:00:00.5] "])
def test_a_time_of_day_before_a_rank_prefix_keeps_the_rank(head: str, tmp_path: Path) -> None:
    text = "".join(f"{head}3: {line}\n" for line in (
        "Traceback (most recent call last):", '  File "train.py", line 3, in <module>', "ValueError: bad shape"))
    verdict = report(_WORK + text, tmp_path)
    assert verdict["culprit_ranks"] == [3]
    assert "ValueError" in verdict["summary"]


def test_a_time_of_day_before_a_librarys_own_head_stays() -> None:
    from triage.parsing.textclean import clean_text
    line = "[05:05:29] byteps/server/server.cc:52: Check failed: updates.merged.tensor init"
    assert clean_text(line + "\n").lines[0] == line          # dmlc's head: its reader needs it


# --- 4. the node of a rank's end, from the launcher's line --------------------------------------------------------

@pytest.mark.parametrize(("line", "host"), [
    ("x1921c5s2b0n0: rank 3 exited with code 1", "x1921c5s2b0n0"),
    ("nid002837.dogwood.example.gov: rank 3 died from signal 11", "nid002837.dogwood.example.gov"),
])
def test_a_node_heading_a_ranks_end_is_that_ranks_node(line: str, host: str, tmp_path: Path) -> None:
    _, out = report_log(_WORK + line + "\n", tmp_path)
    assert out["verdict"]["culprit_ranks"] == [3]
    assert f"rank 3 ({host})" in out["verdict"]["summary"]


@pytest.mark.parametrize("line", ["Error: rank 3 exited with code 1", "srun: rank 3 exited with code 1"])
def test_a_word_heading_a_ranks_end_is_no_node(line: str, tmp_path: Path) -> None:
    _, out = report_log(_WORK + line + "\n", tmp_path)
    assert out["verdict"]["culprit_ranks"] == [3]
    assert "rank 3 (" not in out["verdict"]["summary"]


def test_a_process_on_a_named_host_gives_the_host(tmp_path: Path) -> None:
    verdict = report(_WORK + "application 12345 on host nid00012 exited with code 139\n", tmp_path)
    assert verdict.get("culprit_host") == "nid00012"
    assert "SIGSEGV" in verdict["summary"]


def test_mpichs_node_number_is_no_host(tmp_path: Path) -> None:
    verdict = report(_WORK + "Abort(1) on node 2 (rank 2 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1)"
                     " - process 2\n", tmp_path)
    assert verdict["culprit_ranks"] == [2]
    assert verdict.get("culprit_host") in (None, "")
    said = unread_failure("the solver was killed by signal 11 on node 2")
    assert said is not None and said.signal == "SIGSEGV" and said.host is None


# --- 6. a peer gone, seen from a survivor ------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "[rank1]: write: Broken pipe",
    "[rank1]: sendmsg() failed: Broken pipe",
    "[rank1]: BrokenPipeError: [Errno 32] Broken pipe",
    "[rank1]: ECONNRESET: connection reset by peer",
    "[rank1]: recv failed: Connection reset by peer from node3:29500",
])
def test_a_survivors_broken_link_is_never_the_culprit_nor_an_all_clear(line: str, tmp_path: Path) -> None:
    verdict = report(_WORK + line + "\n", tmp_path)
    assert verdict["kind"] in ("network_error", "failure_unlocated")
    assert not verdict["culprit_ranks"]


def test_a_broken_pipe_after_a_ranks_crash_is_its_consequence(tmp_path: Path) -> None:
    verdict = report(_WORK + "[rank0]: Segmentation fault (core dumped)\n[rank1]: write: Broken pipe\n", tmp_path)
    assert verdict["culprit_ranks"] == [0]
    assert verdict["kind"] == "crash"


def test_a_pipe_in_prose_is_no_failure() -> None:
    from triage.parsing.crashlog import parse_crash_line
    assert parse_crash_line("the data pipe is broken into shards") is None
