"""What `triage launch` leaves as it was in and around a rank (real jobs under `triage launch`):

- a process that a rank starts (a subprocess, a compile worker, a spawned DataLoader worker)
  inherits the rank's environment, bootstrap included, but is no rank: nothing of triage is
  imported into it, and a package of its own named `triage.worker` is its own;
- a rank started with SIGTERM ignored keeps it ignored for the programs it runs (a handler,
  unlike SIG_IGN, is reset to the default by exec)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun

CHILD = ("import json, sys, triage.worker; "
         "print('CHILD ' + json.dumps([sorted(m for m in sys.modules if m.startswith('triage')), "
         "getattr(triage.worker, 'OWN', None)]), flush=True)")
RANK_STARTS_A_CHILD = f"""\
import os, subprocess, sys
# the child puts the job's own package first; the rank's PYTHONPATH (triage's bootstrap) follows
path = os.path.dirname(os.path.abspath(__file__)) + os.pathsep + os.environ["PYTHONPATH"]
subprocess.run([sys.executable, "-c", {CHILD!r}], check=True, env={{**os.environ, "PYTHONPATH": path}})
print("RANK DONE", flush=True)
"""
SIGTERM_PROBE = """\
import os, signal, subprocess, sys
status = subprocess.run(["grep", "SigIgn", "/proc/self/status"], capture_output=True, text=True, check=True)
ignored = int(status.stdout.split()[1], 16) & (1 << (signal.SIGTERM - 1))
print("CHILD IGNORES SIGTERM", bool(ignored), flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("RANK SURVIVED ITS SIGTERM", flush=True)
"""


def _child_reports(log: bytes) -> list[object]:
    return [json.loads(line[6:]) for line in log.splitlines() if line.startswith(b"CHILD ")]


def test_a_process_a_rank_starts_gets_nothing_of_triage(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "triage" / "worker").mkdir(parents=True)
    (project / "triage" / "__init__.py").write_text("")
    (project / "triage" / "worker" / "__init__.py").write_text("OWN = 'the job own triage.worker'\n")
    (project / "train.py").write_text(RANK_STARTS_A_CHILD)
    run = tmp_path / "run"
    done = run_launch(launch_argv(run, torchrun(project / "train.py", 2), host=HOST), job_env(), run)
    assert done.returncode == 0, done.explain()
    for rank in (0, 1):
        log = (rank_dir(run, rank) / "output.log").read_bytes()
        assert b"RANK DONE\n" in log, done.explain()
        # the child's own import of triage.worker is the job's; nothing else of triage was loaded
        assert _child_reports(log) == [[["triage", "triage.worker"], "the job own triage.worker"]], log
        assert read_json(rank_dir(run, rank) / "worker.json")["rank"] == rank    # the rank's agent ran


def test_an_ignored_sigterm_stays_ignored_for_what_the_rank_runs(tmp_path: Path) -> None:
    job = tmp_path / "probe.py"
    job.write_text(SIGTERM_PROBE)
    run = tmp_path / "run"
    launcher = ["sh", "-c", f"trap '' TERM; exec {shlex.quote(sys.executable)} {shlex.quote(str(job))}"]
    done = run_launch(launch_argv(run, launcher, host=HOST), job_env(RANK="0"), run)
    assert done.returncode == 0, done.explain()
    log = (rank_dir(run, 0) / "output.log").read_bytes()
    assert b"CHILD IGNORES SIGTERM True\n" in log, done.explain()
    assert b"RANK SURVIVED ITS SIGTERM\n" in log
    assert read_json(rank_dir(run, 0) / "exit.json")["exit_code"] == 0
