"""Session 50 (rev47 item 8): a record that says a process failed, not with which code, is said so ("its exit code is
not in this input"), never "exited with code 1"; and a pod's failure it got over (the kubelet's back-off, a
container's last Error) where every pod kubectl shows ended well (Completed, Succeeded) is a note, not the job's
failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_log
from triage.parsing.frameworks import parse_framework_records, pods_ended_well

PROGRESS = "".join(f"{prefix}epoch 2 step {n} loss 0.7\n" for n in (100, 200) for prefix in ("0: ", "1: "))


@pytest.mark.parametrize("record", [
    "slurmstepd: error: *** STEP 4242.0 ON node01 FAILED (non-zero exit code) ***",
    ("Warning  PyTorchJobFailed  2m  pytorchjob-controller  PyTorchJob train-job is failed because 1 Worker replica(s) "
     "failed."),
    "AppStatus:\n    State: FAILED\n    Num Restarts: 0\n    Roles:\n *trainer[0]:FAILED",
    "[mpiexec@node01] control_cb (pm/pmiserv/pmiserv_cb.c:1108): one of the processes terminated badly; aborting",
    ("28m  Warning  BackOff  pod/train-job-worker-0  Back-off restarting failed container pytorch in pod "
     "train-job-worker-0_default(1b2c)"),
    "submitit ERROR: Job (task=3) failed during processing with trace:",
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_failure_without_its_code_is_never_code_1(record: str, eol: str, tmp_path: Path) -> None:
    text = (PROGRESS + record + "\n").replace("\n", eol)
    assert any(d.code_unsaid for d in parse_framework_records(text.replace("\r\n", "\n")))
    got = failure_verdict(text, tmp_path)
    assert "code 1" not in got["summary"] and "exit code is not in this input" in got["summary"], got["summary"]


@pytest.mark.parametrize(("record", "code"), [
    ("Warning  ExitedWithCode  2m  pytorchjob-controller  Pod: default.train-worker-2 exited with code 3", "3"),
    ("AppStatus:\n    State: FAILED\n    Roles:\n *trainer[0]:FAILED (exitcode: 2)", "2"),
])
def test_a_code_the_input_gives_is_still_said(record: str, code: str, tmp_path: Path) -> None:
    _, out = report_log(PROGRESS + record + "\n", tmp_path)
    assert f"code {code}" in out["verdict"]["summary"] or f"exitcode: {code}" in out["verdict"]["summary"]


def test_real_hydra_line_says_no_code(tmp_path: Path) -> None:
    # SPECFEM/specfem3d#643's Hydra line, without its box (which gives EXIT CODE: 139)
    log = (REPO / "tests/realworld/cases/SPECFEM__specfem3d__643/log.txt").read_text(encoding="utf-8")
    [line] = [x for x in log.splitlines() if "terminated badly" in x]
    got = failure_verdict(PROGRESS + line + "\n", tmp_path)
    assert "code 1" not in got["summary"] and "exit code is not in this input" in got["summary"]


# kubectl's own output (kubectl get pods, get events, describe pod) of a job whose pods failed, were restarted and
# ended well
PODS = ("NAME                    READY   STATUS      RESTARTS   AGE\n"
        "train-job-worker-0      0/1     {w0}   2          35m\n"
        "train-job-worker-1      0/1     {w1}   2          35m\n")
EVENTS = ("LAST SEEN   TYPE      REASON      OBJECT                         MESSAGE\n"
          "28m         Warning   BackOff     pod/train-job-worker-0         Back-off restarting failed container "
          "pytorch in pod train-job-worker-0_default(1b2c)\n"
          "28m         Warning   BackOff     pod/train-job-worker-1         Back-off restarting failed container "
          "pytorch in pod train-job-worker-1_default(3d4e)\n")
DESCRIBE = ("Name:             train-job-worker-0\nNamespace:        default\nNode:             node-3/10.0.0.3\n"
            "Status:           {status}\nContainers:\n  pytorch:\n    State:          Terminated\n"
            "      Reason:       {reason}\n      Exit Code:    {code}\n    Last State:     Terminated\n"
            "      Reason:       Error\n      Exit Code:    1\n    Restart Count:  2\n"
            "Events:\n  Type     Reason     Age                From               Message\n"
            "  ----     ------     ----               ----               -------\n"
            "  Warning  BackOff    28m (x2 over 29m)  kubelet            Back-off restarting failed container pytorch "
            "in pod train-job-worker-0_default(1b2c)\n")


@pytest.mark.parametrize("text", [
    PODS.format(w0="Completed", w1="Completed") + EVENTS,
    EVENTS + PODS.format(w0="Completed", w1="Succeeded"),
    DESCRIBE.format(status="Succeeded", reason="Completed", code=0),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_restart_every_pod_got_over_is_no_failure(text: str, eol: str, tmp_path: Path) -> None:
    assert pods_ended_well(text) and parse_framework_records(text) == ()
    code, out = report_log(text.replace("\n", eol), tmp_path)
    assert code == 0 and out["verdict"]["kind"] == "no_problem_found", out["verdict"]
    assert "Back-off restarting" in out["verdict"]["summary"] or "Exit Code:" in out["verdict"]["summary"]   # (a note)


@pytest.mark.parametrize("text", [
    PODS.format(w0="Completed", w1="CrashLoopBackOff") + EVENTS,          # one pod still fails
    PODS.format(w0="Completed", w1="Running  ") + EVENTS,                 # one has not ended
    EVENTS,                                                               # no pod's state shown
    DESCRIBE.format(status="Running", reason="Error", code=2),
])
def test_a_pod_not_shown_ended_well_keeps_its_failure(text: str, tmp_path: Path) -> None:
    assert not pods_ended_well(text)
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "code 1" not in got["summary"], got
