"""Which launcher started the job, where the input shows it in the launcher's own words (pure, never raises).

What would give each rank's output with its rank depends on the launcher: ``torchrun --tee 3`` means nothing to a job
mpirun started. The input shows its launcher by lines only that launcher prints:

- ``torchx``: torchx's own words (``torchx run``, ``torchx.schedulers``, ``torchx log``), its ``role/R [L]:``
  heads on a replica's lines, its Ray scheduler's ``(CommandActor pid=N, ...)``; its ``dist.ddp`` component
  runs torchrun with ``--tee 3`` already, so torchx is named before torchrun;
- ``deepspeed``: DeepSpeed's launcher and runner (``deepspeed.launcher``, ``[launch.py:N:sigkill_handler]``,
  ``[runner.py:N:main]``);
- ``torchrun``: torchelastic's words (``torch.distributed.elastic``, ``ChildFailedError``, ``torchrun``,
  ``torch.distributed.run``) and the old ``torch.distributed.launch``;
- ``mpirun`` (Open MPI, PRRTE): ``mpirun noticed that process rank``, ``mpirun has exited due to``, ``MPI_ABORT was
  invoked on rank``, ``prterun``, ``--tag-output``'s ``[1,0]<stderr>:`` heads;
- ``mpiexec`` (MPICH / Intel MPI's Hydra): ``BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES``, ``application
  called MPI_Abort(``, Hydra's ``[proxy:`` / ``HYDRA`` lines;
- ``srun`` (SLURM): ``srun: error:``, ``slurmstepd: error:``, ``srun: Job step aborted``.

A launch command quoted at the start of a line (``$ mpirun -np 4 ...``, ``srun -N 2 ...``, ``deepspeed --num_gpus 8
...``) shows its launcher too; the launcher's name in a sentence ("I ran it with mpirun") does not.
None when the input shows none of them (or only words every launcher's job may print).
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex

_TORCHX = lazy_regex(r"\btorchx (?:run|log|status)\b|\btorchx\.(?:schedulers|components|specs|runner)\b|"
                     r"^[A-Za-z_][\w-]*/\d+ \[\d+\]:|\(CommandActor pid=\d+", re.MULTILINE)
_DEEPSPEED = lazy_regex(r"deepspeed\.launcher|\[launch\.py:\d+:(?:sigkill_handler|main)\]|\[runner\.py:\d+:main\]|"
                        r"^\W{0,3}deepspeed\s+(?:--\w|\S+\.py\b)", re.MULTILINE)
_TORCHRUN = lazy_regex(r"torch\.distributed\.(?:elastic|run|launch)\b|ChildFailedError|\btorchrun\b")
_OPEN_MPI = lazy_regex(r"mpirun noticed that process rank|mpirun has exited due to|MPI_ABORT was invoked on rank|"
                       r"\bprterun\b|^\[\d+,\d+\]<std(?:out|err)>:|Primary job\s+terminated normally|"
                       r"^\W{0,3}mpirun\s+-", re.MULTILINE)
_HYDRA = lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES|application called MPI_Abort\(|"
                    r"^\[proxy:|\bHYDRA\b|hydra_pmi|^\W{0,3}mpiexec(?:\.hydra)?\s+-", re.MULTILINE)
_SRUN = lazy_regex(r"\bsrun: (?:error|Job step aborted|launch/slurm)|slurmstepd(?:-[\w.-]+)?: error:|^\W{0,3}srun\s+-",
                   re.MULTILINE)

_ORDER = (("torchx", _TORCHX), ("deepspeed", _DEEPSPEED), ("torchrun", _TORCHRUN), ("mpirun", _OPEN_MPI),
          ("mpiexec", _HYDRA), ("srun", _SRUN))


def shown_launcher(text: str) -> str | None:
    """The launcher the text shows, by the first of torchx, deepspeed, torchrun, mpirun, mpiexec, srun whose own
    words it holds. Never raises."""
    return next((name for name, pattern in _ORDER if pattern.search(text)), None)
