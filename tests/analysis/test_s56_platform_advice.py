"""Session 56 (fix56d items 2, 4, 5, 6, 7): advice fitted to what ran the job and what it ran on.

2. A container's SIGKILL on Kubernetes (exit code 137: `kubectl describe pod`'s Last State, Spark's executor on
   Kubernetes, Airflow's pod) got the node's dmesg advice; now its pod's state and events.
4. A CUDA or HIP program with no PyTorch (nor NCCL) word got PyTorch's Flight Recorder step; now only a PyTorch job's.
5. An HTCondor job's end (its shadow exception, its hold) got torchrun's advice; now condor's tools, its event log and
   its `Error from slot` line, and `triage launch` as the job's executable.
6. oneCCL's transport got NCCL's knobs (NCCL_SHM_DISABLE=1, NCCL_DEBUG=INFO, the Flight Recorder); now its own.
7. Lightning's `GLOBAL_RANK: 0, MEMBER: 1/1` (a world of one) is a world size the Coverage line states."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.condor import MANUAL_EVICTED
from tests.helpers.report import report_log
from triage.analysis.advice import CONDOR_STEP, K8S_KILL_STEP, ONECCL_STEP, flight_recorder_fits
from triage.analysis.settle import settle_network
from triage.parsing.peers import noted
from triage.parsing.platform_words import platform_of

CASES = Path(__file__).resolve().parent.parent / "realworld" / "cases"

_DESCRIBE = ("$ kubectl describe pod train-worker-0\nName:         train-worker-0\nNamespace:    default\n"
             "Containers:\n  pytorch:\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n"
             "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137\n"
             "    Restart Count:  3\n")


def _steps(text: str, tmp_path: Path) -> list[str]:
    code, out = report_log(text, tmp_path)
    assert code == 1, out
    steps: list[str] = out["next_steps"]
    return steps


@pytest.mark.parametrize("text", [
    pytest.param(_DESCRIBE, id="describe-pod"),
    pytest.param((CASES / "kubeflow__spark-operator__766" / "log.txt").read_text(encoding="utf-8"), id="spark-op-766"),
    pytest.param((CASES / "googlefonts__fontbakery-dashboard__100" / "log.txt").read_text(encoding="utf-8"), id="fontbakery-100"),
])
def test_a_containers_sigkill_on_kubernetes_is_read_in_its_pods_state(text: str, tmp_path: Path) -> None:
    steps = _steps(text, tmp_path)
    assert K8S_KILL_STEP in steps and not any("dmesg" in step for step in steps), steps


def test_a_sigkill_off_kubernetes_keeps_the_kernels_log(tmp_path: Path) -> None:
    steps = _steps("[rank0]: step 10\n[rank1]: step 10\nsrun: error: node7: task 1: Killed\n", tmp_path)
    assert K8S_KILL_STEP not in steps and any("dmesg" in step for step in steps), steps


@pytest.mark.parametrize(("text", "platform"), [
    ("\n".join(MANUAL_EVICTED), "htcondor"),
    ("$ condor_q -hold 4242\n", "htcondor"),
    (("1050981.0   dbrown         11/7  23:48 Job in status 2 put on hold by SYSTEM_PERIODIC_HOLD due to memory "
      "usage 3000000.\n"), "htcondor"),
    ("The meeting was put on hold by the chair.\n", None),
    (_DESCRIBE, "kubernetes"),
    ("Warning  BackOff  kubelet  Back-off restarting failed container\n", "kubernetes"),
    ("20/01/10 INFO ExecutorPodsAllocator: Going to request 1 executors from Kubernetes.\n", "kubernetes"),
    ("Traceback (most recent call last):\nValueError: x\n", None),
    ("see the pod/sandbox docs at https://example.org/pod/x\n", None),
    ("001 cases passed\n", None),
])
def test_the_platform_a_text_shows(text: str, platform: str | None) -> None:
    assert platform_of(text) == platform


def test_an_htcondor_jobs_shadow_exception_gets_condors_advice(tmp_path: Path) -> None:
    steps = _steps("\n".join(MANUAL_EVICTED) + "\n", tmp_path)
    assert steps[0] == CONDOR_STEP, steps
    assert not any("torchrun" in step for step in steps) and "as the job's executable" in steps[-1], steps


@pytest.mark.parametrize("case", ["usegalaxy-eu__infrastructure-playbook__533", "gwastro__1-ogc__2"])
def test_a_job_held_over_its_memory_gets_condors_memory_advice(case: str, tmp_path: Path) -> None:
    text = (CASES / case / "log.txt").read_text(encoding="utf-8")
    _code, out = report_log(text, tmp_path)
    steps = out["next_steps"]
    assert "request_memory" in steps[0] and CONDOR_STEP in steps and not any("torchrun" in s for s in steps), steps
    assert "submit file's `output =`" in out["verdict"]["summary"], out["verdict"]


_HIP = ("step 10 residual 1.2e-3\nMemory access fault by GPU node-2 (Agent handle: 0x55d5c0a1e2a0) on address "
        "0x7f1a2c000000. Reason: Page not present or supervisor privilege.\nAborted (core dumped)\n")
_CUDA = 'iter 5 done\nCUDA error at stencil.cu:42 code=700(cudaErrorIllegalAddress) "cudaDeviceSynchronize()"\n'


@pytest.mark.parametrize("text", [pytest.param(_HIP, id="hip"), pytest.param(_CUDA, id="cuda")])
def test_a_gpu_program_of_its_own_gets_no_flight_recorder_step(text: str, tmp_path: Path) -> None:
    steps = _steps(text, tmp_path)
    assert steps and not any("Flight Recorder" in step for step in steps), steps


@pytest.mark.parametrize("text", [
    pytest.param(_HIP.replace("Aborted", "  File \"train.py\", line 3, in <module>\n    import torch\nAborted"),
                 id="hip-torch"),
    pytest.param(_CUDA + "NCCL WARN Cuda failure 'an illegal memory access was encountered'\n", id="cuda-nccl"),
    pytest.param("RuntimeError: HIP error: an illegal memory access was encountered\n", id="torch-hip-line"),
])
def test_a_pytorch_or_nccl_jobs_gpu_fault_keeps_it(text: str, tmp_path: Path) -> None:
    assert any("Flight Recorder" in step for step in _steps(text, tmp_path))


def test_flight_recorder_fits() -> None:
    assert flight_recorder_fits(None) and flight_recorder_fits(None, "torch", gpu_program=True)
    assert not flight_recorder_fits(None, None, gpu_program=True)
    assert flight_recorder_fits("torchrun", None, gpu_program=True)


def test_oneccls_transport_gets_its_own_knobs(tmp_path: Path) -> None:
    _code, out = report_log((CASES / "intel__ipex-llm__11877" / "log.txt").read_text(encoding="utf-8"), tmp_path)
    said = out["verdict"]["summary"] + " ".join(out["next_steps"])
    assert "NCCL" not in said and "Flight Recorder" not in said, said
    assert ONECCL_STEP in out["next_steps"] and "CCL_ATL_TRANSPORT=mpi" in out["verdict"]["summary"]


@pytest.mark.parametrize(("line", "knob"), [
    ("NCCL WARN Error: failed to extend /dev/shm/nccl-x to 9637892 bytes", "NCCL_SHM_DISABLE=1"),
    ("|CCL_ERROR| atl_ofi_helper.cpp:867 can't create providers for name shm: /dev/shm", "CCL_ATL_TRANSPORT=mpi"),
    ("RuntimeError: unable to write to file </torch_1_x>: No space left on device (/dev/shm)", None),
])
def test_shared_memory_is_settled_with_the_knob_of_the_library_that_said_it(line: str, knob: str | None) -> None:
    said = settle_network(line, None)
    assert "df -h /dev/shm" in said
    if knob is None:
        assert "NCCL" not in said and "CCL_" not in said, said
    else:
        assert knob in said, said


def test_a_shared_memory_note_names_ncc_only_on_nccls_line() -> None:
    assert "NCCL_SHM_DISABLE" in noted("NCCL WARN unable to allocate shared memory segment /dev/shm/nccl-1")
    assert "NCCL_SHM_DISABLE" not in noted("gloo: unable to allocate shared memory segment /dev/shm/x")


@pytest.mark.parametrize(("head", "size"), [("GLOBAL_RANK: 0, MEMBER: 1/1", 1), ("GLOBAL_RANK: 0, MEMBER: 1/2", 2)])
def test_lightnings_world_of_one_is_a_world_size(head: str, size: int, tmp_path: Path) -> None:
    text = (f"Initializing distributed: {head}\nTraceback (most recent call last):\n  File \"train.py\", line 9, in "
            "<module>\n    fit()\nValueError: bad config\n")
    _, out = report_log(text, tmp_path)
    coverage = out["extra"]["coverage"]
    assert coverage["world_size"] == size and "MEMBER" in coverage["world_size_source"], coverage


def test_sgmses_lightning_run_of_one_process_is_covered_whole(tmp_path: Path) -> None:
    _, out = report_log((CASES / "sp-uhh__sgmse__44" / "log.txt").read_text(encoding="utf-8"), tmp_path)
    coverage = out["extra"]["coverage"]
    assert coverage["world_size"] == 1 and coverage["ranks"] == "0", coverage
    assert coverage["summary"] == "this input holds rank 0 of 1 (world size from Lightning's MEMBER: 1/1 line)"
