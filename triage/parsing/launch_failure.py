"""A launcher that could not start the program: the program never ran on that node, so no rank of it failed.

Read in each launcher's and runtime's words: Hydra/MPICH/Intel MPI's proxy (``HYD_spawn (...): execvp error on file
./train (No such file or directory)``), Open MPI's (``mpirun was unable to launch the specified application as it
could not access or execute an executable``, ``mpirun was unable to find the specified executable file``), Slurm's
step daemon (``slurmstepd: error: execve(): train.sh: No such file or directory``), a shell's (``bash: ./train:
Permission denied``, ``cannot execute binary file: Exec format error``, ``torchrun: command not found``), Python's
(``python: can't open file '/home/u/train.py': [Errno 2] No such file or directory``: torchrun's workers given a
script that is not there), a container runtime's (``exec /usr/bin/python: exec format error``).

``launch_failure(text)`` -> the line said as such a failure, or None. Never raises.
"""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# Every pattern below holds one of these: a line holding none is no launch failure (the readers' line gate)
MARKERS = ("execvp error", "execve(", "unable to launch the specified application", "specified executable",
           "xec format error", "Permission denied", "No such file or directory", "command not found",
           "can't open file")
LAUNCH_TEXT = "the program never ran"      # what a launch failure's message opens with (triage.analysis.settle)

# The launchers' and runtimes' own lines, each with the program it could not start and why where the line says them
_LAUNCH = lazy_regex(
    r"execvp error on file (?P<hydra>\S+) \((?P<hydrawhy>[^)]{1,80})\)"
    r"|(?P<ompi>mpirun|mpiexec|prterun|orterun|prte) was unable to (?:launch the specified application as it could "
    r"not (?:access|find)|find the specified executable)"
    r"|execve\(\): (?P<slurm>[^:\s]{1,300}): "
    r"(?P<slurmwhy>No such file or directory|Permission denied|Exec format error)"
    # a shell that could not run what it was told to (not a redirect to a log or data file: that is no program)
    r"|^(?:\S*/)?(?:ba|da|z|k)?sh: (?:line \d+: |\d+: )?(?P<shell>(?:\./|/|~/)[^:\s]{1,300}?|[\w.+-]{1,80}?)"
    r"(?<!\.log)(?<!\.txt)(?<!\.out)(?<!\.err)(?<!\.json)(?<!\.csv)(?<!\.yaml): "
    r"(?P<shellwhy>Permission denied|No such file or directory|cannot execute binary file(?:: Exec format error)?"
    r"|command not found)$"
    r"|(?:^|\s)(?P<py>\S*python[\d.]*(?:\.exe)?): can't open file '(?P<script>[^']{1,300})': \[Errno \d+\] "
    r"(?P<pywhy>[^\n]{1,80})"
    r"|\bexec (?P<container>/\S{1,300}): (?P<containerwhy>exec format error|no such file or directory|"
    r"permission denied)"
    r"|exec user process caused:? \"?(?P<userwhy>exec format error|no such file or directory|permission denied)")
# a command that is not found is a launch failure only where it is the job's launcher or interpreter (a helper
# a script runs, "nvidia-smi: command not found", is no program of the job)
_LAUNCHERS = lazy_regex(r"^(?:python[\d.]*|torchrun|deepspeed|accelerate|mpirun|mpiexec|srun|horovodrun|"
                        r"torch\.distributed\.\w+)$")


def launch_failure(text: str) -> str | None:
    """``text`` (a line without its launcher prefix) said as a launch failure, or None."""
    if not any(marker in text for marker in MARKERS) or len(text) > 2000:
        return None
    found = _LAUNCH.search(text.strip())
    if found is None:
        return None
    groups = found.groupdict()
    if groups["shellwhy"] == "command not found" and not _LAUNCHERS.match(groups["shell"] or ""):
        return None
    program = next((groups[key] for key in ("hydra", "slurm", "shell", "script", "container") if groups[key]), None)
    why = next((groups[key] for key in ("hydrawhy", "slurmwhy", "shellwhy", "pywhy", "containerwhy", "userwhy")
                if groups[key]), None)
    if groups["ompi"]:
        why = "it could not access or execute the executable"
    what = f"could not start {program}" if program else "could not start the program"
    return f"{LAUNCH_TEXT}: {what}{f' ({why.strip()})' if why else ''}: {text.strip()}"[:400]
