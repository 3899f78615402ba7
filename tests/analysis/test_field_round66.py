"""Classes of real pasted logs found by round 66 of the real-world corpus, each tested on a variant written here
(other programs, fields, hosts and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.report import report_lines as report
from tests.realworld.metamorphic import TRANSFORMS
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.parsing.log_prefix import split_rank_prefix

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


# Open MPI's own messages, which opal_output heads "[host:pid] " and begins with the function that speaks: the number
# is the process's pid, never a rank (was read as host:rank, so a line-by-line reading, mpirun --tag-output's
# metamorphic test, tagged rank 372 and rank 22463: QuarkContainer/Quark#1281, MindQuantum-HiQ/HiQsimulator#26)
@pytest.mark.parametrize("line", [
    "[gpu7:04411] opal_ifinit: ioctl(SIOCGIFADDR) failed with errno=19",
    "[c-12.cluster:913] mca_base_component_repository_open: unable to open mca_pml_ucx: libucp.so.0: cannot open",
    "[login2:31337] pmix_server_init: could not create the rendezvous file",
    "[n01:200] orte_ess_base_select: no component found",
])
def test_open_mpi_s_own_message_head_is_host_and_pid(line: str) -> None:
    head = split_rank_prefix(line)
    assert head.rank is None and head.pid is not None and head.host, head


@pytest.mark.parametrize("line", [
    "[gpu7:3] opal is the name of this model",
    "[gpu7:3] loss: 0.412",
    "[gpu7:3] mca: 2 layers",
])
def test_a_rank_tag_before_other_words_stays_a_rank(line: str) -> None:
    assert split_rank_prefix(line).rank == 3


def test_the_launcher_s_signal_report_keeps_no_rank_under_rank_tags() -> None:
    lines = ("[gpu7:04411] opal_ifinit: ioctl(SIOCGIFADDR) failed with errno=19",
             "[gpu7:04411] *** Process received signal ***",
             "[gpu7:04411] Signal: Segmentation fault (11)",
             "[gpu7:04411] Signal code: Address not mapped (1)",
             "[gpu7:04411] [ 0] /lib64/libc.so.6(+0x3c4f0)[0x7f00aa43c4f0]",
             "[gpu7:04411] *** End of error message ***")
    text = "\n".join(lines)
    assert TRANSFORMS["mpirun_tag"](text) == text         # no line of a rank to tag
    verdict = report(*lines).verdict
    assert verdict.kind.value == "crash" and not verdict.culprit_ranks, verdict.summary


@pytest.mark.parametrize("case", ["QuarkContainer__Quark__1281", "MindQuantum-HiQ__HiQsimulator__26"])
def test_the_cases_own_open_mpi_lines_name_no_rank(case: str) -> None:
    text = (CASES / case / "log.txt").read_text(encoding="utf-8")
    assert TRANSFORMS["mpirun_tag"](text) == text
    assert TRANSFORMS["srun_label"](text) == text


# Open MPI's signal handler in the launcher itself, its backtrace's frame in mpirun's own image: the launcher died, no
# rank (the summary asked for the ranks' prefixed output: QuarkContainer/Quark#1281, sebhtml/ray#235)
def _handler(host: str, signal: str, *frames: str) -> tuple[str, ...]:
    head = f"[{host}:7301]"
    return (f"{head} *** Process received signal ***", f"{head} Signal: {signal}",
            f"{head} Signal code: Address not mapped (1)", f"{head} Failing at address: 0x10",
            *(f"{head} [{i:2d}] {frame}" for i, frame in enumerate(frames)), f"{head} *** End of error message ***")


@pytest.mark.parametrize("launcher_frame", [
    "/opt/ompi5/bin/prterun(+0x2c1f)[0x55d0c1a2c1f]",
    "mpirun.openmpi(+0x1b44)[0x5555555b44]",
    "/usr/local/bin/orterun(orterun+0x5d1)[0x4049a1]",
])
def test_the_launcher_s_own_signal_names_no_rank(launcher_frame: str) -> None:
    lines = ("$ mpirun -np 8 ./solver input.nml",
             *_handler("cn042", "Segmentation fault (11)", "/lib64/libc.so.6(+0x3c4f0)[0x7f00aa43c4f0]",
                       "/opt/ompi/lib/libopen-pal.so.80(pmix_hwloc_topology_load+0x31)[0x7f00ab011031]",
                       launcher_frame, "/lib64/libc.so.6(__libc_start_main+0xf3)[0x7f00aa427493]"))
    result = report(*lines)
    assert result.verdict.kind.value == "crash" and not result.verdict.culprit_ranks, result.verdict.summary
    assert "the launcher itself died" in result.verdict.summary
    assert "rank prefixes" not in result.verdict.summary
    assert result.verdict.culprit_host == "cn042"
    assert any("the launcher died, not a rank" in step for step in result.next_steps)


@pytest.mark.parametrize("frame", [
    "./solver(main+0x45)[0x401d75]",
    "/usr/lib/libmpi.so.40(MPI_Init+0x9a)[0x7f00ab2ff09a]",
    "/home/u/mpirun_wrapper.py(+0x10)[0x10]",
])
def test_a_program_s_own_signal_is_no_launcher_s(frame: str) -> None:
    lines = ("$ mpirun -np 8 ./solver input.nml",
             *_handler("cn042", "Segmentation fault (11)", "/lib64/libc.so.6(+0x3c4f0)[0x7f00aa43c4f0]", frame))
    result = report(*lines)
    assert result.verdict.kind.value == "crash", result.verdict.summary
    assert "launcher itself" not in result.verdict.summary


@pytest.mark.parametrize("case", ["QuarkContainer__Quark__1281", "sebhtml__ray__235"])
def test_the_cases_launcher_signal(case: str) -> None:
    text = (CASES / case / "log.txt").read_text(encoding="utf-8")
    verdict = analyze(load_log_texts([("log.txt", text)])).verdict
    assert verdict.kind.value == "crash" and not verdict.culprit_ranks
    assert "the launcher itself died" in verdict.summary and "rank prefixes" not in verdict.summary
