"""Which launcher started the ranks of a log, from its own words (pure).

What would settle a verdict that names no culprit is often "every rank's output, each line tagged with its
rank"; how to get that depends on the launcher that started the ranks: torchrun's ``--tee 3``, Open MPI's
``mpirun --tag-output``, Hydra's ``mpiexec -prepend-rank``, ``srun --label``, the DeepSpeed launcher's
``--enable_each_rank_log``. This module names the launcher a text shows, innermost first (the one that
started the ranks: torchrun run by srun is torchrun), or None where the text shows none.

Each name's marks are lines only that launcher prints (its records, its prefixes, its module paths):
- ``deepspeed``: ``deepspeed.launcher.launch``, its ``[launch.py:N:main]`` / ``[runner.py:N:main]`` heads,
  ``sigkill_handler``;
- ``torchrun``: ``torch.distributed.elastic``, torchelastic's ``ChildFailedError``, ``--tee``'s
  ``[default0]:`` tags, ``torch/distributed/run.py``, the word ``torchrun``;
- ``julia``: Julia's Distributed (its master's ``ProcessExitedException(3)``, a script's ``ERROR: LoadError``, the
  master's ``      From worker 3:\t`` lines, ``.jl:`` frames): workers of ids, no ranks;
- ``spawn``: ``torch.multiprocessing.spawn`` (its module path, ``ProcessRaisedException``,
  ``ProcessExitedException``, ``process N terminated with signal|exit code``);
- ``horovod``: ``horovodrun`` or its ``[3]<stderr>:`` tags; ``openmpi``: Open MPI's ``[1,3]<stderr>:`` tags,
  ``mpirun noticed ...``, its signal handler's ``*** Process received signal ***``, ``MPI_ABORT was invoked``,
  ``Primary job terminated``, ``mpirun has exited``, ``*** An error occurred in MPI_...``; ``hydra`` (MPICH,
  Intel MPI): ``BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES``, ``[proxy:0:1@node]``, ``[mpiexec@node]``,
  ``application called MPI_Abort``;
- ``mpi``: ``mpirun``/``mpiexec`` named in words only (which MPI is not said);
- ``torchx``, ``ray`` (a worker's ``(RayTrainWorker pid=N, ...)`` tag, ``ray::``, ``raylet``, ``RayTaskError``,
  ``ActorDiedError``), ``slurm`` (``srun: ``, ``slurmstepd``) and ``yarn`` (Hadoop YARN's containers, as Spark's driver
  and the NodeManager tell them) last: they start launchers as often as ranks.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

_MARKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("deepspeed", lazy_regex(r"deepspeed[./]launcher[./]launch|\[(?:launch|runner)\.py:\d+:\w+\]|sigkill_handler")),
    ("torchrun", lazy_regex(r"torch[./]distributed[./]elastic|torchelastic|ChildFailedError|"
                            r"torch[./]distributed[./]run\b|\btorchrun\b|^\[default\d+\]:", re.MULTILINE)),
    # (Julia's Distributed before torch.multiprocessing.spawn: its master's ProcessExitedException(3) is another's)
    ("julia", lazy_regex(r"ProcessExitedException\(\d+\)|\bERROR: LoadError\b|^[ \t]*From worker \d+:\t|"
                         r"\.jl:\d+", re.MULTILINE)),
    ("spawn", lazy_regex(r"torch[./]multiprocessing[./]spawn|ProcessRaisedException|ProcessExitedException|"
                         r"\bprocess \d+ terminated with (?:signal|exit code)", re.IGNORECASE)),
    ("horovod", lazy_regex(r"\bhorovodrun\b|^\[\d+\]<std(?:out|err)>:", re.MULTILINE)),
    ("openmpi", lazy_regex(r"\[\d+,\d+\]<std(?:out|err)>:|mpirun noticed|MPI_ABORT was invoked|"
                           r"Primary job\s+terminated|mpirun has exited|\*\*\* Process received signal \*\*\*|"
                           r"\*\*\* An error occurred in MPI_|\bprterun\b")),
    ("hydra", lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES|\[proxy:\d+:\d+@|\[mpiexec@|"
                         r"application called MPI_Abort")),
    ("mpi", lazy_regex(r"\bmpi(?:run|exec)\b")),        # an MPI launcher named only, whose MPI is not said
    ("torchx", lazy_regex(r"\btorchx\b")),
    ("ray", lazy_regex(r"\(\w*(?:Worker|Actor)\w* pid=\d+|\bray::|\braylet\b|RayTaskError|ActorDiedError")),
    ("slurm", lazy_regex(r"^\s*srun: |\bslurmstepd\b", re.MULTILINE)),
    # Hadoop YARN, which starts each container itself (Spark's executors, a MapReduce task, TensorFlowOnSpark's
    # nodes): Spark's driver ("Container killed by YARN for exceeding memory limits", its YarnAllocator's and
    # YarnClusterScheduler's heads, org.apache.spark.deploy.yarn), the NodeManager's log (org.apache.hadoop.yarn, its
    # ContainersMonitorImpl's "Container [pid=P,containerID=container_...]")
    ("yarn", lazy_regex(r"Container killed by YARN\b|\bYarn(?:Cluster)?Scheduler\b|\bYarnAllocator\b|"
                        r"\bContainersMonitorImpl\b|\borg\.apache\.hadoop\.yarn\.|\bdeploy\.yarn\.|"
                        r"containerID=container_")),
)
# Every match of a name's marks holds one of these literals (a text holding none of them is not searched: the ten
# searches of a large log's excerpt, ~0.6 MB, were ~0.13 s of CPU, most of a report's reading of it). The caseless
# marks' literals (lower case) are looked for in the lower-cased text, where the text is ASCII (past ASCII, Python's
# caseless rules are not str.lower's: those marks are then searched). tests/parsing/test_launcher_kind.py holds each
# branch of each pattern to its literals.
_HOLDS: dict[str, tuple[str, ...]] = {
    "deepspeed": ("deepspeed", ".py:", "sigkill_handler"),
    "torchrun": ("elastic", "ChildFailedError", "distributed", "torchrun", "[default"),
    "julia": ("ProcessExitedException(", "ERROR: LoadError", "From worker ", ".jl:"),
    "spawn": ("multiprocessing", "processraisedexception", "processexitedexception", " terminated with "),
    "horovod": ("horovodrun", "]<std"),
    "openmpi": ("]<std", "mpirun noticed", "MPI_ABORT was invoked", "Primary job", "mpirun has exited",
                "*** Process received signal ***", "*** An error occurred in MPI_", "prterun"),
    "hydra": ("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "[proxy:", "[mpiexec@",
              "application called MPI_Abort"),
    "mpi": ("mpi",),
    "torchx": ("torchx",),
    "ray": (" pid=", "ray::", "raylet", "RayTaskError", "ActorDiedError"),
    "slurm": ("srun: ", "slurmstepd"),
    "yarn": ("YARN", "Yarn", "ContainersMonitorImpl", "hadoop.yarn.", "deploy.yarn.", "containerID=container_"),
}
_CASELESS = frozenset({"spawn"})
LAUNCHERS = tuple(name for name, _ in _MARKS)
# torchrun's agent stopping the workers still running once one failed ("Sending process 164237 closing signal
# SIGTERM"): each was alive then
_AGENT_STOP = lazy_regex(r"Sending process (\d+) closing signal SIG[A-Z]+")


def agent_stopped_pids(text: str) -> tuple[int, ...]:
    """The pids torchrun's agent sent a closing signal to (workers alive when the first one failed), once each."""
    return tuple(dict.fromkeys(int(m.group(1)) for m in _AGENT_STOP.finditer(text)))


# a launcher's own command line, as a CI step's "Run torchrun --nproc-per-node 4 train.py", a notebook cell's
# "!torchrun ...", a shell's "$ python -m torch.distributed.run ..." show it: its name followed by its options or the
# script it runs (never torchrun's own traceback's ".../bin/torchrun", line 8" nor a warning's "Use torchrun.")
_COMMAND_LINE = lazy_regex(r"(?:\btorchrun|-m[ \t]+torch\.distributed\.(?:run|launch))(?=[ \t]+(?:-|\S+\.py\b))")


def launcher_shown(text: str) -> str | None:
    """The launcher whose own output ``text`` shows (as :func:`launcher_of`), where a command line that only names it
    is no output of its: a CI step's or a notebook cell's ``torchrun --nproc-per-node 4 train.py`` says how the job was
    started, not that the lines after it came from the processes torchrun started one per GPU."""
    if _COMMAND_LINE.search(text) is None:
        return launcher_of(text)
    return launcher_of(_COMMAND_LINE.sub("", text))


def launcher_of(text: str) -> str | None:
    """The launcher that started the ranks of ``text`` (a name of :data:`LAUNCHERS`), or None."""
    lower = text.lower() if text.isascii() else None
    for name, marks in _MARKS:
        within = (lower if name in _CASELESS else text)
        if within is not None and not any(literal in within for literal in _HOLDS[name]):
            continue        # (none of the literals every match holds: no match)
        if marks.search(text) is not None:
            return name
    return None
