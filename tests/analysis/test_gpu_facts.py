"""GPU facts in the report: the rank on a GPU at full utilization, the Xid whose pid is a rank's, ECC."""

from __future__ import annotations

from triage.analysis.gpu_facts import gpu_findings
from triage.model.gpu import GpuFacts, GpuProcess, NodeGpus, XidEvent


def test_a_rank_on_a_gpu_at_full_utilization_is_named() -> None:
    node = NodeGpus("nvml", (GpuFacts(0, util_gpu=100, processes=(GpuProcess(10, rank=1),)),
                             GpuFacts(1, util_gpu=100, processes=(GpuProcess(11),))), host="gpu1")
    [finding] = gpu_findings([node])
    assert finding.kind == "gpu_busy" and finding.ranks == (1,)
    assert finding.detail.startswith("rank 1 on GPU 0 on gpu1: the GPU is at 100% utilization")


def test_the_xid_names_the_rank_whose_pid_it_carries_and_ecc_is_said() -> None:
    gpu = GpuFacts(2, util_gpu=0, ecc_volatile_uncorrected=3, retired_pending=True,
                   processes=(GpuProcess(20, rank=5),), xids=(XidEvent(79, pid=20, rank=5),))
    kinds = {f.kind: f for f in gpu_findings([NodeGpus("nvml", (gpu,), host="n2")])}
    assert kinds["xid"].ranks == (5,) and kinds["xid"].detail == "Xid 79 on GPU 2 on n2, naming the pid of rank 5"
    assert kinds["gpu_ecc"].detail == ("GPU 2 on n2: 3 uncorrected ECC errors since the driver loaded, "
                                       "a page retirement pending (reset the GPU) (rank 5 ran on it)")


def test_a_healthy_idle_gpu_says_nothing() -> None:
    assert gpu_findings([NodeGpus("nvidia-smi", (GpuFacts(0, util_gpu=3, ecc_volatile_uncorrected=0),))]) == []


def test_row_remapping_pending_or_failed_is_said_with_what_to_do() -> None:
    # A100/H100/H200 replace page retirement by row remapping: a pending remap needs a GPU reset,
    # a failed one takes the GPU out of service
    gpu = GpuFacts(0, remapped_rows_uncorrectable=1, remap_pending=True, processes=(GpuProcess(30, rank=2),))
    [finding] = gpu_findings([NodeGpus("nvml", (gpu,), host="n3")])
    assert finding.kind == "gpu_ecc" and finding.ranks == (2,)
    assert finding.detail == ("GPU 0 on n3: 1 memory row remapped after uncorrectable errors, a row remapping "
                              "pending (it takes effect at the next GPU reset: reset the GPU before reuse) "
                              "(rank 2 ran on it)")
    failed = GpuFacts(1, remap_failure=True)
    [finding] = gpu_findings([NodeGpus("nvml", (failed,), host="n3")])
    assert "a row remapping FAILED" in finding.detail and "drain the node" in finding.detail


def test_row_remapping_with_nothing_remapped_says_nothing() -> None:
    gpu = GpuFacts(0, remapped_rows_uncorrectable=0, remapped_rows_correctable=0, remap_pending=False,
                   remap_failure=False)
    assert gpu_findings([NodeGpus("nvml", (gpu,))]) == []
