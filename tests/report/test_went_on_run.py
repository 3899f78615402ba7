"""A real 2-rank torchrun gloo job (not under triage) whose ranks print error words at start-up and then train to
the end: `triage report` on its captured output, with and without torchrun's rank prefixes, is an all-clear that
quotes the error line the job went on after, never a failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.launch import job_env, torchrun
from tests.helpers.paths import PROGRAMS
from tests.helpers.processes import triage_cmd

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("tee", [True, False])
def test_a_job_that_trained_past_its_start_up_error_words_is_an_all_clear(tmp_path: Path, tee: bool) -> None:
    before = ["--tee", "3"] if tee else []
    job = subprocess.run(torchrun(PROGRAMS / "went_on_job.py", 2, before=before), env=job_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240, check=False)
    assert job.returncode == 0, job.stdout.decode(errors="replace")[-2000:]
    log = tmp_path / "job.log"
    log.write_bytes(job.stdout)
    assert b"step 2 loss" in job.stdout and b"wandb: ERROR" in job.stdout
    done = subprocess.run(triage_cmd("report", str(log), "--format", "json"), capture_output=True, text=True,
                          timeout=120, check=False)
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["verdict"]
    assert report["verdict"]["kind"] == "no_problem_found"
    assert "the job went on after an error line it logged" in report["verdict"]["summary"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
