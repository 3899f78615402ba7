"""Classes of real pasted logs left as known gaps in issue 23, each tested on a variant written here (other ranks,
hosts, codes and surrounding lines than the corpus cases' own)."""

from __future__ import annotations

import pytest

from tests.helpers.report import report_lines as report
from triage.errors import InputError


# PyTorch 1.x's THC-era "cuda runtime error (N) : what at file:line" read as an exception of no kind
# (NVIDIA/semantic-segmentation#33's ECC error): a crash on a CUDA error, as the modern "CUDA error: what" is
def test_a_thc_era_cuda_runtime_error_of_one_rank_is_its_crash_on_a_cuda_error() -> None:
    result = report(
        "[rank0]: epoch 7 iter 300 loss 0.41",
        "[rank3]: THCudaCheck FAIL file=/opt/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=39 : "
        "uncorrectable ECC error encountered",
        "[rank3]: Traceback (most recent call last):",
        '[rank3]:   File "train.py", line 88, in <module>',
        "[rank3]:     loss.backward()",
        "[rank3]: RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
        "/opt/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
        "[rank1]: [E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9012, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800347 milliseconds before timing out.",
    )
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert result.verdict.culprit_ranks == (3,), result.verdict.summary
    assert "CUDA_LAUNCH_BLOCKING" in " ".join(result.next_steps)


def test_a_rankless_thc_error_then_terminate_is_a_crash_not_an_exception() -> None:
    # a first line 132 columns long (a terminal's usual width, by chance) must not swallow the terminate line after it
    # (a CUDA error raised by a kernel: error 46, no GPU would take the process, is an exception at device selection
    # since session 55, whatever follows it)
    head = "RuntimeError: cuda runtime error (59) : device-side assert triggered at /srv/build/"
    error = head + "THC" * ((132 - len(head) - len(".cpp:51")) // 3)
    error += "x" * (132 - len(error) - len(".cpp:51")) + ".cpp:51"
    assert len(error) == 132
    result = report(error, "terminate called without an active exception")
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "terminate called" not in result.verdict.summary, result.verdict.summary


# A raise statement of literals inside the reporter's code listing (a block header before it, another statement
# after it) read as the exception the run raised: it is code shown, not the last frame of a traceback
def test_a_raise_inside_a_code_listing_is_no_failure_but_a_traceback_frames_raise_is() -> None:
    listing = ("here is the guard in our entry point:", "",
               "if args.nodes * args.gpus != int(os.environ['WORLD_SIZE']):",
               '    raise SystemError("WORLD_SIZE does not match nodes x gpus")',
               "dist.init_process_group(backend='nccl')", "",
               "the job then sits at init_process_group on every node.")
    with pytest.raises(InputError):      # nothing else in it: refused, never the listing's raise for a failure
        report(*listing)
    ranked = report(*listing, "[rank1]: RuntimeError: boom in step 3").verdict
    assert ranked.culprit_ranks == (1,) and "SystemError" not in ranked.summary, ranked.summary
    trace = ('  File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 91, in g',
             '    raise SystemError("WORLD_SIZE does not match nodes x gpus")')
    found = report(*trace).verdict
    assert found.kind.value == "exception" and "WORLD_SIZE does not match" in found.summary, found.summary
    alone = report('    raise SystemError("WORLD_SIZE does not match " "nodes x gpus")', "what can I do?").verdict
    assert alone.kind.value == "exception", alone.summary


# NCCL's lines pasted without their "host:pid:tid" ("[6] NCCL INFO ...") were read as Hydra's -prepend-rank: the
# bracketed number is the process's CUDA device, not its rank, and no line here maps the one to the other
def test_nccl_lines_without_their_host_head_name_a_device_not_a_rank() -> None:
    result = report(
        "[6] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0",
        "[6] NCCL INFO Setting affinity for GPU 6 to 0fff,ff000000",
        "[6] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-Xq1a to 9637892 bytes",
        "[6] NCCL INFO transport/shm.cc:114 -> 2",
        "[6] NCCL INFO init.cc:1236 -> 2",
    )
    assert result.verdict.kind.value == "network_error", result.verdict.summary
    assert result.verdict.culprit_ranks == (), result.verdict.summary
    assert "rank 6" not in result.verdict.summary, result.verdict.summary


def test_hydras_prepended_ranks_are_still_ranks_beside_a_headless_nccl_line() -> None:
    lines = [f"[{r}] step {s} loss 0.{s}" for s in range(3) for r in range(4)]
    result = report(*lines, "[2] RuntimeError: boom at step 3", "[1] NCCL INFO comm 0x1 rank 1 nranks 4 - Init COMPLETE")
    assert result.verdict.culprit_ranks == (2,), result.verdict.summary
