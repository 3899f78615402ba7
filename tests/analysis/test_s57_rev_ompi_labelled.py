"""Session 57 (rev57 F2, F3): Open MPI's records over several lines that a rank's own process prints (the direct-launch
box of help-ess-*.txt, MPI_ABORT's box where the library prints it) under srun --label's ``N: `` before each line were
not read: the box's sentence is cut by the labels, so srun's direct launch of an Open MPI built without Slurm's PMI read
as rank 1's "*** An error occurred in MPI_Init" (the set-up failure blamed on a rank). Now the MPI records are read
through a launcher's rank labels (triage.load.logs.text._without_label). And Open MPI's Slurm PMI component's failed
init alone ("PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed", read as the set-up failure since
5645104c) then srun's records of the tasks' exit codes was "rank 0 exited with code 1; rank 1 the same way": srun's
records after it are that failure's end, as after the box (triage.parsing.launchers.ompi_direct_launch_at), unless the
run went on past the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_log

_RULE = "--------------------------------------------------------------------------"


def _labelled(label: int, lines: list[str]) -> str:
    return "".join(f"{label}: {line}\n" for line in lines)


@pytest.mark.parametrize("support", ["SLURM's PMI support and therefore cannot", "SLURM support. This usually"])
@pytest.mark.parametrize("crlf", [False, True])
def test_the_direct_launch_box_under_sruns_labels_is_the_set_up_failure(support: str, crlf: bool,
                                                                         tmp_path: Path) -> None:
    box = [_RULE, 'The application appears to have been direct launched using "srun",',
           f"but OMPI was not built with {support}", "execute.", _RULE]
    text = (_labelled(0, box) + _labelled(1, box)
            + _labelled(1, ["[cn014:20871] *** An error occurred in MPI_Init", "[cn014:20871] *** on a NULL communicator",
                            "[cn014:20871] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,"])
            + "srun: error: cn014: tasks 0-1: Exited with exit code 1\n")
    if crlf:
        text = text.replace("\n", "\r\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "direct-launched the program but Open MPI was not built with" in verdict["summary"]


def test_mpi_abort_box_under_sruns_labels_is_read(tmp_path: Path) -> None:
    text = (_labelled(3, [_RULE, "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD", "with errorcode 17.",
                          "", "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", _RULE])
            + "srun: error: cn022: task 3: Exited with exit code 17\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["culprit_ranks"] == [3] and "errorcode 17" in verdict["summary"], verdict["summary"]


def test_the_pmi_components_line_then_sruns_records_is_the_set_up_failure(tmp_path: Path) -> None:
    text = ("[cn014:20871] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed\n"
            "[cn014:20872] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed\n"
            "[cn014:20871] *** An error occurred in MPI_Init\n[cn014:20871] *** on a NULL communicator\n"
            "srun: error: cn014: tasks 0-1: Exited with exit code 1\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "PMI" in verdict["summary"]


def test_a_task_that_failed_after_the_run_went_on_past_the_pmi_line_keeps_its_record(tmp_path: Path) -> None:
    text = ("[cn014:20871] PMI_Get_clique_size [pmix_s1.c:281:s1_init]: Operation failed\n"
            + "".join(f"step {i} residual 1.0e-{i}\n" for i in range(1, 6))
            + "srun: error: cn015: task 3: Exited with exit code 2\n")
    _code, got = report_log(text, tmp_path)
    assert got["verdict"]["culprit_ranks"] == [3], got["verdict"]["summary"]


def test_real_labelled_box_clusterinthecloud_ansible_24(tmp_path: Path) -> None:
    # clusterinthecloud/ansible#24: an Open MPI 3 program run under srun --label in a Slurm job, Slurm built without
    # PMIx (its lines as the issue quotes them, the box's rest as Open MPI's help-ess-*.txt goes on)
    text = ("start\n"
            "0: --------------------------------------------------------------------------\n"
            '0: The application appears to have been direct launched using "srun",\n'
            "0: but OMPI was not built with SLURM's PMI support and therefore cannot\n"
            "0: execute. There are several options for building PMI support under\n"
            "0: SLURM, depending upon the SLURM version you are using:\n"
            "0: \n"
            "0:   version 16.05 or later: you can use SLURM's PMIx support. This\n"
            "0:   requires that you configure and build SLURM --with-pmix.\n"
            "0: \n"
            "0:   Versions earlier than 16.05: you must use either SLURM's PMI-1 or\n"
            "0:   PMI-2 support. SLURM builds PMI-1 by default, or you can manually\n"
            "0:   install PMI-2. You must then build Open MPI using --with-pmi pointing\n"
            "0:   to the SLURM PMI library location.\n"
            "0: \n"
            "0: Please configure as appropriate and try again.\n"
            "0: --------------------------------------------------------------------------\n"
            "0: *** An error occurred in MPI_Init\n"
            "0: *** on a NULL communicator\n"
            "0: *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
            "0: ***    and potentially your MPI job)\n")
    _code, got = report_log(text, tmp_path)
    verdict = got["verdict"]
    assert verdict["kind"] == "exception" and verdict["culprit_ranks"] == [], verdict["summary"]
    assert "direct-launched the program but Open MPI was not built with SLURM's PMI support" in verdict["summary"]
