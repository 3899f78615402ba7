"""Whether a text shows a GPU at all (pure): the words only a GPU's software prints or a GPU job names (CUDA and its
libraries, NCCL, NVIDIA's driver and tools, ROCm's HIP), so that advice for a GPU's faults (CUDA_LAUNCH_BLOCKING,
compute-sanitizer, the driver's Xid lines) is given only where the input shows one: a Fortran or C program's SIGSEGV
under mpirun, with no such word, is a CPU program's crash."""

from __future__ import annotations

import mmap

# (case as the tools print them: "CUDA error", "cuda:0", "NCCL WARN", "libnccl", "GPU 3", "--gpus", "nvidia-smi",
# "NVRM: Xid", "cuDNN", "CUBLAS_STATUS_...", "HIP error", "hipErrorNoDevice", "ROCm", "/opt/rocm")
GPU_WORDS = ("CUDA", "cuda", "Cuda", "NCCL", "nccl", "GPU", "gpu", "nvidia", "NVIDIA", "Nvidia", "NVRM", "Xid",
             "cudnn", "cuDNN", "CUDNN", "cublas", "cuBLAS", "CUBLAS", "HIP error", "hipError", "ROCm", "rocm")
_GPU_BYTES = tuple(word.encode() for word in GPU_WORDS)


def shows_gpu(text: str) -> bool:
    """The text names a GPU's software or a GPU."""
    return any(word in text for word in GPU_WORDS)


def source_shows_gpu(source: bytes | mmap.mmap) -> bool:
    """The same, on a whole file's bytes (a large log read through an excerpt: its GPU words may lie outside it)."""
    return any(source.find(word) >= 0 for word in _GPU_BYTES)
