"""A launcher that could not start the program: the program never ran on that node, so no rank of it failed.

Read in each launcher's and runtime's words: Hydra/MPICH/Intel MPI's proxy (``HYD_spawn (...): execvp error on file
./train (No such file or directory)``), Open MPI's (``mpirun was unable to launch the specified application as it
could not access or execute an executable``, ``mpirun was unable to find the specified executable file``), Slurm's
step daemon (``slurmstepd: error: execve(): train.sh: No such file or directory``), a shell's (``bash: ./train:
Permission denied``, ``cannot execute binary file: Exec format error``, ``torchrun: command not found``), Python's
(``python: can't open file '/home/u/train.py': [Errno 2] No such file or directory``: torchrun's workers given a
script that is not there; ``python: No module named train``, ``python: Error while finding module specification for
'pkg.train' (ModuleNotFoundError: No module named 'pkg')``: ``python -m`` given an entry module that is not there), a
container runtime's (``exec /usr/bin/python: exec format error``), srun's (``srun: error: Task launch for
StepId=120986.0 failed on node gpu-11: Unable to satisfy cpu bind request``: that node's tasks never started).

torchrun ``--no-python`` starts the program itself (``subprocess.Popen`` in its agent): a program that is not there
or may not run ends torchrun with its own traceback through its worker start (``subprocess_handler.py``, ``in
_popen``) and ``FileNotFoundError: [Errno 2] No such file or directory: './train.sh'`` (or ``PermissionError``,
``OSError: [Errno 8] Exec format error``): ``worker_start_failure(line)`` says that line as a launch failure, where
the reader saw the frame just before it (WORKER_START_FRAME).

``launch_failure(text)`` -> the line said as such a failure, or None. Never raises.
"""

from __future__ import annotations

from triage.lazy_regex import lazy_regex

# Every pattern below holds one of these: a line holding none is no launch failure (the readers' line gate)
MARKERS = ("execvp error", "execve(", "unable to launch the specified application", "specified executable",
           "xec format error", "Permission denied", "No such file or directory", "command not found",
           "can't open file", "No module named ", "Error while finding module specification", "Task launch for ",
           "Unable to allocate resources", "Batch job submission failed", "failed with rc=",
           "error: write to unblock task ")
ALLOC_REFUSED = "Slurm refused it an allocation"   # what an allocation refusal's message says (a script may retry)
LAUNCH_TEXT = "the program never ran"      # what a launch failure's message opens with (triage.analysis.settle)
# what a launch failure in Slurm's step set-up says (a SPANK plugin's, the task's own before its exec): the program's
# path is not what failed (triage.analysis.settle)
BEFORE_EXEC_TEXT = "before the program's exec"

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
    r"|(?:^|\s)\S*python[\d.]*(?:\.exe)?: (?:No module named (?P<module>[\w.]{1,200})$|Error while finding module "
    r"specification for '(?P<spec>[\w.]{1,200})' \((?P<specwhy>[^)\n]{1,200})\))"
    r"|\bexec (?P<container>/\S{1,300}): (?P<containerwhy>exec format error|no such file or directory|"
    r"permission denied)"
    r"|exec user process caused:? \"?(?P<userwhy>exec format error|no such file or directory|permission denied)"
    # srun could not start the step's tasks on a node (src/srun/launch: the node's slurmd refused the launch): "srun:
    # error: Task launch for StepId=120986.0 failed on node gpu-11: Unable to satisfy cpu bind request", "... for
    # 1443722.0 failed on node compute-0-1: Job credential expired"
    r"|Task launch for (?:StepId=)?(?P<step>[\w.+]{1,60}) failed on node (?P<node>[\w.\[\],-]{1,200}): "
    r"(?P<nodewhy>[^\n]{1,200})"
    # Slurm refused the job its allocation (srun, salloc, sbatch; slurm_errno.c's words after it): "srun: error: Unable
    # to allocate resources: Invalid account or account/partition combination specified", "sbatch: error: Batch job
    # submission failed: Requested node configuration is not available": no node ran anything. At the line's start
    # (its own line, not the words quoted in a sentence), and never a transient refusal a wrapper retries after
    # ("Socket timed out on send/recv operation", "Unable to contact slurm controller", "Resource temporarily
    # unavailable"): a retry may have run the job
    r"|^(?P<alloc>srun|salloc|sbatch): error: (?:Unable to allocate resources|Batch job submission failed): "
    r"(?!.*(?:[Tt]imed out|[Tt]emporarily|try again|Unable to contact|[Cc]onnection|[Ii]nterrupted))"
    r"(?P<allocwhy>[^\n]{1,200})"
    # a SPANK plugin that Slurm's plugin stack requires (plugstack.conf's "required") failed in a callback that runs
    # before the task's exec (slurmstepd on the node, srun for its local ones; src/common/spank.c): "spank: required
    # plugin spank_pyxis.so: task_init_privileged() failed with rc=-1" (pyxis: enroot could not import or start the
    # container); the step ends there (its callbacks after the exec, task_exit and exit, are no launch failure)
    r"|\bspank: required plugin (?P<spank>[^\s:]{1,200}): (?P<spankfn>init|init_post_opt|local_user_init|user_init|"
    r"task_init_privileged|task_init|task_post_fork)\(\) failed with rc=(?P<spankrc>-?\d+)"
    # slurmstepd could not release a task it forked to its exec (src/slurmd/slurmstepd/mgr.c, exec_wait_signal_child:
    # the pipe's other end was closed): the task had already ended in its set-up: "slurmstepd: error: write to unblock
    # task 0 failed: Broken pipe" (older Slurm: without the errno's words)
    r"|\berror: write to unblock task (?P<unblock>\d+) failed\b")
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
    if groups["module"]:
        groups["module"], groups["modulewhy"] = f"the module {groups['module']}", "python -m: no such module"
    elif groups["spec"]:
        groups["module"], groups["modulewhy"] = f"the module {groups['spec']}", f"python -m: {groups['specwhy']}"
    if groups["step"]:
        groups["step"] = f"the tasks of step {groups['step']} on node {groups['node']}"
    if groups["alloc"]:
        groups["alloc"], groups["allocwhy"] = "the job", f"{ALLOC_REFUSED}: {groups['allocwhy']}"
    if groups["spank"]:
        groups["spankwhy"] = (f"the required SPANK plugin {groups['spank']} failed in its {groups['spankfn']}(), "
                              f"rc={groups['spankrc']}: Slurm ends the step {BEFORE_EXEC_TEXT}")
    elif groups["unblock"]:
        groups["spankwhy"] = (f"task {groups['unblock']} had ended in its set-up {BEFORE_EXEC_TEXT}: slurmstepd "
                              "could not unblock it")
    program = next((groups[key] for key in ("hydra", "slurm", "shell", "script", "module", "container", "step",
                                                 "alloc")
                    if groups.get(key)), None)
    why = next((groups[key] for key in ("hydrawhy", "slurmwhy", "shellwhy", "pywhy", "modulewhy", "containerwhy",
                                        "userwhy", "nodewhy", "allocwhy", "spankwhy") if groups.get(key)), None)
    if groups["ompi"]:
        why = "it could not access or execute the executable"
    what = f"could not start {program}" if program else "could not start the program"
    return f"{LAUNCH_TEXT}: {what}{f' ({why.strip()})' if why else ''}: {text.strip()}"[:400]


# torchrun's agent starting a worker itself (its frame in the traceback of a --no-python program it could not start)
WORKER_START_FRAME = "subprocess_handler.py"
WORKER_START_LINES = 16     # from that frame to the exception line: subprocess's frames, code lines and carets
_WORKER_START = lazy_regex(r"^(?P<exc>FileNotFoundError|PermissionError|OSError): \[Errno \d+\] (?P<why>[^:\n]{1,80}): "
                           r"'(?P<program>[^'\n]{1,300})'\s*$")


def worker_start_failure(text: str) -> str | None:
    """``text``, the exception line that ends torchrun's traceback through its worker start, said as a launch
    failure (the program torchrun --no-python was given could not be started), or None."""
    found = _WORKER_START.match(text.strip())
    if found is None:
        return None
    return (f"{LAUNCH_TEXT}: could not start {found.group('program')} ({found.group('why')}; torchrun --no-python "
            f"starts it itself, so its agent raised this): {text.strip()}")[:400]


# Open MPI's signal handler in the launcher itself: its backtrace's frame in mpirun's own image ("[host:pid] [ 8]
# mpiexec(orterun+0x7df)[0x404998]", "[ 9] mpirun(+0x13a3)[...]", Open MPI 5's "prterun(...)"), under orte_init's or
# prte_init's topology load and the like: the process that took the signal is the launcher, never a rank
LAUNCHER_FRAME = lazy_regex(r"^\[ ?\d+\] (?:\S*/)?(?P<image>mpirun|mpiexec|orterun|prterun|prte)(?:\.[\w-]+)?\(")
LAUNCHER_ITSELF = "took the signal itself (the launcher, not a rank: its own frame is in the handler's backtrace)"
