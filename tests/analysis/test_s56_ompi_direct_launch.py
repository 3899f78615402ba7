"""Session 56 (fix56a item 6): Open MPI direct launched by a resource manager's launcher it was not built for, its box
(help-pmix-base.txt / help-ess-*.txt) ``The application appears to have been direct launched using "srun", but OMPI was
not built with SLURM's PMI support and therefore cannot execute.`` (or ``... not built with SLURM support. This usually
happens ...``, ``... using "aprun", but OMPI was not built with ALPS support``), after the PMI client's own line
(``[host:pid] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed``, ``PMI2_Init failed to intialize.  Return
code: 14``): MPI's initialisation failed before any rank ran, a set-up failure of no rank, with what to do (mpirun,
``srun --mpi=pmix``, Open MPI built with Slurm's PMI or PMIx). It was a failure of unknown place, or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import report_log

_RULE = "-" * 74
_PMI_BOX = ("The application appears to have been direct launched using \"srun\",\n"
            "but OMPI was not built with SLURM's PMI support and therefore cannot\n"
            "execute. There are several options for building PMI support under\n"
            "SLURM, depending upon the SLURM version you are using:\n\n"
            "  version 16.05 or later: you can use SLURM's PMIx support. This\n"
            "  requires that you configure and build SLURM --with-pmix.\n\n"
            "Please configure as appropriate and try again.\n")
_SLURM_BOX = ("The application appears to have been direct launched using \"srun\",\n"
              "but OMPI was not built with SLURM support. This usually happens\n"
              "when OMPI was not configured --with-slurm and we weren't able\n"
              "to discover a SLURM installation in the usual places.\n\n"
              "Please configure as appropriate and try again.\n")


@pytest.mark.parametrize(("head", "box", "support"), [
    ("[gpu-c-17.hpc.example.org:48812] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed\n", _PMI_BOX,
     "SLURM's PMI support"),
    (f"{_RULE}\nPMI2_Init failed to intialize.  Return code: 14\n{_RULE}\n", _PMI_BOX, "SLURM's PMI support"),
    ("", _SLURM_BOX, "SLURM support"),
])
def test_a_direct_launch_box_is_mpis_start_up_failure(head: str, box: str, support: str, tmp_path: Path) -> None:
    text = f"$ srun -N 2 -n 8 ./lulesh2.0 -s 40\n{head}{_RULE}\n{box}{_RULE}\n"
    code, got = report_log(text, tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert f"srun direct-launched the program but Open MPI was not built with {support}" in verdict["summary"]
    assert "no rank at fault" in verdict["summary"] and "srun --mpi=pmix" in verdict["summary"]


def test_aprun_under_alps(tmp_path: Path) -> None:
    text = (f"{_RULE}\nThe application appears to have been direct launched using \"aprun\",\n"
            "but OMPI was not built with ALPS support. This usually happens\nwhen OMPI was not configured "
            f"--with-alps.\n{_RULE}\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "aprun direct-launched the program but Open MPI was not built with ALPS support" in verdict["summary"]


@pytest.mark.parametrize("line", [
    "[cn-0412:117731] PMI_Get_universe_size [pmix_s1.c:312:s1_init]: Operation failed",
    "[gpu17.cluster:9021] PMI2_Job_GetId [pmix_s2.c:240:s2_init]: Other PMI error",
])
def test_open_mpis_pmi_client_failing_alone(line: str, tmp_path: Path) -> None:
    # (Open MPI's s1/s2 component's OPAL_PMI_ERROR line without the box after it: the call, its place, PMI's error)
    code, got = report_log(line + "\n", tmp_path)
    assert code not in (0, 2, 70)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "Slurm PMI client failed in its start-up" in verdict["summary"] and "no rank at fault" in verdict["summary"]


def test_a_quoted_box_in_a_run_that_went_on_is_no_failure(tmp_path: Path) -> None:
    text = (f"{_RULE}\n{_PMI_BOX}{_RULE}\n" + "".join(f"step {i} loss 0.{i:03d}\n" for i in range(300)))
    _code, got = report_log(text, tmp_path)
    assert "direct-launched" not in str(got.get("verdict", {}))


def test_real_spack_openmpi_pmi(tmp_path: Path) -> None:
    # spack/spack#22086: openmpi@4.1.0+pmi under srun on RIT's cluster
    log = (REPO / "tests/realworld/cases/spack__spack__22086/log.txt").read_text(encoding="utf-8")
    _code, got = report_log(log, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "PMI_Get_clique_size" in verdict["summary"] and "SLURM's PMI support" in verdict["summary"]
