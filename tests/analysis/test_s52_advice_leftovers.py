"""Advice that must fit what the input shows (session 51's closing note, its leftovers):

- a crash's CUDA advice (CUDA_LAUNCH_BLOCKING, compute-sanitizer, Xid lines) only where the input shows a GPU; a Fortran
  or C program's SIGSEGV with no GPU word is a CPU program's crash, whose faulting line a core or a checked build gives;
- a stop's `scontrol show node HOST` with the node's name where the input names it, else said to be the node the input
  does not name (never a literal HOST);
- YARN's memory kill quoted from its own words (the logger's head before them had cut the quote at `Container [`), and a
  YARN job's per-container logs asked for, not torchrun's `--tee` nor `triage launch` nor PyTorch's Flight Recorder;
- the reporter's sentence that Kubernetes killed a pod, OOMKilled: the memory kill's advice of stopped.py's entry (the
  log's own OOMKilled is a crash by SIGKILL: that entry is reached by the reporter's words only).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.gpu_words import shows_gpu, source_shows_gpu
from triage.parsing.launcher_kind import launcher_of

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"

_FORTRAN = ("$ mpirun -n 4 ./solver input.prm\n"
            "forrtl: severe (174): SIGSEGV, segmentation fault occurred\n"
            "Image              PC                Routine            Line        Source\n"
            "solver             00000000004EB8B3  Unknown               Unknown  Unknown\n")
_GFORTRAN = ("Program received signal SIGFPE: Floating-point exception - erroneous arithmetic operation.\n\n"
             "Backtrace for this error:\n#0  0x7f3a1b2c in ???\n#1  0x401a2f in flux_ at flux.f90:88\n"
             "srun: error: cn203: task 3: Floating point exception\n")


def _report(text: str) -> tuple[str, str]:
    result = analyze(load_log_texts([("job.log", text)]))
    return result.verdict.summary, "\n".join(result.next_steps)


@pytest.mark.parametrize("text", [_FORTRAN, _GFORTRAN,
                                  ("mpirun noticed that process rank 2 with PID 4411 on node n3 exited on signal 11 "
                                   "(Segmentation fault).\n")])
def test_a_cpu_programs_crash_gets_no_cuda_advice(text: str) -> None:
    summary, steps = _report(text)
    assert "CRASH" in summary, summary
    assert "CUDA_LAUNCH_BLOCKING" not in steps and "compute-sanitizer" not in steps, steps
    assert "gdb PROGRAM CORE" in steps and "-fcheck=all" in steps, steps


@pytest.mark.parametrize("word", ["CUDA_VISIBLE_DEVICES=0,1,2,3", "using GPU 2", "NCCL INFO Bootstrap : Using eth0",
                                  "device = torch.device('cuda:0')", "NVRM: Xid (PCI:0000:3b:00): 79"])
def test_the_same_crash_with_a_gpu_word_keeps_cuda_advice(word: str) -> None:
    _, steps = _report(f"{word}\n{_FORTRAN}")
    assert "CUDA_LAUNCH_BLOCKING" in steps and "gdb PROGRAM CORE" not in steps, steps


def test_gpu_words_read_a_texts_and_a_files_bytes_alike() -> None:
    for text in ("x\nCUDA error: an illegal memory access\n", "hipErrorNoDevice\n", "ROCm 6.1\n", "libnccl.so.2\n"):
        assert shows_gpu(text) and source_shows_gpu(text.encode()), text
    for text in ("forrtl: severe (174): SIGSEGV\n", "Segmentation fault (core dumped)\n", "CHIP and SHIP\n"):
        assert not shows_gpu(text) and not source_shows_gpu(text.encode()), text


@pytest.mark.parametrize("case", ["GongZheng-Justin__CP3d__1", "ucns3d-team__UCNS3D__12"])
def test_real_fortran_crashes_get_a_cpu_programs_advice(case: str) -> None:
    text = (_CASES / case / "log.txt").read_text(encoding="utf-8")
    summary, steps = _report(text)
    assert "CRASH" in summary and "CUDA_LAUNCH_BLOCKING" not in steps and "gdb PROGRAM CORE" in steps, steps


def test_a_step_cancelled_for_a_node_failure_that_names_no_node_says_so() -> None:
    summary, steps = _report("[rank0]: step 100 loss 2.1\nslurmstepd: error: *** STEP 4411.0 CANCELLED AT "
                             "2024-03-01T10:00:00 DUE TO NODE FAILURE ***\n")
    assert "STOPPED" in summary, summary
    for said in (summary, steps):
        assert "HOST" not in said and "scontrol show node NODE" in said and "--exclude NODE" in said, said
        assert "NODE: the node, not in this input" in said and "NodeList" in said, said


def test_a_node_failure_that_names_its_node_fills_it_in() -> None:
    summary, steps = _report("slurmstepd: error: *** JOB 4411 ON gpu-17 CANCELLED AT 2024-03-01T10:00:00 DUE TO NODE "
                             "FAILURE ***\n")
    assert "scontrol show node gpu-17" in summary and "--exclude gpu-17" in steps, summary
    assert "NODE" not in summary.replace("NODE FAILURE", ""), summary


def test_a_step_whose_processes_did_not_die_names_no_literal_host() -> None:
    summary, _ = _report("slurmstepd: error: *** STEP 4411.0 STEPD TERMINATED AT 2024-03-01T10:00:00 DUE TO JOB NOT "
                         "ENDING WITH SIGNALS ***\n")
    assert "HOST" not in summary, summary


_NODEMANAGER = (
    "2017-11-25 18:23:24,512 WARN org.apache.hadoop.yarn.server.nodemanager.containermanager.monitor."
    "ContainersMonitorImpl: Container [pid=4711,containerID=container_1511635920000_0001_01_000010] is running beyond "
    "physical memory limits. Current usage: 4.3 GB of 4 GB physical memory used; 7.2 GB of 8.4 GB virtual memory "
    "used. Killing container.\n"
    "Dump of the process-tree for container_1511635920000_0001_01_000010 :\n")
_HADOOP3 = (
    "2023-04-02 10:11:12,001 WARN monitor.ContainersMonitorImpl (ContainersMonitorImpl.java:checkLimit(460)) - "
    "Container [pid=88,containerID=container_e12_1680000000000_0003_01_000002] is running 536870912B beyond the "
    "'PHYSICAL' memory limit. Current usage: 2.5 GB of 2 GB physical memory used; 4.0 GB of 4.2 GB virtual memory used. Killing "
    "container.\n")


@pytest.mark.parametrize("text,usage", [(_NODEMANAGER, "Current usage: 4.3 GB of 4 GB physical memory used"),
                                        (_HADOOP3, "Current usage: 2.5 GB of 2 GB physical memory used")])
def test_yarns_kill_is_quoted_from_its_own_words(text: str, usage: str) -> None:
    summary, steps = _report(text)
    assert "SIGKILL" in summary and usage in summary and "Container [pid=" in summary, summary
    assert "org.apache" not in summary and "ContainersMonitorImpl:" not in summary, summary
    assert "--tee" not in summary and "triage launch" not in summary and "yarn logs -applicationId" in summary, summary
    assert "Flight Recorder" not in steps and "torchrun" not in steps, steps


def test_sparks_driver_on_a_real_yarn_kill_asks_for_the_containers_logs() -> None:
    text = (_CASES / "yahoo__TensorFlowOnSpark__134" / "log.txt").read_text(encoding="utf-8")
    summary, steps = _report(text)
    assert "7.2 GB of 4.2 GB virtual memory used" in summary and "harrisburg.cs.colostate.edu" in summary, summary
    assert "--tee" not in summary and "yarn logs" in summary and "Flight Recorder" not in steps, (summary, steps)


@pytest.mark.parametrize("text,name", [
    (("ERROR YarnClusterScheduler: Lost executor 9 on n1: Container killed by YARN for exceeding memory limits.\n"),
     "yarn"),
    ("INFO org.apache.spark.deploy.yarn.ApplicationMaster: Final app status: FAILED, exitCode: 13\n", "yarn"),
    # torchrun inside a YARN container (Spark's TorchDistributor): torchrun started the ranks
    (("ERROR YarnAllocator: Container killed by YARN for exceeding memory limits.\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"), "torchrun"),
    ("yarn install v1.22.19\nerror Command failed with exit code 1.\n", None),      # the JavaScript package manager
])
def test_yarn_is_the_launcher_its_own_lines_name(text: str, name: str | None) -> None:
    assert launcher_of(text) == name


def test_the_reporters_oomkilled_pod_gets_the_memory_kills_advice() -> None:
    summary, _ = _report("Our training pod was killed by kubernetes, the pod status says OOMKilled.\n\n"
                             "[rank0]: step 100 loss 2.1\n[rank1]: step 100 loss 2.1\n")
    assert "STOPPED" in summary and "in the reporter's words" in summary, summary
    assert "not a stop from outside" in summary and "resources.limits.memory" in summary, summary
