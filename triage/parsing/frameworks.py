"""Schedulers', MPI runtimes' and serving/Ray frameworks' own records of how a job or one of its
processes ended, beyond those of :mod:`triage.parsing.launchers`:

- Slurm's ``slurmstepd: error: *** STEP 42.0 ON node07 CANCELLED AT 2026-01-02T03:04:05 DUE TO TIME
  LIMIT ***`` (also PREEMPTION, NODE FAILURE, JOB REQUEUE; ``DUE to SIGNAL Terminated`` and a bare
  ``CANCELLED AT ... ***`` of scancel): the job stopped from outside, the cause of every rank's SIGTERM
  after it; ``DUE TO TASK FAILURE``, ``FAILED (non-zero exit code ...)`` and the signal or bare forms
  after srun's record of a task that failed (srun --kill-on-bad-exit) are a consequence;
- Kubeflow's training operator: ``PyTorchJob train is failed because 1 Worker replica(s) failed.``;
- horovodrun: ``Terminating remaining workers after failure of Process 2.`` (rank 2 failed first);
- torchx's app status: `` *trainer[0]:FAILED (exitcode: 1)`` (then ``hostname: ...``);
- PRRTE's (Open MPI 5) "first process to do so" box with its process name ``[prterun-host-123@1,3]``
  and its ``A process exceeded memory limits`` box; Intel MPI's Hydra box ``RANK 2 PID 4451 RUNNING AT
  host`` / ``KILLED BY SIGNAL: 9 (Killed)``; Hydra's ``one of the processes terminated badly``;
- Kubernetes: a pod's ``Reason: OOMKilled`` / ``Exit Code: 137`` (``kubectl describe pod``), a pod
  listed ``OOMKilled`` or ``Error`` (``kubectl get pods``), ``Back-off restarting failed container``;
  an OOMKilled or evicted pod (``Reason: Evicted`` / ``Message: The node was low on resource: memory``)
  is a stop from outside the job (the kubelet's, the kernel's), not a failure of a rank;
- Ray: the raylet's ``Workers (tasks / actors) killed due to memory pressure (OOM) ... at node (ID: ...,
  IP: 10.0.0.9)``;
- submitit: ``Job 4242_0 (task: 3) with path ... has not produced any output (state: TIMEOUT)`` (Slurm's
  state: a time limit, preemption or node failure is a stop from outside; OUT_OF_MEMORY that task's
  kill) and ``Job (task=3) failed during processing with trace:`` (task 3, the rank, raised);
- SGLang's server: ``Child process unexpectedly failed with exitcode=9. pid=8812`` (the raw wait
  status: 9 is SIGKILL, 256 is exit code 1).

``parse_framework_records(text)`` -> RankDeath records in text order. Never raises.
"""

from __future__ import annotations

import re

from triage.lazy_regex import lazy_regex
from triage.parsing.launchers import RankDeath, signal_name

MARKERS = ("CANCELLED AT", "Evicted", "replica(s) failed", "after failure of Process", ":FAILED", "FAILED (non-zero",
           "Process name:", "exceeded memory limits", "BAD TERMINATION", "terminated badly", "OOMKilled",
           "has not produced any output", "failed during processing", "Back-off restarting",
           "killed due to memory pressure", "Child process unexpectedly failed")

# slurmstepd (src/slurmd/slurmstepd/req.c): "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" with %s "JOB <id>"
# or "STEP <id>"; "DUE to SIGNAL %s" (strsignal: scancel, or srun ending the step); older Slurm: the same with no
# reason ("*** STEP 2.0 ON n1 CANCELLED AT <time> ***", also after srun --kill-on-bad-exit saw a task fail) and
# the host last ("*** JOB 830329 CANCELLED AT <time> DUE TO TIME LIMIT on n447 ***")
_SLURM_CANCEL = lazy_regex(
    r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+)(?: ON (?P<host>\S+))? CANCELLED AT (?P<when>\S+)"
    r"(?: DUE (?:TO|to) (?P<why>TIME LIMIT|PREEMPTION|NODE FAILURE|JOB REQUEUE|TASK FAILURE|SIGNAL [\w ]+?))?"
    r"(?:,[^*\n]*?)?(?: on (?P<old_host>[\w.-]+))? \*\*\*")
# srun's record of a task that ended badly ("srun: error: n3: task 5: Exited with exit code 1", "...: Killed"):
# not "Terminated", which is what a cancellation does to every task
_SRUN_TASK_FAILED = lazy_regex(r"srun: error: (?:[\w.-]+: )?tasks? [\d,-]+: (?!Terminated)")
_SLURM_FAILED = lazy_regex(r"\*\*\* (?P<what>JOB|STEP) (?P<id>\S+) ON (?P<host>\S+) FAILED \(non-zero exit code")
_OPERATOR = lazy_regex(r"(?P<kind>PyTorchJob|TFJob|MPIJob|PaddleJob|XGBoostJob|JAXJob|MXJob) (?P<name>\S+) is "
                       r"(?:failed|restarting) because (?P<n>\d+ )?(?P<rtype>\w+) replica\(s\) failed")
_HOROVOD = lazy_regex(r"Terminating remaining workers after failure of Process (?P<rank>\d+)\.")
# torchx (specs/api.py, AppStatus.format): " *trainer[0]:FAILED (exitcode: 1)" then "timestamp: ..." "hostname: ..."
_TORCHX = lazy_regex(r"^\s[* ](?P<role>[\w-]+)\[(?P<replica>\d+)\]:FAILED(?: \(exitcode: (?P<code>-?\d+)\))?"
                     r"(?:\s+timestamp: [^\n]*\s+hostname: (?P<host>[\w.-]+))?", re.MULTILINE)
_WHY = {"TIME LIMIT": "its time limit was reached", "PREEMPTION": "it was preempted",
        "NODE FAILURE": "a node failed (slurmctld's log says which and why)", "JOB REQUEUE": "it was requeued"}
# PRRTE's process name: "[prterun-host-12345@1,3]" (namespace@jobid, rank); ORTE's "[[49023,1],3]" is in launchers
_PRTE_FIRST = lazy_regex(r"first process to do so was:\s+Process name:\s+\[[\w.-]+@\d+,(?P<rank>\d+)\]"
                         r"(?:\s+Exit code:\s+(?P<code>-?\d+))?")
_PRTE_MEMORY = lazy_regex(r"A process exceeded memory limits:\s+Process name:\s+\[(?:\[\d+,\d+\]|[\w.-]+@\d+),"
                          r"(?P<rank>\d+)\](?:\s+Node:\s+(?P<host>\S+))?")
# Intel MPI's Hydra box: "=   RANK 2 PID 4451 RUNNING AT host" then "=   KILLED BY SIGNAL: 9 (Killed)"
_HYDRA_KILLED = lazy_regex(r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES[\s=]*(?:RANK (?P<rank>\d+) )?"
                           r"PID (?P<pid>\d+) RUNNING AT (?P<host>\S+)[\s=]*KILLED BY SIGNAL: (?P<num>\d+)")
_HYDRA_BADLY = lazy_regex(r"\[mpiexec@(?P<host>[\w.-]+)\][^\n]*one of the processes terminated badly")
# kubectl describe pod: "Name:  train-worker-2" ... "Reason:  OOMKilled" ... "Exit Code:  137"
_K8S_POD_NAME = lazy_regex(r"^Name:\s+(?P<pod>[\w.-]+)\s*$", re.MULTILINE)
_K8S_REASON = lazy_regex(r"^\s+(?:Last State:\s+Terminated\s+)?Reason:\s+(?P<why>OOMKilled|Error)\s*$"
                         r"(?P<rest>(?:\n\s+[\w ]+:[^\n]*){0,4})", re.MULTILINE)
_K8S_EXIT = lazy_regex(r"Exit Code:\s+(?P<code>\d+)")
# kubectl describe pod of an evicted pod: "Status:  Failed" / "Reason:  Evicted" / "Message:  The node was low on
# resource: memory. ..."; kubectl get pods: "train-worker-1   0/1   Evicted   0   5m"
_K8S_EVICTED = lazy_regex(r"^Reason:\s+Evicted\s*$(?:\nMessage:\s+(?P<msg>[^\n]+))?", re.MULTILINE)
_K8S_EVICTED_ROW = lazy_regex(r"^(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+Evicted\s+\d+", re.MULTILINE)
# kubectl get pods: "train-worker-1   0/1   OOMKilled   3 (20s ago)   5m"
_K8S_ROW = lazy_regex(r"^(?P<pod>[a-z0-9][\w.-]*)\s+\d+/\d+\s+(?P<why>OOMKilled)\s+\d+", re.MULTILINE)
_K8S_BACKOFF = lazy_regex(r"Back-off restarting failed container (?:(?P<container>[\w.-]+) )?in pod "
                          r"(?P<pod>[\w.-]+?)(?:_[\w.-]+)?(?:\(|\s|$)")
# Ray's raylet: "1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other
# reasons at node (ID: <id>, IP: 10.0.0.9) over the last time period."
_RAY_OOM = lazy_regex(r"(?P<n>\d+) Workers? \(tasks / actors\) killed due to memory pressure \(OOM\)[^\n]*?"
                      r"at node \(ID: \w+, IP: (?P<ip>[\w.:-]+)\)")
# submitit (core/core.py): "Job 4242_0 (task: 0) with path <result.pkl>\nhas not produced any output (state: TIMEOUT)"
# (the task is the rank: submitit's global rank is SLURM_PROCID) and "Job (task=3) failed during processing with trace:"
_SUBMITIT_NO_OUTPUT = lazy_regex(r"Job (?P<job>\S+) \(task: (?P<task>\d+)\) with path \S+\s+has not produced any "
                                 r"output \(state: (?P<state>[A-Z_]+)")
_SUBMITIT_FAILED = lazy_regex(r"Job \(task=(?P<task>\d+)\) failed during processing")
_SUBMITIT_OUTSIDE = {"TIMEOUT": "its time limit was reached", "PREEMPTED": "it was preempted",
                     "NODE_FAIL": "a node failed", "CANCELLED": "it was cancelled", "DEADLINE": "its deadline passed"}
_SGLANG_CHILD = lazy_regex(r"Child process unexpectedly failed with (?:exitcode=|an exit code )(?P<status>\d+)\. "
                           r"pid=(?P<pid>\d+)")


def parse_framework_records(text: str) -> tuple[RankDeath, ...]:
    """The records above in ``text``, in text order. Never raises."""
    if not any(marker in text for marker in MARKERS):
        return ()
    out = [*_slurm(text), *_mpi(text), *_kubernetes(text), *_ray(text), *_submitit(text), *_launchers(text)]
    for match in _SGLANG_CHILD.finditer(text):
        status = int(match.group("status"))
        sig = signal_name(str(status & 0x7F)) if status & 0x7F else None
        code = None if sig else status >> 8
        out.append(RankDeath(None, sig, code, None, int(match.group("pid")), _line(text, match), offset=match.start()))
    return tuple(sorted(out, key=lambda d: d.offset))


def _line(text: str, match: re.Match[str]) -> str:
    head = text.rfind("\n", 0, match.start()) + 1
    tail = text.find("\n", match.end())
    return " ".join(text[head:tail if tail >= 0 else len(text)].split())[:300]


def _slurm(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _SLURM_CANCEL.finditer(text):
        why = match.group("why") or ""
        entity = f"{match.group('what')} {match.group('id')}"
        host = match.group("host") or match.group("old_host")
        host = host if host and host.strip(".") else None          # ("ON ..." in a redacted paste)
        said = " ".join(match.group(0).split())
        failed_before = _SRUN_TASK_FAILED.search(text, 0, match.start()) is not None
        if why == "TASK FAILURE" or ((not why or why.startswith("SIGNAL")) and failed_before):
            # srun's --kill-on-bad-exit (or its end of the step) after a task failed: a consequence, never the cause
            note = f"Slurm cancelled {entity}{f' on {host}' if host else ''} after a task failed: {said}"
            out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(),
                                 consequence=True))
            continue
        if not why or why.startswith("SIGNAL"):
            note = (f"Slurm cancelled {entity}{f' on {host}' if host else ''} at {match.group('when')} from outside "
                    f"the job (scancel, or a signal sent to the step; no task had failed before it in this input): "
                    f"{said}")
            out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(), outside=True))
            continue
        note = (f"Slurm stopped {entity}{f' on {host}' if host else ''} at {match.group('when')}: {_WHY[why]}; the "
                f"ranks' SIGTERM after this is its consequence ({said})")
        out.append(RankDeath(None, "SIGTERM", None, host, None, note[:400], offset=match.start(), outside=True))
    for match in _SLURM_FAILED.finditer(text):
        out.append(RankDeath(None, None, 1, match.group("host"), None, _line(text, match), offset=match.start(),
                             consequence=True))
    return out


def _launchers(text: str) -> list[RankDeath]:
    """Kubeflow's training operator, horovodrun and torchx."""
    out: list[RankDeath] = []
    for match in _OPERATOR.finditer(text):
        out.append(RankDeath(None, None, 1, None, None, _line(text, match), offset=match.start()))
        break            # (it says it again at each reconcile)
    for match in _HOROVOD.finditer(text):
        out.append(RankDeath(int(match.group("rank")), None, None, None, None, _line(text, match), first=True,
                             offset=match.start()))
    for match in _TORCHX.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        sig = signal_name(str(-code)) if code is not None and code < 0 else None
        said = f"torchx: {match.group('role')}[{match.group('replica')}] FAILED" + (
            f" (exitcode: {code})" if code is not None else "")
        out.append(RankDeath(None, sig, None if sig else (code or 1), match.group("host"), None, said,
                             offset=match.start()))
    return out


def _submitit(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _SUBMITIT_NO_OUTPUT.finditer(text):
        state, task = match.group("state"), int(match.group("task"))
        said = " ".join(match.group(0).split())
        if state in _SUBMITIT_OUTSIDE:      # Slurm ended the job from outside: no rank failed
            note = f"submitit: Slurm stopped job {match.group('job')}: {_SUBMITIT_OUTSIDE[state]} ({said})"
            out.append(RankDeath(None, "SIGTERM", None, None, None, note[:400], offset=match.start(), outside=True))
        elif state == "OUT_OF_MEMORY":
            out.append(RankDeath(task, "SIGKILL", None, None, None, f"out of memory (Slurm's OOM kill): {said}"[:400],
                                 offset=match.start()))
        else:
            out.append(RankDeath(task, None, 1, None, None, said[:400], offset=match.start()))
    for match in _SUBMITIT_FAILED.finditer(text):
        out.append(RankDeath(int(match.group("task")), None, 1, None, None, _line(text, match), offset=match.start()))
    return out


def _mpi(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _PRTE_FIRST.finditer(text):
        code = int(match.group("code")) if match.group("code") else None
        out.append(RankDeath(int(match.group("rank")), None, code, None, None, " ".join(match.group(0).split()),
                             first=True, offset=match.start()))
    for match in _PRTE_MEMORY.finditer(text):
        out.append(RankDeath(int(match.group("rank")), "SIGKILL", None, match.group("host"), None,
                             "out of memory: " + " ".join(match.group(0).split()), offset=match.start()))
    for match in _HYDRA_KILLED.finditer(text):
        rank = int(match.group("rank")) if match.group("rank") else None
        out.append(RankDeath(rank, signal_name(match.group("num")), None, match.group("host"),
                             int(match.group("pid")), " ".join(match.group(0).replace("=", " ").split()),
                             first=True, offset=match.start()))
    if not out and "BAD TERMINATION" not in text:
        for match in _HYDRA_BADLY.finditer(text):
            out.append(RankDeath(None, None, 1, None, None, _line(text, match), offset=match.start()))
            break        # (each proxy says it again)
    return out


def _kubernetes(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _K8S_REASON.finditer(text):
        pod = None
        for name in _K8S_POD_NAME.finditer(text, 0, match.start()):
            pod = name.group("pod")
        code_match = _K8S_EXIT.search(match.group("rest"))
        code = int(code_match.group("code")) if code_match else None
        oom = match.group("why") == "OOMKilled"
        if not oom and not code:
            continue
        sig = "SIGKILL" if oom or code == 137 else signal_name(str(code - 128)) if code and 128 < code < 160 else None
        how = "OOMKilled (the container hit its memory limit: the kernel sent SIGKILL)" if oom else "Error"
        said = f"pod {pod or '?'}: {how}" + (f", exit code {code}" if code is not None else "")
        out.append(RankDeath(None, sig, None if sig else code, pod, None, said, offset=match.start(), outside=oom))
    for match in _K8S_ROW.finditer(text):
        out.append(RankDeath(None, "SIGKILL", None, match.group("pod"), None,
                             f"pod {match.group('pod')}: OOMKilled (the container hit its memory limit: the kernel "
                             f"sent SIGKILL): {_line(text, match)}"[:300], offset=match.start(), outside=True))
    for match in _K8S_EVICTED.finditer(text):
        pod = None
        for name in _K8S_POD_NAME.finditer(text, 0, match.start()):
            pod = name.group("pod")
        why = f": {match.group('msg').strip()[:200]}" if match.group("msg") else ""
        out.append(RankDeath(None, "SIGTERM", None, pod, None, f"the kubelet Evicted pod {pod or '?'}{why}",
                             offset=match.start(), outside=True))
    for match in _K8S_EVICTED_ROW.finditer(text):
        out.append(RankDeath(None, "SIGTERM", None, match.group("pod"), None,
                             f"the kubelet Evicted pod {match.group('pod')}: {_line(text, match)}"[:300],
                             offset=match.start(), outside=True))
    if not out:
        for match in _K8S_BACKOFF.finditer(text):
            out.append(RankDeath(None, None, 1, match.group("pod"), None, _line(text, match), offset=match.start()))
            break        # (the kubelet repeats it: the container failed; its own log says why)
    return out


def _ray(text: str) -> list[RankDeath]:
    out: list[RankDeath] = []
    for match in _RAY_OOM.finditer(text):
        if match.group("n") == "0":
            continue
        out.append(RankDeath(None, "SIGKILL", None, match.group("ip"), None,
                             f"Ray killed a worker for memory pressure (OOM) on node {match.group('ip')}: "
                             f"{_line(text, match)}"[:300], offset=match.start()))
    return out
