"""Classes of real pasted logs found by round 66 of the real-world corpus, each tested on a variant written here
(other programs, fields, hosts and surrounding lines than the cases' own), with their negatives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.realworld.metamorphic import TRANSFORMS
from triage.analysis.analyze import analyze
from triage.load.inputs import load_log_texts
from triage.model import Report
from triage.parsing.log_prefix import split_rank_prefix

CASES = Path(__file__).resolve().parents[1] / "realworld" / "cases"


def report(*lines: str) -> Report:
    return analyze(load_log_texts([("job.log", "\n".join(lines) + "\n")]))


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

