"""Session 50: a shell's `set -x` trace ("+ mpirun -np 4 ...", "++ hostname") is a command the script ran, never a
cause: not the launch agent's line above Open MPI's daemon box, not a failure line of words triage has no reader for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict
from triage.parsing.frameworks import parse_framework_records
from triage.parsing.unread_failure import unread_failure

TRACE = "+ module load openmpi/4.1.1\n++ hostname\n+ echo 'Running on node01'\nRunning on node01\n"
BOX = ("--------------------------------------------------------------------------\n"
       "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n\n"
       "* not finding the required libraries and/or binaries on\n  one or more nodes. Please check your PATH and "
       "LD_LIBRARY_PATH\n  settings, or configure OMPI with --enable-orterun-prefix-by-default\n"
       "--------------------------------------------------------------------------\n")


@pytest.mark.parametrize("command", ["+ mpirun -np 4 --hostfile hosts.txt python train.py",
                                     "++ mpirun -np 4 ./a.out", "+++ srun mpirun ./a.out",
                                     "  + mpiexec -n 8 ./xhpl",
                                     # (PS4 set to bash's debugging idiom, and zsh's default "+%N:%i> ")
                                     "+(train.sh:12): main(): mpirun -np 4 ./a.out",
                                     "++(/home/u/job.sh:40): mpirun -np 4 ./a.out",
                                     "+train.sh:12: mpirun -np 4 ./a.out", "+/opt/job.sh:40:main: mpirun -np 4 ./a.out",
                                     "+train.zsh:12> mpirun -np 4 ./a.out"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_traced_command_above_the_daemon_box_is_no_cause(command: str, eol: str, tmp_path: Path) -> None:
    text = (TRACE + command + "\n" + BOX + "+ exit 1\n").replace("\n", eol)
    [record] = parse_framework_records(text)
    assert "no rank ran" in record.text and "mpirun -np" not in record.text and "+" not in record.text
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "exception" and "could not start its daemons" in got["summary"]
    assert command.strip() not in got["summary"]


def test_launch_agents_line_above_the_box_stays_its_cause_under_a_trace(tmp_path: Path) -> None:
    text = TRACE + "+ mpirun -np 4 ./a.out\nbash: orted: command not found\n" + BOX
    [record] = parse_framework_records(text)
    assert "orted: command not found" in record.text


@pytest.mark.parametrize(("line", "output"), [("+ echo 'ERROR: training failed'", "ERROR: training failed"),
                                              ("++ echo 'FATAL: cannot open data dir'",
                                               "FATAL: cannot open data dir"),
                                              ("+(run.sh:9): echo 'ERROR: training failed'",
                                               "ERROR: training failed"),
                                              ("+run.zsh:9> echo 'FATAL: no GPU'", "FATAL: no GPU")])
def test_traced_command_is_no_failure_line(line: str, output: str) -> None:
    assert unread_failure(line) is None
    assert unread_failure(output) is not None     # (what the command printed is read as before)


def test_echoed_failure_is_quoted_not_its_trace(tmp_path: Path) -> None:
    text = TRACE + "+ mpirun -np 4 ./a.out\n+ echo 'ERROR: mpirun failed'\nERROR: mpirun failed\n"
    got = failure_verdict(text, tmp_path)
    assert "ERROR: mpirun failed" in got["summary"] and "+ echo" not in got["summary"]


def test_real_daemon_box_under_a_trace(tmp_path: Path) -> None:
    # torchpack#24's box as Open MPI printed it (without the ssh line above it), in a job script run with `set -x`
    log = (REPO / "tests/realworld/cases/zhijian-liu__torchpack__24/log.txt").read_text(encoding="utf-8")
    box = log[log.index("-----"):]
    text = TRACE + "+ mpirun -np 4 -H localhost:4 python train.py\n" + box
    got = failure_verdict(text, tmp_path)
    assert "could not start its daemons" in got["summary"] and "+ mpirun" not in got["summary"]
