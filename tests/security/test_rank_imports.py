"""The rank bootstrap imports nothing that the job or a stranger can put on sys.path: a job with a
`triage` package of its own keeps it, and a `triage.py` planted in the ranks' working directory
(reached through an empty PYTHONPATH entry) never runs. Real torchrun jobs under `triage launch`."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.helpers.launch import HOST, job_env, launch_argv, rank_dir, read_json, run_launch, torchrun

OWN_PACKAGE = 'def score():\n    return "USER-TRIAGE-SCORE"\n'
JOB_WITH_OWN_TRIAGE = """\
import triage
print("OWN", triage.score(), flush=True)
"""
PLANTED = """\
import os
open(os.environ["PLANTED_MARKER"], "w").write("ran")
"""
PLAIN_JOB = 'print("PLAIN JOB DONE", flush=True)\n'


def test_a_job_with_its_own_triage_package_keeps_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "triage").mkdir(parents=True)
    (project / "triage" / "__init__.py").write_text(OWN_PACKAGE)
    (project / "train.py").write_text(JOB_WITH_OWN_TRIAGE)
    run = tmp_path / "run"
    done = run_launch(launch_argv(run, torchrun(project / "train.py", 2), host=HOST), job_env(), run)
    assert done.returncode == 0, done.explain()
    for rank in (0, 1):
        assert b"OWN USER-TRIAGE-SCORE\n" in (rank_dir(run, rank) / "output.log").read_bytes()
        assert read_json(rank_dir(run, rank) / "worker.json")["rank"] == rank   # the agent still ran
        assert read_json(rank_dir(run, rank) / "exit.json")["exit_code"] == 0


def test_a_triage_py_planted_in_the_working_directory_never_runs(tmp_path: Path) -> None:
    shared = tmp_path / "shared"          # where the ranks start: a directory someone else wrote into
    shared.mkdir()
    (shared / "triage.py").write_text(PLANTED)
    job = tmp_path / "job"
    job.mkdir()
    (job / "plain.py").write_text(PLAIN_JOB)
    marker = tmp_path / "planted-ran"
    run = tmp_path / "run"                # triage itself starts in tmp_path; the ranks start in shared
    # 'PYTHONPATH=$PYTHONPATH:/x' with PYTHONPATH unset: the empty entry is the working directory
    env = job_env(PYTHONPATH=":" + str(job), PLANTED_MARKER=str(marker))
    ranks = shlex.join(torchrun(job / "plain.py", 2))
    job_argv = ["sh", "-c", f"cd {shlex.quote(str(shared))} && exec {ranks}"]
    done = run_launch(launch_argv(run, job_argv, host=HOST), env, run)
    assert done.returncode == 0, done.explain()
    assert not marker.exists(), "the planted triage.py ran in a rank"
    for rank in (0, 1):
        assert b"PLAIN JOB DONE\n" in (rank_dir(run, rank) / "output.log").read_bytes()
        assert read_json(rank_dir(run, rank) / "worker.json")["rank"] == rank
