"""Issue 23: general readers for what first sight still misses (session 41). Variants written here, none taken from
a round's case.

2. A run's own line that it ended well (``Training finished``, ``Training complete``, ``Done.``, ``Saved
   checkpoint``, Lightning's ``Trainer.fit stopped: max_epochs reached``, a final evaluation's summary) after its
   only failure-looking line is "progress" (triage.parsing.progress): the all-clear that quotes the line, never a
   refusal; with progress's guards: a line no process went on after is still the failure.
3. A program torchrun could not start (triage.parsing.launch_failure): ``--no-python``'s ``FileNotFoundError`` /
   ``PermissionError`` raised through torchrun's own worker start, Python's ``No module named X`` / ``Error while
   finding module specification`` for ``-m``'s entry module, and ``can't open file`` on every local rank: the program
   never ran, not the program's own exception, and the ranks' exit codes after it are its end.
4. MPICH's bare ``Abort(N) on node K`` (triage.parsing.mpi_errors): rank K's own abort with code N (K is MPICH's
   world rank), never SIGABRT, never a refusal; read once where its words are another row's.
5. Subkind ``oom`` (triage.analysis.oom): a failure's verdict whose text shows a device's allocator or the host's OOM
   killer in their own words; the kind stays; never from triage's own guess about a SIGKILL.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.report import failure_verdict, report_log
from triage.analysis.oom import shows_oom, with_oom
from triage.model import MismatchKind, Verdict, VerdictKind
from triage.parsing.launch_failure import launch_failure, worker_start_failure
from triage.parsing.mpi_errors import parse_mpi_errors
from triage.parsing.progress import is_progress, mentions_progress

report = failure_verdict

_START = "loading dataset from /data/train\nbuilding the model\n"


# --- 2. a success line after the only failure-looking line ---------------------------------------------------------

_SUCCESS_LINES = [
    "Training finished",
    "Training complete.",
    "training completed in 3h 12m",
    "Training is done!",
    "Done.",
    "done",
    "All done!",
    "Saved checkpoint to /out/final.pt",
    "saving the final model checkpoint at /ckpt/last",
    "checkpoint saved: /out/step_final",
    "`Trainer.fit` stopped: `max_epochs=3` reached.",
    "***** eval metrics *****",
    "Final test accuracy: 0.913",
    "final_eval_loss = 1.204",
]


@pytest.mark.parametrize("line", _SUCCESS_LINES)
def test_success_lines_are_progress(line: str) -> None:
    assert is_progress(line)
    assert mentions_progress(line)       # the cheap pre-pass never hides one


@pytest.mark.parametrize("line", [
    "Training failed after 3 epochs",
    "Done. 3 errors",
    "Done with errors: the run was aborted",
    "checkpoint saved, then the rank was killed",
    "Final test loss: nan",
    "Done reading the config, now training",       # not alone on its line: no end of the run
    "Saving checkpoint skipped: the disk is full",
    "Training will be done on 8 GPUs",
])
def test_not_success_lines(line: str) -> None:
    assert not is_progress(line)


@pytest.mark.parametrize("failure", [
    "FOOLIB ERROR: registration failed",
    "FATAL: fabric init failed on mlx5_0",
    "[E] transport: qp entered error state",
    "fabric: could not open the device mlx5_2",
])
@pytest.mark.parametrize("success", _SUCCESS_LINES)
def test_unprefixed_success_after_the_only_failure_line_is_an_all_clear(failure: str, success: str,
                                                                         tmp_path: Path) -> None:
    code, out = report_log(f"{_START}{failure}\n{success}\n", tmp_path)
    assert code == 0, out
    assert failure in out["verdict"]["summary"]


@pytest.mark.parametrize("success", ["Training finished", "Saved checkpoint to /out/final.pt", "Done."])
def test_success_before_the_failure_line_leaves_it_the_failure(success: str, tmp_path: Path) -> None:
    verdict = report(f"{_START}{success}\nFATAL: fabric init failed on mlx5_0\n", tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_another_ranks_success_leaves_the_failing_rank_failed(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: epoch 1 loss 0.5\n[rank1]: Training complete\n")
    verdict = report(text, tmp_path)
    assert "fabric init failed" in verdict["summary"]


def test_each_rank_went_on_to_its_end_is_an_all_clear(tmp_path: Path) -> None:
    text = ("[rank0]: FATAL: fabric init failed on mlx5_0\n[rank1]: Training complete\n[rank0]: Training complete\n")
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "fabric init failed" in out["verdict"]["summary"]


def test_progress_then_success_after_the_error_line_is_an_all_clear(tmp_path: Path) -> None:
    text = _START + "XPLIB ERROR: registration failed\nstep 30 loss 2.0\nTraining completed successfully\n"
    code, out = report_log(text, tmp_path)
    assert code == 0, out
    assert "XPLIB ERROR: registration failed" in out["verdict"]["summary"]


# --- 4. MPICH's bare "Abort(N) on node K": rank K's own abort -------------------------------------------------------

@pytest.mark.parametrize(("line", "rank", "code"), [
    ("Abort(1) on node 2", 2, "1"),
    ("Abort(3) on node 12 (rank 12 in comm 0): ", 12, "3"),
    ("Abort(1) on node 7 (rank 0 in comm 3): the solver diverged", 7, "1"),     # node K: the world rank
    ("[proxy:0:1@node2] Abort(255) on node 4", 4, "255"),
    ("  Abort(0x1) on node 1", None, None),                                       # no such head
])
def test_mpich_bare_abort_is_that_ranks_own(line: str, rank: int | None, code: str | None) -> None:
    records = [r for r in parse_mpi_errors(f"step 1\n{line}\n") if r.first]
    if rank is None:
        assert not records
        return
    assert [r.rank for r in records] == [rank]
    assert f"errorcode {code}" in records[0].text


def test_mpich_abort_with_its_words_is_read_once() -> None:
    text = "Abort(1) on node 2 (rank 2 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 2\n"
    records = parse_mpi_errors(text)
    assert [r.rank for r in records] == [2]
    assert "MPI_COMM_WORLD" in records[0].text
    fatal = "Abort(805421327) on node 5 (rank 5 in comm 0): Fatal error in PMPI_Allreduce: Other MPI error, stack:\n"
    assert [r.text.startswith("failed in PMPI_Allreduce") for r in parse_mpi_errors(fatal)] == [True]


@pytest.mark.parametrize("line", ["Abort(1) on node 2", "[1,2]<stderr>:Abort(1) on node 2",
                                  "Abort(1) on node 2 (rank 0 in comm 5): bad input deck"])
def test_mpich_bare_abort_names_rank_k_not_sigabrt(line: str, tmp_path: Path) -> None:
    verdict = report(f"reading the input deck\n[1,0]<stdout>:step 3\n{line}\n", tmp_path)
    assert verdict["culprit_ranks"] == [2]
    assert "SIGABRT" not in verdict["summary"]
    assert verdict["kind"] != "crash"



# --- 3. a program torchrun could not start -----------------------------------------------------------------------------

_POPEN_TAIL = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/bin/torchrun", line 8, in <module>\n    sys.exit(main())\n'
    '  File "/opt/venv/lib/python3.12/site-packages/torch/distributed/elastic/multiprocessing/subprocess_handler/'
    'subprocess_handler.py", line 61, in __init__\n    self.proc: Popen = self._popen(args_str, env_vars)\n'
    '                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
    '  File "/opt/venv/lib/python3.12/site-packages/torch/distributed/elastic/multiprocessing/subprocess_handler/'
    'subprocess_handler.py", line 68, in _popen\n    return Popen(\n           ^^^^^^\n'
    '  File "/usr/lib/python3.12/subprocess.py", line 1026, in __init__\n'
    "    self._execute_child(args, executable, preexec_fn, close_fds,\n"
    '  File "/usr/lib/python3.12/subprocess.py", line 1955, in _execute_child\n'
    "    raise child_exception_type(errno_num, err_msg, err_filename)\n")


@pytest.mark.parametrize(("exc", "program", "why"), [
    ("FileNotFoundError: [Errno 2] No such file or directory: './train.sh'", "./train.sh", "No such file or directory"),
    ("PermissionError: [Errno 13] Permission denied: '/opt/job/solver'", "/opt/job/solver", "Permission denied"),
    ("OSError: [Errno 8] Exec format error: '/opt/job/solver.arm64'", "/opt/job/solver.arm64", "Exec format error"),
])
def test_no_python_start_failure_is_a_launch_failure(exc: str, program: str, why: str, tmp_path: Path) -> None:
    said = worker_start_failure(exc)
    assert said is not None and f"could not start {program} ({why}" in said
    verdict = report(_START + _POPEN_TAIL + exc + "\n", tmp_path)
    assert "the program never ran" in verdict["summary"]
    assert verdict["culprit_ranks"] == []


def test_the_programs_own_file_not_found_stays_its_exception(tmp_path: Path) -> None:
    text = (_START + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
            "    open(args.data)\nFileNotFoundError: [Errno 2] No such file or directory: '/data/train.bin'\n")
    verdict = report(text, tmp_path)
    assert "never ran" not in verdict["summary"]
    assert "FileNotFoundError" in verdict["summary"]


@pytest.mark.parametrize(("line", "module"), [
    ("/usr/bin/python3: No module named train", "train"),
    ("/opt/venv/bin/python: No module named mypkg.train", "mypkg.train"),
    (("python3.11: Error while finding module specification for 'mypkg.train' (ModuleNotFoundError: No module named "
     "'mypkg')"), "mypkg.train"),
])
def test_python_m_without_its_entry_module_is_a_launch_failure(line: str, module: str) -> None:
    said = launch_failure(line)
    assert said is not None and f"could not start the module {module}" in said


@pytest.mark.parametrize("line", [
    "ModuleNotFoundError: No module named 'apex'",          # the program's own import: its exception
    "No module named 'flash_attn', using the slow path",
    "    import foo  # No module named foo on CPU builds",
])
def test_a_programs_own_missing_module_is_no_launch_failure(line: str) -> None:
    assert launch_failure(line) is None


_TORCHRUN_TAIL = ("E1127 10:00:04.010000 4242 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 2) "
                  "local_rank: 0 (pid: 4251) of binary: /opt/venv/bin/python\n"
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                  "============================================================\n/opt/job/train.py FAILED\n"
                  "------------------------------------------------------------\nFailures:\n"
                  "[1]:\n  time      : 2026-11-27_10:00:04\n  host      : node07\n  rank      : 1 (local_rank: 1)\n"
                  "  exitcode  : 2 (pid: 4252)\n  error_file: <N/A>\n  traceback : To enable traceback see: x\n"
                  "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
                  "[0]:\n  time      : 2026-11-27_10:00:04\n  host      : node07\n  rank      : 0 (local_rank: 0)\n"
                  "  exitcode  : 2 (pid: 4251)\n  error_file: <N/A>\n  traceback : To enable traceback see: x\n"
                  "============================================================\n")


@pytest.mark.parametrize("line", [
    "/opt/venv/bin/python: can't open file '/opt/job/trian.py': [Errno 2] No such file or directory",
    "/opt/venv/bin/python: No module named job.train",
])
def test_every_local_rank_that_could_not_start_is_the_launch_failure(line: str, tmp_path: Path) -> None:
    verdict = report(f"{line}\n{line}\n{_TORCHRUN_TAIL}", tmp_path)
    assert "the program never ran" in verdict["summary"]
    assert "node07" in verdict["summary"] or verdict["culprit_host"] == "node07"


def test_an_own_failure_of_a_rank_before_the_launch_line_stays_the_story(tmp_path: Path) -> None:
    text = ("[rank0]: RuntimeError: CUDA error: out of memory\n"
            "/opt/venv/bin/python: can't open file '/opt/job/eval.py': [Errno 2] No such file or directory\n")
    verdict = report(text, tmp_path)
    assert verdict["culprit_ranks"] == [0]


@pytest.mark.parametrize(("argv", "said"), [
    (["--no-python", "./no_such_train.sh"], "could not start ./no_such_train.sh"),
    (["-m", "no_such_pkg.train"], "could not start the module no_such_pkg.train"),
    (["no_such_train.py"], "no_such_train.py (No such file or directory)"),
])
def test_real_torchrun_that_could_not_start_its_program(argv: list[str], said: str, tmp_path: Path) -> None:
    """Real torchrun (2 local workers) given a program that is not there: its own words read as a launch failure."""
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_port=0",
                           *argv], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode != 0
    code, out = report_log(done.stdout + done.stderr, tmp_path)
    assert code not in (0, 2, 70), out
    assert said in out["verdict"]["summary"], out["verdict"]



# --- 5. subkind oom ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "RuntimeError: CUDA error: out of memory",
    "RuntimeError: NPU out of memory. Tried to allocate 1.2 GiB",
    "RuntimeError: XPU out of memory. Tried to allocate 512.00 MiB",
    "CUDA error 2 in file Arena.cpp line 173: out of memory",
    "hipErrorOutOfMemory: out of memory",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1 GiB",
    "Out of memory: Killed process 4242 (python) total-vm:81234kB",
    "slurmstepd: error: Detected 1 oom_kill event in StepId=1.0",
    "python invoked oom-killer: gfp_mask=0x100cca",
    "reason: OOMKilled, exit code 137",
    "srun: error: node7: task 3: Out Of Memory",
])
def test_oom_in_the_inputs_words(text: str) -> None:
    assert shows_oom(text)


@pytest.mark.parametrize("text", [
    "rank 1 was killed by SIGKILL (SIGKILL is often the kernel OOM killer: `dmesg -T | grep -i -E 'killed process|oom'`)",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "the host's memory is fine; the dataloader was killed by SIGKILL",
    "check the host of rank 3: was the process started, did it die, was it OOM-killed?",
])
def test_no_oom_in_a_guess_or_other_words(text: str) -> None:
    assert not shows_oom(text)


def test_oom_keeps_the_kind_and_never_displaces_another_subkind() -> None:
    crash = Verdict(VerdictKind.CRASH, "CRASH: rank 2 was killed by SIGKILL: Out of memory: Killed process 7")
    assert with_oom(crash).subkind is MismatchKind.OOM and with_oom(crash).kind is VerdictKind.CRASH
    size = Verdict(VerdictKind.COLLECTIVE_MISMATCH, "CUDA out of memory", subkind=MismatchKind.SIZE)
    assert with_oom(size) is size
    clear = Verdict(VerdictKind.NO_PROBLEM_FOUND, "NO PROBLEM FOUND: ... 'CUDA out of memory, retrying'")
    assert with_oom(clear) is clear


@pytest.mark.parametrize(("text", "kind"), [
    ("[rank0]: step 3\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "exception"),
    ("step 3\n[rank1]: RuntimeError: NPU out of memory. Tried to allocate 1.2 GiB\n", "exception"),
])
def test_report_sets_oom(text: str, kind: str, tmp_path: Path) -> None:
    verdict = report(text, tmp_path)
    assert verdict["subkind"] == "oom"
    assert verdict["kind"] == kind
    assert verdict["culprit_ranks"] == [1]


def test_report_without_oom_words_leaves_the_subkind_empty(tmp_path: Path) -> None:
    verdict = report("[rank0]: step 3\n[rank1]: RuntimeError: shape mismatch in layer 3\n", tmp_path)
    assert verdict["subkind"] is None
