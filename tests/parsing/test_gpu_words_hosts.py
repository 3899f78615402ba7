"""triage.parsing.gpu_words reads a GPU's words, not a host's or a path's name that holds "gpu" (or "nvidia"): a CPU
program's crash on node gpu-07 gets a CPU program's advice (a core under gdb), not CUDA's (CUDA_LAUNCH_BLOCKING,
compute-sanitizer, Xid lines). It had matched the bare letters anywhere: "gpu", "Xid", "rocm", "nvidia"."""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.gpu_words import shows_gpu, source_shows_gpu

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


@pytest.mark.parametrize("text", [
    "[gpu-node-07:12345] *** Process received signal ***", "srun: error: gpu07: task 3: Segmentation fault",
    "slurmstepd: error: *** STEP 42.0 ON node-gpu CANCELLED AT 2024-01-01T00:00:00 ***", "NodeList=gpu[01-04]",
    "me@gpu:~$ mpirun -np 4 ./a.out", "at /opt/gpu/bin/solver.f90:12", "/home/me/GPU/run/solver.f90:88",
    "host=cn1.gpu.example.org unreachable", "/opt/nvidia/hpc_sdk/Linux_x86_64/23.1/compilers/bin/nvfortran -O2",
    "Xidian University cluster", "the job ran on a4-gpu-t4 runner"])
def test_a_hosts_or_a_paths_name_is_no_gpu(text: str) -> None:
    assert not shows_gpu(text) and not source_shows_gpu(text.encode()), text


@pytest.mark.parametrize("text", [
    "srun --gres=gpu:4 ./train", "Trainer(accelerator=gpu)", "model.to(args.gpu)", "on gpu 3", "--gpus 8",
    "--num-gpus 8", "per_gpu_train_batch_size=4", "mp.spawn(main, nprocs=ngpus_per_node)", "num_gpus=2",
    "GPU available: True", "/job:worker/device:GPU:0", "NVRM: Xid (PCI:0000:3b:00): 79", "libnvidia-ml.so.1",
    "open /dev/nvidia0 failed", "resources: nvidia.com/gpu: 1", "/opt/rocm/lib/libamdhip64.so", "mca_btl_smcuda.so",
    "x = x.cuda()", "dist.init_process_group(backend='nccl')", "/envs/pytorch_gpu/lib/python3.8"])
def test_a_gpus_words_are_read(text: str) -> None:
    assert shows_gpu(text) and source_shows_gpu(text.encode()), text


def test_a_gpu_word_after_many_hosts_named_gpu_is_read() -> None:
    """Each line's head names node gpu-07 (read once, not a GPU); the line that asks Slurm for GPUs, far after, is."""
    heads = "".join(f"[gpu-07:{1000 + i % 4}] step {i} loss 0.5\n" for i in range(5000))
    for tail, gpu in (("srun --per-device-extra-long-option-name-for-gpu 2 ./a.out\n", True),
                      ("srun --gres=gpu:4 ./a.out\n", True), ("srun -w gpu-08 ./a.out\n", False)):
        assert shows_gpu(heads + tail) is gpu and source_shows_gpu((heads + tail).encode()) is gpu, tail


def test_a_cpu_crash_on_a_node_named_gpu_gets_a_cpu_programs_advice() -> None:
    """A Fortran program's SIGSEGV under srun, on a node named gpu-07: no CUDA advice."""
    text = ("forrtl: severe (174): SIGSEGV, segmentation fault occurred\n"
            "srun: error: gpu-07: task 3: Segmentation fault\n")
    steps = "\n".join(analyze(load_log_texts([("job.log", text)])).next_steps)
    assert "CUDA_LAUNCH_BLOCKING" not in steps and "gdb PROGRAM CORE" in steps, steps


@pytest.mark.parametrize("case", ["idefix-code__idefix__12", "gajendra-iitm__starplat__10"])
def test_real_crashes_on_nodes_named_gpu(case: str) -> None:
    """UCX's 'Caught signal 11' under '[gpu008:75433:0:75433]' heads, the program's own frames on the CPU: the input
    names no GPU, only the nodes' names hold the word."""
    log = next(p for p in sorted((_CASES / case).iterdir()) if p.suffix in (".txt", ".log"))
    body = log.read_text(encoding="utf-8", errors="replace")
    assert "gpu0" in body and not shows_gpu(body)
    steps = "\n".join(analyze(load_log_texts([(log.name, body)])).next_steps)
    assert "CUDA_LAUNCH_BLOCKING" not in steps and "gdb PROGRAM CORE" in steps, steps
