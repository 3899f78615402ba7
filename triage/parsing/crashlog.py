"""Failure lines in a rank's output: the one parser that ``triage report``, ``triage postmortem`` and
the live agent use to recognise how a process failed.

A line (launcher prefixes already removed, see :mod:`triage.parsing.log_prefix`) is one of:
- a Python exception's last line, inside or outside a traceback (``[rank11]: torch.OutOfMemoryError:
  CUDA out of memory...``), including one whose traceback header was cut off;
- a CUDA error (``CUDA error: an illegal memory access was encountered``, ``Exception raised from
  c10_cuda_check_implementation``, ``CUDA out of memory``);
- a fatal signal (``Segmentation fault``, ``Fatal Python error: Aborted``, ``*** SIGSEGV received``,
  ``Aborted (core dumped)``, ``terminate called after throwing an instance of ...``);
- a network or peer failure (``ncclRemoteError``, ``ncclSystemError``, ``socketProgressOpt``,
  ``Connection reset by peer``, ``NET/IB : Got completion from peer ... status=12``, ``DistNetworkError``);
- another NCCL error (``ncclInternalError``, ``ncclInvalidUsage``, ``ncclUnhandledCudaError``).

Each result says whether it is usually *collateral*: a consequence of another rank's failure (a
peer that went away, a communicator aborted after a timeout, the launcher's own teardown).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace

from triage.lazy_regex import lazy_regex

# FAULT_SIGNALS lives with the crash model; re-exported here, where the agent reads it
from triage.model.backtrace import FAULT_SIGNALS as FAULT_SIGNALS  # noqa: PLC0414
from triage.model.backtrace import CrashLogFacts

# what a failure line names at its other end, and how it is said and cut: triage.parsing.peers (re-exported here,
# where the readers import them)
from triage.parsing.launch_failure import MARKERS as LAUNCH_MARKERS
from triage.parsing.launch_failure import launch_failure
from triage.parsing.launchers import LOCAL_SIGNAL_WORDS
from triage.parsing.metric_name import METRIC_NAME
from triage.parsing.oneccl import LINE_WORDS as ONECCL_WORDS
from triage.parsing.oneccl import atl_failure
from triage.parsing.peers import CUDA_SETUP_NOTE as CUDA_SETUP_NOTE  # noqa: PLC0414
from triage.parsing.peers import NO_BINARY_NOTE as NO_BINARY_NOTE  # noqa: PLC0414
from triage.parsing.peers import PEER, cuda_setup_note, noted, peer_of
from triage.parsing.peers import clip_keeping as clip_keeping  # noqa: PLC0414
from triage.parsing.peers import peer_host as peer_host  # noqa: PLC0414
from triage.parsing.peers import shortened as shortened  # noqa: PLC0414
from triage.parsing.quoted import in_quoted_prose, is_advice, says_it_failed
from triage.parsing.ray_errors import KILLED as RAY_KILLED
from triage.parsing.ray_errors import WRAPPED_NOTE as RAY_WRAPPED_NOTE
from triage.parsing.ray_errors import ray_oom
from triage.parsing.regex_gate import gated


class CrashLineKind(str, enum.Enum):
    EXCEPTION = "exception"          # a Python exception (type: message)
    CUDA_OOM = "cuda_oom"            # CUDA out of memory (an exception, usually torch.OutOfMemoryError)
    CUDA_ERROR = "cuda_error"        # CUDA error: ... (illegal memory access, device-side assert, ...)
    FATAL_SIGNAL = "fatal_signal"    # a process killed by a signal (SIGSEGV, SIGABRT, SIGBUS, SIGKILL ...)
    TERMINATE = "terminate"          # C++ std::terminate: an uncaught exception (then SIGABRT)
    NETWORK = "network"              # a network or peer failure (NCCL/gloo transport)
    NCCL_ERROR = "nccl_error"        # an NCCL error that is not a network one
    STOPPED = "stopped"              # the job stopped from outside (a scheduler's time limit, scancel, a pod's kill)


@dataclass(frozen=True)
class CrashLine:
    """A log line that reads as a failure, and what it says."""
    kind: CrashLineKind
    text: str                        # the line's message, trimmed
    exc_type: str | None = None      # "torch.OutOfMemoryError", "RuntimeError" ...
    signal: str | None = None        # "SIGSEGV"
    collateral: bool = False         # usually a consequence of another failure
    peer: str | None = None          # a peer address/host the line names ("10.0.0.5<1234>")
    gpu: int | None = None           # a CUDA device the line names
    thread: int | None = None        # the thread id glog's head gives (the process's pid for its main thread)
    quoted: bool = False             # a runtime's message inside the writer's own sentence, or a library's line at
    #                                  its warning level (libfabric's): not read where the job went on past it
    #                                  (triage.load.logs.text)


# Quick pre-check for whole-text scans: a line holding none of these is no crash line.
MARKERS = ("Error", "error", "Exception", "exception", "Fatal", "fault", "terminate", "Abort", "SIG",
           "Killed", *LOCAL_SIGNAL_WORDS, "reset by peer", "closed by remote peer", "ncclRemote", "ncclSystem",
           "ncclInternal", "status=",
           "socket interface", "UNDELIVERABLE", "out of memory", "Tried to allocate", "NCCL operations have failed",
           "taking the entire process down", "bus error", "failed collective", "dump signal", "debug info",
           "abort timed out", "[F", "thread terminat", "Connection refused", "connection abort", "Connect to ",
           "host not found", "Caught signal", "caught signal", "Assertion ", "Address already in use", "EADDRINUSE",
           "failed to listen", "ssh exited with exit code", "does not support", "posix_fallocate", "ncclShmOpen",
           "Getting socket times out", "wait socket establish timeout", "StopIteration", "StopAsyncIteration",
           "failed to extend /dev/shm", "what():", "retry count exceeded", "retry counter exceeded", "RETRY_EXC_ERR",
           "completion_with_err", "_RESULT_ERROR_", "memory isn't enough", "kernel execute failed", "forrtl: ",
           "exit signals: ", "libfabric:", "CRASHES WITH SIGNAL", "closed by remote host", "connection to proxy ",
           "CUDA_ERROR_", "Check failed", "Check failure", "NCCL_ERROR", "ECONN",
           "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "connect() failed", "DDP expects same model", "Broken pipe",
           "appears not to match", "UCX  ERROR", "UCX ERROR", "ASSERT '", ": error: argument ",
           ": error: the following arguments are required", ": error: invalid choice",
           # a memory allocator's fatal heap check (glibc, tcmalloc): it aborts the process
           "(): ", "double free", "corrupted ", "Attempt to free invalid pointer",
           # XLA's StreamExecutor allocator's status (its out-of-memory: _CUDA_OOM)
           "Failed to allocate request for", "Failing at address: ", *LAUNCH_MARKERS, *ONECCL_WORDS)

# (or a module's own type named plainly Exception or Error, which only its module path tells from a word:
# mpi4py's "mpi4py.MPI.Exception: Other MPI error, error stack:"; a bare "Error: ..." stays a CLI's word)
# (Python's own StopIteration and StopAsyncIteration, which a traceback may end in alone: "StopIteration", an iterator's
# next() past its end, no message)
_EXC = lazy_regex(
    r"^\s*(?P<type>(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure|Failed)"
    r"|(?:[A-Za-z_]\w*\.)+(?:Exception|Error)|(?:builtins\.)?Stop(?:Async)?Iteration)"
    r"(?::\s?(?P<msg>.*))?$")
# a metric whose name ends in Error, logged with its value ("eval.Error: 0.3912", "val.MeanSquaredError: 0.39",
# "top1.Error: 29.4%"): a split's dotted name ("<split>.<Name>", one dot) whose message is one fractional number and
# nothing else is a measurement, not an exception's (an integer alone stays one: "KeyError: 0"; an exception's own
# type is never a metric: "AssertionError: 0.7312", the value an `assert x < 0.5, x` says, ends a traceback, as does
# a module's "pkg.errors.ToleranceError: 0.73")
_METRIC_VALUE = lazy_regex(r"\s*[-+]?\d*\.\d+(?:[eE][-+]?\d+)?\s*%?\s*$")
_METRIC_NAME = lazy_regex(METRIC_NAME)
# an exception line a reporter glued after a sentence in CJK (fullwidth) punctuation ("...报错：RuntimeError: ...",
# "...a single gpu，RuntimeError: Default process group has not been initialized..."): the exception starts after it
_CJK_GLUED_EXC = lazy_regex(r"[，：；。、]\s*(?=(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): )")
_CUDA_OOM = lazy_regex(r"CUDA out of memory|OutOfMemoryError|out of memory\. Tried to allocate|\bran out of memory\b|"
                       r"CUBLAS_STATUS_ALLOC_FAILED|"
                       # PyTorch 1.x's THC forms of cudaErrorMemoryAllocation (2)
                       r"(?:cuda runtime error \(2\) ?|THCudaCheck FAIL .{0,300}? error=2 ): out of memory|"
                       r"Cuda failure (?:\d+ )?'?out of memory|"
                       r"\bCUDA error in file '[^'\n]+' in line \d+ ?: out of memory|"
                       # the CUDA driver API's own name of it (JAX, XLA, CuPy and Numba print the driver's codes)
                       r"\bCUDA_ERROR_OUT_OF_MEMORY\b|"
                       # XLA's and JAX's allocator ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate
                       # 9663676416 bytes."), TensorFlow's ("OOM when allocating tensor with shape[...] ... by allocator
                       # GPU_0_bfc"), Paddle's ("ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate")
                       r"\bOut of memory while trying to allocate\b|\bOOM when allocating tensor\b|"
                       r"\bOut of memory error on GPU\b|"
                       # XLA's StreamExecutor allocator, its status as PJRT prints it for a replica ("Execution of
                       # replica 0 failed: RESOURCE_EXHAUSTED: Failed to allocate request for 625.00MiB (655360000B) on
                       # device ordinal 7"): the device's memory, read without the status word a terminal's wrap may
                       # split ("RE" / "SOURCE_EXHAUSTED: ...")
                       r"\bFailed to allocate request for [\d.]+ ?[KMGTP]?i?B \(\d+B\) on device ordinal \d+|"
                       # the CUDA and HIP runtimes' names of it (cudaErrorMemoryAllocation is code 2), and a GPU error
                       # told with its file and line, then the runtime's string (AMReX: "CUDA error 2 in file
                       # .../AMReX_Arena.cpp line 173: out of memory", "GPU last error detected in file ... line 1032:
                       # out of memory")
                       r"\b(?:hipErrorOutOfMemory|cudaErrorMemoryAllocation)\b|"
                       # Level Zero's (Intel GPUs: oneCCL, SYCL's Unified Runtime, PyTorch's XPU backend)
                       r"\b(?:ZE|UR)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b|"
                       # MindSpore's device allocator ("Device(id:2) memory isn't enough and alloc failed, kernel name:
                       # ..., alloc size: 1073741824B.", "Device memory isn't enough and alloc failed, actor name: ...")
                       r"\bDevice(?:\(id:\d+\))? memory isn't enough and alloc failed\b|"
                       r"\b(?:CUDA|HIP|GPU)(?: last)? error(?: \d+| detected)? in file \S+ line \d+: out of memory\b|"
                       # PyTorch's caching allocator's own figures, the tail of its message pasted without the "CUDA
                       # out of memory." head: "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; ...)",
                       # newer "Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which ..."
                       r"\bTried to allocate [\d.]+ [KMGT]i?B(?: \(GPU \d+; [\d.]+ [KMGT]i?B total capacity|"
                       r"\. GPU \d+ has a total capacity)|"
                       # a CUDA check macro's own line with the failed call's result by number, 2 in both APIs
                       # (CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation): torch_memory_saver's
                       # "[torch_memory_saver.cpp] CUresult error  result=2 file=... func=... line=...", newer
                       # "cudaError error: 2 (out of memory)  file=csrc/core.cpp func=resume line=172"
                       r"\b(?:CUresult|cudaError) error(?::[ \t]*|[ \t]+result=)2\b[^\n]*?\bfile=\S+[^\n]*?\bline=\d+",
                       re.IGNORECASE)
# "CUDA error: X" and what X is (to its line's end, or to PyTorch's "CUDA kernel errors might be ..." glued
# after it): the one pattern both a log line (parse_crash_line) and a crashed process's tail (crash_log_facts) use
_CUDA_WHAT_TEXT = r"CUDA error: (?P<what>[^\n]+?)(?=\s*$|\s*CUDA kernel errors)"
_CUDA_ERROR = lazy_regex(
    _CUDA_WHAT_TEXT + r"|c10_cuda_check_implementation|cudaErrorIllegalAddress|"
    r"device-side assert triggered|CUDA kernel errors might be asynchronously reported|"
    r"an illegal memory access was encountered|unspecified launch failure|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|"
    r"Cuda failure '(?P<nccl_cuda>[^']+)'|"
    # the CUDA driver API's error names (JAX, XLA, CuPy, Numba): "CUDA_ERROR_ILLEGAL_INSTRUCTION: an illegal
    # instruction was encountered", "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED" (its out-of-memory and
    # no-device codes are told apart above: _CUDA_OOM, _CUDA_SETUP)
    r"\bCUDA_ERROR_(?!OUT_OF_MEMORY\b)[A-Z_]+\b|"
    # a CUDA check macro's own line with the failed call's result by number, then its source place (the macro exits
    # or aborts the process after it): torch_memory_saver's "[torch_memory_saver.cpp] CUresult error  result=1
    # file=csrc/torch_memory_saver.cpp func=resume line=214" (newer: "CUresult error: 1 (invalid argument)  file=...
    # func=... line=..."; its runtime API twin "cudaError error: N (...)"), the CUDA samples' checkCudaErrors() ("CUDA
    # error at vectorAdd.cu:123 code=1(cudaErrorInvalidValue) \"cudaMemcpy(...)\"", the driver API's "checkCudaErrors()
    # Driver API error = 0700 \"...\" from file <x.cpp>, line 42"); their out-of-memory results: above (_CUDA_OOM)
    r"\b(?:CUresult|cudaError) error(?::[ \t]*|[ \t]+result=)\d+\b[^\n]*?\bfile=\S+[^\n]*?\bline=\d+|"
    r"\bCUDA error at \S+:\d+ code=\d+\((?:cuda|CUDA_ERROR_)\w+\)|"
    # the CUDA SDK's old CUDA_SAFE_CALL and its copies (the runtime's string after the call's place; the macro exits):
    # "Cuda error in file 'src/kernel.cu' in line 55 : an illegal memory access was encountered." (its out-of-memory:
    # _CUDA_OOM; its set-up errors, "invalid device ordinal": _CUDA_SETUP)
    r"\b(?:Cuda|CUDA) error in file '[^'\n]+' in line \d+ ?: \S|"
    r"\bcheckCudaErrors\(\) Driver API error = \d+\b|"
    # PyTorch 1.x (THC): "cuda runtime error (39) : uncorrectable ECC error encountered at .../x.cpp:265",
    # "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument"
    # (retyped or older: "cuda runtime error (59): device-side assert triggered", no space before the colon)
    r"cuda runtime error \(\d+\) ?: \S|THCudaCheck FAIL file=\S+ line=\d+ error=\d+ : \S|"
    # ROCm's HSA runtime on a GPU page fault (ROCR's default system event handler, which aborts the process after it):
    # "Memory access fault by GPU node-4 (Agent handle: 0x55d0c1a3e0b0) on address 0x7f2a3c000000. Reason: Page not
    # present or supervisor privilege." (node-N is the KFD topology node, not the device index)
    r"\bMemory access fault by GPU node-\d+ \(Agent handle: 0x[0-9a-fA-F]+\) on address (?:0x[0-9a-fA-F]+|\(nil\))\.|"
    # the kernel's amdgpu driver on the same fault, in a dmesg pasted with the job's output (gmc_v9_0.c, amdgpu_gmc.c:
    # "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32776, for process python3 pid
    # 172866 thread python3 pid 172866)", older "[gfxhub0] retry page fault (src_id:0 ...", "[mmhub0] no-retry page
    # fault")
    r"\bamdgpu\b[^\n]{0,40}?\[(?:gfx|mm)hub\d*\] (?:retry |no-retry )?page fault \(src_id:\d+|"
    # ROCm's HIP runtime (rocclr's rocdevice.cpp) on a queue's error, before it aborts: ":0:rocdevice.cpp :2984: 65456
    # us: [pid:196431 tid:0x7f23] Callback: Queue 0x7f2301400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_
    # VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29" (older:
    # "Device::callbackQueue aborting with error : ...")
    r"\b(?:Callback: Queue 0x[0-9a-fA-F]+|Device::callbackQueue) aborting with error : HSA_STATUS_ERROR_\w+|"
    # Intel GPUs' Level Zero driver (and the Unified Runtime over it, SYCL, oneCCL, PyTorch's XPU backend) on a device
    # that hung or was reset under the process: "ze error at zeCommandQueueSynchronize, code:
    # ZE_RESULT_ERROR_DEVICE_LOST"
    r"\b(?:ZE|UR)_RESULT_ERROR_DEVICE_LOST\b|"
    # PyTorch on ROCm's own words for the same errors (its CUDA checks hipified): "HIP error: invalid device function",
    # "HIP error: an illegal memory access was encountered", "HIP error: hipErrorNoBinaryForGpu: Unable to find code
    # object for all current devices!" (its out-of-memory is read above: _CUDA_OOM)
    r"^(?:[\w.]+Error: )?HIP error: \S|"
    # Ascend CANN's AI Core error, a kernel that faulted on the NPU (its EZ9999 block): "The error from
    # device(chipId:4, dieId:0), serial number is 2, there is an aivec error exception, core id is 11, ...", and the
    # runtime's "Aicore kernel execute failed, device_id=4, stream_id=450, ..., fault kernel_name=..."
    r"\b[Tt]he error from device\([Cc]hip[Ii]d:\d+, dieId:\d+\), serial number is \d+, there is an? "
    r"(?:ai(?:vec|core) error exception|exception of ai(?:vec|core) error)|"
    r"\bAicore kernel execute failed, device_id=\d+",
    re.MULTILINE)
_CUDA_HINT = "CUDA kernel errors might be asynchronously reported"
# a runtime's error message quoted inside a sentence of the writer's own: after a word of prose ("Known issue: on
# gfx90a, Memory access fault by GPU node-2 ...", "you may see \"CUDA error: an illegal memory access ...\""), opening
# the line in quotes, or in quotes after a colon ("see FAQ: 'The error from device(chipId:0, ...' means ..."): a
# failure only where the job did not go on past it (CrashLine.quoted). In quotes (triage.parsing.quoted): at any
# alternative of _CUDA_ERROR and _CUDA_OOM (by construction: the match's own start). After a bare word of prose:
# only the runtime messages that no runtime prints after a word of its own (_RUNTIME_WORDS), since a runtime's own
# lines put words before the others ("NCCL WARN Cuda failure 'out of memory'", "rank 5 ran out of memory", "cuMemAlloc
# failed with CUDA_ERROR_OUT_OF_MEMORY"): those stay the failure they say. A single word before them is a handler's or
# a logger's head, no sentence ("Caught CUDA error: an illegal memory access was encountered", "Error CUDA error:
# ..."): the process's own failure (a sticky one: the process cannot go on after it)
_RUNTIME_WORDS = ("CUDA error: ", "an illegal memory access was encountered", "unspecified launch failure",
                  "device-side assert triggered", "Memory access fault by GPU node-", "ZE_RESULT_ERROR_DEVICE_LOST",
                  "UR_RESULT_ERROR_DEVICE_LOST")
_AFTER_A_WORD = lazy_regex(r"\w[,;]?[ \t]+$")


def _in_prose(text: str, match: re.Match[str]) -> bool:
    """The runtime's words ``match`` found sit inside a sentence of the writer's own: in its quote
    (triage.parsing.quoted, the one answer), or after a word of it."""
    if in_quoted_prose(text, match.start()):
        return True
    return match.group(0).startswith(_RUNTIME_WORDS) and _AFTER_A_WORD.search(text, 0, match.start()) is not None \
        and len(text[:match.start()].split()) > 1


_THC_PRINT = "THCudaCheck FAIL file="
# A GPU runtime that found no code object for this GPU's architecture in the build (peers.NO_BINARY_NOTE): HIP's
# "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!" (ROCm 4.0's rocclr:
# "hip_code_object.cpp:120: guarantee(false && "hipErrorNoBinaryForGpu: Coudn't find binary for current devices!")"),
# which the runtime prints itself before it aborts the process; PyTorch's "HIP error: hipErrorNoBinaryForGpu: ..." and
# CUDA's "CUDA error: no kernel image is available for execution on the device" (cudaErrorNoKernelImageForDevice, the
# driver's CUDA_ERROR_NO_BINARY_FOR_GPU), raised
_NO_BINARY = lazy_regex(r"\bhipErrorNoBinaryForG(?:pu|PU)\b|"
                        r"\bno kernel image is available for execution on the device\b|"
                        r"\b(?:CUDA_ERROR_NO_BINARY_FOR_GPU|cudaErrorNoKernelImageForDevice)\b")
_RAISED_GPU_ERROR = lazy_regex(r"\b(?:HIP|CUDA) error: ")
# the kernel's own assert, printed per thread before "device-side assert triggered" (which a paste may lack):
# "IndexKernel.cu:92: operator(): block: [68,0,0], thread: [32,0,0] Assertion `index >= ...` failed."
_KERNEL_ASSERT = lazy_regex(r"(?P<file>[\w.-]+\.cuh?):\d+: .{0,300}?\bAssertion (?P<what>.{1,400}?) failed\.")
# glibc's assert in a .cu file's host code is headed by the program's name ("vector_add: vector_add.cu:48: int main():
# Assertion `...' failed."); CUDA's __assertfail by the file, then the block and the thread: the host's is no kernel's
# (triage.parsing.fatal_ending reads it)
_HOST_HEAD = lazy_regex(r"[\w.+-]{1,60}: \S*")
_FATAL = lazy_regex(
    r"Fatal Python error: (?P<fpe>\w[\w ]*)|^Segmentation fault|\bSegmentation fault \(core dumped\)|"
    r"^Aborted(?: \(core dumped\))?$|\*\*\* (?P<glogsig>SIG[A-Z]+) \(@|"
    # the shell's message of a job's death quoted by its reporter in Markdown bold or a code span after a colon, inside
    # their own sentence ("MD run failed with following error: **Aborted (core dumped)** on GPU"; read only where the
    # words before the colon tell of a failure: triage.parsing.quoted.says_it_failed)
    r"(?<=: )(?P<mdmark>\*\*|__|`)(?P<mdsig>Aborted|Killed|Segmentation fault|Bus error|Floating point exception|"
    r"Illegal instruction)(?: \(core dumped\))?(?P=mdmark)|"
    # absl's failure signal handler (XLA, JAX, TensorFlow): "*** SIGABRT received at time=1700000000 on cpu 3 ***"
    r"\*\*\* (?P<abslsig>SIG[A-Z]+) received at time=|"
    # (gfortran's runtime puts the number first: "Program received signal 11 (SIGSEGV): Segmentation fault.")
    r"(?:received|caught|got) signal:? (?:\d{1,2} \()?(?P<signame>SIG[A-Z]+)|"
    # Intel Fortran's runtime, which ends the process: "forrtl: severe (174): SIGSEGV, segmentation fault occurred",
    # "forrtl: error (78): process killed (SIGTERM)", "forrtl: error (75): floating point exception", "forrtl:
    # error (65): floating invalid", "forrtl: severe (168): Program Exception - illegal instruction", "forrtl: error
    # (76): Abort trap signal" (its handler's word for SIGABRT: an abort() in the process, a failed assert's)
    r"^forrtl: (?:severe|error) \(\d+\): (?:(?P<forsig>SIG[A-Z]+)\b|[^(]*\((?P<forparen>SIG[A-Z]+)\)|"
    r"(?P<forfpe>floating )|.*?(?P<forill>illegal instruction)|(?P<forabrt>Abort trap signal))|"
    # Cray ALPS's record of an application's end under aprun: "Application 10036118 exit signals: Killed"
    r"^Application \d+ exit signals: (?P<alps>[A-Z][a-z]+(?: [a-z]+)*)|"
    # UCX's handler: "[host:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)"
    r"[Cc]aught signal (?P<ucxnum>\d+) \((?:Segmentation fault|Bus error|Aborted|Floating point|Illegal)|"
    # Open MPI's handler in a rank: "[host:21766] Signal: Segmentation fault (11)" (after "*** Process received
    # signal ***"; the next lines, "Signal code: ...", "Failing at address: ...", are its detail)
    r"(?:^|\] )Signal: (?:Segmentation fault|Bus error|Aborted|Floating point exception|Illegal instruction|"
    r"Killed) \((?P<ompinum>\d+)\)|"
    # the same handler's detail line alone, its head cut off the paste: "[host:3436928] Failing at address: 0xb8"
    # (opal/util/stacktrace.c prints it for SIGSEGV, SIGBUS, SIGFPE and SIGILL only; read as SIGSEGV, the usual one,
    # its note saying so; after its own Signal: line it is that line's detail: triage.load.logs.text)
    r"(?:^|\] )Failing at address: (?P<ompiaddr>0x[0-9a-fA-F]+|\(nil\))[ \t]*$|"
    r"Signal (?P<signum>\d+) \((?P<sigtorch>SIG[A-Z]+)\)(?: \(0x[0-9a-fA-F]+\))? received|"
    r"^(?P<c10sig>SIG[A-Z]+)\(\d+\), PID: \d+|"
    r"^Bus error(?: \(core dumped\))?$|^Killed$|exitcode\s*:\s*-(?P<exitsig>\d+)|"
    # the same message where the shell and libc speak another language: strsignal()'s words alone on a line
    # ("已杀死", "Getötet", "段错误 (核心已转储)"), the interactive shell's report of its killed foreground job
    r"^(?P<localsig>" + "|".join(sorted(LOCAL_SIGNAL_WORDS, key=len, reverse=True)) + r")"
    r"\s*(?:[(（][^)）]{1,40}[)）])?$|"
    # Julia's runtime's report of a signal that ends the process: "signal (11): Segmentation fault" (Julia 1.0-1.8),
    # "[1232240] signal 11 (2): Segmentation fault" (1.9 on: the pid first, the signal's code after its number), then
    # "in expression starting at ..." and the native backtrace
    r"^(?:\[\d+\] )?signal \(?(?P<julianum>\d{1,2})\)?(?: \(\d+\))?: (?:Segmentation fault|Bus error|Aborted|"
    r"Floating point exception|Illegal instruction)|"
    # the shell's job message glued after a progress bar that had no line end ("... 3.37s/it]Killed")
    r"(?<=[\]|])(?:Killed|Aborted \(core dumped\)|Bus error \(core dumped\))$|"
    # a DataLoader worker's SIGBUS handler (shared memory too small): the rank's loader dies with it
    r"(?P<loaderbus>Unexpected bus error encountered in worker)|"
    # a process's own report of its death, printed by the signal handler of PSM-style fabric libraries (libfabric's
    # providers, Intel's PSM2): "python:699378 terminated with signal 6 at PC=7f8740a96a7c SP=7ffe9c925f50.  Backtrace:"
    r"^[\w.+-]{1,255}:\d+ terminated with signal (?P<psmnum>\d+) at PC=|"
    # IQ-TREE's handler (funcAbort), which names the signal in its own capitals before it exits: "ERROR: *** IQ-TREE
    # CRASHES WITH SIGNAL SEGMENTATION FAULT" (also ABORTED, ERRONEOUS NUMERIC, ILLEGAL INSTRUCTION, BUS ERROR)
    r"\*\*\* [\w.+-]{1,40} CRASHES WITH SIGNAL (?P<capsig>ABORTED|ERRONEOUS NUMERIC|ILLEGAL INSTRUCTION|"
    r"SEGMENTATION FAULT|BUS ERROR)\b|"
    # a memory allocator's own fatal heap check, which aborts the process itself (the shell's "Aborted" line may be
    # missing from a paste): glibc's "free(): invalid pointer", "double free or corruption (!prev)", "munmap_chunk():
    # invalid pointer", "malloc(): corrupted top size", "corrupted size vs. prev_size", "free(): double free detected
    # in tcache 2", older glibc's "*** Error in `python': double free or corruption (out): 0x... ***", and tcmalloc's
    # "src/tcmalloc.cc:283] Attempt to free invalid pointer 0x55a1d0d57740"
    r"^(?P<heap>(?:\*\*\* Error in `[^`\n]{1,300}': )?(?:(?:free|munmap_chunk|malloc|realloc|calloc|"
    r"malloc_consolidate|_int_free|_int_malloc)\(\): (?:invalid|double free|corrupted|memory corruption|unaligned)|"
    r"double free or corruption \(|corrupted size vs\. prev_size|corrupted double-linked list)|"
    r"(?:src/)?tcmalloc\.cc:\d+\] Attempt to free invalid pointer)|"
    # a tool's record that its child process ended with a negative code, the signal that killed it (DIGITS: "ERROR:
    # error code -9"): the code alone at the line's end, a signal's number
    r"^(?:ERROR:? )?(?:[Ee]rror|[Ee]xit) code:? -(?P<codesig>[4-9]|11|15)$")
# (its type's closing quote and the "what():" line may be cut from a paste: the type to the line's end)
_TERMINATE = lazy_regex(r"terminate called after throwing an instance of '(?P<what>[^'\n]+)(?:'|[ \t]*$)|"
                        r"terminate called without an active exception")
_NET = lazy_regex(
    r"ncclRemoteError|ncclSystemError|remote process exited or there was a network error|"
    r"socketProgressOpt|socketPollConnect|Connection reset by peer|Connection closed by (?:remote )?peer|"
    r"Connection refused|Broken pipe|NET/IB ?: ?Got completion from peer|NET/IB : .*(?:error|failed)|"
    r"NET/Socket ?: .*(?:error|failed|closed)|DistNetworkError|unhandled system error|"
    # the AWS OFI plugin's (libfabric: EFA) own failures, the NET/IB lines' kin: "NET/OFI Couldn't open AV. RC: -22,
    # ERROR: Invalid argument", "NET/OFI Couldn't enable endpoint. RC: -12, ERROR: Cannot allocate memory"
    r"NET/OFI .*(?:Couldn't|[Ff]ailed|ERROR:)|"
    r"Connection timed out|No route to host|ibv_\w+ failed|ECONNRESET|ETIMEDOUT|"
    # gRPC's own words for a peer it cannot reach (TensorFlow's and JAX's collectives and coordination service, Ray):
    # "UNAVAILABLE: failed to connect to all addresses", "UNAVAILABLE: Socket closed", "... Stream removed"
    r"\bfailed to connect to all addresses\b|\bUNAVAILABLE: (?:Socket closed|Stream removed|Connection reset)\b|"
    # XLA's remote TPU driver (the `tpu_driver` backend of JAX, TensorFlow and torch_xla on a TPU Node or a Colab TPU)
    # that could not open its gRPC session to the TPU host (grpc_tpu_driver.cc): "Failed to connect to remote server at
    # address: grpc://10.92.96.58:8470. Error from gRPC: Deadline Exceeded. Details: ", and its own log line of it,
    # "Failed to open the gRPC driver: 4: Deadline Exceeded: "
    r"\bFailed to connect to remote server at address: |\bFailed to open the gRPC driver: |"
    # Ascend HCCL's link set-up that timed out (EI0006, "Getting socket times out. Reason: ..."; its CANN log's "wait
    # socket establish timeout"): the peer never answered the connection (dead, late, or the link is down)
    r"\bEI0006:\s.{0,120}?Getting socket times out\.|\bwait socket establish timeout\b|"
    # a socket call's errno by its name, in any framework's words (TensorPipe: "ECONNREFUSED: connection refused",
    # libuv, gRPC, gloo): the name alone is a network failure; "connect() failed" with the peer it could not reach
    r"\bE(?:CONNREFUSED|CONNABORTED|PIPE|HOSTUNREACH|NETUNREACH)\b|\bconnect\(\) failed\b|"
    r"Call to (?:recv|connect|send) .*(?:failed|closed)|Call to connect returned|"
    # NCCL's transport set-up: "socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused ..."
    r"socketStartConnect|Connect to \S+ failed|Software caused connection abort|"
    # a client that cannot reach the c10d store or rendezvous ("... while trying to connect to (host, 29500)")
    r"client socket has timed out|trying to connect to|connect\(\) timed out|host not found|"
    # the c10d store's own words (DistStoreError: "Failed to connect to master:29500 after 300 seconds"), a client's
    # "failed to connect to [host]:29500 (errno: 99 - Cannot assign requested address)"
    r"[Ff]ailed to connect to \[?[\w.:-]+\]?:\d{2,5}\b|"
    r"Name or service not known|RendezvousConnectionError|"
    r"Bootstrap ?: ?no socket interface found|no socket interface found|NET/OFI .*(?:Error|UNDELIVERABLE)|"
    # gloo could not connect its mesh of pairs at set-up ("Gloo connectFullMesh failed with [...pair.cc:144] ...")
    r"connectFullMesh failed|"
    # gloo's TCP pair on its connection to the peer (gloo/transport/tcp/pair.cc, pair.h, GLOO_ERROR_MSG's "[FILE:LINE]"
    # head): "address family mismatch" (the two ends' addresses of different families: IPv4 against IPv6, at set-up),
    # "Connect timeout [10.0.0.2]:5678", "Socket closed [...]" / "Socket unexpectedly closed [...]" (the peer's end
    # gone), "Read error [...]: <strerror>", "writev [...]: <strerror>"; its "Read timeout"/"Write timeout" (a peer
    # that did not send or read in time, a hang elsewhere as often) are not read here
    r"\bgloo/transport/tcp/(?:tls/)?pair\.(?:cc|h):\d+\] (?:address family mismatch|Connect timeout|"
    r"Socket (?:unexpectedly )?closed|Read error|writev)\b|"
    # ssh's own word that the node at the other end dropped the session ("Connection to c443-131 closed by remote
    # host."), and MPICH Hydra's lost proxy on a node ("control_cb (pmiserv_cb.c:864): connection to proxy 2 at host
    # c443-131 failed"): the launcher lost its connection to that node
    r"\bConnection to [\w.:-]+ closed by remote host\b|\bconnection to proxy \d+ at host [\w.-]+ failed\b|"
    # GASNet's AM layer (AMUDP, AMMPI) could not deliver a message and made it fatal ("An active message was returned
    # to sender, ... Error Code: ECONGESTION: Congestion at destination endpoint" / "EUNREACHABLE: Destination
    # endpoint unreachable"); its other codes (EBADHANDLER, EBADTAG, ...) are the program's own error
    r"\bError Code: E(?:CONGESTION|UNREACHABLE)\b|"
    # the c10d store's server socket could not bind its port, another process holds it ("The server socket has failed
    # to listen on any local network address ... (errno: 98 - Address already in use)", "name: EADDRINUSE")
    r"failed to listen on any local network address|Address already in use|EADDRINUSE|"
    # NCCL's shared-memory transport at set-up, /dev/shm too small (a container's 64 MB): "Error while creating shared
    # memory segment /dev/shm/nccl-XXXX (size N)", "failed to extend /dev/shm/nccl-...", "posix_fallocate failed"
    r"shared memory segment|failed to extend /dev/shm|posix_fallocate failed|ncclShmOpen|"
    # a launcher that could not reach a node: DeepSpeed's runner ("... but host=node2 was not reachable via ssh"),
    # pdsh ("pdsh@node0: node2: ssh exited with exit code 255")
    r"not reachable via ssh|ssh exited with exit code 255|"
    # an InfiniBand/RoCE completion the transport gave up on, as UCX logs it before making it fatal ("[host:pid:0:tid]
    # ib_mlx5_log.c:177  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)", "RNR retry
    # count exceeded"), or as verbs names it (IBV_WC_RETRY_EXC_ERR), and UCX's frame for it in its fatal backtrace
    r"(?:[Tt]ransport|RNR) retry count(?:er)? exceeded|IBV_WC_(?:RNR_)?RETRY_EXC_ERR|uct_ib_mlx5_completion_with_err|"
    # libfabric's own log line ("libfabric:PID:TIME:PREFIX:PROVIDER:SUBSYS:FUNC():LINE<LEVEL> message", FI_LOG_LEVEL;
    # its highest level is warn) where a provider reports a peer it lost or a transfer it gave up on: EFA's "The peer
    # of address A becomes unresponsive", "EFA provider internal txe failure err: 113, message: Unreachable remote -
    # never received a response (15)"; its other warnings (set-up probes, an ignored packet) are no failure
    # (before 1.14 no time, before its log prefix no prefix field)
    r"\blibfabric:\d+:(?:\d+:)?(?:[^:\n]{0,64}:)?[\w;]{1,64}:\w{1,16}:\w{1,128}\(\):\d+<warn> [^\n]{0,300}?"
    r"(?:[Uu]nreachable|[Uu]nresponsive|retry count(?:er)? exceeded|[Cc]onnection (?:was )?reset|"
    r"internal [rt]xe failure|[Pp]eer aborted|[Oo]peration aborted because the peer)|"
    # UCX's own ERROR-level lines ("[ts] [host:pid:0]  ucp_listener.c:122  UCX  ERROR ...") when a connection could not
    # be set up or was lost: "connection request failed on listener 0x... with status Destination is unreachable", "no
    # active messages transport to <no debug data>: tcp/eno1 - no peer failure handler, ...", "received event
    # RDMA_CM_EVENT_UNREACHABLE", "Connection reset by remote peer", "Endpoint timeout"; (its other ERROR lines, a CUDA
    # call's or a memory registration's, are no network failure)
    r"\bUCX\s+ERROR\b.{0,300}?(?:Destination is unreachable|no active messages transport|Endpoint timeout|"
    r"Connection reset by remote peer|RDMA_CM_EVENT_(?:UNREACHABLE|REJECTED|CONNECT_ERROR|ADDR_ERROR|ROUTE_ERROR))")
_NCCL = lazy_regex(r"ncclInternalError|ncclInvalidUsage|ncclInvalidArgument|ncclUnhandledCudaError|"
                   r"NCCL error in:|NCCL Error \d|ncclCommInitRank failed|"
                   # other frameworks' words for a failed NCCL call: XLA's and JAX's "NCCL operation
                   # ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error", Paddle's "NCCL error(1)",
                   # DeepSpeed's and Horovod's "NCCL error", NCCL's result codes by name ("NCCL_ERROR_...")
                   # (the bare words only in a message's shape, a code or a colon or comma after them: a reporter's "it
                   # crashes with an NCCL error during ..." is no failure line)
                   r"NCCL operation \w+\(.{0,200}?\) failed|\bN[Cc][Cc][Ll] [Ee]rror(?: ?\(?-?\d+\)?)?[:,]|"
                   r"\bNCCL [Ee]rror \d+\b|\bNCCL_ERROR\w*|"
                   # a wrapper's own words for a failed NCCL call: "ncclAllReduce failed: invalid usage" (Horovod)
                   r"\bnccl[A-Z]\w*(?:\([^()]{0,200}\))? failed\b|"
                   # the NCCLCHECK macro of CUDA's samples, copied into libraries and tests: "Failed, NCCL error
                   # userbuffers-host.cpp:223 ''" (Transformer Engine), "Failed, NCCL error plugin.cpp:86 'internal
                   # error ...'" (TensorRT-LLM), "Test NCCL failure common.cu:958 'invalid usage'" (nccl-tests): the
                   # file and line of the call, then NCCL's result string, quoted (empty where the library did not say)
                   r"(?:\bFailed, NCCL error|\bTest NCCL failure) [\w./-]+:\d+ '|"
                   # a library's own check macro on an NCCL call's result, the call's source place then the result by
                   # number or NCCL's string (it exits the process after it): FastMoE's and its kin's NCCL_SAFE_CALL
                   # "NCCL Error at .../global_exchange.cpp:16 value 4", NCCL's examples' "Failed: NCCL error
                   # main.cu:42 'invalid usage'" and their copies' "NCCL error main.cu:42: unhandled system error"
                   r"\bNCCL [Ee]rror(?: at)? [\w./-]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp):\d+\b|"
                   # a CHECK macro on an NCCL call's result (Caffe's, glog's): "Check failed: result == ncclSuccess
                   # (1 vs. 0) unhandled cuda error", the result's number then NCCL's string (a Markdown paste may wrap
                   # words in emphasis underscores: "_Check_ failed"), at the line's start: never a sentence quoting it
                   r"^_?Check_? failed: [^\n]{0,120}?(?:== ?ncclSuccess \(-?\d+ vs\. 0\)|"
                   r"ncclSuccess ?== ?[^\n(]{1,60}\(0 vs\. -?\d+\))")
# Lines that are consequences of a failure elsewhere (or of the launcher's teardown).
_COLLATERAL = lazy_regex(
    r"Watchdog caught collective operation timeout|NCCL communicator was aborted|"
    r"Some NCCL operations have failed or timed out|ChildFailedError|SignalException|"
    r"RendezvousClosedError|Process \d+ exited with|KeyboardInterrupt|"
    r"Connection reset by peer|Connection closed by (?:remote )?peer|Broken pipe|remote process exited|"
    r"Connection refused|because the remote worker|Socket Timeout|has been aborted|"
    r"received signal SIGTERM|got signal: 15|Terminated$|"
    r"Timeout at NCCL work|Timeout waiting for key|Timed out waiting|wait timeout after|"
    # gloo's TCP pair closed on the same timeout (its words for a send or recv that a peer never joined)
    r"Application timeout caused pair closure|"
    # torch_npu's device synchronize failing on the runtime's task timeout (107020: "rtDeviceSynchronize execute
    # failed, reason=[task timeout]", "runtime result = 107020"): the carrier of a device task that never completed,
    # an HCCL collective's as a rule ("hccl fftsplus task timeout occurred", read as that timeout)
    r"npuSynchronizeDevice:.{0,200}?error code is 107020\b|"
    r"heartbeat monitor|collective operation timeout|"
    r"failed to pass monitoredBarrier|received errors while waiting for send/recv|"
    # Ray's driver told that an actor's worker process died (the death itself is Ray's own record)
    r"ActorDiedError|actor died unexpectedly|"
    # Horovod's and vLLM's words for a failure elsewhere: "Horovod has been shut down. This was caused by an exception
    # on one of the ranks ...", "EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root
    # cause", "Engine core initialization failed. See root cause above."
    r"Horovod has been shut down|EngineDeadError|See root cause above|"
    # vLLM's executor, of workers that did not answer in time: a stall of the model's forward (read as such by
    # triage.parsing.watchdog), no failure of the engine core's own
    r"RPC call to \w+ timed out\.", re.IGNORECASE)
_RAY_HOST_MEMORY = lazy_regex(r"^Task was killed due to the node running low on memory")
# Ray's driver, of a task whose worker process died while it ran it (python/ray/exceptions.py, WorkerCrashedError:
# "The worker died unexpectedly while executing this task. Check python-core-worker-*.log files for more
# information."): the process died (a signal, a native crash), it raised nothing; which process, the line does not say
_RAY_WORKER_CRASHED = lazy_regex(r"(?:\bWorkerCrashedError\b(?:\([^)\n]*\))?:\s*|^)The worker died unexpectedly while "
                                 r"executing this task\b")
RAY_WORKER_CRASHED = ("a Ray worker process died while it ran a task (Ray's WorkerCrashedError: a signal or a native "
                      "crash ended it; the raylet's log on its node says which)")
_GPU = lazy_regex(r"\bcuda:(\d+)\b|GPU (\d+)(?: has a total capacity|;)|\bdevice (\d+)\b")
_SIGNUMS = {"4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE", "9": "SIGKILL", "11": "SIGSEGV",
            "15": "SIGTERM"}
_FPE_SIGNALS = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
                "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL"}
# A DataLoader worker a signal ended, as the rank's loader tells it ("RuntimeError: DataLoader worker (pid 108439)
# is killed by signal: Killed."): the signal's strsignal() name, not the RuntimeError, is the failure
_LOADER_KILLED = lazy_regex(r"DataLoader worker \(pid\(?s?\)?\s*[\d, ]+\) is killed by signal: "
                            r"(?P<name>[A-Z][a-z]+(?: [a-z]+)*)")
_STRSIGNAL = {**_FPE_SIGNALS, "Killed": "SIGKILL", "Terminated": "SIGTERM", "Interrupt": "SIGINT"}
# A CUDA error at device selection that says this process has no GPU with that index, or none at all ("CUDA error:
# invalid device ordinal", "cuda runtime error (10) : invalid device ordinal", retyped in lower case too), that no GPU
# would take it (cudaErrorDevicesUnavailable: "all CUDA-capable devices are busy or unavailable", CUDA 11.x on
# "CUDA-capable device(s) is/are busy or unavailable": a GPU in Exclusive Process mode another process holds), or
# that the driver is older than the runtime ("CUDA driver version is insufficient for CUDA runtime version"): the
# launch's configuration or the host's set-up, raised before any kernel ran, not a fault of a GPU (the note after it:
# triage.parsing.peers.cuda_setup_note)
_CUDA_SETUP = lazy_regex(r"invalid device ordinal|no CUDA-capable device is detected|"
                         r"CUDA-capable device(?:s are|\(s\) is/are) busy or unavailable|"
                         r"CUDA driver version is insufficient for CUDA runtime version|"
                         # (cudaErrorTooManyPeers, 60: more devices asked to map each other's memory than a
                         # peer-to-peer group allows, at a multi-GPU set-up: peers.CUDA_PEERS_NOTE)
                         r"peer mapping resources exhausted|"
                         r"\bCUDA_ERROR_(?:NO_DEVICE|INVALID_DEVICE|DEVICE_UNAVAILABLE|TOO_MANY_PEERS)\b|"
                         r"\bcudaError(?:NoDevice|InvalidDevice|DevicesUnavailable|InsufficientDriver|TooManyPeers)\b",
                         re.IGNORECASE)
# torch's own words for the same errors at CUDA's start, raised as an exception (c10/cuda/CUDAFunctions.cpp's
# device_count_ensure_non_zero: "No CUDA GPUs are available"; its device_count_impl and torch/cuda/__init__.py's
# _check_driver: "Found no NVIDIA driver on your system. ...", "The NVIDIA driver on your system is too old (found
# version 10010). ..."): read on an exception's line only ("INFO: No CUDA GPUs are available, using CPU" is no failure)
_TORCH_CUDA_START = lazy_regex(r"\bNo CUDA GPUs are available\b|\bFound no NVIDIA driver on your system\b|"
                               r"\bThe NVIDIA driver on your system is too old \(found version \d+\)")
# A framework's probe for GPUs that logs CUDA's error and goes on without them: torch's device_count()
# (c10/cuda/CUDAFunctions.cpp: TORCH_WARN("CUDA initialization: ", ...), then 0 GPUs: "UserWarning: CUDA
# initialization: ... all CUDA-capable devices are busy or unavailable"), TensorFlow's GpuDriver::Init
# (stream_executor's cuda_driver.cc: LOG(ERROR) << "failed call to cuInit: " ..., then the CPU): a failure only where
# the job did not go on past it (CrashLine.quoted)
_CUDA_PROBE = lazy_regex(r"\bCUDA initialization: |\bfailed call to cuInit: ")
# A backend that lacks the collective the job calls ("ProcessGroupNCCL does not support scatter", "Backend gloo does
# not support reduce_scatter"): every rank that calls it raises it; told even when quoted in a sentence
_BACKEND_LACKS = lazy_regex(r"\b(?:ProcessGroup\w+|[Bb]ackend \w+) does not support \w+")
# DDP's check at construction that every rank holds the same model (torch/csrc/distributed/c10d/comm.cpp,
# verify_params_across_processes): "DDP expects same model across all ranks, but Rank 0 has 128 params, while rank 1
# has inconsistent 0 params.", "params[3] in this process with sizes [64, 3] appears not to match sizes of the same
# param in process 0." Raised (a RuntimeError) on the ranks, never logged: told without its type (an issue's title, a
# retyped message) it is still that exception; the ranks it names are the compared ones, not a culprit
# The same for DDP's reducer in the backward pass (torch/csrc/distributed/c10d/reducer.cpp, REDUCER_CHECK, raised as a
# RuntimeError on the ranks): "Expected to have finished reduction in the prior iteration before starting a new one.
# This error indicates ..." (parameters that got no gradient), "Expected to mark a variable ready only once. This error
# is caused by ..." (a parameter's hook fired twice: reentrant checkpoints, shared parameters): torch's own words, a
# paste's body without its head. (Its next line, "Parameter at index 328 ... has been marked as ready twice.", and its
# static graph's "Your training graph has changed ..." hold no word of the line reader's gate, MARKERS: read with the
# head only)
_DDP_CHECK = lazy_regex(r"DDP expects same model across all ranks|"
                        r"\bparams\[\d+\] in this process with (?:sizes|strides) .{1,200}? appears not to match "
                        r"(?:sizes|strides) of the same param in process \d+|"
                        r"\bExpected to have finished reduction in the prior iteration before starting a new one\b|"
                        r"\bExpected to mark a variable ready only once\b")
# Exception types that are a launcher's or a wrapper's, not the rank's own failure.
# (the SageMaker SDK's UnexpectedStatusException is its client's word that the training job failed: "Error for Training
# job NAME: Failed. Reason: AlgorithmError: ...", the job's own failure quoted after it)
_NOT_A_RANK_FAILURE = ("ChildFailedError", "SignalException", "RendezvousClosedError", "KeyboardInterrupt",
                       "SystemExit", "CalledProcessError", "ProcessRaisedException", "ProcessExitedException",
                       "UnexpectedStatusException")


def _gpu(text: str) -> int | None:
    match = _GPU.search(text)
    if match is None:
        return None
    return int(next(g for g in match.groups() if g is not None))


# A C++ logging head that says nothing about the failure: "[E1001 10:00:00.123 1234 ProcessGroupNCCL.cpp:616] ".
# (and a Markdown quote marker after it: a quoted paste shown in a viewer that numbers its lines, "[80000] > ...")
_BARE_NUMBER = lazy_regex(r"^\[\d{2,}\] (?:>[ \t]?)*(?=\S)")
_LOG_HEAD = lazy_regex(r"^\[[IWEF]\d{0,4}(?: [\d:.]+)?(?: \d+)? ?[\w./-]+\.(?:cpp|cc|cu|h|hpp|py):\d+\]\s*")
# an exception line the reporter pasted inside quotes: '"RuntimeError: Expected to have finished reduction ..."'
_QUOTED_EXC = lazy_regex(r"^[\"\u201c'](?=(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception):)")
# an exception line the reporter quoted at the end of a sentence of their own, after a colon (ASCII or full-width):
# "... but get a: TypeError: __init__() got an unexpected keyword argument ...", "会报错：ValueError: ..."; read only
# when nothing else in the line is a failure, and not after a logger's own words for what it shrugs off. Also after a
# verb of the error's coming without the colon ("After running run.sh, error appears RuntimeError: use_libuv was
# requested ...", "training stops and throws ValueError: ...", "then I got OSError: [Errno 12] Cannot allocate memory"),
# where the writer's sentence does not go on after it ("but got KeyError: 'RANK' as follows. How can I fix this?": the
# traceback below holds the line itself)
_SENTENCE_EXC = lazy_regex(r"(?:[:\uff1a]|\b(?:appears?|appeared|occurs?|occurred|happens?|happened|got|gets?|getting|"
                           r"throws?|threw|thrown|raises?|raised)\b(?![^\n]*(?:\?|\bas (?:follows|below|shown)\b)))\s*"
                           r"(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*)$")
_SHRUGGED = lazy_regex(r"\b(?:warn(?:ing)?|info|debug|retry(?:ing)?|ignor(?:e|ed|ing)|skipp(?:ed|ing))\b",
                       re.IGNORECASE)
# the c10d store's port taken, told in the reporter's own words ("this exception for the second command: Address
# already in use"): no other failure is told in those words
_PORT_TAKEN = lazy_regex(r"Address already in use|EADDRINUSE")


# (not a banner of stars, absl's "*** SIGABRT received at ... ***", whose inside begins and ends with one more)
_MARKDOWN_BOLD = lazy_regex(r"(?P<mark>\*\*|__)(?P<inner>[^\s*_](?:.*[^\s*_])?)(?P=mark)")


# the shell's message of its job's death alone after a shell prompt's "$" that the reporter's paste kept, as before
# the command they ran ("$ ./gemma --model 2b-it" then "$  Killed"): the message, not a command typed at the prompt
_PROMPTED_JOB_MESSAGE = lazy_regex(r"^\$\s+(?P<msg>(?:Killed|Aborted|Segmentation fault|Bus error|"
                                   r"Floating point exception|Illegal instruction)(?: \(core dumped\))?)$")


def _cleaned(line: str) -> str | None:
    """The line's message without a C++ logging head, a viewer's line number, a reporter's quotes or a pasted prompt
    before the shell's message of a job's death."""
    # (a viewer's bare line number, "[80746] ", on a paste too short to tell it is one)
    text = _LOG_HEAD.sub("", _BARE_NUMBER.sub("", line.strip(), count=1), count=1)
    if _QUOTED_EXC.match(text):
        text = text[1:].rstrip("\"\u201d'")
    if text[:2] in ("**", "__") and (bold := _MARKDOWN_BOLD.fullmatch(text)) is not None:
        text = bold.group("inner").strip()     # a reporter's Markdown bold around the whole line ("**Killed**")
    if text[:1] == "$" and (prompted := _PROMPTED_JOB_MESSAGE.match(text)) is not None:
        text = prompted.group("msg")
    return text if text and len(text) <= 20000 else None


def parse_crash_line(line: str) -> CrashLine | None:
    """The failure a line reports, or None. ``line`` has no launcher prefix. Never raises."""
    fatal_glog = _GLOG_FATAL.match(line.strip()) is not None
    text = _cleaned(line)
    if text is None or is_advice(text):
        return None            # (a troubleshooting bullet's supposed failure: triage.parsing.quoted)
    if (loader := _LOADER_KILLED_GATED.search(text)) is not None and (sig := _STRSIGNAL.get(loader.group("name"))):
        return CrashLine(CrashLineKind.FATAL_SIGNAL, f"a DataLoader worker was killed by {sig}: {text}"[:400],
                         signal=sig, collateral=sig in ("SIGTERM", "SIGINT"))
    if fatal_glog:     # ProcessGroupNCCL giving up on the process (its heartbeat monitor): a consequence
        return CrashLine(CrashLineKind.FATAL_SIGNAL, text[:400], signal="SIGABRT", collateral=True)
    if "Check fail" in line or "] " in line:
        found = _check_line(line.strip())
        if found is not None:
            return found
    if (launch := launch_failure(text)) is not None:     # a launcher that could not start the program
        return CrashLine(CrashLineKind.EXCEPTION, launch)
    if ": error: " in text and (usage := _ARGPARSE_ERROR.match(text)) is not None:
        return CrashLine(CrashLineKind.EXCEPTION, f"{usage.group('prog')} refused its command line and exited with "
                         f"argparse's code 2 (no training step ran): {text}"[:400], "SystemExit")
    if "ASSERT '" in text and (native := _NATIVE_ASSERT.search(text)) is not None:
        said = f"assertion '{native.group('expr')}' failed at {native.group('file')}:{native.group('line')}"
        return CrashLine(CrashLineKind.FATAL_SIGNAL, f"{said} ({native.group('msg').strip() or 'no message'}; a "
                         f"library's own ASSERT, which aborts the process): {text}"[:400], signal="SIGABRT")
    if ("CCL_" in text or "ATL" in text) and (atl := atl_failure(text)) is not None:
        # oneCCL's transport at start-up (triage.parsing.oneccl); a failure only where the job did not go on past it
        # (CrashLine.quoted: a run that trained to its end after the line opened another provider)
        return CrashLine(CrashLineKind.NETWORK, atl[:400], quoted=True)
    if "OutOfMemoryError" in text and (ray := ray_oom(text)) is not None:
        # Ray's memory monitor's kill, or Ray's wrapper naming only the class (triage.parsing.ray_errors): the wrapper
        # retells the cause, whose own line, where the paste has it, is the failure
        said = f"{RAY_KILLED}: {text}" if ray == "ray" else f"{RAY_KILLED}{RAY_WRAPPED_NOTE}: {text.split(' (pid=')[0]}"
        return CrashLine(CrashLineKind.FATAL_SIGNAL, said[:400], "ray.exceptions.OutOfMemoryError", signal="SIGKILL",
                         collateral=ray == "wrapped")
    if "died unexpectedly while executing" in text and _RAY_WORKER_CRASHED.search(text) is not None:
        return CrashLine(CrashLineKind.FATAL_SIGNAL, f"{RAY_WORKER_CRASHED}: {text}"[:400],
                         "ray.exceptions.WorkerCrashedError")
    # (torchrun's summary title glued to the child's own exception: that exception, of no rank the line names)
    if "ChildFailedError" in text and (child := _CHILD_FAILED_GLUED.search(text)) is not None \
            and (crash := parse_crash_line(child.group("exc"))) is not None:
        return replace(crash, text=f"{crash.text[:300]} (the child's exception after torchrun's summary "
                                   f"'{child.group('entry')[:60]} FAILED')")
    collateral = _COLLATERAL_GATED.holds(text)
    said = text      # the peer a line names is read from it as given (a CJK sentence before it too), when needed
    exc = _EXC.match(text)
    if exc is None and (glued := _CJK_GLUED_EXC_GATED.search(text)) is not None:
        text = text[glued.end():]        # a sentence in CJK punctuation, the exception pasted after it
        exc = _EXC.match(text)
    if (check := _SIZE_CHECK_GATED.search(text)) is not None:
        return _size_check_line(text, check, exc, peer_of(said))
    if exc is not None and not text.startswith(("Traceback", "Error executing job")):
        if _METRIC_VALUE.match(exc.group("msg") or "") is not None and _METRIC_NAME.fullmatch(exc.group("type")):
            return None       # a metric named "...Error" and its value ("eval.Error: 0.3912"): no exception
        return _exception_line(text, exc, collateral, said)
    if ("error" in text or "failed, " in text) and (line_error := pydantic_line_error(text)) is not None:
        return line_error
    if (term := _TERMINATE_GATED.search(text)) is not None:
        return _terminate_line(text, term, collateral, said)
    if text.startswith("what():") and text[7:].strip():
        return _what_line(text, collateral, said)
    if (fatal := _FATAL_GATED.search(text)) is not None and (read := _fatal_line(text, fatal, collateral)) is not None:
        return read
    return _plain_line(text, collateral, said)


# NCCL's net transports check each send against the receive its peer posted ("NET/IB : req 0/1 tag 7 peer
# 10.0.0.2<51870> collective mismatch error, local size 4194304 remote size 2097152", NET/Socket and plugins alike):
# the two ranks called collectives of different sizes (or different collectives), an error of the callers, never the
# network's, whatever exception carries it ("invalid usage", "Last error:")
_SIZE_CHECK = lazy_regex(r"collective mismatch error,? local size (?P<local>\d+),? remote size (?P<remote>\d+)")
SIZE_CHECK_TEXT = "NCCL's size check: a collective mismatch between ranks"
_SIZE_NOTED = lazy_regex(r"this rank sent (?P<local>\d+) bytes where .{0,80}? a receive of (?P<remote>\d+)")


def size_check_sizes(text: str) -> tuple[int, int] | None:
    """The sizes (bytes) of NCCL's size check in ``text``: this rank's send, and the receive its peer posted."""
    found = _SIZE_CHECK.search(text) or _SIZE_NOTED.search(text)
    return (int(found.group("local")), int(found.group("remote"))) if found else None


def _size_check_line(text: str, check: re.Match[str], exc: re.Match[str] | None, peer_addr: str | None) -> CrashLine:
    local, remote = check.group("local"), check.group("remote")
    to = f"its peer {peer_addr}" if peer_addr else "its peer"
    note = (f"{SIZE_CHECK_TEXT} (this rank sent {local} bytes where {to} had posted a receive of {remote}: the ranks "
            "called collectives of different sizes, or different collectives, at the same point; not a network "
            "failure)")
    exc_type = exc.group("type") if exc is not None and not text.startswith("Traceback") else None
    return CrashLine(CrashLineKind.NCCL_ERROR, f"{note}: {text}"[:600], exc_type, peer=peer_addr)


# NCCL's proxy service thread failed an operation it ran for a rank of its node ("[Proxy Service 10] Failed to execute
# operation Connect from rank 14, retcode 6"; proxy.cc): the owner's rank and the asking rank are the communicator's,
# the return code NCCL's result (6: ncclRemoteError, 2: ncclSystemError: the network or a peer; 1: a CUDA error)
PROXY_FAILED = lazy_regex(r"\[Proxy Service (?P<owner>\d+)\] Failed to execute operation (?P<op>\w+) from rank "
                          r"(?P<rank>\d+), retcode (?P<code>\d+)")
_NCCL_RESULTS = {"1": "ncclUnhandledCudaError", "2": "ncclSystemError", "3": "ncclInternalError",
                 "4": "ncclInvalidArgument", "5": "ncclInvalidUsage", "6": "ncclRemoteError", "7": "ncclInProgress"}


# glog's (and absl's) FATAL level, which aborts the process after its line: "F1207 10:43:16.922251 3493939
# rpc_server.cpp:134] Check failed: kv_.emplace(k, v).second" (glog, OneFlow, Paddle), "F0000 00:00:1700000000.123456
# 12345 nccl_utils.cc:90] Check failed: ..." (absl: XLA, JAX), "2023-01-10 12:00:00.123456: F
# tensorflow/core/framework/tensor_shape.cc:44] Check failed: NDIMS == dims()" (TensorFlow), bracketed or not
_GLOG_F = lazy_regex(r"^\[?F\d{4} [\d:.]+\s+(?P<tid>\d+) (?P<file>[\w./-]+:\d+)\]\s*(?P<msg>.*)$|"
                     r"^(?:\d{4}-\d\d-\d\d [\d:.]+: )?F (?P<tffile>[\w./-]+\.(?:cc|cpp|cu|h|hpp|c):\d+)\]\s*"
                     r"(?P<tfmsg>.*)$")
# what glog prints as a CHECK's abort begins, when the paste lost the FATAL line above it
_CHECK_TRACE = "*** Check failure stack trace: ***"
CHECK_TRACE_TEXT = "a CHECK failed (glog's '*** Check failure stack trace: ***'; its message is not in this input)"
CHECK_TRACE_HEAD = _CHECK_TRACE
# glog's FATAL head alone, as a cleaner may keep it apart from the message ("F1128 05:14:22.873390")
_GLOG_F_STAMP = lazy_regex(r"^\[?F\d{4} \d\d:\d\d:\d\d")


def glog_fatal_head(text: str) -> bool:
    """The text opens with glog's or absl's FATAL head (a LOG(FATAL) or a failed CHECK: the process aborts after it,
    and glog's "*** Check failure stack trace: ***" follows it)."""
    return text[:2].lstrip("[")[:1] == "F" and (_GLOG_F.match(text) is not None
                                                or _GLOG_F_STAMP.match(text) is not None)


# argparse's exit on a bad command line, of a launcher (torch.distributed's "launch.py: error: argument
# --nproc_per_node: invalid int value: ''") or of the program it starts: "PROG: error: argument X: ...", "... the
# following arguments are required: ...", "... invalid choice: ..." (exit code 2; the launcher's own starts no
# process). argparse's other refusals: "unrecognized arguments: X" (a mistyped option, "launch.py: error: unrecognized
# arguments: --master_porp=8890"), "ambiguous option: X could match ...", "one of the arguments X Y is required",
# "argument X: expected one argument". The refusal of the --local-rank argument a launcher passes is read with the
# launcher's argv (torchelastic.py: it names each local rank), so it is not taken here; Slurm's "srun: error: ..." is
# no argparse line.
_ARGPARSE_ERROR = lazy_regex(r"^(?P<prog>(?!srun\b|salloc\b|sbatch\b)[\w.-]{1,80}): error: "
                             r"(?:argument [-\w/ ,]{1,80}: |the following arguments are required: |"
                             r"argument [-\w/ ,]{1,80}: invalid choice: |unrecognized arguments: (?!.*--local[_-]rank)|"
                             r"ambiguous option: |one of the arguments (?=.{1,200} is required))\S")
# dmlc-core's logging (MXNet, XGBoost, ps-lite and BytePS): "[05:05:29] byteps/server/server.cc:52: Check failed:
# updates.merged.tensor init ..." (its LogMessageFatal, often behind the wrapper's own "[time] .../dmlc/logging.h:276: "
# head), then "Stack trace returned 9 entries:": a failed CHECK that ends the process (an uncaught dmlc::Error, or
# abort)
_DMLC_CHECK = lazy_regex(r"^(?:\[\d\d:\d\d:\d\d\] [\w./+-]+:\d+: )+(?P<msg>Check failed: .+)$")
# A native library's own assertion macro, which reports and aborts: Intel MLSL's "(4328):
# .../comms_ep.cpp:CommsAlloc:535: ASSERT 'ptr' FAILED: NULL pointer" (file, function, line, the expression in quotes)
_NATIVE_ASSERT = lazy_regex(r"(?P<file>[\w.-]+\.(?:c|cc|cpp|cxx|cu|h|hpp))(?::[\w:~]+)?:(?P<line>\d+): ASSERT "
                            r"'(?P<expr>[^']{1,200})' FAILED\b:? ?(?P<msg>.{0,200})")


def _check_line(line: str) -> CrashLine | None:
    """A glog/absl FATAL line (a failed CHECK, a LOG(FATAL)): the process aborts (SIGABRT) with that message; what
    the message says (a CUDA error, a refused connection) is what failed, as a terminate's what() is read."""
    if line.startswith(_CHECK_TRACE):
        return CrashLine(CrashLineKind.FATAL_SIGNAL, CHECK_TRACE_TEXT, signal="SIGABRT")
    if "Check failed" in line and (dmlc := _DMLC_CHECK.match(line)) is not None:
        return CrashLine(CrashLineKind.FATAL_SIGNAL, f"{dmlc.group('msg')} (dmlc's fatal log: the process ends "
                         "with it)"[:400], signal="SIGABRT")
    head = _GLOG_F.match(line)
    if head is None:
        return None
    where, msg = head.group("file") or head.group("tffile"), (head.group("msg") or head.group("tfmsg") or "").strip()
    text = f"{msg or 'glog FATAL'} ({where}: glog's FATAL level, the process aborts with SIGABRT)"[:400]
    thread = int(head.group("tid")) if head.group("tid") else None
    if where.startswith("ProcessGroup"):       # ProcessGroupNCCL's own abort after a timeout: a consequence
        return CrashLine(CrashLineKind.FATAL_SIGNAL, text, signal="SIGABRT", collateral=True, thread=thread)
    inner = parse_crash_line(msg) if msg and not _GLOG_F.match(msg) else None
    if inner is not None and inner.kind in (CrashLineKind.CUDA_OOM, CrashLineKind.CUDA_ERROR, CrashLineKind.NETWORK):
        return replace(inner, text=text, signal="SIGABRT", collateral=False, thread=thread)
    if inner is not None and inner.kind is CrashLineKind.EXCEPTION and _CUDA_SETUP_GATED.holds(msg):
        # (a CHECK on CUDA's device selection, Caffe's "Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable
        # devices are busy or unavailable", TF's "... CUDA_ERROR_NO_DEVICE": CUDA's error at start-up, as its bare
        # line is read, with its note; the abort after it is how the process ends. At glog's FATAL level it is no
        # probe that goes on: never quoted)
        # (glog's place first, as a compiler's "file:line: message", which a summary's cut keeps; its "Check failed"
        # says it is glog's CHECK; the abort after it: the evidence's lines)
        said = f"{where.rsplit('/', 1)[-1]}: {msg}"[:300]
        return replace(inner, text=said + cuda_setup_note(msg), collateral=False, quoted=False, thread=thread)
    return CrashLine(CrashLineKind.FATAL_SIGNAL, text, signal="SIGABRT", thread=thread)


# a library's own check of an NCCL call that gives NCCL's result by number only (FastMoE's NCCL_SAFE_CALL: "NCCL Error
# at .../cuda/global_exchange.cpp:16 value 4"), then exits the process: the result named, and the network's results (2,
# 6) read as the network's, as NCCL's own strings for them are ("unhandled system error", "remote process exited ...")
_NCCL_CHECK_VALUE = lazy_regex(r"\bNCCL [Ee]rror(?: at)? [\w./-]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp):\d+,? value "
                               r"(?P<code>\d+)\b")


def _nccl_check_line(text: str, code: str, collateral: bool) -> CrashLine:
    result = _NCCL_RESULTS.get(code, "an NCCL result unknown to triage")
    said = f"{text.strip()[:300]} (NCCL's result {code}: {result}; the library's own check of its NCCL call, which " \
           "ends the process)"
    if code in ("2", "6"):
        return CrashLine(CrashLineKind.NETWORK, said)
    return CrashLine(CrashLineKind.NCCL_ERROR, said, collateral=collateral)


def _proxy_line(text: str, proxy: re.Match[str], peer_addr: str | None) -> CrashLine:
    code = proxy.group("code")
    result = _NCCL_RESULTS.get(code, f"result {code}")
    note = (f" (NCCL's proxy of rank {proxy.group('owner')} failed the {proxy.group('op')} it ran for rank "
            f"{proxy.group('rank')} of the communicator: {result})")
    kind = (CrashLineKind.NETWORK if code in ("2", "6") else CrashLineKind.CUDA_ERROR if code == "1"
            else CrashLineKind.NCCL_ERROR)
    return CrashLine(kind, text[:300] + note, peer=peer_addr)


# TensorFlow's UnavailableError is gRPC's UNAVAILABLE, its message gRPC's own words for a connection that went away
# ("Collective ops is aborted by: Socket closed", "... Stream removed"): a peer it lost
# (and the task gRPC's detail line after it names: triage.load.logs.line_events, read by triage.analysis.settle)
REMOTE_TARGET_TEXT = "the task at the call's other end, gRPC's remote target"
_GRPC_GONE = lazy_regex(r"\b(?:Socket closed|Stream removed)\b")


# torchelastic's ChildFailedError summary (torch/distributed/elastic/multiprocessing/errors: its title "<entrypoint>
# FAILED" under the exception's type, then its failures) told on one line with the child's own exception after it, as
# an issue's title or a rich traceback box's last line joins them ("ChildFailedError codeparrot_training.py FAILED
# KeyError: 'backend'", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED
# RuntimeError: ..."): the child's exception is the failure (the summary's is its launcher's consequence), of no rank
# the line names
_CHILD_FAILED_GLUED = lazy_regex(r"ChildFailedError:?[ \t=-]+(?P<entry>\S{1,200}) FAILED[ \t=-]+"
                                 r"(?P<exc>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*)$")


# pydantic's ValidationError lists each field's error on its own line under its head ("1 validation error for
# ParallelConfig", then the field's location): v2 (pydantic_core's ErrorType messages) "  Value error, <the
# validator's ValueError's message> [type=value_error, input_value=..., input_type=...]" ("Assertion failed, <msg>"
# for its assert; "Field required [type=missing, ...]", "Input should be a valid integer [type=int_parsing, ...]"),
# v1 (pydantic.error_wrappers) "  <msg> (type=value_error)" ("field required (type=value_error.missing)", "ensure
# this value is greater than 0 (type=value_error.number.not_gt; limit_value=0)"). Such a line alone, its head cut
# from the paste, is the exception it reports (a validator's ValueError or AssertionError, a field of the wrong
# type): pydantic raised ValidationError. v2's "Value error, <msg>" is read also without its "[type=...]" tail (a
# reporter's quote of the message alone); v1's message only with its type in parentheses. (A line is read by the line
# gate's words, crashlog's MARKERS: one of no "error" word, "Field required [type=missing, ...]", only under its head.)
_PYDANTIC_V2 = lazy_regex(r"^[\s>]*(?P<msg>(?:Value error|Assertion failed), \S.*?|\S.*?)"
                          r"(?: \[type=(?P<type>[a-z_]+(?:\.[a-z_]+)*), input_value=.*)?$")
_PYDANTIC_V1 = lazy_regex(r"^[\s>]*(?P<msg>\S.*?) \(type=(?P<type>(?:value|type|assertion)_error(?:\.[a-z_]+)*)"
                          r"(?:; [^)]*)?\)\s*$")
PYDANTIC_LINE_TYPE = "pydantic.ValidationError"
PYDANTIC_LINE_NOTE = " (a line of pydantic's ValidationError, its head not in this input)"


def pydantic_line_error(text: str) -> CrashLine | None:
    """A line of pydantic's ValidationError (above), read alone: the exception it reports, or None."""
    if "[type=" in text or text.lstrip(" \t>").startswith(("Value error, ", "Assertion failed, ")):
        v2 = _PYDANTIC_V2.match(text)
        if v2 is not None and (v2.group("type") is not None or v2.group("msg").startswith("Value error, ")):
            return CrashLine(CrashLineKind.EXCEPTION, f"ValidationError: {v2.group('msg')}"[:300] + PYDANTIC_LINE_NOTE,
                             PYDANTIC_LINE_TYPE)
    if "(type=" in text and (v1 := _PYDANTIC_V1.match(text)) is not None:
        return CrashLine(CrashLineKind.EXCEPTION, f"ValidationError: {v1.group('msg')} (type={v1.group('type')})"[:300]
                         + PYDANTIC_LINE_NOTE, PYDANTIC_LINE_TYPE)
    return None


def _exception_line(text: str, exc: re.Match[str], collateral: bool, said: str) -> CrashLine:
    """A Python exception's line: what its type and message say it is."""
    exc_type, msg = exc.group("type"), (exc.group("msg") or "").strip()
    if exc_type.rsplit(".", 1)[-1] in _NOT_A_RANK_FAILURE:
        return CrashLine(CrashLineKind.EXCEPTION, text[:400], exc_type, collateral=True)
    if _RAY_HOST_MEMORY.search(msg):
        # Ray's memory monitor killed a worker: the node's host memory, not a GPU's
        return CrashLine(CrashLineKind.FATAL_SIGNAL, f"a Ray worker was killed by SIGKILL (Ray's memory monitor: its "
                         f"node ran low on host memory): {text}"[:400], exc_type, signal="SIGKILL")
    if _CUDA_OOM_GATED.holds(text):
        return CrashLine(CrashLineKind.CUDA_OOM, text[:400], exc_type, gpu=_gpu(text))
    if _NET_GATED.holds(msg) or exc_type.rsplit(".", 1)[-1] in ("DistNetworkError", "RendezvousConnectionError") \
            or (exc_type.endswith("UnavailableError") and _GRPC_GONE.search(msg) is not None):
        return CrashLine(CrashLineKind.NETWORK, noted(text), exc_type, peer=peer_of(said))
    if _CUDA_SETUP_GATED.holds(msg) or ("NVIDIA driver" in msg or "No CUDA GPUs" in msg) \
            and _TORCH_CUDA_START.search(msg) is not None:
        return CrashLine(CrashLineKind.EXCEPTION, text[:300] + cuda_setup_note(text), exc_type, gpu=_gpu(text))
    if ("no kernel image" in msg or "NoBinaryForG" in msg or "NO_BINARY" in msg) and _NO_BINARY.search(msg):
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:300] + NO_BINARY_NOTE, exc_type, gpu=_gpu(text))
    if _CUDA_ERROR_GATED.holds(msg):
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:400], exc_type, collateral=collateral, gpu=_gpu(text))
    if _NCCL_GATED.holds(msg):
        return CrashLine(CrashLineKind.NCCL_ERROR, text[:400], exc_type, collateral=collateral)
    return CrashLine(CrashLineKind.EXCEPTION, text[:400], exc_type, collateral=collateral)


def _terminate_line(text: str, term: re.Match[str], collateral: bool, said: str) -> CrashLine:
    """C++ std::terminate: a network or CUDA failure when what() says so (a paste may keep it on the line)."""
    what = text[term.end():]           # a paste that lost its newlines keeps what() on this line
    plain = what.replace("Connection reset by peer", "").replace(
        "remote process exited or there was a network error", "")     # ncclRemoteError's own words
    if _NET_GATED.holds(what) and not _COLLATERAL_GATED.holds(plain):
        return CrashLine(CrashLineKind.NETWORK, text[term.start():][:400], term.group("what"), "SIGABRT",
                         peer=peer_of(said))
    if _CUDA_ERROR_GATED.holds(what):
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:400], term.group("what"), "SIGABRT", gpu=_gpu(text))
    return CrashLine(CrashLineKind.TERMINATE, text[:400], term.group("what"), "SIGABRT", collateral=collateral)


def _what_line(text: str, collateral: bool, said: str) -> CrashLine:
    """The C++ terminate handler's ``what():  ...`` line without its ``terminate called after throwing``
    header (a paste that lost it, a reporter's own words in its place): the handler prints it only as it
    aborts the process, so it is a terminate whose what() says what escaped."""
    what = text[len("what():"):]
    plain = what.replace("Connection reset by peer", "").replace(
        "remote process exited or there was a network error", "")
    if _NET_GATED.holds(what) and not _COLLATERAL_GATED.holds(plain):
        return CrashLine(CrashLineKind.NETWORK, text[:400], None, "SIGABRT", peer=peer_of(said))
    if _CUDA_ERROR_GATED.holds(what):
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:400], None, "SIGABRT", gpu=_gpu(text))
    return CrashLine(CrashLineKind.TERMINATE, text[:400], None, "SIGABRT", collateral=collateral)


# (what a failing address alone says: the signal is one of those that print it)
OMPI_ADDRESS_NOTE = (" (Open MPI's signal handler, its report cut before its 'Signal:' line: a fault at that address, "
                     "SIGSEGV as a rule; SIGBUS, SIGFPE and SIGILL print the same line)")
_CAPS_SIGNALS = {"ABORTED": "SIGABRT", "ERRONEOUS NUMERIC": "SIGFPE", "ILLEGAL INSTRUCTION": "SIGILL",
                 "SEGMENTATION FAULT": "SIGSEGV", "BUS ERROR": "SIGBUS"}
_SHELL_SIGNAL_WORDS = {"Aborted": "SIGABRT", "Killed": "SIGKILL", "Segmentation fault": "SIGSEGV",
                       "Bus error": "SIGBUS", "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL"}


def _fatal_line(text: str, fatal: re.Match[str], collateral: bool) -> CrashLine | None:
    """A fatal signal, named by whichever handler or shell printed it (None: a shell message quoted in a sentence
    that does not tell of the writer's own failure)."""
    if fatal.group("mdsig") is not None:
        if not says_it_failed(text, fatal.start()):
            return None
        # (the reporter's own sentence: a death only where the job did not go on past it, CrashLine.quoted: a list of
        # what such messages mean, or a run that went on to its end after the sentence, is no death)
        return CrashLine(CrashLineKind.FATAL_SIGNAL, text[:400], signal=_SHELL_SIGNAL_WORDS[fatal.group("mdsig")],
                         collateral=collateral, quoted=True)
    sig = (fatal.group("glogsig") or fatal.group("signame") or fatal.group("sigtorch") or fatal.group("c10sig")
           or fatal.group("forsig") or fatal.group("forparen") or fatal.group("abslsig")
           or ("SIGFPE" if fatal.group("forfpe") else "SIGILL" if fatal.group("forill")
               else "SIGABRT" if fatal.group("forabrt") else None)
           or _STRSIGNAL.get(fatal.group("alps") or "")
           or _SIGNUMS.get(fatal.group("signum") or fatal.group("exitsig") or fatal.group("ucxnum")
                           or fatal.group("julianum")
                           or fatal.group("ompinum") or fatal.group("psmnum") or fatal.group("codesig") or "")
           or _FPE_SIGNALS.get((fatal.group("fpe") or "").strip())
           or LOCAL_SIGNAL_WORDS.get(fatal.group("localsig") or "")
           or _CAPS_SIGNALS.get(fatal.group("capsig") or ""))
    if sig is None:
        sig = ("SIGABRT" if fatal.group("heap") else "SIGSEGV" if "Segmentation" in text
               else "SIGABRT" if "Aborted" in fatal.group(0)
               else "SIGBUS" if "Bus error" in text or fatal.group("loaderbus") else
               "SIGKILL" if fatal.group(0) == "Killed" else None)
    if fatal.group("ompiaddr") is not None:
        return CrashLine(CrashLineKind.FATAL_SIGNAL, text[:300] + OMPI_ADDRESS_NOTE, signal="SIGSEGV",
                         collateral=collateral)
    teardown = sig in ("SIGTERM", "SIGINT") or (fatal.group("fpe") or "").strip() in ("Terminated", "Interrupt")
    # (a signal's words in a quote or code span of the writer's own sentence: "- the job prints `Segmentation fault
    # (core dumped)` then hangs"; triage.parsing.quoted: a death only where the job did not go on past it)
    return CrashLine(CrashLineKind.FATAL_SIGNAL, text[:400], signal=sig, collateral=collateral or teardown,
                     quoted=in_quoted_prose(text, fatal.start()))


# a write or send to a socket or pipe whose other end is gone ("write: Broken pipe", "sendmsg() failed: Broken pipe",
# "[Errno 32] Broken pipe"): a survivor's view of a peer's death, a consequence
_PIPE_WRITE = lazy_regex(r"\b(?:write|writev|send|sendmsg|sendto|flush)\w*(?:\(\))?:?[^\n]{0,80}Broken pipe|"
                         r"\[Errno 32\] Broken pipe")


# PyTorch's "CUDA error: X" with its own advice run on after it on the same line ("... Search for `cudaErrorX' in
# https://docs... CUDA kernel errors might be asynchronously reported ... CUDA_LAUNCH_BLOCKING=1 Compile with ...": a
# UI or a paste that joined the message's lines): the error, its advice cut off
_RUN_ON_ADVICE = lazy_regex(r"^CUDA error: \S.*?(?=\s*CUDA kernel errors might be asynchronously reported)")


def _plain_line(text: str, collateral: bool, said: str) -> CrashLine | None:
    """A line that is neither an exception's, a terminate's nor a signal's: CUDA, network and NCCL words."""
    if "CUDA_LAUNCH_BLOCKING" in text and (run_on := _RUN_ON_ADVICE.match(text)) is not None:
        text = run_on.group(0)
    if (oom := _CUDA_OOM_GATED.search(text)) is not None:
        return CrashLine(CrashLineKind.CUDA_OOM, text[:400], gpu=_gpu(text), quoted=_in_prose(text, oom))
    if _CUDA_SETUP_GATED.holds(text) and "CUDA_LAUNCH_BLOCKING" not in text:
        return CrashLine(CrashLineKind.EXCEPTION, text[:300] + cuda_setup_note(text), gpu=_gpu(text),
                         quoted=_CUDA_PROBE.search(text) is not None)
    if (lacks := _BACKEND_LACKS_GATED.search(text)) is not None:
        return CrashLine(CrashLineKind.EXCEPTION, f"RuntimeError: {lacks.group(0)}", "RuntimeError")
    if (ddp := _DDP_CHECK_GATED.search(text)) is not None:
        return CrashLine(CrashLineKind.EXCEPTION, f"RuntimeError: {text[ddp.start():]}"[:400], "RuntimeError")
    if ("NoBinaryForG" in text or "no kernel image" in text or "NO_BINARY" in text or "NoKernelImage" in text) and (
            binary := _NO_BINARY.search(text)) is not None:
        if _RAISED_GPU_ERROR.search(text) is None:     # the HIP runtime's own print: it aborts the process
            said = f"the GPU runtime aborted (SIGABRT): {text}"[:300] + NO_BINARY_NOTE
            return CrashLine(CrashLineKind.FATAL_SIGNAL, said, signal="SIGABRT", gpu=_gpu(text),
                             quoted=in_quoted_prose(text, binary.start()))
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:300] + NO_BINARY_NOTE, gpu=_gpu(text),
                         quoted=_in_prose(text, binary))
    if (cuda := _CUDA_ERROR_GATED.search(text)) is not None and "CUDA_LAUNCH_BLOCKING" not in text:
        in_prose = _in_prose(text, cuda)
        # PyTorch's hint alone follows every CUDA error, a set-up one too: the error line before it is the failure
        trailer = not _CUDA_ERROR_GATED.holds(text.replace(_CUDA_HINT, ""))
        # THC's print before it raises: the raise after it (its RuntimeError, a terminate) is the failure; a raise
        # that was caught ends nothing (THCGeneral.cpp's "error=11 : invalid argument" at start-up, the run going on)
        trailer = trailer or text.startswith(_THC_PRINT)
        # (a framework's probe for GPUs that logs the driver's error and goes on on the CPU, _CUDA_PROBE: TensorFlow's
        # "failed call to cuInit: CUDA_ERROR_UNKNOWN": quoted, a failure only where the job did not go on past it)
        return CrashLine(CrashLineKind.CUDA_ERROR, text[:400], collateral=collateral or trailer, gpu=_gpu(text),
                         quoted=in_prose or _CUDA_PROBE.search(text) is not None)
    if "Assertion " in text and (kernel := _KERNEL_ASSERT.search(text)) is not None and (
            "block: [" in kernel.group(0) or not _HOST_HEAD.fullmatch(text[:kernel.start()].lstrip(" \t>*`"))):
        what = f"{kernel.group('what')[:300]} failed in {kernel.group('file')}"
        return CrashLine(CrashLineKind.CUDA_ERROR, f"CUDA error: device-side assert triggered ({what})", gpu=_gpu(text))
    if (proxy := PROXY_FAILED_GATED.search(text)) is not None:
        return _proxy_line(text, proxy, peer_of(said))
    if _NET_GATED.holds(text) and ("NCCL" in text or "nccl" in text or "NET/" in text or "gloo" in text.lower()
                              or "socket" in text.lower() or "peer" in text or "Connect to " in text or "ssh" in text
                              or "ibv_" in text or "posix_fallocate" in text or "/dev/shm" in text  # noqa: S108
                              or "shared memory segment" in text or "mlx5" in text or "RETRY_EXC_ERR" in text
                              or "retry count" in text or "closed by remote host" in text
                              or "connection to proxy " in text or "Error Code: E" in text
                              or "UCX" in text or "libfabric:" in text or _PIPE_WRITE.search(text) is not None
                              or _ERRNO_NET.search(text) is not None or peer_of(said) is not None
                              or ("connect() failed" in text and PEER.search(text) is not None)):
        # (ibv_: an InfiniBand verbs call; posix_fallocate, /dev/shm: NCCL's shared-memory transport; mlx5,
        # RETRY_EXC_ERR: an InfiniBand/RoCE completion error UCX or verbs reports; UCX's own connection errors; NCCL
        # WARN's message alone; a socket errno's name, "ECONNREFUSED"; a line that names the peer it could not reach)
        # a network failure is never called collateral here: the analysis ranks it after real failures
        # (libfabric logs a lost peer at its warning level: a provider that recovers, the run going on, ended nothing)
        return CrashLine(CrashLineKind.NETWORK, noted(text), peer=peer_of(said),
                         quoted="libfabric:" in text and "<warn> " in text)
    if " value " in text and (checked := _NCCL_CHECK_VALUE.search(text)) is not None:
        return _nccl_check_line(text, checked.group("code"), collateral)
    if _NCCL_GATED.holds(text):
        return CrashLine(CrashLineKind.NCCL_ERROR, text[:400], collateral=collateral)
    if _PG_ABORT_GATED.holds(text):
        # ProcessGroupNCCL taking its process down after an async error or a timeout: a failure, though
        # the line that says which one may be cut from a paste; a consequence, never the first failure
        return CrashLine(CrashLineKind.NCCL_ERROR, text[:400], collateral=True)
    if _PORT_TAKEN_GATED.holds(text):
        return CrashLine(CrashLineKind.NETWORK, noted(text), peer=peer_of(said))
    if (quoted := _SENTENCE_EXC_GATED.search(text)) is not None and not _SHRUGGED.search(text[:quoted.start()]):
        return parse_crash_line(quoted.group("exc"))
    return None


_ERRNO_NET = lazy_regex(r"\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|PIPE|HOSTUNREACH|NETUNREACH|TIMEDOUT)\b")
_PG_ABORT = lazy_regex(r"Some NCCL operations have failed or timed out|we are taking the entire process down|"
                       # its failure handling: a dump of the failed collective, a dump signal, an abort
                       r"Stack trace of the failed collective|dump signal (?:due to a collective timeout|from another "
                       r"rank)|ProcessGroupNCCL preparing to dump debug info|abort timed out after|"
                       r"flight recorder dump signal|watchdog thread terminat")
# glog's FATAL level ("[F429 14:03:49.38 ProcessGroupNCCL.cpp:1554] ..."): the process aborts after the line
_GLOG_FATAL = lazy_regex(r"^\[F\d{0,4}(?: [\d:.]+)?(?: \d+)? ?ProcessGroup\w*\.cpp:\d+\]")


# The per-line reading above asks each pattern only of a line that holds one of the literals every match of it
# holds (triage.parsing.regex_gate, read from the pattern itself: an alternative added to a pattern is covered): a log
# whose every line reads as an error (a retry warning each step) pays a microsecond a pattern, not 10-30 us
_LOADER_KILLED_GATED = gated(_LOADER_KILLED)
_COLLATERAL_GATED = gated(_COLLATERAL)
_CJK_GLUED_EXC_GATED = gated(_CJK_GLUED_EXC)
_SIZE_CHECK_GATED = gated(_SIZE_CHECK)
_TERMINATE_GATED = gated(_TERMINATE)
_FATAL_GATED = gated(_FATAL)
_CUDA_OOM_GATED = gated(_CUDA_OOM)
_CUDA_SETUP_GATED = gated(_CUDA_SETUP)
_BACKEND_LACKS_GATED = gated(_BACKEND_LACKS)
_DDP_CHECK_GATED = gated(_DDP_CHECK)
_CUDA_ERROR_GATED = gated(_CUDA_ERROR)
PROXY_FAILED_GATED = gated(PROXY_FAILED)
_NET_GATED = gated(_NET)
_NCCL_GATED = gated(_NCCL)
_PG_ABORT_GATED = gated(_PG_ABORT)
_PORT_TAKEN_GATED = gated(_PORT_TAKEN)
_SENTENCE_EXC_GATED = gated(_SENTENCE_EXC)


# A process started by multiprocessing's spawn (mp.spawn, a DataLoader worker, a spawn-context Pool) reads its
# start-up data from its parent first: an exception raised there ("_pickle.UnpicklingError: pickle data was
# truncated", "EOFError: Ran out of input") means the parent went away (or never sent it): a consequence.
SPAWN_BOOTSTRAP_FRAME = "reduction.pickle.load(from_parent)"
SPAWN_BOOTSTRAP_NOTE = " (a spawned child reading its start-up data: its parent had gone)"


def has_marker(line: str) -> bool:
    for marker in MARKERS:      # noqa: SIM110 (a loop: any() over a generator costs twice as much a line)
        if marker in line:
            return True
    return False


_FATAL_PY = lazy_regex(r"Fatal Python error: (?P<what>[^\n]+)")
_CUDA_WHAT = lazy_regex(_CUDA_WHAT_TEXT, re.MULTILINE)
_ASSERTION = lazy_regex(r"Assertion [`'](?P<expr>.+)' failed")
_RAISED = lazy_regex(r"\b([A-Z]\w*(?:Error|Exception|Interrupt|Exit)): (.+)$", re.MULTILINE)
_WATCHDOG_ABORT = lazy_regex(r"watchdog thread terminated with exception|Some NCCL operations have failed or "
                             r"timed out|Watchdog caught collective operation timeout")


def crash_log_facts(text: str) -> CrashLogFacts:
    """The facts of a crashed process's log tail. Never raises."""
    fatal = _FATAL_PY.findall(text)
    cuda = _CUDA_WHAT.search(text)
    assertion = _ASSERTION.search(text)
    terminate = _TERMINATE.search(text)
    raised = _RAISED.findall(text)
    return CrashLogFacts(
        fatal_python_error=fatal[0].strip() if fatal else None,
        cuda_error=cuda.group("what").strip() if cuda else None,
        watchdog_abort=_WATCHDOG_ABORT.search(text) is not None,
        assertion=assertion.group("expr") if assertion else None,
        terminate_type=terminate.group("what") if terminate and terminate.group("what") else None,
        last_exception=(raised[-1][0], raised[-1][1].strip()) if raised else None,
    )


# NCCL's "Last error:" when two ranks were given the same GPU; both ranks are at fault (their
# device mapping), and the line names them: "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10"
_DUPLICATE_GPU = lazy_regex(r"Duplicate GPU detected\s*:\s*rank (\d+) and rank (\d+) both on CUDA device (\w+)")
# A message that names its own rank: "[Rank 7] NCCL watchdog thread terminated ...", "[PG ID 2 PG GUID 3 Rank 5] ..."
_MESSAGE_RANK = lazy_regex(r"\[(?:PG [^\]]*?)?Rank (\d+)\]")


DUPLICATE_GPU_TEXT = "NCCL: Duplicate GPU detected"


def duplicate_gpu(text: str) -> tuple[CrashLine, tuple[int, int], str] | None:
    """NCCL's duplicate-GPU error as a failure of both ranks it names, with the device (its bus id)."""
    match = _DUPLICATE_GPU.search(text)
    if match is None:
        return None
    a, b, device = int(match.group(1)), int(match.group(2)), match.group(3)
    line = CrashLine(CrashLineKind.NCCL_ERROR, f"{DUPLICATE_GPU_TEXT}: rank {a} and rank {b} both on CUDA "
                     f"device {device} (two ranks were given the same GPU: check CUDA_VISIBLE_DEVICES and the "
                     "LOCAL_RANK -> device mapping)")
    return line, (a, b), device


# The ranks of NCCL's duplicate-GPU line are the communicator's: when one pair of numbers is told on two devices,
# each line is a different communicator's (data-parallel groups of 2, say), and the numbers are not global ranks.
DUPLICATE_GPU_LOCAL = "; told on several GPUs: ranks within sub-communicators, not global ranks"


def rank_in_message(text: str) -> int | None:
    """The rank a PyTorch message names for itself ("[Rank 7]", "[PG ID 2 PG GUID 3 Rank 5]")."""
    match = _MESSAGE_RANK.search(text)
    return int(match.group(1)) if match else None
