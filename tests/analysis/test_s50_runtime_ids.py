"""Session 50 (rev47 item 8): what a runtime's own number is. LSF's kill at a resource limit (TERM_MEMLIMIT, ...) is said
with the end its report gives ("Exited with exit code 143": SIGTERM), never a SIGKILL the input does not show; Charm++'s
"Processor N" in an SMP or multicore build is a worker thread (PE N), no process's rank; NWChem's input line number
under its "current input line :" is no rank label."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.helpers.report import failure_verdict, report_log
from triage.parsing.log_owners import attribute_lines

LSF = ("Sender: LSF System <lsfadmin@node12>\nSubject: Job 4821: <python train.py> in cluster <c1> Exited\n\n"
       "Job <python train.py> was submitted from host <login1> by user <alice> in cluster <c1>.\n"
       "------------------------------------------------------------\n\n"
       "TERM_{code}: job killed after reaching LSF {limit} limit.\n{end}\n"
       "Resource usage summary:\n\n    CPU time :                                   812.00 sec.\n")


@pytest.mark.parametrize(("code", "limit"), [("MEMLIMIT", "memory usage"), ("THREADLIMIT", "thread"),
                                             ("SWAP", "swap")])
@pytest.mark.parametrize(("end", "said", "sig"), [
    ("Exited with exit code 1.", "Exited with exit code 1", None),
    ("Exited with exit code 143.", "Exited with exit code 143: SIGTERM", "SIGTERM"),
    ("Exited with exit code 137.", "Exited with exit code 137: SIGKILL", "SIGKILL"),
    ("Exited with signal termination: Killed.", "Exited with signal termination: Killed", "SIGKILL"),
    ("", "its exit code or signal, is not in this input", None),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_lsf_limit_kill_says_the_end_its_report_gives(code: str, limit: str, end: str, said: str, sig: str | None,
                                                      eol: str, tmp_path: Path) -> None:
    text = LSF.format(code=code, limit=limit, end=end)
    if code == "SWAP":
        text = text.replace("after reaching LSF swap limit", "after reaching LSF swap usage limit")
    got = failure_verdict(text.replace("\n", eol), tmp_path)
    assert got["kind"] == "crash" and said in got["summary"], got["summary"]
    if sig != "SIGKILL":
        assert "SIGKILL" not in got["summary"] and "137" not in got["summary"]


def test_lsf_real_report_with_143_is_no_sigkill(tmp_path: Path) -> None:
    # wheaton5/souporcell#20's LSF report: TERM_MEMLIMIT, then "Exited with exit code 143."
    text = (REPO / "tests/realworld/cases/wheaton5__souporcell__20/log.txt").read_text(encoding="utf-8")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and "SIGTERM" in got["summary"] and "SIGKILL" not in got["summary"]


CHARM = ("Charm++> {mode}\nInfo: Startup phase 7 took 0.8 s\n"
         "------------- Processor 3 Exiting: Called CmiAbort ------------\n"
         "Reason: FATAL ERROR: Atoms moving too fast\n[3] Stack Traceback:\n"
         "  [3:0] namd2 0x51a2f3 CmiAbortHelper(char const*, char const*, char const*, int, int)\n"
         "  [3:1] namd2 0x51a3c0 CmiAbort\nCharm++ fatal error:\nFATAL ERROR: Atoms moving too fast\n")


@pytest.mark.parametrize("mode", [
    "Running in SMP mode: 2 processes, 4 worker threads (PEs) + 1 comm threads per process, 8 PEs total",
    "Running in SMP mode: numNodes 2,  4 worker threads per process",
    "Running in Multicore mode: 8 threads (PEs)",
])
def test_charm_pe_of_a_threaded_build_is_no_rank(mode: str, tmp_path: Path) -> None:
    got = failure_verdict(CHARM.format(mode=mode), tmp_path)
    assert got["culprit_ranks"] == [] and "PE 3" in got["summary"] and "Atoms moving too fast" in got["summary"]


@pytest.mark.parametrize("mode", ["Running in non-SMP mode: 8 processes (PEs)", "Running in non-SMP mode: numPes 8",
                                  ("Running in SMP mode: 8 processes, 1 worker threads (PEs) + 1 comm threads per "
                                   "process, 8 PEs total"), "Running on 1 unique compute nodes (8-way SMP)."])
def test_charm_pe_of_a_process_per_pe_build_stays_its_rank(mode: str, tmp_path: Path) -> None:
    got = failure_verdict(CHARM.format(mode=mode), tmp_path)
    assert got["culprit_ranks"] == [3] and "Atoms moving too fast" in got["summary"]


RULE = " " + "-" * 72
NWCHEM = [" rhf_fock_2e: ga_create failed                 0", RULE, RULE, "  current input line : ",
          "    41: task scf energy", RULE, RULE, " There is an error related to the memory allocation", RULE]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_nwchem_input_line_number_is_no_rank(eol: str, tmp_path: Path) -> None:
    lines = [*NWCHEM, "0:Segmentation Violation error, status=: 11",
             "application called MPI_Abort(comm=0x84000004, 11) - process 0"]
    assert all(owner.key != 41 for owner in attribute_lines(lines))
    code, out = report_log(eol.join(lines) + eol, tmp_path)
    assert code == 1 and out["extra"]["coverage"]["ranks"] == "0", out["extra"]["coverage"]


def test_nwchem_box_under_a_rank_label_keeps_the_label() -> None:
    # srun --label over the box: each line is task 3's, the input line's number under it no rank
    owners = attribute_lines([f"3: {line}" for line in NWCHEM])
    assert {owner.key for owner in owners} == {3}


@pytest.mark.parametrize("line", ["41: error ival=4", "  41: ga_create failed: 0"])
def test_ga_process_id_stays_the_rank(line: str, tmp_path: Path) -> None:
    # Global Arrays' own "N:" head (its process id, the rank) where no "current input line :" stands above it
    assert attribute_lines([" Starting SCF solution at       3.5s", line])[1].key == 41
    got = failure_verdict(" Starting SCF solution at       3.5s\n" + line + "\n", tmp_path)
    assert got["culprit_ranks"] == [41]


# ARMCI's signal handler through armci_die's "%d:%s: %d": the head is the GA process id, the MPI rank (was refused)
@pytest.mark.parametrize(("what", "sig"), [("Segmentation Violation", "SIGSEGV"), ("Bus", "SIGBUS"),
                                           ("Floating Point Exception", "SIGFPE"), ("Illegal Instruction", "SIGILL")])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_armci_signal_handler_names_its_rank(what: str, sig: str, eol: str, tmp_path: Path) -> None:
    text = f" Starting SCF solution at       3.5s\n41:{what} error, status=: 11\n".replace("\n", eol)
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and got["culprit_ranks"] == [41] and sig in got["summary"], got["summary"]


def test_armci_signal_handler_real_lines(tmp_path: Path) -> None:
    # as a user posted them to Open MPI's users list (ARMCI over MPI-SPAWN): processes 0 and 4 caught SIGSEGV
    text = ("ARMCI configured for 3 cluster nodes. Network protocol is 'MPI-SPAWN'.\n"
            "0:Segmentation Violation error, status=: 11\n"
            "0:ARMCI DASSERT fail. signaltrap.c:SigSegvHandler():299 cond:0\n"
            "4:Segmentation Violation error, status=: 11\n"
            "4:ARMCI DASSERT fail. signaltrap.c:SigSegvHandler():299 cond:0\n")
    got = failure_verdict(text, tmp_path)
    assert got["kind"] == "crash" and 0 in got["culprit_ranks"] and "SIGSEGV" in got["summary"], got


@pytest.mark.parametrize("line", ["PCI bus error, status=0004, PCI status=0010",
                                  "The handler prints 0:Segmentation Violation error, status=: 11 on a fault."])
def test_armci_words_elsewhere_are_no_record(line: str) -> None:
    from triage.parsing.launchers import parse_rank_deaths

    assert not any(d.rank is not None for d in parse_rank_deaths(line + "\n"))
