"""What SLURM knows about a job: its state and its nodes (squeue / scontrol, run as argv)."""

from __future__ import annotations

import enum
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from triage.errors import InputError, RemoteError, ToolMissingError
from triage.lazy_regex import lazy_regex
from triage.remote.names import validate_host, validate_job_id

QUERY_TIMEOUT_S = 30.0
_FIELD = lazy_regex(r"(\w+)=(\S*)")


class JobPhase(str, enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    ENDING = "ending"          # COMPLETING and the like: its processes are going away


_PENDING = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"}
_RUNNING = {"RUNNING", "SUSPENDED", "STOPPED", "RESIZING"}
_ENDING = {"COMPLETING", "SIGNALING", "STAGE_OUT"}


def phase_of(state: str) -> JobPhase:
    base = state.split()[0].rstrip("+").upper() if state.strip() else ""
    if base in _PENDING:
        return JobPhase.PENDING
    if base in _RUNNING:
        return JobPhase.RUNNING
    if base in _ENDING:
        return JobPhase.ENDING
    return JobPhase.FINISHED


@dataclass(frozen=True)
class SlurmJob:
    job_id: str
    state: str                 # SLURM's own word: RUNNING, PENDING, COMPLETED, ...
    nodes: tuple[str, ...]     # expanded node names (empty while pending)
    reason: str = ""           # squeue %r: why pending, or None

    @property
    def phase(self) -> JobPhase:
        return phase_of(self.state)


class JobNotCollectable(InputError):
    default_hint = "`triage collect --job` needs a running job; for a finished job use `triage report RUN_DIR`"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissingError(f"{name} not found on PATH: run `triage collect --job` on a SLURM login node",
                               hint="or use `triage collect --hosts h1,h2` over SSH")
    return path


def run_slurm(argv: Sequence[str], timeout: float = QUERY_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    command = [_tool(argv[0]), *argv[1:]]
    try:
        return subprocess.run(command, check=False, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        raise RemoteError(f"{argv[0]} did not answer in {timeout:.0f}s (is slurmctld up?)",
                          hint="check `scontrol ping`") from error


def expand_hostlist(expression: str) -> list[str]:
    """``node[1-3],gpu01`` -> names, expanded by SLURM itself (``scontrol show hostnames``)."""
    if not expression or expression in ("(null)", "None"):
        return []
    result = run_slurm(["scontrol", "show", "hostnames", expression])
    if result.returncode != 0:
        raise RemoteError(f"scontrol could not expand host list {expression!r}: {_first_line(result.stderr)}")
    return [validate_host(name) for name in result.stdout.split()]


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def _squeue(job_id: str) -> SlurmJob | None:
    result = run_slurm(["squeue", "-h", "-j", job_id, "-o", "%T|%N|%r"])
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0 or not lines:
        return None
    state, nodelist, reason = (lines[0].split("|") + ["", ""])[:3]
    nodes = expand_hostlist(nodelist) if phase_of(state) is JobPhase.RUNNING else []
    return SlurmJob(job_id=job_id, state=state.strip(), nodes=tuple(nodes), reason=reason.strip())


def _scontrol(job_id: str) -> SlurmJob | None:
    result = run_slurm(["scontrol", "-o", "show", "job", job_id])
    if result.returncode != 0 or not result.stdout.strip():
        if "invalid job id" in result.stderr.lower() or not result.stdout.strip():
            return None
        raise RemoteError(f"scontrol show job {job_id} failed: {_first_line(result.stderr)}")
    fields = dict(_FIELD.findall(result.stdout.splitlines()[0]))
    state = fields.get("JobState", "UNKNOWN")
    nodes = expand_hostlist(fields.get("NodeList", "")) if phase_of(state) is JobPhase.RUNNING else []
    return SlurmJob(job_id=job_id, state=state, nodes=tuple(nodes), reason=fields.get("Reason", ""))


def find_job(job_id: str) -> SlurmJob:
    """The job's state and nodes; raises :class:`JobNotCollectable` unless it is running."""
    validate_job_id(job_id)
    job = _squeue(job_id) or _scontrol(job_id)
    if job is None:
        raise JobNotCollectable(f"job {job_id}: SLURM does not know this job (wrong id, or it ended a while ago)",
                                hint="check the id with `squeue -u $USER`; a finished job's run directory "
                                     "can be read with `triage report RUN_DIR`")
    if job.phase is JobPhase.PENDING:
        why = f" (reason: {job.reason})" if job.reason and job.reason != "None" else ""
        raise JobNotCollectable(f"job {job_id} is still pending{why}: it has no processes to collect yet",
                                hint=f"wait until `squeue -j {job_id}` shows RUNNING")
    if job.phase is JobPhase.ENDING:
        raise JobNotCollectable(f"job {job_id} is ending (state {job.state}): its processes are going away, "
                                "nothing left to collect",
                                hint="its run directory (under triage launch) can be read with `triage report RUN_DIR`")
    if job.phase is JobPhase.FINISHED:
        raise JobNotCollectable(f"job {job_id} has already finished (state {job.state}): nothing left to collect")
    if not job.nodes:
        raise JobNotCollectable(f"job {job_id} is {job.state} but SLURM lists no nodes for it")
    return job


def srun_argv(job_id: str, node: str, command: Sequence[str]) -> list[str]:
    """Run ``command`` (argv) once on ``node`` inside the job's allocation, next to its steps.

    ``--overlap`` shares the job's CPUs with its running steps (without it srun waits for free
    CPUs, i.e. forever); ``--mem=0`` lets the step use the job's memory instead of asking for more.
    """
    validate_job_id(job_id)
    validate_host(node)
    return ["srun", "--jobid", job_id, "--overlap", "-N1", "-n1", "-w", node, "--mem=0",
            "--job-name=triage-collect", "--quiet", "--", *command]


def job_pids_here(job_id: str) -> set[int]:
    """The pids SLURM assigns to ``job_id`` on this node (``scontrol listpids``): SLURM's own
    record, not a variable in the processes' environment that any user could set."""
    job = validate_job_id(job_id)
    run = run_slurm(["scontrol", "listpids", job])
    if run.returncode != 0:
        raise RemoteError(f"scontrol listpids {job} failed: {_first_line(run.stderr or run.stdout)}",
                          hint="is the job running on this node? (`squeue -j JOB -o %N`)")
    pids = set()
    for line in run.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].isdigit() and len(fields[0]) < 10:
            pids.add(int(fields[0]))
    return pids
