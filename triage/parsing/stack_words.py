"""Which framework a text's program runs on, as far as its words show it (pure): PyTorch's, JAX's or XLA's on a TPU,
TensorFlow's, or none said. The advice fitted to it: PyTorch's Flight Recorder (TORCH_NCCL_TRACE_BUFFER_SIZE) records
a torch.distributed job's collectives, and is no step for a JAX or TensorFlow job, a TPU's, nor an MPI program's
(triage.analysis.advice).

- ``torch``: PyTorch's names in any of its modules, paths and logs ("torch", "PyTorch", "torchrun", "c10d",
  "c10::Error", "ProcessGroupNCCL", "init_process_group", torch.distributed's "process group" and
  "monitoredBarrier"; ProcessGroupNCCL's own words of a collective's timeout and its abort, which a paste often holds
  without its log head: "Watchdog caught collective operation timeout", its "WorkNCCL(SeqNum=...", "Some NCCL
  operations have failed or timed out"): PyTorch wins where a text shows another framework too (torch_xla, a job that
  imports both);
- ``xla``: JAX's names ("jax", "jaxlib", "flax", jaxlib's ``XlaRuntimeError``) or a TPU's runtime as JAX and TensorFlow
  print it (``libtpu``, ``Backend 'tpu'``, ``tpu_driver``, XLA's TPU compiler's "Ran out of memory in memory space
  hbm");
- ``tensorflow``: "tensorflow", ``tf.distribute``, ``tf.keras``;
- ``spark``: Apache Spark's driver and YARN's words (``org.apache.spark``, ``SparkContext``, ``TaskSchedulerImpl``,
  ``DAGScheduler``, ``YarnAllocator``, ``ExecutorLostFailure``, ``Lost executor N on H``, ``Container killed by
  YARN``): a data job of executors in containers, no ranks (a verdict says executor or container; its advice is
  Spark's and YARN's, no PyTorch's Flight Recorder);
- ``fortran``: a Fortran program's own runtime words (gfortran's ``Program received signal SIGSEGV: ...`` and
  ``Backtrace for this error:``, ``Fortran runtime error:``, Intel's ``forrtl: severe (174): ...``, a module
  procedure's mangled name ``__stream_MOD_collide``, a frame's ``stream.f90:212``): a compiled program of its own,
  whose collectives (MPI's) no Flight Recorder records;
- ``program``: a driver's record of a subprocess it ran that failed, naming the subprocess's argv, whose program is
  an executable of its own, no interpreter nor launcher (Python's ``CalledProcessError``, ``Command
  '['/opt/bwa/bwa', 'mem', ...]' returned non-zero exit status -9.``; SPAdes' ``system call for:
  "['/opt/SPAdes/bin/spades-hammer', ...]" finished abnormally, OS return value: -9``): the process that failed is
  that program, no PyTorch job's rank (a ``python``, ``torchrun``, ``bash`` ... argv may start one: not said).
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

TORCH_WORDS = ("torch", "Torch", "c10d", "c10::", "ProcessGroup", "process group", "process_group", "monitoredBarrier",
               "WorkNCCL(", "Watchdog caught collective operation timeout", "Some NCCL operations have failed")
_XLA = lazy_regex(r"\b(?:jax|jaxlib|flax)\b|\bXlaRuntimeError\b|\blibtpu\b|[Bb]ackend 'tpu|\btpu_driver\b|"
                  r"\bmemory space hbm\b")
_TENSORFLOW = lazy_regex(r"\btensorflow\b|\btf\.(?:distribute|keras)\b")
_SPARK_WORDS = ("org.apache.spark", "SparkContext", "TaskSchedulerImpl", "DAGScheduler", "YarnAllocator",
                "ExecutorLostFailure", "Lost executor ", "killed by YARN", "YarnScheduler", "SparkException")

_FORTRAN = lazy_regex(r"\bProgram received signal SIG[A-Z]+: |^\s*Backtrace for this error:|\bFortran runtime error:|"
                      r"^\s*forrtl: (?:severe|error) \(\d+\)|\b__\w+_MOD_\w+|\b\w+\.[fF](?:90|95|03|08)?:\d+\b",
                      re.MULTILINE)

# a subprocess's argv as a driver prints it, a Python list whose first item is the program ("Command '['/bin/x', ...",
# 'system call for: "['/bin/x', ...'); the programs that may start a PyTorch job themselves (an interpreter, a shell,
# a launcher) say nothing of what ran
_ARGV_PROGRAM = lazy_regex(r"""(?:\bCommand '|\bsystem call for: ")\[\s*['"](?:[^'"\s]*/)?(?P<program>[^'"/\s]+)['"]""")
_MAY_START_TORCH = lazy_regex(r"(?:python|pypy|torchrun|deepspeed|accelerate|bash|sh|zsh|dash|env|srun|mpirun|mpiexec|"
                              r"orterun|prterun|horovodrun|ray|uv|conda|mamba|pixi|poetry|docker|singularity|apptainer|"
                              r"podman|enroot|nsys|ncu|time|timeout|nohup|numactl|taskset|xargs|parallel|sudo)"
                              r"[\d.]*(?:\.exe)?", re.IGNORECASE)


def stack_of(text: str) -> str | None:
    """"torch", "xla", "tensorflow", "spark", "fortran", "program", or None where the text names none of them."""
    if any(word in text for word in TORCH_WORDS):
        return "torch"
    if ("jax" in text or "flax" in text or "tpu" in text or "Xla" in text or " hbm" in text) \
            and _XLA.search(text) is not None:
        return "xla"
    if ("tensorflow" in text or "tf." in text) and _TENSORFLOW.search(text) is not None:
        return "tensorflow"
    if any(word in text for word in _SPARK_WORDS):
        return "spark"
    if ("rogram received" in text or "acktrace" in text or "ortran" in text or "forrtl" in text or "_MOD_" in text
            or ".f" in text or ".F" in text) and _FORTRAN.search(text) is not None:
        return "fortran"
    if ("Command '" in text or "system call for" in text) and (argv := _ARGV_PROGRAM.search(text)) is not None \
            and _MAY_START_TORCH.fullmatch(argv.group("program")) is None:
        return "program"
    return None


def stack_of_all(stacks: list[str | None]) -> str | None:
    """The framework of several texts' (PyTorch where one shows it, else the first named)."""
    return "torch" if "torch" in stacks else next((stack for stack in stacks if stack is not None), None)
