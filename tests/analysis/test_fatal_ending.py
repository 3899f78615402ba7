"""A program's own fatal ending, one class (triage.parsing.fatal_ending; round 72's HPC gaps): its fatal word at a
line's start or after its own tag, with nothing but its teardown after it, on variants written here (other programs,
messages, hosts), with the negatives: a count or a setting that holds the words, prose quoting them, a fatal line
followed by more work."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.fatal_ending import endings

_CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def kind(result: Report) -> str:
    return result.verdict.kind.value


@pytest.mark.parametrize("lines", [
    ("Info: Startup phase 7 took 0.21 s", "ERROR: Exiting prematurely; see error messages above.",
     "FATAL ERROR: Unable to open binary file output/restart.coor"),
    ("TIMING: 500  CPU: 12.5, 0.025/step", "md: FATAL ERROR: bad atom type in topology line 12",
     "srun: error: c101: task 0: Exited with exit code 255"),
    ("step 10 temperature 300", "Fatal error: cannot allocate the neighbour list (4096 MB)"),
])
def test_a_programs_fatal_error_as_its_last_words_is_its_exception(lines: tuple[str, ...]) -> None:
    result = report(*lines)
    assert kind(result) == "exception", result.verdict.summary
    assert "FATAL ERROR" in result.verdict.summary or "Fatal error" in result.verdict.summary


def test_a_fatal_error_that_points_above_names_the_modules_error() -> None:
    result = report("plumed: Error: action COORDINATION has no atoms",
                    "FATAL ERROR: Error in the collective variables module (see above for details)")
    assert kind(result) == "exception", result.verdict.summary
    assert "COORDINATION" in result.verdict.summary


def test_charms_fatal_error_names_its_pe_and_in_an_smp_build_no_rank() -> None:
    line = 'CHARM++ FATAL ERROR: [5] Assertion "nbucket > 0" failed in file Tree.cpp line 120.'
    result = report("Charm++> Running in non-SMP mode: 8 processes (PEs)", line)
    assert (kind(result), result.verdict.culprit_ranks) == ("exception", (5,)), result.verdict.summary
    smp = report("Charm++> Running in SMP mode: 2 processes, 4 worker threads (PEs) + 1 comm threads per process",
                 line)
    assert kind(smp) == "exception", smp.verdict.summary
    assert smp.verdict.culprit_ranks == () and "worker thread" in smp.verdict.summary


def test_a_runtimes_signal_handler_then_sruns_record_is_that_tasks_crash() -> None:
    result = report("graph_total_size: 1.2 GB",
                    "Exiting due to signal 7 with siginfo 0x7ffe10203040 and payload 0x7ffe10203000",
                    "srun: error: node17: task 2: Exited with exit code 1")
    assert (kind(result), result.verdict.culprit_ranks) == ("crash", (2,)), result.verdict.summary
    assert "SIGBUS" in result.verdict.summary


@pytest.mark.parametrize("line", [
    "solver.x: src/mesh/partition.c:88: build_halo: Assertion `nghost <= max_ghost' failed.",
    # (a path a reporter shortened, glibc 2.37's quotes)
    "sim: /.../src/driver.cc:1604: void Driver::setup(): Assertion 'v.type == REAL' failed.",
])
def test_glibcs_assert_line_alone_is_its_processs_abort(line: str) -> None:
    result = report("Reading parameter file run.par", line)
    assert kind(result) == "crash" and "SIGABRT" in result.verdict.summary, result.verdict.summary


def test_a_cut_terminate_line_is_a_cxx_abort_with_its_type() -> None:
    result = report("I0101 10:00:00.000 1 server.cc:1] loading: m:1",
                    "terminate called after throwing an instance of 'mylib::backend::LoaderException")
    assert kind(result) == "crash", result.verdict.summary
    assert "mylib::backend::LoaderException" in result.verdict.summary


@pytest.mark.parametrize("text", [
    # a count and a setting that hold the words
    "run summary: FATAL ERRORS: 0, warnings: 3\nstep 100 loss 0.12\n",
    "fatal_error_limit = 10\nFatal errors: 0\n",
    # prose quoting it
    'The code prints "FATAL ERROR: bad atom type" when the topology is wrong, so check it.\n',
    # a compiler's fatal error
    "foo.c:1:10: fatal error: bar.h: No such file or directory\n",
    # a CUDA kernel's assert: crashlog's
    "IndexKernel.cu:92: operator(): Assertion `idx < n' failed.\n",
])
def test_no_ending_where_the_words_are_no_programs_last_words(text: str) -> None:
    assert endings(text) == []


def test_a_fatal_line_followed_by_more_work_is_no_ending() -> None:
    text = "\n".join(["FATAL ERROR: could not open restart file, starting fresh",
                      *(f"ENERGY: {step} -1234.5 12.0 300.1 0.0" for step in range(0, 60, 10))]) + "\n"
    assert endings(text) == []
    glibc = "x: a.c:3: f: Assertion `y' failed.\n" + "".join(f"iteration {i} residual 1e-{i}\n" for i in range(8))
    assert endings(glibc) == []


@pytest.mark.parametrize(("case", "expected"), [
    ("Colvars__colvars__544", ("exception", ())),
    ("N-BodyShop__changa__104", ("exception", (3,))),
    ("uwsampa__grappa__294", ("crash", (0,))),
    ("EinsteinToolkit__CarpetX__244", ("crash", ())),
    ("triton-inference-server__server__2932", ("crash", ())),
])
def test_the_real_pastes(case: str, expected: tuple[str, tuple[int, ...]]) -> None:
    result = analyze(load_log_texts([("log.txt", (_CASES / case / "log.txt").read_text())]))
    assert (kind(result), result.verdict.culprit_ranks) == expected, result.verdict.summary


def test_the_rank_of_a_fatal_error_is_its_lines_prefixs() -> None:
    result = report("[1,0]<stdout>: solver starting on 4 processes",
                    "[1,3]<stderr>: FATAL ERROR: cannot open restart file run.rst")
    assert (kind(result), result.verdict.culprit_ranks) == ("exception", (3,)), result.verdict.summary
    # (a "[N] " alone in a short paste may be a viewer's line number: no rank)
    numbered = report("[80000] step 1", "[80001] FATAL ERROR: cannot open restart file run.rst")
    assert (kind(numbered), numbered.verdict.culprit_ranks) == ("exception", ()), numbered.verdict.summary
