"""Whether a text shows a GPU at all (pure): the words only a GPU's software prints or a GPU job names (CUDA and its
libraries, NCCL, NVIDIA's driver and tools, ROCm's HIP), so that advice for a GPU's faults (CUDA_LAUNCH_BLOCKING,
compute-sanitizer, the driver's Xid lines) is given only where the input shows one: a Fortran or C program's SIGSEGV
under mpirun, with no such word, is a CPU program's crash.

What counts: CUDA, cuDNN, cuBLAS, NCCL, NVRM, NVIDIA, HIP's and HSA's errors and ROCm as they print them, anywhere
("CUDA error", "cuda:0", "device='cuda'", "libcudart", "ProcessGroupNCCL", "backend=nccl", "NVIDIA-SMI",
"hipErrorNoDevice", "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION");
the driver's "Xid", "rocm" ("/opt/rocm/lib") and "GPU" (GPUs, GPU0, "/device:GPU:0") where no letter joins them to a
longer word; "nvidia" in lower case only as its tools, libraries and devices name it ("nvidia-smi", "libnvidia-ml",
"/dev/nvidia0", "nvidia.com/gpu"); and "gpu" in lower case only where it is no part of a host's or a path's name: a
word of its own ("--gres=gpu:4", "accelerator=gpu", "args.gpu", "on gpu 3") or a part of a program's name or option
("num_gpus", "gpu_ids", "per_gpu_train_batch_size", "ngpus_per_node", "--num-gpus": a host's name holds no "_").
What does not: a node's or a path's name with "gpu" in it ("gpu-node-07", "gpu07", "node-gpu", "gpu[01-04]",
"user@gpu", "/opt/gpu/bin", "/home/me/GPU/run", "gpu.example.org", "/home/me/gpu_tests/run.py": a program's name
with "gpu_" in it counts only where it is no part of a path, save a conda environment's, "/envs/pytorch_gpu/"),
"nvidia" in a path ("/opt/nvidia/hpc_sdk": NVIDIA's compilers build CPU programs too), and words that hold those
letters ("Xidian"). AMD's kernel GPU driver counts by its name as the kernel's log prints it ("amdgpu 0000:03:00.0:
amdgpu: [gfxhub] page fault", "[drm:amdgpu_job_timedout [amdgpu]]", "AMDGPU:"), not in a path, a host's or a package's
name ("/opt/amdgpu/", "user@amdgpu3", "amdgpu-install").
Nor do the names of an environment's modules (Lmod's and Environment Modules' "Currently Loaded Modules:" list, its
"  1) PrgEnv-gnu/8.5.0   2) rocm/6.0.2" rows, a "module load cuda/12.1" or "ml cuda" command) and its variables that
say where software lies, as a dump of the environment prints them ("LD_LIBRARY_PATH=/opt/rocm/lib", "CUDA_HOME=/usr/
local/cuda", "export PATH=/usr/local/cuda/bin:$PATH", csh's "setenv CUDA_HOME ..."): a cluster's login environment
loads and sets them for every job, and a CPU program's crash under them is no GPU's.
"""

from __future__ import annotations

import mmap
import re
from typing import Any

from triage.lazy_regex import lazy_regex

# (case as the tools print them: "CUDA error", "cuda:0", "NCCL WARN", "libnccl", "cuDNN", "CUBLAS_STATUS_...",
# "HIP error", "hipErrorNoDevice", "ROCm", "NVIDIA-SMI", "NVRM: Xid")
GPU_WORDS = ("CUDA", "cuda", "Cuda", "NCCL", "nccl", "NVRM", "NVIDIA", "Nvidia", "nvidia-smi", "cudnn", "cuDNN",
             "CUDNN", "cublas", "cuBLAS", "CUBLAS", "HIP error", "hipError", "ROCm", "HSA_STATUS_ERROR")
_GPU_BYTES = tuple(word.encode() for word in GPU_WORDS)

# the words that a host's or a path's name may hold too, read where they are no part of one (a host's name holds no
# "_": "gpu_" and "_gpu" are a program's names)
_WORDS = (r"(?<![A-Za-z])Xid(?![A-Za-z])|(?<![A-Za-z])rocm"                # NVRM: Xid 79, /opt/rocm/lib
          r"|(?<![A-Za-z/])GPUs?(?![a-z/-])"                                # GPU 3, GPUs, GPU0, /device:GPU:0
          r"|(?:lib|/dev/)nvidia|nvidia\.com/gpu"                          # libnvidia-ml, /dev/nvidia0, k8s
          r"|(?<![A-Za-z0-9/@.-])(?:amdgpu|AMDGPU)(?=[ :_\]]|$)"          # the kernel's AMD GPU driver: dmesg
          r"|(?P<ident>_gpus?|gpus?_)|(?<![A-Za-z0-9])n_?gpus?(?![A-Za-z0-9])"  # per_gpu_, num_gpus, ngpus
          r"|(?<![A-Za-z0-9/@-])gpus?(?![A-Za-z0-9/.\[-])")                  # --gres=gpu:4, args.gpu, "gpu"
_OPTION = r"--[A-Za-z-]*gpu"                                               # --gpus, --num-gpus
_GPU = lazy_regex(_WORDS)
_GPU_SOURCE = lazy_regex(_WORDS.encode())
_GPU_OPTION, _GPU_OPTION_SOURCE = lazy_regex(_OPTION), lazy_regex(_OPTION.encode())
# (each of _WORDS's matches holds one of these: the pattern is tried only around them, a large log's text is not)
_LOOSE = ("gpu", "GPU", "Xid", "rocm", "nvidia")
_LOOSE_BYTES = tuple(word.encode() for word in _LOOSE)
_BEFORE, _AFTER = 8, 8        # how far a match of _WORDS starts before its word ("/dev/nvidia"), ends after it
_OPTION_BEFORE = 64            # an option's name before its "gpu" ("--per-device-gpu")


def _loose(source: Any, words: tuple[Any, ...], pattern: re.Pattern[Any], option: re.Pattern[Any]) -> bool:
    """One of _WORDS's matches, or an option's, around an occurrence of its word. Each occurrence's few characters
    around it are read once (a log whose every line names its node "gpu-07" repeats them): a match found there starts
    at most _BEFORE before the word, with a character before it for its lookbehind, and ends well inside them."""
    seen: dict[Any, bool | None] = {}
    dashes = "--" if isinstance(source, str) else b"--"
    for word in words:
        at = source.find(word)
        while at >= 0:
            start = max(0, at - _BEFORE)
            near = source[start:at + len(word) + _AFTER]
            if near in seen:
                told = seen[near]
            else:
                found = pattern.search(near)
                told = seen[near] = found is not None and (start == 0 or found.start() > 0) \
                    and found.start() <= at - start and (None if found.group("ident") else True)
            if told is None:
                # (a program's name with "gpu_" or "_gpu" in it, "per_gpu_batch_size": none where the name is a part
                # of a path, "/home/me/gpu_tests/run.py", "/data/my_gpu/")
                told = not _in_path(source, at, len(word))
            if told or word in ("gpu", b"gpu") and _option(source, at, dashes, option):
                return True
            at = source.find(word, at + 1)
    return False


def _in_path(source: Any, at: int, size: int) -> bool:
    """The name that holds the word at ``at`` (its letters, digits and "_" about it) is a part of a path: a "/" or a
    "\\" just before or after it; not a conda environment's directory (after "envs/"), whose name says what it was
    built for."""
    slashes = ("/", "\\") if isinstance(source, str) else (b"/", b"\\")
    left, right = at, at + size
    while left > 0 and _name_char(source[left - 1:left]):
        left -= 1
    while right < len(source) and _name_char(source[right:right + 1]):
        right += 1
    if source[max(0, left - 5):left] in (("envs/", "envs\\") if isinstance(source, str) else (b"envs/", b"envs\\")):
        return False        # (a conda environment's name, "/envs/pytorch_gpu/bin/python": one built for a GPU)
    return (left > 0 and source[left - 1:left] in slashes) or source[right:right + 1] in slashes


def _name_char(char: Any) -> bool:
    return bool(char) and (char.isalnum() or char in ("_", b"_"))


def _option(source: Any, at: int, dashes: Any, option: re.Pattern[Any]) -> bool:
    """The "gpu" at ``at`` ends an option's name ("--num-gpus")."""
    start = max(0, at - _OPTION_BEFORE)
    return source.find(dashes, start, at) >= 0 and (found := option.search(source, start, at + 3)) is not None \
        and found.end() == at + 3


# an environment's modules as the module tools print them: Lmod's and Environment Modules' list under its head
# ("Currently Loaded Modules:", "Currently Loaded Modulefiles:", Lmod's "The following have been reloaded with a version
# change:"), its rows of numbered names ("  1) gcc/9.2.0   2) cuda/11.0", "3) cuda/11.0 => cuda/11.2"), and the
# commands that load them ("module load cuda/12.1", "+ ml rocm", Environment Modules' "Loading cuda/12.1")
_MODULES = (r"^[^\n]*(?:Currently Loaded Module(?:s|files)|The following have been (?:re|un)?loaded)[^\n]*:[ \t]*"
            r"(?:\r?\n[ \t]*(?:\d+\)[ \t]+[^\s)]\S*(?:[ \t]+=>[ \t]+\S+)?[ \t]*)+)*$"
            r"|^(?:[^\n]*[ \t$#>+(;&])?(?:module|ml)[ \t]+(?:(?:load|add|swap|switch|unload|rm|try-load|try-add|use|"
            r"purge|list|restore)\b|[\w.+-]+/)[^\n]*$"
            r"|^[ \t]*Loading (?:requirement: )?[\w.+-]+/[\w.+-]+[ \t]*$")
_MODULES_TEXT, _MODULES_SOURCE = lazy_regex(_MODULES, re.MULTILINE), lazy_regex(_MODULES.encode(), re.MULTILINE)
# (each of _MODULES's matches holds one of these)
_MODULES_WORDS = ("odule", "ml ", "have been ", "Loading ")
_MODULES_BYTES = tuple(word.encode() for word in _MODULES_WORDS)


# an environment's variables as a dump or a script sets them ("env", "printenv", "export -p", "declare -x", csh's
# "setenv"): the ones that say where software lies ("LD_LIBRARY_PATH=/opt/rocm/lib:/usr/lib", "CUDA_HOME=/usr/local/
# cuda", "PATH=/usr/local/cuda/bin:...", "ROCM_PATH", "NCCL_ROOT", "LMOD_...", "MODULEPATH", "LOADEDMODULES", Lmod's
# "_LMFILES_"), a whole line each: a cluster's environment sets them for every job, and a program under them need not
# use a GPU (a line that runs a command after them, "CUDA_HOME=/usr/local/cuda python train.py", is no dump)
_ENV_NAME = (r"(?:[A-Za-z0-9_]*(?:PATH|HOME|ROOT|DIRS?|PREFIX)|LD_[A-Z0-9_]+|LMOD_[A-Z0-9_]+|MODULE[A-Z0-9_]*|"
             r"LOADEDMODULES|_LMFILES_)")
_ENV = (r"^[ \t]*(?:(?:(?:export|declare[ \t]+-x)[ \t]+)?" + _ENV_NAME + r"=(?:\"[^\"\n]*\"|'[^'\n]*'|\S*)|setenv[ \t]+"
        + _ENV_NAME + r"[ \t]+\S*)[ \t]*$")
_ENV_TEXT, _ENV_SOURCE = lazy_regex(_ENV, re.MULTILINE), lazy_regex(_ENV.encode(), re.MULTILINE)
# (each of _ENV's matches holds one of these)
_ENV_WORDS = ("PATH=", "HOME=", "ROOT=", "DIR=", "DIRS=", "PREFIX=", "LD_", "LMOD", "MODULE", "_LMFILES_", "setenv")
_ENV_BYTES = tuple(word.encode() for word in _ENV_WORDS)


def _without_environment(text: str) -> str | None:
    """The text without its lists of modules and its environment's location variables (_MODULES, _ENV), or None where
    it holds neither's words."""
    modules = any(word in text for word in _MODULES_WORDS)
    env = any(word in text for word in _ENV_WORDS)
    if not (modules or env):
        return None
    if modules:
        text = _MODULES_TEXT.sub("", text)
    return _ENV_TEXT.sub("", text) if env else text


def _source_without_environment(source: Any) -> Any:
    modules = any(source.find(word) >= 0 for word in _MODULES_BYTES)
    env = any(source.find(word) >= 0 for word in _ENV_BYTES)
    if not (modules or env):
        return None
    out = _MODULES_SOURCE.sub(b"", source) if modules else source
    return _ENV_SOURCE.sub(b"", out) if env else out


def _any_gpu(text: str) -> bool:
    return any(word in text for word in GPU_WORDS) or _loose(text, _LOOSE, _GPU, _GPU_OPTION)


def _any_gpu_source(source: Any) -> bool:
    return any(source.find(word) >= 0 for word in _GPU_BYTES) or _loose(source, _LOOSE_BYTES, _GPU_SOURCE,
                                                                         _GPU_OPTION_SOURCE)


def shows_gpu(text: str) -> bool:
    """The text names a GPU's software or a GPU, outside an environment's list of modules and its location
    variables."""
    return _any_gpu(text) and ((rest := _without_environment(text)) is None or _any_gpu(rest))


def source_shows_gpu(source: bytes | mmap.mmap) -> bool:
    """The same, on a whole file's bytes (a large log read through an excerpt: its GPU words may lie outside it)."""
    return _any_gpu_source(source) and ((rest := _source_without_environment(source)) is None
                                        or _any_gpu_source(rest))


# ROCm's own software by the names it prints or installs under (its runtime's libraries in a backtrace's frames,
# "/opt/rocm-6.0.2/lib/libamdhip64.so.6(+0x2a1b3c)", a module "rocm/6.0.2", its tools and errors, its device masks),
# and CUDA's own that would say the GPU is NVIDIA's after all (a CUDA error, libcudart, the NVIDIA driver's words)
_ROCM = lazy_regex(r"/opt/rocm\b|\blib(?:amdhip64|hsa-runtime64|rocblas|rccl|MIOpen)\b|\brocm[-/]\d|\brocm-smi\b|"
                   r"\bROCm\b|\bHIP error\b|\bhipError[A-Z]|\bHSA_STATUS_ERROR_|\b(?:ROCR|HIP)_VISIBLE_DEVICES\b|"
                   r"\bAMD Instinct\b")
# (each of _ROCM's matches holds one of these)
_ROCM_WORDS = ("/opt/rocm", "libamdhip64", "libhsa-runtime64", "librocblas", "librccl", "libMIOpen", "rocm/", "rocm-",
               "ROCm", "HIP error", "hipError", "HSA_STATUS_ERROR_", "_VISIBLE_DEVICES", "AMD Instinct")
_CUDA_OWN = lazy_regex(r"\bCUDA error\b|\blibcud(?:art|a)\b|\bnvidia-smi\b|\bNVIDIA-SMI\b|\bNVRM\b|\bcuDNN\b|"
                       r"\bCUDA_VISIBLE_DEVICES\b|\bcompute-sanitizer\b")


def shows_rocm(text: str) -> bool:
    """The text shows AMD's ROCm as the GPU's software (its libraries' paths, its tools, errors and device masks) and
    no word of NVIDIA's CUDA's own: a crash's GPU advice is then ROCm's (triage.analysis.advice)."""
    if not any(word in text for word in _ROCM_WORDS):
        return False            # (plain searches first: most texts hold none of them)
    if _ROCM.search(text) is None or _CUDA_OWN.search(text) is not None:
        return False
    # (a module's name, "rocm/6.0.2" in a list of the environment's modules, or a location variable's value,
    # "LD_LIBRARY_PATH=/opt/rocm/lib", is no sign the program ran on ROCm)
    return (rest := _without_environment(text)) is None or _ROCM.search(rest) is not None

