"""A rank waiting on its GPU is its own state: never "busy computing", a hang when the GPU is idle
or its use is unknown (triage.agent.hang.gpu_wait)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.launch import job_env, launch_argv, run_launch, torchrun
from tests.helpers.paths import REPO, program
from triage.agent.hang import busy
from triage.agent.hang.gpu_wait import gpu_utilization, gpu_wait
from triage.parsing.stacks import Frame, ThreadStack

SITE = "/usr/lib/python3.11/site-packages"
USER = Frame("train_step", "/home/u/train.py", 42)


def _main(*frames: Frame) -> tuple[ThreadStack, ...]:
    return (ThreadStack("1", "MainThread", frames, is_main=True),
            ThreadStack("2", "triage-heartbeat", (Frame("synchronize", f"{SITE}/torch/cuda/__init__.py", 1),), is_main=False))


def test_cuda_synchronize_event_and_nccl_waits_are_named() -> None:
    sync = Frame("synchronize", f"{SITE}/torch/cuda/__init__.py", 1209)
    assert gpu_wait(_main(sync, USER)) == "torch.cuda.synchronize (train_step at train.py:42)"
    event = Frame("synchronize", f"{SITE}/torch/cuda/streams.py", 245)
    assert gpu_wait(_main(event, USER)).startswith("Event.synchronize")  # type: ignore[union-attr]
    accel = Frame("synchronize", f"{SITE}/torch/accelerator/__init__.py", 246)
    assert gpu_wait(_main(accel, USER)) is not None
    pending = Frame("_wait_for_pending_works", f"{SITE}/torch/distributed/fsdp/_runtime_utils.py", 9)
    assert gpu_wait(_main(pending, USER)).startswith("_wait_for_pending_works")  # type: ignore[union-attr]


def test_native_frames_behind_item_cpu_and_work_wait() -> None:
    for native, name in (("at::native::_local_scalar_dense_cuda", ".item()"), ("cudaMemcpyAsync", ".cpu()"),
                         ("c10d::ProcessGroupNCCL::WorkNCCL::wait", "work.wait()"),
                         ("cudaStreamSynchronize", "stream synchronize")):
        frames = (Frame("__futex_wait", "libc.so.6", None, module="libc.so.6"),
                  Frame(native, "libtorch_cuda.so", None, module="libtorch_cuda.so"), USER)
        assert name in (gpu_wait(_main(*frames)) or ""), native


def test_user_code_above_a_wait_or_other_threads_are_not_a_gpu_wait() -> None:
    assert gpu_wait(_main(USER, Frame("synchronize", f"{SITE}/torch/cuda/__init__.py", 1))) is None
    assert gpu_wait(_main(Frame("sleep", "/home/u/x.py", 3), USER)) is None
    assert gpu_wait(_main(Frame("synchronize", "/home/u/my_barrier.py", 3), USER)) is None   # not in cuda/
    assert gpu_wait(_main(Frame("wait", f"{SITE}/threading.py", 3), USER)) is None           # not distributed
    assert gpu_wait(None) is None and gpu_wait(()) is None


def test_policy_idle_or_unknown_gpu_is_a_hang_running_gpu_is_watched() -> None:
    base = busy.RankActivity(1, 10, busy.Activity.GPU_WAIT, 1.0, 0.0, False, "synchronize (x.py:3)",
                             gpu_wait="torch.cuda.synchronize")
    assert not busy.keeps_waiting(base)                                  # unknown: a hang
    assert "GPU use not known" in base.evidence()
    assert not busy.keeps_waiting(busy.RankActivity(**{**base.__dict__, "gpu_util": 0.0}))
    running = busy.RankActivity(**{**base.__dict__, "gpu_util": 1.0})
    assert busy.keeps_waiting(running) and "GPU 100%" in running.evidence()
    assert busy.state_text(running) == "waiting on the GPU"
    assert gpu_utilization(1) is None        # no NVML on this machine, or pid 1 on no GPU


def test_a_rank_spinning_in_synchronize_is_waiting_on_the_gpu_and_stopped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    done = run_launch(launch_argv(run, torchrun(program("gpu_wait_job.py"), 2)), job_env(), run, timeout=240)
    assert done.returncode == 75, done.explain()
    assert "rank 1 waiting on the GPU" in done.stderr and "busy" not in done.stderr, done.stderr
    report = subprocess.run([sys.executable, "-m", "triage", "report", str(run), "--width", "200"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert "waiting on the GPU" in report.stdout, report.stdout
    assert "busy" not in report.stdout.split("Findings")[0], report.stdout
    said = " ".join(report.stdout.split())       # the next steps speak of the GPU wait, not of a busy rank
    assert "rank 1 waits on its GPU in torch.cuda.synchronize" in said and "busy (or blocked)" not in said, said
